//! Launched programs (issue #17 item 3): under `lpfrun` (engines `tcp`, `hybrid`) or
//! `mpirun` (`LPF_ENGINE=mpimsg|mpirma|ibverbs`, or `hybrid` over MPI), only the process
//! holding LPF pid 0 runs `main`, as with the reference's launcher.
//!
//! A constructor of this library ([`at_program_start`], before `main`) joins every
//! process to the job when the environment names a launched engine and the program
//! keeps the published weak symbol `LPF_MPI_AUTO_INITIALIZE` at 1 (its default; a
//! program that defines it as 0 manages MPI or the TCP rendezvous itself and every
//! process runs `main`, as before). The processes other than pid 0's then never enter
//! `main`: they serve the `lpf_exec(LPF_ROOT, ...)` calls of pid 0's `main`
//! ([`Job::serve`]) and exit with status 0 when pid 0's program exits (an `atexit`
//! handler of pid 0 tells them).
//!
//! They start serving where `main` would start, after the whole static initialisation
//! of the program (C++ globals, iostreams), which runs after this library's
//! constructor whenever the program depends on this library: the SPMD functions they
//! run may use all of it (issue 28: serving inside the constructor crashed the C++
//! programs of `lpfcxx -engine mpimsg` in `std::ostream::sentry`). That point is
//! reached through [`__libc_start_main`], which this library defines in front of the C
//! library's: the program's start-up code calls it with `main`, and it hands the C
//! library [`main_after_static_init`] instead. Where the program's start-up does not
//! come through this library's definition (the library loaded with dlopen after the
//! start, or a program that links the C library's own first), the processes serve
//! from the constructor, as they did before.
//!
//! Each root `lpf_exec` broadcasts one command, `exec(P, spmd, f_symbols)`, over the
//! job; the function pointers travel as (loaded object, offset) pairs, since the
//! objects of the same binary load at different addresses in different processes
//! (ASLR). The section runs on the job's first P LPF processes (all of them when P is
//! at least the job's size), on an init over just those processes made on the first
//! exec with that P and kept; the others wait for the next command. `args.input` and
//! `args.output` stay in pid 0's memory: pid 0 runs in the calling process, and the
//! other processes get none, as with every exec.

use crate::{lpf_func_t, CSpmd};
use lpf::config::{Config, Launcher};
use lpf::{Args, Error, Pid, Result, Spmd};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{Mutex, OnceLock};

// The published weak symbol `LPF_MPI_AUTO_INITIALIZE`: 1 (the default) lets the
// runtime initialise at program start; a program defines it as 0 to initialise
// itself. The library holds an undefined weak reference to it (a pointer, null when
// the program defines none), not a definition: a definition here would clash with the
// program's in a static link (`liblpf_core.a`), and in `liblpf_core.so` it would be
// bound locally, out of the program's reach. The reference makes the linker export
// the executable's definition, so both links see it.
#[cfg(target_pointer_width = "64")]
std::arch::global_asm!(
    ".weak LPF_MPI_AUTO_INITIALIZE",
    ".section .data.rel.ro.lpf_auto_initialize_ref,\"aw\"",
    ".p2align 3",
    ".globl lpf_auto_initialize_ref",
    ".hidden lpf_auto_initialize_ref",
    "lpf_auto_initialize_ref:",
    ".8byte LPF_MPI_AUTO_INITIALIZE",
    ".previous",
);

extern "C" {
    /// The address of the program's `LPF_MPI_AUTO_INITIALIZE`, null if it defines none.
    static lpf_auto_initialize_ref: *const c_int;
}

/// The program's `LPF_MPI_AUTO_INITIALIZE` (1 when it defines none).
fn auto_initialize() -> bool {
    // SAFETY: the reference is resolved by the loader before any constructor runs; if
    // not null it points at the program's `const int`.
    unsafe {
        let at = std::ptr::read_volatile(std::ptr::addr_of!(lpf_auto_initialize_ref));
        at.is_null() || *at != 0
    }
}

/// Runs before `main` (an ELF constructor of this library).
#[used]
#[link_section = ".init_array"]
static AT_PROGRAM_START: extern "C" fn() = at_program_start;

extern "C" fn at_program_start() {
    // Nothing may unwind out of a constructor.
    let started = std::panic::catch_unwind(|| {
        // An invalid configuration is reported as a failed join (by pid 0 at its first
        // lpf_exec, which would refuse it too).
        let made = match Config::from_env() {
            Ok(c) if !launched(&c) || !auto_initialize() => return,
            Ok(c) => Job::join(&c),
            Err(e) => Err(e),
        };
        let job = JOB.get_or_init(|| made);
        match job {
            // Served from main_after_static_init, once the program is initialised.
            Ok(job) if job.first_pid() != 0 && start_comes_through_here() => {}
            Ok(job) if job.first_pid() != 0 => job.serve(),
            Ok(_) => {
                // SAFETY: registers a plain extern "C" function; after MPI's own
                // finalize handler, so it runs before it.
                unsafe { libc::atexit(release_servers) };
            }
            // Pid 0 reports it at its first lpf_exec; the others cannot serve.
            Err(e) if !launcher_says_pid_0() => {
                crate::record(&e.clone().context("launched process: joining the job at program start"));
                std::process::exit(1);
            }
            Err(_) => {}
        }
    });
    if started.is_err() {
        eprintln!("lpf: launched process: internal panic while joining the job at program start");
        std::process::exit(1);
    }
}

/// The C library's program start: `__libc_start_main(main, argc, argv, init, fini,
/// rtld_fini, stack_end)` (the last four are passed through untouched).
type ProgramMain = unsafe extern "C-unwind" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;
type LibcStartMain = unsafe extern "C" fn(
    ProgramMain,
    c_int,
    *mut *mut c_char,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
) -> c_int;

/// The program's `main`, as its start-up code passed it to [`__libc_start_main`].
static PROGRAM_MAIN: OnceLock<ProgramMain> = OnceLock::new();

/// The program's start-up code calls this (it precedes the C library's definition in
/// the lookup order of a program linked with this library): the C library's runs the
/// static initialisation, then [`main_after_static_init`] in place of `main`.
///
/// # Safety
/// Called once, by the program's start-up code, with the arguments the C library's
/// `__libc_start_main` takes.
#[no_mangle]
pub unsafe extern "C" fn __libc_start_main(
    main: ProgramMain,
    argc: c_int,
    argv: *mut *mut c_char,
    init: *mut c_void,
    fini: *mut c_void,
    rtld_fini: *mut c_void,
    stack_end: *mut c_void,
) -> c_int {
    // SAFETY: dlsym with a NUL-terminated name; RTLD_NEXT finds the definition after
    // this object's, the C library's, whose type is LibcStartMain.
    let next = libc::dlsym(libc::RTLD_NEXT, c"__libc_start_main".as_ptr());
    if next.is_null() {
        let _ = std::io::Write::write_all(&mut std::io::stderr(), b"lpf: cannot find the C library's __libc_start_main\n");
        libc::abort();
    }
    let libc_start_main = std::mem::transmute::<*mut c_void, LibcStartMain>(next);
    let _ = PROGRAM_MAIN.set(main);
    libc_start_main(main_after_static_init, argc, argv, init, fini, rtld_fini, stack_end)
}

/// What the C library calls as `main`, after the program's static initialisation:
/// in a launched job, the processes other than pid 0's serve pid 0's sections from
/// here (never returning); every other process runs the program's `main`.
unsafe extern "C-unwind" fn main_after_static_init(argc: c_int, argv: *mut *mut c_char, envp: *mut *mut c_char) -> c_int {
    if let Some(Ok(job)) = JOB.get() {
        if job.first_pid() != 0 {
            job.serve();
        }
    }
    let main = *PROGRAM_MAIN.get().expect("set by __libc_start_main before it calls this");
    main(argc, argv, envp)
}

/// Whether the program's start-up comes through this library's [`__libc_start_main`]:
/// it is the definition the dynamic loader gives for the name, or it is part of the
/// program itself (this library linked statically, where the program's start-up code
/// binds to it directly).
fn start_comes_through_here() -> bool {
    let ours = __libc_start_main as *const () as usize;
    // SAFETY: dlsym with a NUL-terminated name.
    let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__libc_start_main".as_ptr()) } as usize;
    global == ours || locate(ours).is_ok_and(|f| f.object.is_empty())
}

/// Whether the launcher made this process the job's first (before a join succeeded,
/// the launcher's environment is all there is): lpfrun's `LPF_PID`, else the MPI
/// launchers' rank variables; without any, assumed so.
fn launcher_says_pid_0() -> bool {
    if let Some(pid) = Config::from_env().ok().and_then(|c| c.pid) {
        return pid == 0;
    }
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"].iter().find_map(|v| std::env::var(v).ok()).is_none_or(|r| r.trim() == "0")
}

/// Whether the configuration names a launched engine: one run under lpfrun (with
/// lpfrun's `LPF_TCP_MASTER`) or under mpirun (in a library built with MPI).
fn launched(c: &Config) -> bool {
    match c.launcher() {
        Launcher::None => false,
        Launcher::Lpfrun => c.tcp_master.is_some(),
        Launcher::Mpirun => cfg!(feature = "mpi"),
    }
}

/// The job of a launched process, joined at program start.
static JOB: OnceLock<Result<Job>> = OnceLock::new();

/// The job pid 0's root `lpf_exec` runs on, if this program was launched and joined at
/// start; `Err` if the join failed.
pub(crate) fn root_job() -> Option<Result<&'static Job>> {
    JOB.get().map(|j| j.as_ref().map_err(|e| e.clone()))
}

/// At pid 0's exit: the other processes stop serving and exit.
extern "C" fn release_servers() {
    let _ = std::panic::catch_unwind(|| {
        if let Some(Ok(job)) = JOB.get() {
            // While another thread of this process runs a root section (its exit
            // ends that section on the others, which then fail), no command can go.
            let Some(_guard) = try_lock(&job.exec_lock) else { return };
            if let Err(e) = job.broadcast(&mut vec![QUIT]) {
                crate::record(&e.context("pid 0 at exit: telling the other processes of the job to exit"));
            }
        }
    });
}

const QUIT: u8 = 0;
const EXEC: u8 = 1;

enum Net {
    Tcp { init: lpf::tcp::TcpInit, cfg: lpf::tcp::TcpConfig },
    #[cfg(feature = "mpi")]
    Mpi(&'static lpf::mpi::MpiInit),
}

/// An init over the first P LPF processes of the job (None: this process is not one).
enum Part {
    Tcp(Option<lpf::tcp::TcpInit>),
    #[cfg(feature = "mpi")]
    Mpi(Option<lpf::mpi::MpiInit>),
}

pub(crate) struct Job {
    net: Net,
    /// Inits over the first P processes, by P (made on the first exec with that P).
    parts: Mutex<HashMap<Pid, Part>>,
    /// One root exec at a time (and the exit's command after the last).
    exec_lock: Mutex<()>,
}

impl Job {
    fn join(c: &Config) -> Result<Job> {
        let net = match c.launcher() {
            #[cfg(feature = "mpi")]
            Launcher::Mpirun => {
                let (kind, threads) = lpf::mpi::engine_from_env()?;
                Net::Mpi(lpf::mpi::world_init_with(kind, threads)?)
            }
            _ => {
                let cfg = lpf::tcp::TcpConfig::from_config(c)?;
                Net::Tcp { init: lpf::tcp::TcpInit::new(cfg.clone())?, cfg }
            }
        };
        Ok(Job { net, parts: Mutex::new(HashMap::new()), exec_lock: Mutex::new(()) })
    }

    fn local_procs(&self) -> (Pid, Pid) {
        match &self.net {
            Net::Tcp { init, .. } => init.local_procs(),
            #[cfg(feature = "mpi")]
            Net::Mpi(init) => init.local_procs(),
        }
    }

    fn first_pid(&self) -> Pid {
        self.local_procs().0
    }

    fn total_procs(&self) -> Pid {
        match &self.net {
            Net::Tcp { init, .. } => init.total_procs(),
            #[cfg(feature = "mpi")]
            Net::Mpi(init) => init.total_procs(),
        }
    }

    /// `data` from pid 0's process to every process of the job (collective).
    fn broadcast(&self, data: &mut Vec<u8>) -> Result<()> {
        match &self.net {
            Net::Tcp { init, .. } => tcp_broadcast(init, data),
            #[cfg(feature = "mpi")]
            Net::Mpi(init) => init.broadcast(data),
        }
    }

    /// The loop of the processes other than pid 0's: runs the sections pid 0 starts,
    /// until pid 0's program exits; then this process exits too. Never returns.
    fn serve(&self) -> ! {
        loop {
            let mut command = Vec::new();
            if let Err(e) = self.broadcast(&mut command) {
                crate::record(&e.context(format!(
                    "launched process with pid {}: waiting for pid 0's next lpf_exec (pid 0 ended without exiting \
                     normally?)",
                    self.first_pid()
                )));
                std::process::exit(1);
            }
            match Command::decode(&command) {
                Ok(Command::Quit) => std::process::exit(0),
                Ok(Command::Exec { p, port, spmd, symbols, debug }) => {
                    if debug {
                        lpf::checks::enable();
                    }
                    // A failed section is pid 0's lpf_exec's failure (reported there);
                    // this process says why here and waits for the next command.
                    let run = || -> Result<()> {
                        let spmd = resolve(&spmd)?.ok_or_else(|| Error::fatal("pid 0 sent a NULL SPMD function"))?;
                        // The addresses are those of the functions pid 0 passed, in this
                        // process's copy of the same object.
                        let table: Vec<lpf_func_t> = symbols
                            .iter()
                            // SAFETY: a function's address (above), called only as the
                            // C caller's symbol table says.
                            .map(|s| Ok(resolve(s)?.map(|a| unsafe { std::mem::transmute::<usize, unsafe extern "C" fn()>(a) })))
                            .collect::<Result<_>>()?;
                        // SAFETY: the address of pid 0's SPMD function (above), of this type.
                        let spmd = unsafe {
                            std::mem::transmute::<usize, unsafe extern "C" fn(crate::lpf_t, u32, u32, crate::lpf_args_t)>(spmd)
                        };
                        // No caller waits in this process: an exception ends it (CSpmd).
                        let f = CSpmd { spmd, f_symbols: table.as_ptr(), f_size: table.len(), caller: None };
                        let run = |c: &mut lpf::Context, a: Args<'_>| f.call(c, a);
                        self.run_section(p, port, &run, Args { input: &[], output: &mut [], symbols: &[] })
                    };
                    if let Err(e) = run() {
                        crate::record(&e.context(format!("lpf_exec of pid 0, in the process of pid {}", self.first_pid())));
                    }
                }
                Err(e) => {
                    crate::record(&e);
                    std::process::exit(1);
                }
            }
        }
    }

    /// Pid 0's `lpf_exec(LPF_ROOT, p, ...)`: tells the other processes, then runs the
    /// section with them.
    pub(crate) fn exec(&self, p: Pid, spmd: &CSpmd, f: Spmd<'_>, args: Args<'_>) -> Result<()> {
        if self.first_pid() != 0 {
            return Err(Error::fatal(format!(
                "lpf_exec(LPF_ROOT) in the process of pid {} of a launched job: only pid 0's process runs main and \
                 starts root sections (use the section's context for a nested exec)",
                self.first_pid()
            )));
        }
        let _guard = try_lock(&self.exec_lock).ok_or_else(|| {
            Error::fatal(
                "lpf_exec(LPF_ROOT) while another lpf_exec(LPF_ROOT) of this launched program runs (from another \
                 thread, or from inside its section): a launched job runs one root section at a time",
            )
        })?;
        let p = p.clamp(1, self.total_procs());
        // Pid 0 of a new part binds its port now, so that the command can carry it.
        let prepared = self.prepare_part(p)?;
        let port = prepared.as_ref().map_or(0, |pr| pr.bound_port());
        // SAFETY: CSpmd::new keeps f_symbols only with f_size valid entries (the
        // lpf_args_t contract).
        let symbols: Vec<usize> =
            (0..spmd.f_size).map(|i| unsafe { (*spmd.f_symbols.add(i)).map_or(0, |f| f as usize) }).collect();
        let command = Command::Exec {
            p,
            port,
            spmd: locate(spmd.spmd as usize)?,
            symbols: symbols.into_iter().map(locate).collect::<Result<_>>()?,
            debug: lpf::checks::enabled(),
        };
        self.broadcast(&mut command.encode())?;
        if let Some(pr) = prepared {
            let init = pr.join()?;
            lock(&self.parts).insert(p, Part::Tcp(Some(init)));
        }
        self.run_section(p, port, f, args)
    }

    /// On pid 0, for a TCP job and a P below the job's size with no part yet: the
    /// part's init, bound but not joined.
    fn prepare_part(&self, p: Pid) -> Result<Option<lpf::tcp::Prepared>> {
        match &self.net {
            Net::Tcp { cfg, .. } if p < self.total_procs() && !lock(&self.parts).contains_key(&p) => {
                Ok(Some(lpf::tcp::TcpInit::prepare(self.part_config(cfg, p, 0)?)?))
            }
            _ => Ok(None),
        }
    }

    /// The TCP configuration of this process in the part of the first `p` LPF processes
    /// (whose pid 0 listens on `port`): the job's processes holding them, each with its
    /// threads among them.
    fn part_config(&self, cfg: &lpf::tcp::TcpConfig, p: Pid, port: u16) -> Result<lpf::tcp::TcpConfig> {
        let (first, count) = self.local_procs();
        // lpfrun gives every process the same number of threads.
        let per_process = count.max(1);
        let mut part = cfg.clone();
        part.nprocs = p.div_ceil(per_process);
        part.threads = count.min(p - first.min(p));
        part.port = port;
        part.hybrid = cfg.hybrid || cfg.threads > 1;
        part.job = format!("{}-first-{p}", cfg.job);
        Ok(part)
    }

    /// Runs the section on the first `p` LPF processes (this process's part of it, if
    /// any), making the part's init if this is the first section with this `p`.
    fn run_section(&self, p: Pid, port: u16, f: Spmd<'_>, args: Args<'_>) -> Result<()> {
        let (first, _) = self.local_procs();
        if p >= self.total_procs() {
            return match &self.net {
                Net::Tcp { init, .. } => init.hook(f, args),
                #[cfg(feature = "mpi")]
                Net::Mpi(init) => init.hook(f, args),
            };
        }
        let mut parts = lock(&self.parts);
        let part = match parts.entry(p) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(match &self.net {
                Net::Tcp { cfg, .. } => {
                    Part::Tcp(if first < p { Some(lpf::tcp::TcpInit::new(self.part_config(cfg, p, port)?)?) } else { None })
                }
                #[cfg(feature = "mpi")]
                Net::Mpi(init) => Part::Mpi(init.split(p)?),
            }),
        };
        match part {
            Part::Tcp(Some(init)) => init.hook_part(self.total_procs(), f, args),
            #[cfg(feature = "mpi")]
            Part::Mpi(Some(init)) => init.hook_part(self.total_procs(), f, args),
            _ => Ok(()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The lock if it is free (also after a panic while it was held), else None.
fn try_lock<T>(m: &Mutex<T>) -> Option<std::sync::MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// `data` (pid 0's) to every process of a TCP job, in one section: its length, then
/// its bytes, put by pid 0 to the first LPF process of every OS process.
fn tcp_broadcast(init: &lpf::tcp::TcpInit, data: &mut Vec<u8>) -> Result<()> {
    let (first, _) = init.local_procs();
    let got: Mutex<Option<Vec<u8>>> = Mutex::new(None);
    let input = data.clone();
    let spmd = |ctx: &mut lpf::Context, args: Args<'_>| {
        let step = |ctx: &mut lpf::Context| -> Result<Vec<u8>> {
            // Only pid 0 knows whether its program is in debug mode: the command says so.
            ctx.without_debug_checks();
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            ctx.resize_memory_register(3)?;
            ctx.resize_message_queue(n as usize)?;
            ctx.sync(lpf::SYNC_DEFAULT)?;
            // The length first (pid 0's is its own), then the bytes.
            let mut len = [args.input.len() as u64];
            let length = {
                let slot = ctx.register_global(&mut len)?;
                ctx.sync(lpf::SYNC_DEFAULT)?;
                if pid == 0 {
                    for q in 1..n {
                        ctx.put(slot.slot(), 0, q, slot.slot(), 0, 8, lpf::MSG_DEFAULT)?;
                    }
                }
                ctx.sync(lpf::SYNC_DEFAULT)?;
                ctx.slice(&slot)[0] as usize
            };
            let mut bytes = if pid == 0 { args.input.to_vec() } else { vec![0u8; length] };
            {
                let slot = ctx.register_global(&mut bytes)?;
                ctx.sync(lpf::SYNC_DEFAULT)?;
                if pid == 0 {
                    for q in 1..n {
                        ctx.put(slot.slot(), 0, q, slot.slot(), 0, length, lpf::MSG_DEFAULT)?;
                    }
                }
                ctx.sync(lpf::SYNC_DEFAULT)?;
            }
            Ok(bytes)
        };
        if let Ok(out) = step(ctx) {
            if ctx.pid() == first {
                *lock(&got) = Some(out);
            }
        }
    };
    init.hook(&spmd, Args { input: &input, output: &mut [], symbols: &[] })?;
    *data = lock(&got).take().ok_or_else(|| Error::fatal("the job's command did not arrive"))?;
    Ok(())
}

/// A command from pid 0 to the other processes of the job.
enum Command {
    Quit,
    /// `debug`: pid 0 runs in debug mode (its program's debug header switched it on),
    /// so the others must too: the checks at a sync are collective.
    Exec { p: Pid, port: u16, spmd: FnRef, symbols: Vec<FnRef>, debug: bool },
}

/// A function (or NULL) named portably: the loaded object holding it and its offset
/// from where that object is loaded.
#[derive(Debug, PartialEq)]
struct FnRef {
    object: Vec<u8>,
    offset: usize,
    null: bool,
}

impl Command {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Command::Quit => out.push(QUIT),
            Command::Exec { p, port, spmd, symbols, debug } => {
                out.push(EXEC);
                out.push(*debug as u8);
                out.extend_from_slice(&p.to_le_bytes());
                out.extend_from_slice(&port.to_le_bytes());
                out.extend_from_slice(&(symbols.len() as u64).to_le_bytes());
                for f in std::iter::once(spmd).chain(symbols) {
                    out.push(f.null as u8);
                    out.extend_from_slice(&(f.object.len() as u64).to_le_bytes());
                    out.extend_from_slice(&f.object);
                    out.extend_from_slice(&(f.offset as u64).to_le_bytes());
                }
            }
        }
        out
    }

    fn decode(bytes: &[u8]) -> Result<Command> {
        let bad = || Error::fatal(format!("a command of {} bytes from pid 0 is malformed", bytes.len()));
        let mut at = 0;
        let mut take = |n: usize| -> Result<&[u8]> {
            let s = bytes.get(at..at + n).ok_or_else(bad)?;
            at += n;
            Ok(s)
        };
        let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().expect("8 bytes"));
        match take(1)?[0] {
            QUIT => Ok(Command::Quit),
            EXEC => {
                let debug = take(1)?[0] != 0;
                let p = Pid::from_le_bytes(take(4)?.try_into().expect("4 bytes"));
                let port = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes"));
                let count = u64_of(take(8)?) as usize;
                let mut fns = Vec::new();
                for _ in 0..=count {
                    let null = take(1)?[0] != 0;
                    let len = u64_of(take(8)?) as usize;
                    let object = take(len)?.to_vec();
                    let offset = u64_of(take(8)?) as usize;
                    fns.push(FnRef { object, offset, null });
                }
                let spmd = fns.remove(0);
                Ok(Command::Exec { p, port, spmd, symbols: fns, debug })
            }
            _ => Err(bad()),
        }
    }
}

/// An object loaded in this process.
struct LoadedObject {
    /// Its name as the dynamic loader has it (empty for the executable).
    name: Vec<u8>,
    /// Where it is loaded: its addresses are this plus those of its file.
    bias: usize,
    /// The address ranges of its loaded segments.
    segments: Vec<(usize, usize)>,
}

/// The objects loaded in this process, in the dynamic loader's order.
fn loaded_objects() -> Vec<LoadedObject> {
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
        let list = &mut *(data as *mut Vec<LoadedObject>);
        let info = &*info;
        let name = if info.dlpi_name.is_null() { Vec::new() } else { CStr::from_ptr(info.dlpi_name as *const c_char).to_bytes().to_vec() };
        let bias = info.dlpi_addr as usize;
        let segments = (0..info.dlpi_phnum as usize)
            .map(|i| &*info.dlpi_phdr.add(i))
            .filter(|ph| ph.p_type == libc::PT_LOAD)
            .map(|ph| (bias + ph.p_vaddr as usize, bias + (ph.p_vaddr + ph.p_memsz) as usize))
            .collect();
        list.push(LoadedObject { name, bias, segments });
        0
    }
    let mut list: Vec<LoadedObject> = Vec::new();
    // SAFETY: the callback gets our Vec as data and reads the entries dl_iterate_phdr
    // passes, valid during the call.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut list as *mut _ as *mut c_void) };
    list
}

/// The portable name of the function at `addr` (0: NULL).
fn locate(addr: usize) -> Result<FnRef> {
    if addr == 0 {
        return Ok(FnRef { object: Vec::new(), offset: 0, null: true });
    }
    loaded_objects()
        .into_iter()
        .find(|o| o.segments.iter().any(|&(s, e)| (s..e).contains(&addr)))
        .map(|o| FnRef { object: o.name, offset: addr - o.bias, null: false })
        .ok_or_else(|| Error::fatal(format!("lpf_exec: the function at {addr:#x} is in no loaded object of this program")))
}

/// The address in this process of the function `f` names (None: NULL).
fn resolve(f: &FnRef) -> Result<Option<usize>> {
    if f.null {
        return Ok(None);
    }
    loaded_objects()
        .into_iter()
        .find(|o| o.name == f.object)
        .map(|o| Some(o.bias + f.offset))
        .ok_or_else(|| {
            Error::fatal(format!(
                "pid 0's SPMD function or symbol is in {:?}, which this process has not loaded",
                String::from_utf8_lossy(&f.object)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" fn marker() {}

    #[test]
    fn a_function_located_resolves_to_itself() {
        let addr = marker as *const () as usize;
        let f = locate(addr).unwrap();
        assert_eq!(resolve(&f).unwrap(), Some(addr));
        assert_eq!(resolve(&locate(0).unwrap()).unwrap(), None);
    }

    #[test]
    fn commands_survive_encoding() {
        let f = |o: &[u8], off, null| FnRef { object: o.to_vec(), offset: off, null };
        for debug in [false, true] {
            let c = Command::Exec { p: 3, port: 4242, spmd: f(b"", 17, false), symbols: vec![f(b"/lib/x.so", 9, false), f(b"", 0, true)], debug };
            match Command::decode(&c.encode()).unwrap() {
                Command::Exec { p, port, spmd, symbols, debug: decoded } => {
                    assert_eq!((p, port, decoded), (3, 4242, debug));
                    assert_eq!(spmd, f(b"", 17, false));
                    assert_eq!(symbols, vec![f(b"/lib/x.so", 9, false), f(b"", 0, true)]);
                }
                Command::Quit => panic!("decoded as quit"),
            }
        }
        assert!(matches!(Command::decode(&[QUIT]).unwrap(), Command::Quit));
        assert!(Command::decode(&[EXEC, 1]).is_err());
    }
}
