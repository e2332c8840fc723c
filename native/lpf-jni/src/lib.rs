//! The JNI side of the Spark bridge: native methods of the Java class
//! `org.lpf.spark.LpfNative` (see jvm/src/main/java/org/lpf/spark/LpfNative.java).
//!
//! A JVM task joins an LPF group (`initShm` for tasks that are threads of one JVM,
//! `initTcp` for processes meeting over TCP), runs SPMD sections on it (`hook*`: a
//! bundled algorithm by name, or an `lpf_spmd_t` from a user's shared library), and
//! leaves (`finalizeInit`). The group is a `long` handle owned by the Java side.
//!
//! Every entry point catches panics (none unwinds into the JVM) and turns every error
//! into a thrown `org.lpf.spark.LpfException(pid, host, phase, message)`.

mod algorithms;
mod generate;
mod graph_call;
mod layout;
mod pagerank;
mod progress;
mod request;
mod resident;
mod session;
mod userlib;
mod verdict;

/// Shared-memory groups are matched by p alone, so tests that start groups in this test
/// binary take turns.
#[cfg(test)]
pub(crate) static SHM_TEST_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `body` on one shared-memory LPF process per input (pid = its index), each with its
/// own input, in turn with the other tests that start groups; the results by pid.
#[cfg(test)]
pub(crate) fn on_shm_threads(
    inputs: Vec<Vec<u8>>,
    body: impl Fn(&mut lpf::Context, &[u8]) -> Result<Vec<u8>, String> + Sync,
) -> Vec<Result<Vec<u8>, String>> {
    let p = inputs.len() as u32;
    let _turn = SHM_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let body = &body;
    std::thread::scope(|s| {
        let hs: Vec<_> = inputs
            .into_iter()
            .enumerate()
            .map(|(pid, input)| {
                s.spawn(move || {
                    let init = lpf::ShmInit::new(pid as u32, p).unwrap();
                    let got = std::sync::Mutex::new(None);
                    let spmd = |c: &mut lpf::Context, _a: lpf::Args<'_>| *got.lock().unwrap() = Some(body(c, &input));
                    let r = init.hook(&spmd, lpf::Args::none());
                    match (got.into_inner().unwrap(), r) {
                        (Some(x), _) => x,
                        (None, Err(e)) => Err(e.to_string()),
                        (None, Ok(())) => Err("no result".into()),
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

use jni::errors::ThrowRuntimeExAndDefault;
use jni::objects::{JByteArray, JByteBuffer, JClass, JString};
use jni::sys::{jint, jlong};
use jni::{jni_sig, jni_str, Env, EnvUnowned, JValue};
use session::{Failure, Phase, Program, Session, TcpParams};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Who is failing, for the exception: pid (-1 if unknown) and host.
struct Who {
    pid: i32,
    host: String,
}

fn local_host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown-host".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_else(|| "(non-string panic payload)".into())
}

/// Throws `LpfException(pid, host, phase, message)` (unless a Java exception is already
/// pending, which then stands).
fn throw_lpf(env: &mut Env<'_>, who: &Who, failure: &Failure) -> jni::errors::Result<()> {
    if env.exception_check() {
        return Ok(());
    }
    let host = env.new_string(&who.host)?;
    let phase = env.new_string(failure.phase.name())?;
    let message = env.new_string(&failure.message)?;
    let e = env.new_object(
        jni_str!("org/lpf/spark/LpfException"),
        jni_sig!("(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;Z)V"),
        &[
            JValue::Int(who.pid),
            JValue::Object(&host),
            JValue::Object(&phase),
            JValue::Object(&message),
            JValue::Bool(failure.permanent),
        ],
    )?;
    let e = env.cast_local::<jni::objects::JThrowable>(e)?;
    env.throw(e)
}

/// The body of every entry point: runs `body`, and on an error or a panic throws an
/// `LpfException` and returns `T::default()`. `who` names the process for messages.
fn entry<'l, T: Default + 'l>(
    unowned: &mut EnvUnowned<'l>,
    phase: Phase,
    who: impl FnOnce() -> Who,
    body: impl FnOnce(&mut Env<'l>) -> Result<T, Failure>,
) -> T {
    unowned
        .with_env(|env| -> jni::errors::Result<T> {
            let failure = match catch_unwind(AssertUnwindSafe(|| body(env))) {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(f)) => f,
                Err(p) => Failure::new(phase, format!("internal panic in the LPF native library: {}", panic_text(&*p))),
            };
            let who = catch_unwind(AssertUnwindSafe(who)).unwrap_or_else(|_| local_who());
            throw_lpf(env, &who, &failure)?;
            Ok(T::default())
        })
        .resolve::<ThrowRuntimeExAndDefault>()
}

fn string(env: &Env<'_>, s: &JString<'_>, what: &str) -> Result<String, Failure> {
    if s.is_null() {
        return Err(Failure::new(Phase::Argument, format!("{what} is null")));
    }
    s.try_to_string(env).map_err(|e| Failure::new(Phase::Argument, format!("{what}: {e}")))
}

fn opt_string(env: &Env<'_>, s: &JString<'_>, what: &str) -> Result<Option<String>, Failure> {
    if s.is_null() {
        Ok(None)
    } else {
        string(env, s, what).map(Some)
    }
}

fn host_or_local(env: &Env<'_>, s: &JString<'_>) -> String {
    opt_string(env, s, "host").ok().flatten().filter(|h| !h.is_empty()).unwrap_or_else(local_host_name)
}

fn pid_arg(pid: jint, nprocs: jint) -> Result<(u32, u32), Failure> {
    if nprocs <= 0 || pid < 0 || pid >= nprocs {
        return Err(Failure::new(Phase::Argument, format!("pid {pid} of nprocs {nprocs}: need 0 <= pid < nprocs")));
    }
    Ok((pid as u32, nprocs as u32))
}

/// The session behind a handle.
///
/// # Safety
/// `handle` must come from `initShm`/`initTcp` and not have been finalized (the Java
/// class `LpfGroup` guarantees both).
unsafe fn session<'a>(handle: jlong) -> Result<&'a Session, Failure> {
    if handle == 0 {
        return Err(Failure::new(Phase::Argument, "the LPF group handle is 0 (closed or never opened)"));
    }
    Ok(&*(handle as *const Session))
}

/// The cancellation token behind a handle from `newCancel` (`Cancel::NEVER` for 0).
///
/// # Safety
/// `handle` must be 0 or come from `newCancel` and not yet be freed: the Java side
/// (`LpfCancel`) frees it once, after every call that was given it returned.
unsafe fn cancel_token<'a>(handle: jlong) -> &'a lpf::Cancel {
    if handle == 0 {
        &lpf::Cancel::NEVER
    } else {
        &*(handle as *const lpf::Cancel)
    }
}

/// Frees what a handle made by `Box::into_raw` owns (0: nothing).
///
/// # Safety
/// `handle` must be 0 or come from `Box::into_raw` of a `Box<T>` not freed yet (the Java
/// side frees each handle once).
unsafe fn free_boxed<T>(handle: jlong) {
    if handle != 0 {
        drop(Box::from_raw(handle as *mut T));
    }
}

/// This process, for messages of calls that have no group.
fn local_who() -> Who {
    Who { pid: -1, host: local_host_name() }
}

fn who_of(handle: jlong) -> Who {
    // SAFETY: as in `session`; called only on handles the entry point was given.
    match unsafe { session(handle) } {
        Ok(s) => Who { pid: s.pid as i32, host: s.host.clone() },
        Err(_) => Who { pid: -1, host: local_host_name() },
    }
}

/// The arguments the `hook*` entry points share, decoded once for all of them: the group,
/// the program (a bundled algorithm by name, or `symbol` of the shared library `library`;
/// the `hookProduce*` calls name a bundled algorithm alone) and where LPF process 0 sends
/// its progress (`hookProduce*` only).
struct HookCall<'a> {
    session: &'a Session,
    algorithm: Option<String>,
    library: Option<String>,
    symbol: Option<String>,
    progress: Option<progress::ProgressSink>,
}

impl<'a> HookCall<'a> {
    /// `hookArrays`' and `hookDirect`'s leading arguments (group, algorithm, library,
    /// symbol).
    ///
    /// # Safety
    /// `handle` as in [`session`].
    unsafe fn from_jni(
        env: &Env<'_>,
        handle: jlong,
        algorithm: &JString<'_>,
        library: &JString<'_>,
        symbol: &JString<'_>,
    ) -> Result<HookCall<'a>, Failure> {
        Ok(HookCall {
            session: session(handle)?,
            algorithm: opt_string(env, algorithm, "algorithm")?,
            library: opt_string(env, library, "library")?,
            symbol: opt_string(env, symbol, "symbol")?,
            progress: None,
        })
    }

    /// The `hookProduce*` calls' arguments but the input (group, algorithm: not null,
    /// progress host, port and hello: see [`progress_sink`]).
    ///
    /// # Safety
    /// `handle` as in [`session`].
    unsafe fn produce_from_jni(
        env: &Env<'_>,
        handle: jlong,
        algorithm: &JString<'_>,
        progress_host: &JString<'_>,
        progress_port: jint,
        progress_hello: &JString<'_>,
    ) -> Result<HookCall<'a>, Failure> {
        let session = session(handle)?;
        let algorithm = Some(string(env, algorithm, "algorithm")?);
        let progress = progress_sink(env, progress_host, progress_port, progress_hello)?;
        Ok(HookCall { session, algorithm, library: None, symbol: None, progress })
    }

    fn program(&self) -> Result<Program<'_>, Failure> {
        match (&self.algorithm, &self.library, &self.symbol) {
            (Some(a), None, None) => Ok(Program::Bundled(a)),
            (None, Some(l), Some(s)) => Ok(Program::Library { path: l, symbol: s }),
            _ => Err(Failure::new(Phase::Argument, "give either a bundled algorithm's name, or a library path and a symbol")),
        }
    }

    /// Runs the program on `input`, writing `output` (its length fixed by the caller).
    fn run(&self, input: &[u8], output: &mut [u8]) -> Result<(), Failure> {
        self.session.hook(self.program()?, input, output)
    }

    /// Runs the bundled algorithm that produces its output (its size known after the run).
    fn produce(&self, input: request::RequestBytes<'_>) -> Result<Vec<u8>, Failure> {
        match self.program()? {
            Program::Bundled(name) => self.session.hook_produce(name, input, self.progress.as_ref()),
            Program::Library { .. } => Err(Failure::new(Phase::Argument, "a library program needs its output length")),
        }
    }
}

/// A hook's output as a new Java byte array.
fn output_array<'l>(env: &mut Env<'l>, out: &[u8]) -> Result<JByteArray<'l>, Failure> {
    env.byte_array_from_slice(out).map_err(|e| Failure::new(Phase::Hook, format!("returning the output: {e}")))
}

/// `static native String version()`: the library's version and the engines it has.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_version<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>) -> JString<'l> {
    entry(&mut env, Phase::Argument, local_who, |env| {
        env.new_string(format!("lpf-jni {} engines=shm,tcp", env!("CARGO_PKG_VERSION")))
            .map_err(|e| Failure::new(Phase::Argument, e.to_string()))
    })
}

/// `static native String algorithms()`: the bundled algorithms, comma-separated.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_algorithms<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>) -> JString<'l> {
    entry(&mut env, Phase::Argument, local_who, |env| {
        let names: Vec<&str> = algorithms::ALGORITHMS.iter().map(|a| a.name).collect();
        env.new_string(names.join(",")).map_err(|e| Failure::new(Phase::Argument, e.to_string()))
    })
}

/// `static native long outputLength(String algorithm, long inputLength)`: -1 for an
/// algorithm that produces its output (its size is known only after the run).
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_outputLength<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    algorithm: JString<'l>,
    input_len: jlong,
) -> jlong {
    entry(&mut env, Phase::Argument, local_who, |env| {
        let name = string(env, &algorithm, "algorithm")?;
        let alg = algorithms::by_name(&name).map_err(|m| Failure::new(Phase::Argument, m))?;
        // -1: the algorithm produces its output (size known after the run).
        Ok(alg.output_len(input_len.max(0) as usize).map_or(-1, |n| n as jlong))
    })
}

/// `static native void checkPageRank(double alpha, double tol, long maxIter)`: PageRank's
/// parameter check (`graphblas::algorithms::pagerank::check_parameters_named`, the CLI's
/// too, with the Spark API's parameter names), for the driver to fail early with the
/// message every process would give.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_checkPageRank<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    alpha: jni::sys::jdouble,
    tol: jni::sys::jdouble,
    max_iter: jlong,
) {
    entry(&mut env, Phase::Argument, || Who { pid: -1, host: "driver".into() }, |_env| {
        pagerank::check_parameters(alpha, tol, max_iter).map_err(|m| Failure::permanent(Phase::Argument, m))
    })
}

/// `static native String describeRequest(String algorithm, ByteBuffer request)`: the
/// request of the bundled `pagerank` or `graph-call` as the native side reads it, one
/// line (every field), or the parse error: the JVM's encoders are tested against it, and
/// the driver checks a kernel's parameters with it (the parse is their one check).
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_describeRequest<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    algorithm: JString<'l>,
    request: JByteBuffer<'l>,
) -> JString<'l> {
    entry(&mut env, Phase::Argument, || Who { pid: -1, host: "driver".into() }, |env| {
        let name = string(env, &algorithm, "algorithm")?;
        // SAFETY: the Java caller keeps the buffer reachable during the call; only read.
        let b = unsafe { direct(env, &request, "request")? };
        let text = match name.as_str() {
            "pagerank" => pagerank::describe(b),
            "graph-call" => graph_call::describe(b),
            other => Err(format!("{other:?} has no request to describe (pagerank, graph-call)")),
        }
        .map_err(|m| Failure::permanent(Phase::Argument, m))?;
        env.new_string(text).map_err(|e| Failure::new(Phase::Argument, e.to_string()))
    })
}

/// `static native long dropGraph(String graphId)`: drops every part of the resident graph
/// `graphId` (32 hex digits) this process keeps; the bytes released.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_dropGraph<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>, graph_id: JString<'l>) -> jlong {
    entry(&mut env, Phase::Argument, local_who, |env| {
        let text = string(env, &graph_id, "graphId")?;
        let id = resident::parse_hex(&text).map_err(|m| Failure::permanent(Phase::Argument, m))?;
        Ok(resident::drop_graph(&id) as jlong)
    })
}

/// `static native String keptGraphs()`: the resident graphs' parts this process keeps,
/// one line each (graph id, pid, p, bytes).
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_keptGraphs<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>) -> JString<'l> {
    entry(&mut env, Phase::Argument, local_who, |env| {
        env.new_string(resident::list()).map_err(|e| Failure::new(Phase::Argument, e.to_string()))
    })
}

/// `static native long newCancel()`: a cancellation token (an `lpf::Cancel`) for
/// `initShm` and `initTcp`; freed by `freeCancel`.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_newCancel<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>) -> jlong {
    entry(&mut env, Phase::Argument, local_who, |_env| {
        Ok(Box::into_raw(Box::new(lpf::Cancel::new())) as jlong)
    })
}

/// `static native void cancel(long token, String reason)`: sets the token (from any
/// thread): the joins, waits and syncs of the groups made with it fail, naming
/// `reason`.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_cancel<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>, token: jlong, reason: JString<'l>) {
    entry(&mut env, Phase::Argument, local_who, |env| {
        let reason = opt_string(env, &reason, "reason")?.unwrap_or_default();
        // SAFETY: see `cancel_token`.
        unsafe { cancel_token(token) }.cancel(reason);
        Ok(())
    })
}

/// `static native void freeCancel(long token)`: frees a token of `newCancel` (the
/// groups made with it hold their own reference).
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_freeCancel<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>, token: jlong) {
    entry(&mut env, Phase::Finalize, local_who, |_env| {
        // SAFETY: the token came from Box::into_raw in newCancel and LpfCancel frees it
        // once.
        unsafe { free_boxed::<lpf::Cancel>(token) };
        Ok(())
    })
}

/// `static native long initShm(String key, int pid, int nprocs, long timeoutMs, String
/// host, long cancel)`: joins the group named `key` of `nprocs` threads of this JVM (each
/// task thread calls it with its own pid; `key` names the job, so any number of jobs can
/// form groups at once); returns when all have joined, fails after `timeoutMs` naming
/// the pids that never came, at once on a pid joining twice or a different nprocs, or
/// when the token `cancel` (0: none) is set.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_lpf_spark_LpfNative_initShm<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    key: JString<'l>,
    pid: jint,
    nprocs: jint,
    timeout_ms: jlong,
    host: JString<'l>,
    cancel: jlong,
) -> jlong {
    let mut host_name = String::new();
    entry(&mut env, Phase::Bootstrap, || Who { pid, host: local_host_name() }, |env| {
        host_name = host_or_local(env, &host);
        let (pid, nprocs) = pid_arg(pid, nprocs)?;
        if timeout_ms <= 0 {
            return Err(Failure::new(Phase::Argument, format!("timeout {timeout_ms} ms: must be positive")));
        }
        let key = string(env, &key, "group key")?;
        // SAFETY: see `cancel_token`.
        let cancel = unsafe { cancel_token(cancel) };
        let s = Session::shm(&key, pid, nprocs, timeout_ms as u64, host_name.clone(), cancel)?;
        Ok(Box::into_raw(Box::new(s)) as jlong)
    })
}

/// `static native long initTcp(String master, int port, int pid, int nprocs,
/// long timeoutMs, String secret, int threads, String job, String host, long cancel)`:
/// step 1 of joining a group of `nprocs` processes over TCP. pid 0 binds `master:port`
/// at once (port 0: the OS chooses; read it with `boundPort` and publish it); the
/// others only check their arguments. Step 2, `join` (or the first hook), waits for the
/// group and fails after `timeoutMs` if it does not form, or once the token `cancel`
/// (0: none) is set. Processes with different `job` strings or secrets refuse each
/// other.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_lpf_spark_LpfNative_initTcp<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    master: JString<'l>,
    port: jint,
    pid: jint,
    nprocs: jint,
    timeout_ms: jlong,
    secret: JString<'l>,
    threads: jint,
    job: JString<'l>,
    host: JString<'l>,
    cancel: jlong,
) -> jlong {
    let mut host_name = local_host_name();
    let host_for_err = std::cell::RefCell::new(host_name.clone());
    entry(&mut env, Phase::Bootstrap, || Who { pid, host: host_for_err.borrow().clone() }, |env| {
        host_name = host_or_local(env, &host);
        *host_for_err.borrow_mut() = host_name.clone();
        let (pid, nprocs) = pid_arg(pid, nprocs)?;
        if !(0..=65535).contains(&port) {
            return Err(Failure::new(Phase::Argument, format!("port {port} is not in 0..=65535")));
        }
        if timeout_ms <= 0 {
            return Err(Failure::new(Phase::Argument, format!("timeout {timeout_ms} ms: must be positive")));
        }
        let params = TcpParams {
            master: string(env, &master, "master address")?,
            port: port as u16,
            pid,
            nprocs,
            timeout_ms: timeout_ms as u64,
            secret: opt_string(env, &secret, "secret")?.map(lpf::tcp::Secret::new),
            threads: threads.max(0) as u32,
            job: opt_string(env, &job, "job")?.unwrap_or_default(),
        };
        // SAFETY: see `cancel_token`.
        let cancel = unsafe { cancel_token(cancel) };
        let s = Session::tcp(&params, host_name.clone(), cancel)?;
        Ok(Box::into_raw(Box::new(s)) as jlong)
    })
}

/// `static native void join(long group)`: step 2 of a TCP init (waits for the group to
/// form, at most the timeout); nothing for the other engines or when joined already.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_join<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>, handle: jlong) {
    entry(&mut env, Phase::Bootstrap, || who_of(handle), |_env| {
        // SAFETY: see `session`.
        unsafe { session(handle) }?.join()
    })
}

/// `static native int boundPort(long group)`.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_boundPort<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>, handle: jlong) -> jint {
    entry(&mut env, Phase::Bootstrap, || who_of(handle), |_env| {
        // SAFETY: see `session`.
        Ok(unsafe { session(handle) }?.bound_port() as jint)
    })
}

/// `static native String engine(long group)`: `shm` or `tcp`.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_engine<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>, handle: jlong) -> JString<'l> {
    entry(&mut env, Phase::Argument, || who_of(handle), |env| {
        // SAFETY: see `session`.
        let name = unsafe { session(handle) }?.engine();
        env.new_string(name).map_err(|e| Failure::new(Phase::Argument, e.to_string()))
    })
}

/// `static native byte[] hookArrays(long group, String algorithm, String library,
/// String symbol, byte[] input, int outputLength)`: runs the program (a bundled
/// algorithm, or `symbol` from the shared library `library`) on this process's input
/// and returns its output (`outputLength` bytes, zeroed before the run).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_lpf_spark_LpfNative_hookArrays<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    handle: jlong,
    algorithm: JString<'l>,
    library: JString<'l>,
    symbol: JString<'l>,
    input: JByteArray<'l>,
    output_len: jint,
) -> JByteArray<'l> {
    entry(&mut env, Phase::Hook, || who_of(handle), |env| {
        // SAFETY: see `session`.
        let call = unsafe { HookCall::from_jni(env, handle, &algorithm, &library, &symbol) }?;
        let prog = call.program()?;
        let input = if input.is_null() {
            Vec::new()
        } else {
            env.convert_byte_array(&input).map_err(|e| Failure::new(Phase::Argument, format!("input: {e}")))?
        };
        if output_len < 0 {
            // The program's own output: produced (its size known after the run), or the
            // fixed size a bundled algorithm writes for this input.
            let Program::Bundled(name) = prog else {
                return Err(Failure::new(Phase::Argument, format!("output length {output_len}: a library program needs its output length")));
            };
            let alg = algorithms::by_name(name).map_err(|m| Failure::new(Phase::Argument, m))?;
            let out = match alg.output_len(input.len()) {
                None => call.produce(request::RequestBytes::Contiguous(&input))?,
                Some(n) => {
                    let mut out = vec![0u8; n];
                    call.run(&input, &mut out)?;
                    out
                }
            };
            return output_array(env, &out);
        }
        let mut out = vec![0u8; output_len as usize];
        call.run(&input, &mut out)?;
        output_array(env, &out)
    })
}

/// The bytes of a direct buffer (its whole capacity; pass `buffer.slice()` for a part).
///
/// # Safety
/// The buffer must stay alive and unmoved (direct buffers do not move) during the call.
unsafe fn direct<'a>(env: &Env<'_>, b: &JByteBuffer<'_>, what: &str) -> Result<&'a mut [u8], Failure> {
    if b.is_null() {
        return Ok(&mut []);
    }
    let bad = |e: jni::errors::Error| Failure::new(Phase::Argument, format!("{what} must be a direct ByteBuffer: {e}"));
    let ptr = env.get_direct_buffer_address(b).map_err(bad)?;
    let len = env.get_direct_buffer_capacity(b).map_err(bad)?;
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(Failure::new(Phase::Argument, format!("{what} must be a direct ByteBuffer")));
    }
    Ok(std::slice::from_raw_parts_mut(ptr, len))
}

/// `static native void hookDirect(long group, String algorithm, String library,
/// String symbol, ByteBuffer input, ByteBuffer output)`: as `hookArrays`, with direct
/// buffers read and written in place (no copy); their capacities are the lengths.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_lpf_spark_LpfNative_hookDirect<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    handle: jlong,
    algorithm: JString<'l>,
    library: JString<'l>,
    symbol: JString<'l>,
    input: JByteBuffer<'l>,
    output: JByteBuffer<'l>,
) {
    entry(&mut env, Phase::Hook, || who_of(handle), |env| {
        // SAFETY: see `session`.
        let call = unsafe { HookCall::from_jni(env, handle, &algorithm, &library, &symbol) }?;
        // Checked before the buffers are looked at, as every hook does.
        call.program()?;
        // SAFETY: the Java caller keeps both buffers reachable during the call; the
        // input is only read. If the caller passes one buffer twice, the program sees
        // aliasing input and output, which LPF programs must tolerate (they are bytes).
        let (inp, out) = unsafe { (direct(env, &input, "input")?, direct(env, &output, "output")?) };
        call.run(inp, out)
    })
}

/// The progress sink of a `hookProduce*` call: none when `progress_host` is null.
fn progress_sink(
    env: &Env<'_>,
    progress_host: &JString<'_>,
    progress_port: jint,
    progress_hello: &JString<'_>,
) -> Result<Option<progress::ProgressSink>, Failure> {
    match opt_string(env, progress_host, "progress host")? {
        None => Ok(None),
        Some(host) => {
            let port = u16::try_from(progress_port)
                .map_err(|_| Failure::new(Phase::Argument, format!("progress port {progress_port} is not in 0..=65535")))?;
            let hello = opt_string(env, progress_hello, "progress hello")?.unwrap_or_default();
            Ok(progress::ProgressSink::connect(&host, port, &hello))
        }
    }
}

/// `static native byte[] hookProduceDirect(long group, String algorithm, ByteBuffer
/// input, String progressHost, int progressPort, String progressHello)`: runs a bundled
/// algorithm that produces its output (e.g. `pagerank`) on the direct buffer `input`
/// (its whole capacity, read in place: no copy of large inputs) and returns the output.
/// With `progressHost` not null, this process sends its per-iteration progress to
/// `progressHost:progressPort`, first the line `progressHello` (see [`progress`]).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_lpf_spark_LpfNative_hookProduceDirect<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    handle: jlong,
    algorithm: JString<'l>,
    input: JByteBuffer<'l>,
    progress_host: JString<'l>,
    progress_port: jint,
    progress_hello: JString<'l>,
) -> JByteArray<'l> {
    entry(&mut env, Phase::Hook, || who_of(handle), |env| {
        // SAFETY: see `session`.
        let call = unsafe { HookCall::produce_from_jni(env, handle, &algorithm, &progress_host, progress_port, &progress_hello) }?;
        // SAFETY: the Java caller keeps the buffer reachable during the call; only read.
        let inp = unsafe { direct(env, &input, "input")? };
        let out = call.produce(request::RequestBytes::Contiguous(inp))?;
        output_array(env, &out)
    })
}

/// The request behind a handle from `requestOpen`.
///
/// # Safety
/// `handle` must come from `requestOpen` and be neither freed nor handed over, and no
/// other call may use it at the same time (the Java class `LpfRequest` frees or hands it
/// over once and is used by one task thread).
unsafe fn native_request<'a>(handle: jlong) -> Result<&'a mut request::NativeRequest, Failure> {
    if handle == 0 {
        return Err(Failure::new(Phase::Argument, "the request handle is 0 (freed or handed over)"));
    }
    Ok(&mut *(handle as *mut request::NativeRequest))
}

/// `static native long requestOpen()`: an empty request in native memory (see [`request`]).
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_requestOpen<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>) -> jlong {
    entry(&mut env, Phase::Argument, local_who, |_env| Ok(Box::into_raw(Box::new(request::NativeRequest::new())) as jlong))
}

/// `static native void requestAppend(long request, int section, byte[] bytes, int from,
/// int length)`: appends `bytes[from, from + length)` to a section of the request; an
/// allocation that fails is an error naming the bytes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_lpf_spark_LpfNative_requestAppend<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    handle: jlong,
    section: jint,
    bytes: JByteArray<'l>,
    from: jint,
    length: jint,
) {
    entry(&mut env, Phase::Argument, local_who, |env| {
        // SAFETY: see `native_request`.
        let r = unsafe { native_request(handle) }?;
        let k = usize::try_from(length).map_err(|_| Failure::new(Phase::Argument, format!("appending {length} bytes")))?;
        let section = usize::try_from(section).unwrap_or(usize::MAX);
        r.append_with(section, k, |to| {
            // SAFETY: i8 and u8 have one size and alignment and every bit pattern is valid
            // in both; `to` is borrowed mutably for this call only.
            let to = unsafe { std::slice::from_raw_parts_mut(to.as_mut_ptr().cast::<i8>(), to.len()) };
            bytes.get_region(env, from, to)
        })
        .map_err(|m| Failure::new(Phase::Argument, m))
    })
}

/// `static native void requestFree(long request)`: frees a request (0: nothing).
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_requestFree<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>, handle: jlong) {
    entry(&mut env, Phase::Argument, local_who, |_env| {
        // SAFETY: the handle came from Box::into_raw in `requestOpen` and the Java side
        // frees it once (or hands it over instead).
        unsafe { free_boxed::<request::NativeRequest>(handle) };
        Ok(())
    })
}

/// `static native byte[] hookProduceRequest(long group, String algorithm, long request,
/// String progressHost, int progressPort, String progressHello)`: as
/// `hookProduceDirect`, on a request in native memory (any size), read in place.
/// The request is handed over: this call frees it (the algorithm may free it early; see
/// [`request`]), whatever happens.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_lpf_spark_LpfNative_hookProduceRequest<'l>(
    mut env: EnvUnowned<'l>,
    _c: JClass<'l>,
    handle: jlong,
    algorithm: JString<'l>,
    request: jlong,
    progress_host: JString<'l>,
    progress_port: jint,
    progress_hello: JString<'l>,
) -> JByteArray<'l> {
    entry(&mut env, Phase::Hook, || who_of(handle), |env| {
        if request == 0 {
            return Err(Failure::new(Phase::Argument, "the request handle is 0 (freed or never made)"));
        }
        // SAFETY: the handle came from Box::into_raw in `requestOpen`, and the Java side
        // hands it over once (LpfRequest forgets it before this call).
        let owned = unsafe { Box::from_raw(request as *mut request::NativeRequest) };
        // SAFETY: see `session`.
        let call = unsafe { HookCall::produce_from_jni(env, handle, &algorithm, &progress_host, progress_port, &progress_hello) }?;
        let out = call.produce(request::RequestBytes::Sections(std::sync::Arc::from(owned)))?;
        output_array(env, &out)
    })
}

/// `static native void finalizeInit(long group)`: leaves the group and frees it.
#[no_mangle]
pub extern "system" fn Java_org_lpf_spark_LpfNative_finalizeInit<'l>(mut env: EnvUnowned<'l>, _c: JClass<'l>, handle: jlong) {
    entry(&mut env, Phase::Finalize, || who_of(handle), |_env| {
        // SAFETY: the handle came from Box::into_raw in an init and the Java side
        // finalizes it once.
        unsafe { free_boxed::<Session>(handle) };
        Ok(())
    })
}




