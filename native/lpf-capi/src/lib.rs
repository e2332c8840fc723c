//! The C ABI of LPF (`lpf/core.h`, `lpf/pthread.h`, `lpf/abort.h`, `lpf/error.h`) over
//! the Rust library, so that C programs written for LPF link against `liblpf_core`
//! unchanged.
//!
//! Every exported function catches panics (none may unwind into C), checks its pointers,
//! and on failure returns the LPF code and records a message that names the problem:
//! `lpf_error_message()` returns it, and it is printed to stderr prefixed with `lpf: `
//! unless `LPF_LOG=quiet`.
#![allow(non_camel_case_types)]
// The safety contract of every exported function is that of its declaration in the C
// headers (valid pointers of the stated sizes, handles given out by this library).
#![allow(clippy::missing_safety_doc)]

use lpf::{Args, Context, Error, Memslot, Pid, Root, ShmInit};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
#[cfg(feature = "mpi")]
mod mpi;
mod debug;
// lpf/bsplib.h + bsp/bsp.h, lpf/collectives.h, lpf/hybrid.h (docs/compatibility.md)
pub mod bsmp;
pub mod bsplib;
pub mod collectives;
mod hybrid;
// Programs started by lpfrun or mpirun: only pid 0 runs main (#17 item 3).
mod launch;

pub type lpf_t = *mut c_void;
pub type lpf_init_t = *mut c_void;
pub type lpf_pid_t = c_uint;
pub type lpf_err_t = c_int;
pub type lpf_memslot_t = usize;
pub type lpf_sync_attr_t = c_int;
pub type lpf_msg_attr_t = c_int;
pub type lpf_func_t = Option<unsafe extern "C" fn()>;
pub type lpf_cost_fn = Option<extern "C" fn(lpf_pid_t, usize, lpf_sync_attr_t) -> f64>;
pub type lpf_spmd_t = Option<unsafe extern "C" fn(lpf_t, lpf_pid_t, lpf_pid_t, lpf_args_t)>;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct lpf_args_t {
    pub input: *const c_void,
    pub input_size: usize,
    pub output: *mut c_void,
    pub output_size: usize,
    pub f_symbols: *const lpf_func_t,
    pub f_size: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct lpf_machine_t {
    pub p: lpf_pid_t,
    pub free_p: lpf_pid_t,
    pub g: lpf_cost_fn,
    pub l: lpf_cost_fn,
}

/// A pointer constant exported as data.
#[repr(transparent)]
pub struct ConstPtr(*mut c_void);

// SAFETY: the exported constants are immutable and never dereferenced through these.
unsafe impl Sync for ConstPtr {}
// SAFETY: as for ConstPtr: shared only as the immutable LPF_NO_ARGS, whose pointers are
// NULL; this crate never dereferences a shared lpf_args_t's pointers.
unsafe impl Sync for lpf_args_t {}

const SUCCESS: lpf_err_t = 0;
const ERR_OUT_OF_MEMORY: lpf_err_t = 1;
const ERR_FATAL: lpf_err_t = 2;

#[no_mangle]
pub static LPF_SUCCESS: lpf_err_t = SUCCESS;
#[no_mangle]
pub static LPF_ERR_OUT_OF_MEMORY: lpf_err_t = ERR_OUT_OF_MEMORY;
#[no_mangle]
pub static LPF_ERR_FATAL: lpf_err_t = ERR_FATAL;
#[no_mangle]
pub static LPF_NO_ARGS: lpf_args_t = lpf_args_t {
    input: std::ptr::null(),
    input_size: 0,
    output: std::ptr::null_mut(),
    output_size: 0,
    f_symbols: std::ptr::null(),
    f_size: 0,
};
#[no_mangle]
pub static LPF_SYNC_DEFAULT: lpf_sync_attr_t = 0;
#[no_mangle]
pub static LPF_MSG_DEFAULT: lpf_msg_attr_t = 0;
#[no_mangle]
pub static LPF_MAX_P: lpf_pid_t = c_uint::MAX;
#[no_mangle]
pub static LPF_INVALID_MEMSLOT: lpf_memslot_t = usize::MAX;
#[no_mangle]
pub static LPF_NONE: ConstPtr = ConstPtr(std::ptr::null_mut());
#[no_mangle]
pub static LPF_INIT_NONE: ConstPtr = ConstPtr(std::ptr::null_mut());
#[no_mangle]
pub static LPF_INVALID_MACHINE: lpf_machine_t = lpf_machine_t { p: 0, free_p: 0, g: None, l: None };
#[no_mangle]
pub static LPF_HAS_ABORT: c_int = 1;

/// What `LPF_ROOT` points at: any unique address outside every context. Aligned, so
/// that it is even and never equals a context handle (odd, see [`LiveContexts`]).
#[repr(align(8))]
struct Sentinel(#[allow(dead_code)] u8);
static ROOT_SENTINEL: Sentinel = Sentinel(0);
#[no_mangle]
pub static LPF_ROOT: ConstPtr = ConstPtr(&ROOT_SENTINEL as *const Sentinel as *mut c_void);

fn is_root(ctx: lpf_t) -> bool {
    std::ptr::eq(ctx as *const Sentinel, &ROOT_SENTINEL)
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn record(e: &Error) -> lpf_err_t {
    let text = e.to_string();
    // An invalid LPF_LOG prints: the message may be the one naming it.
    if !lpf::Config::from_env().is_ok_and(|c| c.log_quiet) {
        // One write(2) for the line (eprintln! writes its pieces apart), so that lines of
        // processes sharing a stderr pipe (e.g. under lpfrun) do not cut each other.
        use std::io::Write;
        let _ = std::io::stderr().lock().write_all(format!("lpf: {text}\n").as_bytes());
    }
    // try_with: at exit (release_servers) this thread's storage may be gone already.
    let _ = LAST_ERROR.try_with(|m| *m.borrow_mut() = CString::new(text.replace('\0', " ")).unwrap_or_default());
    e.kind().code()
}

/// The end of a failed call `what`: in debug mode misuse ends the job (or, from
/// `lpf_hook`, the process: [`debug::Ending::of`]) there ([`debug::abort_on_misuse`]);
/// otherwise it is recorded and its code returned.
fn fail_call(what: &str, e: Error) -> lpf_err_t {
    debug::abort_on_misuse(&e, debug::Ending::of(what));
    record(&e)
}

/// Runs the body of an exported function: panics become `LPF_ERR_FATAL`, errors are
/// recorded, success clears nothing (the message is that of the last *failed* call).
fn guarded(what: &str, body: impl FnOnce() -> lpf::Result<()>) -> lpf_err_t {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(e)) => fail_call(what, e.context(what)),
        Err(p) => fail_call(what, Error::fatal(format!("{what}: internal panic: {}", panic_text(&p)))),
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default()
}

/// `lpf/error.h`: the message of this thread's last failed LPF call ("" if none).
#[no_mangle]
pub extern "C" fn lpf_error_message() -> *const c_char {
    LAST_ERROR.with(|m| m.borrow().as_ptr())
}

/// The contexts alive on this thread: those whose SPMD function runs on it (one, or
/// more while a nested exec or rehook runs), by handle number.
///
/// A C handle (`lpf_t`) is not the context's address but `2 * number + 1`, where the
/// number is drawn once from a process-wide counter and never reused. A handle is
/// dereferenced only when its number is alive on the calling thread, so one kept
/// after its `lpf_exec`, `lpf_hook` or `lpf_rehook` returned (whose context, on the
/// stack of a thread that may be gone, is dead) or passed to another process's thread
/// is refused with `LPF_ERR_FATAL` (issue #13 item 9), even when a newer context sits at
/// the same address.
struct LiveContexts;

static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static LIVE: RefCell<Vec<(u64, *mut Context)>> = const { RefCell::new(Vec::new()) };
}

impl LiveContexts {
    /// Runs `f` with a fresh handle for `ctx`, alive on this thread until `f` returns.
    fn with_handle<R>(ctx: &mut Context, f: impl FnOnce(lpf_t) -> R) -> R {
        let number = NEXT_HANDLE.fetch_add(1, Relaxed);
        LIVE.with(|l| l.borrow_mut().push((number, ctx as *mut Context)));
        struct Retire(u64);
        impl Drop for Retire {
            fn drop(&mut self) {
                let _ = LIVE.try_with(|l| l.borrow_mut().retain(|&(n, _)| n != self.0));
            }
        }
        let _retire = Retire(number);
        f((number << 1 | 1) as usize as lpf_t)
    }

    /// The context of handle `ctx` if it is alive on this thread.
    fn find(ctx: lpf_t) -> Option<*mut Context> {
        let h = ctx as usize as u64;
        if h & 1 == 0 {
            return None;
        }
        LIVE.with(|l| l.borrow().iter().rev().find(|&&(n, _)| n == h >> 1).map(|&(_, c)| c))
    }
}

/// The Rust context behind a C handle, if it is alive on this thread; else the error
/// that says why not.
///
/// # Safety
/// The `&mut` is used only within the calling `lpf_*` function, on this thread, while
/// the context's SPMD function is running (it is what called us).
unsafe fn context<'a>(ctx: lpf_t, what: &'static str) -> lpf::Result<&'a mut Context> {
    if ctx.is_null() {
        return Err(Error::misuse(what, format!("{what}: the context is NULL (LPF_NONE)")));
    }
    if is_root(ctx) {
        return root_context(what);
    }
    match LiveContexts::find(ctx) {
        Some(c) => Ok(&mut *c),
        None => {
            let h = ctx as usize as u64;
            let why = if h & 1 == 1 && h >> 1 < NEXT_HANDLE.load(Relaxed) {
                "the lpf_exec, lpf_hook or lpf_rehook that gave it out has returned, or it belongs to another \
                 process (a context is used only by the thread that runs its SPMD function)"
            } else {
                "this library never gave it out"
            };
            Err(Error::misuse(what, format!("{what}: the context {ctx:p} is not alive on this thread: {why}")))
        }
    }
}

thread_local! {
    /// `LPF_ROOT` as a context of one process ([`Root::context`]), made on its first use
    /// on this thread. One per thread: a context is used by one thread, and threads that
    /// use `LPF_ROOT` at once (e.g. library initialisers) must not race on one register.
    static ROOT_CONTEXT: RefCell<Option<Box<Context>>> = const { RefCell::new(None) };
}

/// This thread's `LPF_ROOT` context.
///
/// # Safety
/// As for [`context`]: the `&mut` is used only within the calling `lpf_*` function.
unsafe fn root_context<'a>(what: &str) -> lpf::Result<&'a mut Context> {
    let c = ROOT_CONTEXT.with(|r| -> lpf::Result<*mut Context> {
        let mut r = r.borrow_mut();
        if r.is_none() {
            let made = Root::new().context().map_err(|e| e.context(format!("{what}: LPF_ROOT as a context")))?;
            *r = Some(Box::new(made));
        }
        Ok(&mut **r.as_mut().expect("made above") as *mut Context)
    })?;
    // SAFETY: the box lives until this thread ends, and is used on this thread only.
    Ok(&mut *c)
}

/// The failure of this thread's `LPF_ROOT` context, if it has failed: an exec from the
/// root then fails too, as every later primitive on a failed context does.
fn root_failure() -> Option<Error> {
    ROOT_CONTEXT.with(|r| r.borrow().as_ref().and_then(|c| c.failure().cloned()))
}

/// Rust args for a section from C args.
///
/// # Safety
/// The C args must describe valid memory of the given sizes (or NULL with any size 0).
unsafe fn rust_args<'a>(a: &lpf_args_t) -> Args<'a> {
    let input = if a.input.is_null() || a.input_size == 0 {
        &[][..]
    } else {
        std::slice::from_raw_parts(a.input as *const u8, a.input_size)
    };
    let output = if a.output.is_null() || a.output_size == 0 {
        &mut [][..]
    } else {
        std::slice::from_raw_parts_mut(a.output as *mut u8, a.output_size)
    };
    Args { input, output, symbols: &[] }
}

/// A C SPMD function run as a Rust one: the C args seen by each process are built from
/// its Rust args (pid 0 of an exec gets the caller's input and output; the others NULL
/// and 0) and the caller's function symbols, which every process receives.
///
/// The function is called from C++ (src/spmd_boundary.cpp), since a C++ exception it
/// throws cannot pass the Rust frames between it and the program (issue 28: it aborted
/// with "Rust cannot catch foreign exceptions"). On the thread of `caller` (the one
/// that called lpf_exec, lpf_hook or lpf_rehook, which runs one process of the
/// section) the exception is kept, the process fails (its peers are released as from
/// any failed process) and the call throws it again to its caller
/// ([`rethrow_kept_exception`]); on the section's other threads it ends the program
/// through std::terminate, with the C++ library's message.
struct CSpmd {
    spmd: unsafe extern "C" fn(lpf_t, lpf_pid_t, lpf_pid_t, lpf_args_t),
    f_symbols: *const lpf_func_t,
    f_size: usize,
    caller: Option<std::thread::ThreadId>,
}

extern "C" {
    fn lpf_spmd_call_keeping(
        spmd: unsafe extern "C" fn(lpf_t, lpf_pid_t, lpf_pid_t, lpf_args_t),
        ctx: lpf_t,
        s: lpf_pid_t,
        p: lpf_pid_t,
        args: lpf_args_t,
        kept: *mut *mut c_void,
    ) -> c_int;
    fn lpf_spmd_call_or_terminate(spmd: unsafe extern "C" fn(lpf_t, lpf_pid_t, lpf_pid_t, lpf_args_t), ctx: lpf_t, s: lpf_pid_t, p: lpf_pid_t, args: lpf_args_t);
    fn lpf_keep_forget(kept: *mut c_void);
}

extern "C-unwind" {
    fn lpf_keep_rethrow(kept: *mut c_void) -> !;
}

thread_local! {
    /// The C++ exception an SPMD function on this thread threw, kept for the caller of
    /// the lpf_exec, lpf_hook or lpf_rehook running it (null: none).
    static KEPT_EXCEPTION: std::cell::Cell<*mut c_void> = const { std::cell::Cell::new(std::ptr::null_mut()) };
}

/// At the end of lpf_exec, lpf_hook and lpf_rehook (outside any catch_unwind): throws
/// the C++ exception the SPMD function of this thread's process threw, if it threw one.
fn rethrow_kept_exception() {
    let kept = KEPT_EXCEPTION.with(|k| k.replace(std::ptr::null_mut()));
    if !kept.is_null() {
        // SAFETY: kept came from lpf_spmd_call_keeping and is thrown once.
        unsafe { lpf_keep_rethrow(kept) }
    }
}

// SAFETY: a C function pointer and a pointer to the caller's read-only symbol table,
// which outlives the section.
unsafe impl Sync for CSpmd {}

impl CSpmd {
    fn new(spmd: lpf_spmd_t, args: &lpf_args_t, what: &'static str) -> lpf::Result<CSpmd> {
        let spmd = spmd.ok_or_else(|| Error::misuse(what, format!("{what}: the SPMD function is NULL")))?;
        Ok(CSpmd {
            spmd,
            f_symbols: if args.f_size == 0 { std::ptr::null() } else { args.f_symbols },
            f_size: args.f_size,
            caller: Some(std::thread::current().id()),
        })
    }

    fn call(&self, ctx: &mut Context, args: Args<'_>) {
        let c_args = lpf_args_t {
            input: if args.input.is_empty() { std::ptr::null() } else { args.input.as_ptr().cast() },
            input_size: args.input.len(),
            output: if args.output.is_empty() { std::ptr::null_mut() } else { args.output.as_mut_ptr().cast() },
            output_size: args.output.len(),
            f_symbols: self.f_symbols,
            f_size: self.f_size,
        };
        let (pid, nprocs) = (ctx.pid(), ctx.nprocs());
        let keeping = self.caller == Some(std::thread::current().id());
        // SAFETY: the user's function follows the lpf_spmd_t contract; the handle is
        // alive until it returns.
        let threw = LiveContexts::with_handle(ctx, |handle| unsafe {
            if keeping {
                let mut kept = std::ptr::null_mut();
                let threw = lpf_spmd_call_keeping(self.spmd, handle, pid, nprocs, c_args, &mut kept) != 0;
                if threw {
                    let earlier = KEPT_EXCEPTION.with(|k| k.replace(kept));
                    if !earlier.is_null() {
                        lpf_keep_forget(earlier);
                    }
                }
                threw
            } else {
                lpf_spmd_call_or_terminate(self.spmd, handle, pid, nprocs, c_args);
                false
            }
        });
        if threw {
            ctx.enter_failed_state(Error::fatal(format!(
                "the SPMD function of process {pid} threw a C++ exception (thrown again to the caller)"
            )));
        }
    }
}

/// Runs the C SPMD function `spmd` (an `lpf_spmd_t`) as this process of the section
/// `ctx` belongs to, with `args` as its `lpf_args_t` (no function symbols). For bridges
/// that start sections over a Rust init and hook C code into them (lpf-jni): the C code
/// calls back into this library's `lpf_*` functions with the handle it receives.
///
/// # Safety
/// `spmd` must follow the `lpf_spmd_t` contract, and the `lpf_*` symbols it calls must
/// resolve to this library's (the same copy of `lpf` that made `ctx`).
pub unsafe fn call_c_spmd(spmd: unsafe extern "C" fn(lpf_t, lpf_pid_t, lpf_pid_t, lpf_args_t), ctx: &mut Context, args: Args<'_>) {
    CSpmd { spmd, f_symbols: std::ptr::null(), f_size: 0, caller: None }.call(ctx, args)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn lpf_exec(ctx: lpf_t, p: lpf_pid_t, spmd: lpf_spmd_t, args: lpf_args_t) -> lpf_err_t {
    let code = guarded("lpf_exec", || {
        debug::check_args(&args)?;
        let f = CSpmd::new(spmd, &args, "lpf_exec")?;
        let run = |c: &mut Context, a: Args<'_>| f.call(c, a);
        if is_root(ctx) {
            if let Some(f) = root_failure() {
                return Err(Error::with_reason(f.kind(), f.reason(), format!("LPF_ROOT failed earlier ({})", f.message())));
            }
            match launch::root_job() {
                Some(job) => job?.exec(p as Pid, &f, &run, rust_args(&args)),
                None => Root::new().exec(p as Pid, &run, rust_args(&args)),
            }
        } else {
            context(ctx, "lpf_exec")?.exec(p as Pid, &run, rust_args(&args))
        }
    });
    rethrow_kept_exception();
    code
}

#[no_mangle]
pub unsafe extern "C-unwind" fn lpf_rehook(ctx: lpf_t, spmd: lpf_spmd_t, args: lpf_args_t) -> lpf_err_t {
    let code = guarded("lpf_rehook", || {
        debug::check_args(&args)?;
        let f = CSpmd::new(spmd, &args, "lpf_rehook")?;
        context(ctx, "lpf_rehook")?.rehook(&|c: &mut Context, a: Args<'_>| f.call(c, a), rust_args(&args))
    });
    rethrow_kept_exception();
    code
}

/// What an `lpf_init_t` points at.
pub enum Init {
    Pthread(ShmInit),
    Tcp(lpf::tcp::TcpInit),
    #[cfg(feature = "mpi")]
    Mpi(lpf::mpi::MpiInit),
}

impl Init {
    pub fn into_handle(self) -> lpf_init_t {
        Box::into_raw(Box::new(self)) as lpf_init_t
    }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn lpf_hook(init: lpf_init_t, spmd: lpf_spmd_t, args: lpf_args_t) -> lpf_err_t {
    let code = guarded("lpf_hook", || {
        debug::check_args(&args)?;
        if init.is_null() {
            return Err(Error::fatal("the init is NULL (LPF_INIT_NONE)"));
        }
        let f = CSpmd::new(spmd, &args, "lpf_hook")?;
        let run = |c: &mut Context, a: Args<'_>| f.call(c, a);
        match &*(init as *const Init) {
            Init::Pthread(i) => i.hook(&run, rust_args(&args)),
            Init::Tcp(i) => i.hook(&run, rust_args(&args)),
            #[cfg(feature = "mpi")]
            Init::Mpi(i) => i.hook(&run, rust_args(&args)),
        }
    });
    rethrow_kept_exception();
    code
}

/// `lpf/pthread.h`: thread `pid` of `nprocs` threads of this program joins their group.
#[no_mangle]
pub unsafe extern "C" fn lpf_pthread_initialize(pid: lpf_pid_t, nprocs: lpf_pid_t, init: *mut lpf_init_t) -> lpf_err_t {
    guarded("lpf_pthread_initialize", || {
        if init.is_null() {
            return Err(Error::fatal("the lpf_init_t out-pointer is NULL"));
        }
        *init = Init::Pthread(ShmInit::new(pid, nprocs)?).into_handle();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_pthread_finalize(init: lpf_init_t) -> lpf_err_t {
    finalize("lpf_pthread_finalize", init)
}

/// Releases an init of any kind (every platform's finalize).
unsafe fn finalize(what: &str, init: lpf_init_t) -> lpf_err_t {
    guarded(what, || {
        if init.is_null() {
            return Err(Error::fatal("the init is NULL (LPF_INIT_NONE)"));
        }
        drop(Box::from_raw(init as *mut Init));
        Ok(())
    })
}

/// A C string argument, or an error naming it.
unsafe fn c_str<'a>(s: *const c_char, name: &str) -> lpf::Result<&'a str> {
    if s.is_null() {
        return Err(Error::fatal(format!("{name} is NULL")));
    }
    std::ffi::CStr::from_ptr(s).to_str().map_err(|_| Error::fatal(format!("{name} is not valid UTF-8")))
}

/// The TCP port a port string names: a decimal number is a port number and must be
/// one (0..=65535, as `LPF_TCP_PORT` and `lpfrun --port`); anything else is resolved as
/// the reference implementation does, by `getaddrinfo` as the service of a TCP socket, so
/// that a service name of the services database (e.g. `"http"`) works. The number is not
/// left to `getaddrinfo`: glibc takes it modulo 65536 (`"99999"` would be port 34463 on
/// every process alike, and `"-1"` port 65535), a silent misstep; what counts as a number
/// is what glibc's `strtoul` reads whole (leading white space, a sign, digits).
fn tcp_port(text: &str) -> lpf::Result<u16> {
    let number = text.trim_start();
    let digits = number.strip_prefix(['+', '-']).unwrap_or(number);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return number
            .parse::<u16>()
            .map_err(|_| Error::fatal(format!("port {text:?} is not a TCP port number: expected 0..=65535 (or a service name)")));
    }
    let unresolved = |why: String| {
        Error::fatal(format!("port {text:?} is neither a TCP port number nor a service name getaddrinfo knows: {why}"))
    };
    let service = CString::new(text).map_err(|_| unresolved("it contains a NUL byte".into()))?;
    // SAFETY: a zeroed addrinfo is a valid hints value (all fields 0 or NULL).
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_family = libc::AF_UNSPEC;
    hints.ai_socktype = libc::SOCK_STREAM;
    hints.ai_flags = libc::AI_PASSIVE;
    let mut found: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: NUL-terminated service, valid hints and out-pointer; freed below.
    let rc = unsafe { libc::getaddrinfo(std::ptr::null(), service.as_ptr(), &hints, &mut found) };
    if rc != 0 {
        // SAFETY: gai_strerror returns a static NUL-terminated string for any code.
        let why = unsafe { std::ffi::CStr::from_ptr(libc::gai_strerror(rc)) };
        return Err(unresolved(why.to_string_lossy().into_owned()));
    }
    // SAFETY: getaddrinfo succeeded, so `found` is a list of at least one entry whose
    // ai_addr is a sockaddr of the entry's family (IPv4 or IPv6: the port is at the
    // same place, in network order).
    let port = unsafe {
        let addr = (*found).ai_addr;
        let port = match (*addr).sa_family as i32 {
            libc::AF_INET => Some((*(addr as *const libc::sockaddr_in)).sin_port),
            libc::AF_INET6 => Some((*(addr as *const libc::sockaddr_in6)).sin6_port),
            _ => None,
        };
        libc::freeaddrinfo(found);
        port
    };
    port.map(u16::from_be).ok_or_else(|| unresolved("getaddrinfo gave an address of neither IPv4 nor IPv6".into()))
}

/// The TCP configuration from the C arguments of the TCP initialisers.
#[allow(clippy::too_many_arguments)]
unsafe fn tcp_config(
    server: *const c_char,
    port: *const c_char,
    timeout_ms: c_int,
    pid: lpf_pid_t,
    nprocs: lpf_pid_t,
    secret: *const c_char,
    bind_addr: *const c_char,
) -> lpf::Result<lpf::tcp::TcpConfig> {
    let server = c_str(server, "server")?;
    let port = tcp_port(c_str(port, "port")?)?;
    if timeout_ms <= 0 {
        return Err(Error::fatal(format!("timeout_ms must be positive, got {timeout_ms}")));
    }
    let mut cfg = lpf::tcp::TcpConfig::new(server, port, pid, nprocs)
        .timeout(std::time::Duration::from_millis(timeout_ms as u64));
    if !secret.is_null() {
        cfg = cfg.secret(c_str(secret, "secret")?);
    }
    if !bind_addr.is_null() {
        let text = c_str(bind_addr, "bind_addr")?;
        let ip = text.parse().map_err(|_| Error::fatal(format!("bind_addr {text:?} is not an IP address")))?;
        cfg = cfg.bind(ip);
    }
    Ok(cfg)
}

/// `lpf/mpi.h`, without any MPI: the processes meet over TCP at `server:port`, where
/// pid 0 listens.
#[no_mangle]
pub unsafe extern "C" fn lpf_mpi_initialize_over_tcp(
    server: *const c_char,
    port: *const c_char,
    timeout_ms: c_int,
    pid: lpf_pid_t,
    nprocs: lpf_pid_t,
    init: *mut lpf_init_t,
) -> lpf_err_t {
    lpf_tcp_initialize(server, port, timeout_ms, pid, nprocs, std::ptr::null(), std::ptr::null(), std::ptr::null_mut(), init)
}

/// `lpf/mpi.h` in a library built without MPI: present so that programs written for
/// the reference link unchanged, but it cannot work. `MPI_Comm` has no common ABI (a
/// pointer to an implementation's struct in Open MPI, an `int` in MPICH), so only a
/// library compiled against the program's MPI can use the handle; and depending on an
/// MPI library would make every user of `liblpf_core` need one. The `comm` argument is
/// taken as a pointer-sized value and never read.
#[cfg(not(feature = "mpi"))]
#[no_mangle]
pub unsafe extern "C" fn lpf_mpi_initialize_with_mpicomm(_comm: *mut c_void, _init: *mut lpf_init_t) -> lpf_err_t {
    guarded("lpf_mpi_initialize_with_mpicomm", || {
        Err(Error::fatal(
            "this liblpf_core was built without MPI: build it with `cargo build --release -p lpf-capi --features mpi` \
             (against the program's MPI) to make an LPF runtime of an MPI communicator, or meet over TCP with \
             lpf_mpi_initialize_over_tcp",
        ))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_mpi_finalize(init: lpf_init_t) -> lpf_err_t {
    finalize("lpf_mpi_finalize", init)
}

/// `lpf/tcp.h`: the TCP initialiser with a secret, a bind address and the bound port.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lpf_tcp_initialize(
    server: *const c_char,
    port: *const c_char,
    timeout_ms: c_int,
    pid: lpf_pid_t,
    nprocs: lpf_pid_t,
    secret: *const c_char,
    bind_addr: *const c_char,
    bound_port: *mut c_uint,
    init: *mut lpf_init_t,
) -> lpf_err_t {
    // The two halves in one call (nothing is bound when the out-pointer is bad).
    if init.is_null() {
        return guarded("lpf_tcp_initialize", || Err(Error::fatal("the lpf_init_t out-pointer is NULL")));
    }
    let mut pending = std::ptr::null_mut();
    let rc = lpf_tcp_listen(server, port, timeout_ms, pid, nprocs, secret, bind_addr, bound_port, &mut pending);
    if rc != SUCCESS {
        return rc;
    }
    lpf_tcp_join(pending, init)
}

#[no_mangle]
pub unsafe extern "C" fn lpf_tcp_finalize(init: lpf_init_t) -> lpf_err_t {
    finalize("lpf_tcp_finalize", init)
}

/// `lpf/tcp.h`: the first half of `lpf_tcp_initialize` (bind and report the port).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lpf_tcp_listen(
    server: *const c_char,
    port: *const c_char,
    timeout_ms: c_int,
    pid: lpf_pid_t,
    nprocs: lpf_pid_t,
    secret: *const c_char,
    bind_addr: *const c_char,
    bound_port: *mut c_uint,
    pending: *mut *mut c_void,
) -> lpf_err_t {
    guarded("lpf_tcp_listen", || {
        if pending.is_null() {
            return Err(Error::fatal("the lpf_tcp_pending_t out-pointer is NULL"));
        }
        let prepared = lpf::tcp::TcpInit::prepare(tcp_config(server, port, timeout_ms, pid, nprocs, secret, bind_addr)?)?;
        if !bound_port.is_null() {
            *bound_port = prepared.bound_port() as c_uint;
        }
        *pending = Box::into_raw(Box::new(prepared)) as *mut c_void;
        Ok(())
    })
}

/// `lpf/tcp.h`: the second half: waits for the job and yields the init.
#[no_mangle]
pub unsafe extern "C" fn lpf_tcp_join(pending: *mut c_void, init: *mut lpf_init_t) -> lpf_err_t {
    guarded("lpf_tcp_join", || {
        if pending.is_null() {
            return Err(Error::fatal("the pending init is NULL"));
        }
        let prepared = Box::from_raw(pending as *mut lpf::tcp::Prepared);
        if init.is_null() {
            return Err(Error::fatal("the lpf_init_t out-pointer is NULL"));
        }
        *init = Init::Tcp(prepared.join()?).into_handle();
        Ok(())
    })
}

unsafe fn register(ctx: lpf_t, pointer: *mut c_void, size: usize, memslot: *mut lpf_memslot_t, global: bool) -> lpf_err_t {
    let what = if global { "lpf_register_global" } else { "lpf_register_local" };
    guarded(what, || {
        let c = context(ctx, what)?;
        if memslot.is_null() {
            return Err(c.enter_failed_state(Error::misuse(what, "the memslot out-pointer is NULL")));
        }
        // A NULL pointer with a size is the core's check (misuse, fatal).
        let slot = if global { c.register_global_raw(pointer.cast(), size)? } else { c.register_local_raw(pointer.cast(), size)? };
        *memslot = slot.to_raw();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_register_global(ctx: lpf_t, pointer: *mut c_void, size: usize, memslot: *mut lpf_memslot_t) -> lpf_err_t {
    register(ctx, pointer, size, memslot, true)
}

#[no_mangle]
pub unsafe extern "C" fn lpf_register_local(ctx: lpf_t, pointer: *mut c_void, size: usize, memslot: *mut lpf_memslot_t) -> lpf_err_t {
    register(ctx, pointer, size, memslot, false)
}

#[no_mangle]
pub unsafe extern "C" fn lpf_deregister(ctx: lpf_t, memslot: lpf_memslot_t) -> lpf_err_t {
    guarded("lpf_deregister", || context(ctx, "lpf_deregister")?.deregister(Memslot::from_raw(memslot)))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lpf_put(
    ctx: lpf_t,
    src_slot: lpf_memslot_t,
    src_offset: usize,
    dst_pid: lpf_pid_t,
    dst_slot: lpf_memslot_t,
    dst_offset: usize,
    size: usize,
    attr: lpf_msg_attr_t,
) -> lpf_err_t {
    guarded("lpf_put", || {
        let (s, d) = (Memslot::from_raw(src_slot), Memslot::from_raw(dst_slot));
        context(ctx, "lpf_put")?.put(s, src_offset, dst_pid, d, dst_offset, size, attr)
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lpf_get(
    ctx: lpf_t,
    src_pid: lpf_pid_t,
    src_slot: lpf_memslot_t,
    src_offset: usize,
    dst_slot: lpf_memslot_t,
    dst_offset: usize,
    size: usize,
    attr: lpf_msg_attr_t,
) -> lpf_err_t {
    guarded("lpf_get", || {
        let (s, d) = (Memslot::from_raw(src_slot), Memslot::from_raw(dst_slot));
        context(ctx, "lpf_get")?.get(src_pid, s, src_offset, d, dst_offset, size, attr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_sync(ctx: lpf_t, attr: lpf_sync_attr_t) -> lpf_err_t {
    guarded("lpf_sync", || context(ctx, "lpf_sync")?.sync(attr))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_resize_memory_register(ctx: lpf_t, max_regs: usize) -> lpf_err_t {
    guarded("lpf_resize_memory_register", || context(ctx, "lpf_resize_memory_register")?.resize_memory_register(max_regs))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_resize_message_queue(ctx: lpf_t, max_msgs: usize) -> lpf_err_t {
    guarded("lpf_resize_message_queue", || context(ctx, "lpf_resize_message_queue")?.resize_message_queue(max_msgs))
}

/// `lpf_machine_t`'s g and l are plain C function pointers (no closure state), so each
/// engine of the registry gets its own pair, instantiated for its registry index `E`.
/// Slots beyond the registry are never handed out.
const COST_SLOTS: usize = 8;
const _: () = assert!(lpf::config::ENGINES.len() <= COST_SLOTS, "more engines than cost-function slots: raise COST_SLOTS");

/// The cost table of the engine at registry index `E`.
fn cost_table<const E: usize>() -> std::sync::Arc<lpf::CostTable> {
    lpf::machine::table_for(lpf::config::ENGINES[E.min(lpf::config::ENGINES.len() - 1)].kind.cost_table())
}

extern "C" fn cost_g<const E: usize>(p: lpf_pid_t, min_msg_size: usize, _attr: lpf_sync_attr_t) -> f64 {
    cost_table::<E>().lookup(p, min_msg_size).0
}

extern "C" fn cost_l<const E: usize>(p: lpf_pid_t, min_msg_size: usize, _attr: lpf_sync_attr_t) -> f64 {
    cost_table::<E>().lookup(p, min_msg_size).1
}

const fn cost_pair<const E: usize>() -> (lpf_cost_fn, lpf_cost_fn) {
    (Some(cost_g::<E>), Some(cost_l::<E>))
}

const COST_FUNCTIONS: [(lpf_cost_fn, lpf_cost_fn); COST_SLOTS] = [
    cost_pair::<0>(),
    cost_pair::<1>(),
    cost_pair::<2>(),
    cost_pair::<3>(),
    cost_pair::<4>(),
    cost_pair::<5>(),
    cost_pair::<6>(),
    cost_pair::<7>(),
];

/// The g and l of the engine named `engine` (a shm table for a name the registry does
/// not know).
fn cost_functions(engine: &str) -> (lpf_cost_fn, lpf_cost_fn) {
    COST_FUNCTIONS[lpf::EngineKind::from_name(engine).unwrap_or(lpf::EngineKind::Shm).index()]
}

#[no_mangle]
pub unsafe extern "C" fn lpf_probe(ctx: lpf_t, params: *mut lpf_machine_t) -> lpf_err_t {
    guarded("lpf_probe", || {
        let null_params = || Error::fatal("the lpf_machine_t out-pointer is NULL");
        // The root's p and engine are the runtime's (LPF_ENGINE, the job under a
        // launcher); a section's p is the same, its g and l its own engine's. A NULL
        // out-pointer is fatal: it puts a section's process in the failed state.
        let m = if is_root(ctx) {
            if params.is_null() {
                return Err(null_params());
            }
            Root::new().probe()?
        } else {
            let c = context(ctx, "lpf_probe")?;
            if params.is_null() {
                return Err(c.enter_failed_state(null_params()));
            }
            c.probe()?
        };
        let (g, l) = cost_functions(m.engine());
        *params = lpf_machine_t { p: m.p, free_p: m.free_p, g, l };
        Ok(())
    })
}

/// `lpf/abort.h`: ends the whole job at once with exit status 6, as the reference's
/// engines do (its pthread engine by `quick_exit(6)`, its MPI engines by
/// `MPI_Abort(MPI_COMM_WORLD, 6)`): see [`lpf::abort_job`].
#[no_mangle]
pub unsafe extern "C" fn lpf_abort(ctx: lpf_t) -> lpf_err_t {
    let who = if ctx.is_null() || is_root(ctx) {
        "(root)".to_string()
    } else {
        LiveContexts::find(ctx).map_or_else(|| format!("(context {ctx:p}, not alive on this thread)"), |c| (*c).pid().to_string())
    };
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(format!("lpf: lpf_abort called by process {who}\n").as_bytes());
    lpf::abort_job(ABORT_EXIT_STATUS)
}

/// The exit status of a job ended by `lpf_abort` (and by the debug layer on misuse):
/// the reference's, which its debug tests expect ("Exit code: 6").
pub(crate) const ABORT_EXIT_STATUS: i32 = 6;

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24 item 6: a number out of 0..=65535 is refused naming the string; before,
    /// glibc's getaddrinfo made "99999" port 34463 and "-1" port 65535. Numbers in range
    /// and service names resolve as before.
    #[test]
    fn port_numbers_out_of_range_are_refused() {
        for bad in ["99999", "70000", "65536", "-1", " 99999", "+65536", "18446744073709551617"] {
            let e = tcp_port(bad).expect_err(bad);
            assert_eq!(e.kind(), lpf::ErrorKind::Fatal, "{e}");
            assert_eq!(e.message(), format!("port {bad:?} is not a TCP port number: expected 0..=65535 (or a service name)"));
        }
        for (good, port) in [("0", 0), ("7177", 7177), ("65535", 65535), (" 80", 80), ("+81", 81)] {
            assert_eq!(tcp_port(good).unwrap_or_else(|e| panic!("{good:?}: {e}")), port, "{good:?}");
        }
        assert!(tcp_port("no-such-service-lpf").unwrap_err().message().contains("nor a service name getaddrinfo knows"));
    }

    #[test]
    fn a_null_or_dead_context_is_misuse_of_the_call() {
        // SAFETY: neither handle is dereferenced: no context is alive on this thread.
        let null = unsafe { context(std::ptr::null_mut(), "lpf_put") }.err().expect("NULL is no context");
        assert_eq!(null.reason(), lpf::Reason::Misuse { call: "lpf_put" }, "{null}");
        // SAFETY: as above.
        let dead = unsafe { context(3 as lpf_t, "lpf_sync") }.err().expect("handle 3 is not alive here");
        assert_eq!(dead.reason(), lpf::Reason::Misuse { call: "lpf_sync" }, "{dead}");
        assert!(dead.message().contains("not alive on this thread"), "{dead}");
    }
}
