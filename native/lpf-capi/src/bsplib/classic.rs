//! `bsp/bsp.h`: one implicit instance per process (thread-local here, as every LPF
//! process of the shared-memory engine is a thread).

use super::capi::*;
use super::{bsplib_err_t, bsplib_t, BSPLIB_SUCCESS};
use crate::{lpf_pid_t, lpf_t, SUCCESS};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_void};


thread_local! {
    static CURRENT: RefCell<Option<bsplib_t>> = const { RefCell::new(None) };
    static IN_SPAWN: RefCell<bool> = const { RefCell::new(false) };
}

static SPMD: std::sync::Mutex<Option<unsafe extern "C" fn()>> = std::sync::Mutex::new(None);

fn current(what: &str) -> bsplib_t {
    match CURRENT.with(|c| *c.borrow()) {
        Some(b) => b,
        None => die(&format!("{what}: not between bsp_begin and bsp_end")),
    }
}

fn die(msg: &str) -> ! {
    eprintln!("bsp: {msg}");
    std::process::abort()
}

/// Aborts the program when a BSPlib call failed (classic BSPlib has no error codes).
fn check(code: bsplib_err_t, what: &str) {
    if code != BSPLIB_SUCCESS {
        // SAFETY: `lpf_error_message` points at this thread's last error message, a
        // NUL-terminated string that stays until the next failed call on this thread.
        let msg = unsafe { std::ffi::CStr::from_ptr(crate::lpf_error_message()) }.to_string_lossy().into_owned();
        die(&format!("{what} failed (BSPlib error {code}): {msg}"));
    }
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_init(spmd: Option<unsafe extern "C" fn()>, argc: c_int, argv: *mut *mut c_char) {
    let _ = (argc, argv);
    let Some(f) = spmd else { die("bsp_init: the SPMD function is NULL") };
    let mut g = SPMD.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_some() {
        die("bsp_init: called more than once");
    }
    *g = Some(f);
}

/// The section of `bsp_begin`: the function of `bsp_init` comes as the exec's one
/// function symbol, not from `SPMD`, which only the process that ran `main` has set (a
/// launched job's other processes never run `main`: docs/compatibility.md).
unsafe extern "C" fn spawned(ctx: lpf_t, pid: lpf_pid_t, nprocs: lpf_pid_t, args: crate::lpf_args_t) {
    let Some(f) = (args.f_size == 1).then(|| *args.f_symbols).flatten() else {
        die("bsp_begin: the section did not receive the function of bsp_init")
    };
    let mut b: bsplib_t = std::ptr::null_mut();
    check(bsplib_create(ctx, pid, nprocs, 0, 0, &mut b), "bsp_begin");
    CURRENT.with(|c| *c.borrow_mut() = Some(b));
    IN_SPAWN.with(|c| *c.borrow_mut() = true);
    f();
    IN_SPAWN.with(|c| *c.borrow_mut() = false);
    if let Some(b) = CURRENT.with(|c| c.borrow_mut().take()) {
        check(bsplib_destroy(b), "bsp_end");
    }
}

/// `bsp_begin(maxprocs)`: returns 0 when the caller is to run the parallel part now, 1
/// when it has already run (in the section this call started) and the caller must skip
/// to `bsp_end`.
#[no_mangle]
pub unsafe extern "C" fn bsplibstd_spawn(maxprocs: c_uint) -> c_int {
    if maxprocs < 1 {
        die("bsp_begin: maxprocs is below 1");
    }
    if IN_SPAWN.with(|c| *c.borrow()) {
        // The SPMD function of bsp_init, started by the section below.
        if CURRENT.with(|c| c.borrow().is_none()) {
            die("bsp_begin: called a second time in one section");
        }
        return 0;
    }
    if CURRENT.with(|c| c.borrow().is_some()) {
        die("bsp_begin: called a second time without bsp_end");
    }
    let Some(f) = *SPMD.lock().unwrap_or_else(|e| e.into_inner()) else {
        die("bsp_begin outside the function given to bsp_init: call bsp_init(spmd, argc, argv) first, with spmd the function that contains bsp_begin .. bsp_end (this implementation cannot re-run main() on other threads)");
    };
    let symbols: [crate::lpf_func_t; 1] = [Some(f)];
    let args = crate::lpf_args_t { f_symbols: symbols.as_ptr(), f_size: 1, ..crate::LPF_NO_ARGS };
    let rc = crate::lpf_exec(crate::LPF_ROOT.0, maxprocs, Some(spawned), args);
    if rc != SUCCESS {
        let msg = std::ffi::CStr::from_ptr(crate::lpf_error_message()).to_string_lossy().into_owned();
        die(&format!("bsp_begin({maxprocs}): the section failed: {msg}"));
    }
    1
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_end() {
    if IN_SPAWN.with(|c| *c.borrow()) {
        let b = current("bsp_end");
        check(bsplib_sync(b), "bsp_end");
        CURRENT.with(|c| *c.borrow_mut() = None);
        check(bsplib_destroy(b), "bsp_end");
    }
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_nprocs() -> c_int {
    mcbsp_nprocs() as c_int
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_nprocs() -> c_uint {
    match CURRENT.with(|c| *c.borrow()) {
        Some(b) => (*b).p,
        None => {
            let mut m = crate::LPF_INVALID_MACHINE;
            if crate::lpf_probe(crate::LPF_ROOT.0, &mut m) != SUCCESS {
                die("bsp_nprocs: lpf_probe failed");
            }
            m.p
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_pid() -> c_int {
    mcbsp_pid() as c_int
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_pid() -> c_uint {
    (*current("bsp_pid")).pid
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_time() -> f64 {
    bsplib_time(current("bsp_time"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_sync() {
    check(bsplib_sync(current("bsp_sync")), "bsp_sync")
}

fn size(n: c_int, what: &str) -> usize {
    if n < 0 {
        die(&format!("{what}: negative size or offset {n}"));
    }
    n as usize
}

fn pid(n: c_int, what: &str) -> lpf_pid_t {
    if n < 0 {
        die(&format!("{what}: negative pid {n}"));
    }
    n as lpf_pid_t
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_push_reg(ident: *const c_void, n: c_int) {
    mcbsp_push_reg(ident, size(n, "bsp_push_reg"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_push_reg(ident: *const c_void, n: usize) {
    check(bsplib_push_reg(current("bsp_push_reg"), ident, n), "bsp_push_reg")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_pop_reg(ident: *const c_void) {
    check(bsplib_pop_reg(current("bsp_pop_reg"), ident), "bsp_pop_reg")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_put(p: c_int, src: *const c_void, dst: *mut c_void, offset: c_int, n: c_int) {
    mcbsp_put(pid(p, "bsp_put"), src, dst, size(offset, "bsp_put"), size(n, "bsp_put"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_put(p: c_uint, src: *const c_void, dst: *mut c_void, offset: usize, n: usize) {
    check(bsplib_put(current("bsp_put"), p, src, dst, offset, n), "bsp_put")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_hpput(p: c_int, src: *const c_void, dst: *mut c_void, offset: c_int, n: c_int) {
    mcbsp_hpput(pid(p, "bsp_hpput"), src, dst, size(offset, "bsp_hpput"), size(n, "bsp_hpput"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_hpput(p: c_uint, src: *const c_void, dst: *mut c_void, offset: usize, n: usize) {
    check(bsplib_hpput(current("bsp_hpput"), p, src, dst, offset, n), "bsp_hpput")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_get(p: c_int, src: *const c_void, offset: c_int, dst: *mut c_void, n: c_int) {
    mcbsp_get(pid(p, "bsp_get"), src, size(offset, "bsp_get"), dst, size(n, "bsp_get"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_get(p: c_uint, src: *const c_void, offset: usize, dst: *mut c_void, n: usize) {
    check(bsplib_get(current("bsp_get"), p, src, offset, dst, n), "bsp_get")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_hpget(p: c_int, src: *const c_void, offset: c_int, dst: *mut c_void, n: c_int) {
    mcbsp_hpget(pid(p, "bsp_hpget"), src, size(offset, "bsp_hpget"), dst, size(n, "bsp_hpget"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_hpget(p: c_uint, src: *const c_void, offset: usize, dst: *mut c_void, n: usize) {
    check(bsplib_hpget(current("bsp_hpget"), p, src, offset, dst, n), "bsp_hpget")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_set_tagsize(tag_nbytes: *mut c_int) {
    if tag_nbytes.is_null() {
        die("bsp_set_tagsize: NULL pointer");
    }
    let mut n = size(*tag_nbytes, "bsp_set_tagsize");
    mcbsp_set_tagsize(&mut n);
    *tag_nbytes = n as c_int;
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_set_tagsize(tag_nbytes: *mut usize) {
    if tag_nbytes.is_null() {
        die("bsp_set_tagsize: NULL pointer");
    }
    *tag_nbytes = bsplib_set_tagsize(current("bsp_set_tagsize"), *tag_nbytes);
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_send(p: c_int, tag: *const c_void, payload: *const c_void, n: c_int) {
    mcbsp_send(pid(p, "bsp_send"), tag, payload, size(n, "bsp_send"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_send(p: c_uint, tag: *const c_void, payload: *const c_void, n: usize) {
    check(bsplib_send(current("bsp_send"), p, tag, payload, n), "bsp_send")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_hpsend(p: c_int, tag: *const c_void, payload: *const c_void, n: c_int) {
    mcbsp_hpsend(pid(p, "bsp_hpsend"), tag, payload, size(n, "bsp_hpsend"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_hpsend(p: c_uint, tag: *const c_void, payload: *const c_void, n: usize) {
    check(bsplib_hpsend(current("bsp_hpsend"), p, tag, payload, n), "bsp_hpsend")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_qsize(nmessages: *mut c_int, accum_nbytes: *mut c_int) {
    let (mut n, mut b) = (0usize, 0usize);
    mcbsp_qsize_sz(&mut n, &mut b);
    if !nmessages.is_null() {
        *nmessages = n as c_int;
    }
    if !accum_nbytes.is_null() {
        *accum_nbytes = b as c_int;
    }
}

unsafe fn mcbsp_qsize_sz(n: *mut usize, b: *mut usize) {
    check(bsplib_qsize(current("bsp_qsize"), n, b), "bsp_qsize")
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_qsize(nmessages: *mut c_uint, accum_nbytes: *mut usize) {
    let mut n = 0usize;
    mcbsp_qsize_sz(&mut n, accum_nbytes);
    if !nmessages.is_null() {
        *nmessages = n as c_uint;
    }
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_get_tag(status: *mut c_int, tag: *mut c_void) {
    let mut s = 0usize;
    mcbsp_get_tag(&mut s, tag);
    if !status.is_null() {
        *status = if s == usize::MAX { -1 } else { s as c_int };
    }
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_get_tag(status: *mut usize, tag: *mut c_void) {
    check(bsplib_get_tag(current("bsp_get_tag"), status, tag), "bsp_get_tag")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_move(payload: *mut c_void, reception_bytes: c_int) {
    mcbsp_move(payload, size(reception_bytes, "bsp_move"))
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_move(payload: *mut c_void, reception_bytes: usize) {
    check(bsplib_move(current("bsp_move"), payload, reception_bytes), "bsp_move")
}

#[no_mangle]
pub unsafe extern "C" fn bsplibstd_hpmove(tag_ptr: *mut *const c_void, payload_ptr: *mut *const c_void) -> c_int {
    let n = bsplib_hpmove(current("bsp_hpmove"), tag_ptr, payload_ptr);
    if n == usize::MAX { -1 } else { n as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn mcbsp_hpmove(tag_ptr: *mut *mut c_void, payload_ptr: *mut *mut c_void) -> usize {
    bsplib_hpmove(current("bsp_hpmove"), tag_ptr.cast(), payload_ptr.cast())
}

/// `bsp_abort(format, ...)`: prints the message and ends the whole program.
///
/// Stable Rust cannot define a C variadic function, so this one is declared with the
/// registers a variadic call fills on x86-64 (System V): the format, five integer or
/// pointer arguments and eight floating-point ones, and forwards them to `snprintf`.
/// A message with more than five integer/pointer (or eight floating-point) arguments
/// prints garbage for the extra ones; on other architectures only the format is printed.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
#[cfg(target_arch = "x86_64")]
pub unsafe extern "C" fn bsplibstd_abort(fmt: *const c_char, a1: usize, a2: usize, a3: usize, a4: usize, a5: usize, f0: f64, f1: f64, f2: f64, f3: f64, f4: f64, f5: f64, f6: f64, f7: f64) {
    extern "C" {
        fn snprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ...) -> c_int;
    }
    let mut buf = [0 as c_char; 1024];
    if !fmt.is_null() {
        snprintf(buf.as_mut_ptr(), buf.len(), fmt, a1, a2, a3, a4, a5, f0, f1, f2, f3, f4, f5, f6, f7);
    }
    abort_with(&buf)
}

#[no_mangle]
#[cfg(not(target_arch = "x86_64"))]
pub unsafe extern "C" fn bsplibstd_abort(fmt: *const c_char) {
    let mut buf = [0 as c_char; 1024];
    if !fmt.is_null() {
        let s = std::ffi::CStr::from_ptr(fmt).to_bytes();
        for (i, &b) in s.iter().take(buf.len() - 1).enumerate() {
            buf[i] = b as c_char;
        }
    }
    abort_with(&buf)
}

fn abort_with(buf: &[c_char]) -> ! {
    // SAFETY: `buf` is NUL-terminated: the callers zero it and write at most all but
    // its last byte (`snprintf` truncates to its length, the copy takes `len - 1`).
    let text = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
    // SAFETY: `CURRENT` holds only a live instance: the one `spawned` created, taken
    // out before it is destroyed.
    let who = CURRENT.with(|c| *c.borrow()).map(|b| unsafe { (*b).pid });
    use std::io::Write;
    let mut e = std::io::stderr().lock();
    let _ = write!(e, "bsp_abort{}: {}", who.map_or(String::new(), |p| format!(" (process {p})")), text);
    if !text.ends_with('\n') {
        let _ = writeln!(e);
    }
    let _ = e.flush();
    std::process::abort()
}
