//! The C side of the debug layer (#17 item 5): on when `LPF_DEBUG` is set (not `""` or
//! `"0"`) or once a program built with `debug/lpf/core.h` made its first call, whose
//! macros route every `lpf_*` call through the `lpf_debug_*` functions here with the
//! caller's file and line.
//!
//! In debug mode a fatal error that is this process's misuse of LPF (see [`is_misuse`])
//! prints one line naming the call (and the call site when known) and ends the job as
//! `lpf_abort` does (exit status 6 on every engine), as the reference's debug layer
//! does; misuse of `lpf_hook`'s own arguments ends this process with `abort()` instead
//! ([`Ending::Process`]). The checks themselves live in [`lpf::checks`] (those needing
//! the context) and in [`check_args`] (C pointers, which the Rust interface cannot
//! express).

use crate::{lpf_args_t, lpf_err_t, lpf_init_t, lpf_machine_t, lpf_memslot_t, lpf_msg_attr_t, lpf_pid_t, lpf_spmd_t, lpf_sync_attr_t, lpf_t};
use lpf::{Error, Reason};
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CStr};

thread_local! {
    /// The call site of the `lpf_debug_*` call running on this thread, if any.
    static SITE: Cell<Option<(*const c_char, c_int)>> = const { Cell::new(None) };
}

/// How the debug layer ends a process that misused LPF.
#[derive(Clone, Copy)]
pub(crate) enum Ending {
    /// The whole job, as `lpf_abort` ([`lpf::abort_job`], exit status 6).
    Job,
    /// `abort()` of this process alone (SIGABRT): for misuse of `lpf_hook`'s own
    /// arguments, which the reference's debug layer ends so, since the caller of
    /// `lpf_hook` need not be part of any LPF job `lpf_abort` could end (its tests
    /// `func_lpf_debug_hook_null_*` expect exit status 134).
    Process,
}

impl Ending {
    /// How misuse found in the call `call` ends the process. Misuse `lpf_hook` returns
    /// can only be of its own arguments (or init): misuse inside the section it runs
    /// ended the job in the call that made it.
    pub(crate) fn of(call: &str) -> Ending {
        if call == "lpf_hook" {
            Ending::Process
        } else {
            Ending::Job
        }
    }
}

/// Whether `e` is this process's misuse of LPF rather than a failure it suffered: the
/// reference's debug layer ends the job on the misuse it finds (bad arguments, unknown
/// slots, collective calls out of step) but returns `LPF_ERR_FATAL` from a sync that
/// fails because another process left the section, and from the `lpf_exec` of such a
/// section (its core tests `func_lpf_exec_single_call_single_arg_max_proc_early_exit_*`,
/// built in debug mode, expect both). The environment's failures (I/O, timeouts,
/// cancellation, configuration, exhausted threads) are no misuse either.
fn is_misuse(e: &Error) -> bool {
    matches!(e.reason(), Reason::Misuse { .. } | Reason::OutOfStep | Reason::Other)
}

/// In debug mode, a fatal error that is misuse ends the process here, with the message.
pub(crate) fn abort_on_misuse(e: &Error, ending: Ending) {
    if !e.is_fatal() || !is_misuse(e) || !lpf::checks::enabled() {
        return;
    }
    let site = SITE.with(Cell::get).map_or(String::new(), |(file, line)| {
        // SAFETY: `file` is the caller's `__FILE__`, a NUL-terminated literal.
        let file = if file.is_null() { "?".into() } else { unsafe { CStr::from_ptr(file) }.to_string_lossy() };
        format!("{file}:{line}: ")
    });
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(format!("lpf debug: {site}{e}; aborting\n").as_bytes());
    match ending {
        Ending::Job => lpf::abort_job(crate::ABORT_EXIT_STATUS),
        Ending::Process => std::process::abort(),
    }
}

/// NULL with a positive size in an `lpf_args_t` (an error in debug mode; the default
/// mode reads it as empty).
pub(crate) fn check_args(args: &lpf_args_t) -> lpf::Result<()> {
    if !lpf::checks::enabled() {
        return Ok(());
    }
    for (name, null, size) in [
        ("input", args.input.is_null(), args.input_size),
        ("output", args.output.is_null(), args.output_size),
        ("f_symbols", args.f_symbols.is_null(), args.f_size),
    ] {
        if null && size > 0 {
            return Err(Error::fatal(format!("args.{name} is NULL but its size is {size}")));
        }
    }
    Ok(())
}

/// Runs `call` as the call at `file:line`, with the debug layer on.
fn at<R>(file: *const c_char, line: c_int, call: impl FnOnce() -> R) -> R {
    lpf::checks::enable();
    let outer = SITE.with(|s| s.replace(Some((file, line))));
    let r = call();
    SITE.with(|s| s.set(outer));
    r
}

// The wrappers `debug/lpf/core.h` routes the core calls to.

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_exec(file: *const c_char, line: c_int, ctx: lpf_t, p: lpf_pid_t, spmd: lpf_spmd_t, args: lpf_args_t) -> lpf_err_t {
    at(file, line, || crate::lpf_exec(ctx, p, spmd, args))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_hook(file: *const c_char, line: c_int, init: lpf_init_t, spmd: lpf_spmd_t, args: lpf_args_t) -> lpf_err_t {
    at(file, line, || crate::lpf_hook(init, spmd, args))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_rehook(file: *const c_char, line: c_int, ctx: lpf_t, spmd: lpf_spmd_t, args: lpf_args_t) -> lpf_err_t {
    at(file, line, || crate::lpf_rehook(ctx, spmd, args))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_register_global(file: *const c_char, line: c_int, ctx: lpf_t, pointer: *mut c_void, size: usize, memslot: *mut lpf_memslot_t) -> lpf_err_t {
    at(file, line, || crate::lpf_register_global(ctx, pointer, size, memslot))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_register_local(file: *const c_char, line: c_int, ctx: lpf_t, pointer: *mut c_void, size: usize, memslot: *mut lpf_memslot_t) -> lpf_err_t {
    at(file, line, || crate::lpf_register_local(ctx, pointer, size, memslot))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_deregister(file: *const c_char, line: c_int, ctx: lpf_t, memslot: lpf_memslot_t) -> lpf_err_t {
    at(file, line, || crate::lpf_deregister(ctx, memslot))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lpf_debug_put(
    file: *const c_char,
    line: c_int,
    ctx: lpf_t,
    src_slot: lpf_memslot_t,
    src_offset: usize,
    dst_pid: lpf_pid_t,
    dst_slot: lpf_memslot_t,
    dst_offset: usize,
    size: usize,
    attr: lpf_msg_attr_t,
) -> lpf_err_t {
    at(file, line, || crate::lpf_put(ctx, src_slot, src_offset, dst_pid, dst_slot, dst_offset, size, attr))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lpf_debug_get(
    file: *const c_char,
    line: c_int,
    ctx: lpf_t,
    src_pid: lpf_pid_t,
    src_slot: lpf_memslot_t,
    src_offset: usize,
    dst_slot: lpf_memslot_t,
    dst_offset: usize,
    size: usize,
    attr: lpf_msg_attr_t,
) -> lpf_err_t {
    at(file, line, || crate::lpf_get(ctx, src_pid, src_slot, src_offset, dst_slot, dst_offset, size, attr))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_sync(file: *const c_char, line: c_int, ctx: lpf_t, attr: lpf_sync_attr_t) -> lpf_err_t {
    at(file, line, || crate::lpf_sync(ctx, attr))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_probe(file: *const c_char, line: c_int, ctx: lpf_t, params: *mut lpf_machine_t) -> lpf_err_t {
    at(file, line, || crate::lpf_probe(ctx, params))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_resize_memory_register(file: *const c_char, line: c_int, ctx: lpf_t, max_regs: usize) -> lpf_err_t {
    at(file, line, || crate::lpf_resize_memory_register(ctx, max_regs))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_debug_resize_message_queue(file: *const c_char, line: c_int, ctx: lpf_t, max_msgs: usize) -> lpf_err_t {
    at(file, line, || crate::lpf_resize_message_queue(ctx, max_msgs))
}
