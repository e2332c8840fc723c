//! One process's membership of an LPF group, as the JVM holds it (behind a `long`):
//! the init it joined with and who it is, for error messages.

use crate::algorithms;
use crate::request::RequestBytes;
use crate::userlib;
use lpf::{Args, Context, Pid};
use std::cell::RefCell;
use std::sync::Mutex;

/// Where an error happened, as `LpfException.phase` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Joining the group (connecting to the master, authenticating, meeting the peers).
    Bootstrap,
    /// Loading the user's SPMD library or finding its symbol.
    Load,
    /// Running the SPMD section.
    Hook,
    /// Releasing the group.
    Finalize,
    /// Checking the arguments of a native call.
    Argument,
}

impl Phase {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Phase::Bootstrap => "bootstrap",
            Phase::Load => "load",
            Phase::Hook => "hook",
            Phase::Finalize => "finalize",
            Phase::Argument => "argument",
        }
    }
}

/// An error on its way to the JVM.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) phase: Phase,
    pub(crate) message: String,
    /// Running again on the same input fails the same way (`LpfException.permanent`):
    /// a bad argument, a library that does not load, or an error the program itself
    /// reported while the group stayed intact (e.g. a malformed input file, which every
    /// process agrees on). Not for bootstrap failures or a lost peer, which a rerun of
    /// the stage may cure.
    pub(crate) permanent: bool,
}

impl Failure {
    /// A failure whose permanence follows from its phase: arguments and loading are
    /// permanent, the rest not (see [`Failure::permanent`] for program errors).
    pub(crate) fn new(phase: Phase, message: impl Into<String>) -> Failure {
        Failure { phase, message: message.into(), permanent: matches!(phase, Phase::Argument | Phase::Load) }
    }

    /// A failure that a rerun on the same input cannot cure.
    pub(crate) fn permanent(phase: Phase, message: impl Into<String>) -> Failure {
        Failure { phase, message: message.into(), permanent: true }
    }
}

/// What a TCP group is made from (the JVM side fills it in).
#[derive(Clone, Debug)]
pub(crate) struct TcpParams {
    pub(crate) master: String,
    pub(crate) port: u16,
    pub(crate) pid: Pid,
    pub(crate) nprocs: Pid,
    pub(crate) timeout_ms: u64,
    /// None: no authentication (the JVM passed null); an empty one is refused as short.
    pub(crate) secret: Option<lpf::tcp::Secret>,
    pub(crate) threads: Pid,
    /// Job identity: processes of different jobs (e.g. stage attempts) refuse each other.
    pub(crate) job: String,
}

enum State {
    /// Threads of this JVM (every task of the group runs in this executor).
    Shm(lpf::ShmInit),
    /// TCP, between its two steps: pid 0 has bound its port (to publish it).
    TcpPrepared(lpf::tcp::Prepared),
    /// Processes meeting over TCP, group formed.
    Tcp(lpf::tcp::TcpInit),
    /// A join failed; the group is unusable.
    Broken,
}

pub(crate) struct Session {
    pub(crate) pid: Pid,
    pub(crate) host: String,
    /// The LPF processes a hook runs in this task: a TCP group's threads, else 1.
    local: usize,
    state: RefCell<State>,
}

/// What a hook runs.
pub(crate) enum Program<'a> {
    Bundled(&'a str),
    Library { path: &'a str, symbol: &'a str },
}

impl Session {
    /// Joins the group of `nprocs` threads of this process named `key` (the job's
    /// identity: groups of different jobs never mix, whatever their sizes), waiting up
    /// to `timeout_ms` for the others.
    /// `cancel` stops the join and every hook's process (see [`lpf::Cancel`]).
    pub(crate) fn shm(key: &str, pid: Pid, nprocs: Pid, timeout_ms: u64, host: String, cancel: &lpf::Cancel) -> Result<Session, Failure> {
        if key.is_empty() {
            return Err(Failure::new(Phase::Argument, "the shared-memory group key is empty (it must name the job)"));
        }
        let timeout = std::time::Duration::from_millis(timeout_ms);
        let init = lpf::ShmInit::join_cancellable(key, pid, nprocs, timeout, cancel)
            .map_err(|e| Failure::new(Phase::Bootstrap, e.to_string()))?;
        Ok(Session { pid, host, local: 1, state: RefCell::new(State::Shm(init)) })
    }

    /// Step 1 of a TCP group: pid 0 binds its port (0: the OS chooses; see
    /// `bound_port`), the others only check their configuration. `join` is step 2.
    /// `cancel` stops the join and every hook's processes (see [`lpf::Cancel`]).
    pub(crate) fn tcp(p: &TcpParams, host: String, cancel: &lpf::Cancel) -> Result<Session, Failure> {
        let mut cfg = lpf::tcp::TcpConfig::new(p.master.clone(), p.port, p.pid, p.nprocs)
            .timeout(std::time::Duration::from_millis(p.timeout_ms))
            .threads(p.threads.max(1))
            .job(p.job.clone())
            .cancel(cancel);
        cfg.secret = p.secret.clone();
        let prepared = lpf::tcp::TcpInit::prepare(cfg).map_err(|e| Failure::new(Phase::Bootstrap, e.to_string()))?;
        Ok(Session { pid: p.pid, host, local: p.threads.max(1) as usize, state: RefCell::new(State::TcpPrepared(prepared)) })
    }


    /// Step 2 of a TCP group: waits (up to the timeout) for every process and connects
    /// them. Nothing to do for the other engines, or when already joined.
    pub(crate) fn join(&self) -> Result<(), Failure> {
        let mut state = self.state.borrow_mut();
        match std::mem::replace(&mut *state, State::Broken) {
            State::TcpPrepared(p) => match p.join() {
                Ok(init) => *state = State::Tcp(init),
                Err(e) => return Err(Failure::new(Phase::Bootstrap, e.to_string())),
            },
            State::Broken => return Err(Failure::new(Phase::Bootstrap, "an earlier join of this group failed")),
            other => *state = other,
        }
        Ok(())
    }

    /// The port the master listens on (0 where this process is not the master or the
    /// engine listens nowhere).
    pub(crate) fn bound_port(&self) -> u16 {
        match &*self.state.borrow() {
            State::TcpPrepared(p) => p.bound_port(),
            State::Tcp(t) => t.bound_port(),
            _ => 0,
        }
    }

    pub(crate) fn engine(&self) -> &'static str {
        match &*self.state.borrow() {
            State::Shm(_) => lpf::EngineKind::Shm.name(),
            State::TcpPrepared(_) => lpf::EngineKind::Tcp.name(),
            State::Tcp(t) => t.engine_name(),
            State::Broken => "broken",
        }
    }

    fn hook_raw(&self, spmd: lpf::Spmd<'_>, args: Args<'_>) -> lpf::Result<()> {
        self.join().map_err(|f| lpf::Error::fatal(f.message))?;
        match &*self.state.borrow() {
            State::Shm(i) => i.hook(spmd, args),
            State::Tcp(i) => i.hook(spmd, args),
            _ => Err(lpf::Error::fatal("the group is not usable (its join failed)")),
        }
    }

    /// Runs `program` as this process of the group, on `input`, writing `output`.
    pub(crate) fn hook(&self, program: Program<'_>, input: &[u8], output: &mut [u8]) -> Result<(), Failure> {
        self.join()?;
        let args = Args::new(input, output);
        let result = match program {
            Program::Bundled(name) => {
                let alg = algorithms::by_name(name).map_err(|m| Failure::new(Phase::Argument, m))?;
                let run = match alg.body {
                    algorithms::Body::Fixed { run, .. } => run,
                    algorithms::Body::Produces(_) => {
                        return Err(Failure::new(
                            Phase::Argument,
                            format!("{name} produces an output whose size is known only after the run: call it with output length -1"),
                        ))
                    }
                };
                let err = Mutex::new(None);
                let spmd = |c: &mut Context, a: Args<'_>| {
                    if let Err(e) = run(c, a) {
                        *err.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    }
                };
                let r = self.hook_raw(&spmd, args);
                match (err.into_inner().unwrap_or_else(|e| e.into_inner()), r) {
                    // The program's own error with the section intact: its input is bad.
                    (Some(m), Ok(())) => return Err(Failure::permanent(Phase::Hook, format!("{name}: {m}"))),
                    (Some(m), Err(_)) => Err(format!("{name}: {m}")),
                    (None, r) => r.map_err(|e| e.to_string()),
                }
            }
            Program::Library { path, symbol } => {
                let f = userlib::load(path, symbol).map_err(|m| Failure::new(Phase::Load, m))?;
                // SAFETY: `f` is the user's lpf_spmd_t; its lpf_* calls resolve to this
                // library's C ABI (userlib::load exports it), which wraps this Context.
                let spmd = |c: &mut Context, a: Args<'_>| unsafe { lpf_core::call_c_spmd(f, c, a) };
                self.hook_raw(&spmd, args).map_err(|e| format!("{symbol} from {path}: {e}"))
            }
        };
        result.map_err(|m| Failure::new(Phase::Hook, m))
    }

    /// Runs the bundled algorithm `name`, which produces its output (its size is
    /// known only after the run), on `input`, reporting its progress to `progress`.
    pub(crate) fn hook_produce(&self, name: &str, input: RequestBytes<'_>, progress: Option<&crate::progress::ProgressSink>) -> Result<Vec<u8>, Failure> {
        let alg = algorithms::by_name(name).map_err(|m| Failure::new(Phase::Argument, m))?;
        let produce = match alg.body {
            algorithms::Body::Produces(f) => f,
            algorithms::Body::Fixed { .. } => {
                return Err(Failure::new(
                    Phase::Argument,
                    format!("{name} writes a buffer of a known size: give the output length (or -1 for its own)"),
                ))
            }
        };
        self.join()?;
        let got: Mutex<Option<Result<Vec<u8>, String>>> = Mutex::new(None);
        let handed = InputForEach::new(input, self.local);
        let spmd = |c: &mut Context, _a: Args<'_>| {
            // A panic inside is caught by the engine: the hook returns Err, the peers'
            // syncs fail instead of waiting.
            let r = match handed.take() {
                Some(input) => produce(c, input, progress),
                None => Err("the request was given to every process of this task already".to_string()),
            };
            *got.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        };
        let r = self.hook_raw(&spmd, Args::none());
        let result = match (got.into_inner().unwrap_or_else(|e| e.into_inner()), r) {
            // The program's own error with the section intact (the processes agreed on
            // it, e.g. a malformed file): a rerun on the same input fails the same way.
            (Some(Err(m)), Ok(())) => return Err(Failure::permanent(Phase::Hook, format!("{name}: {m}"))),
            (Some(Err(m)), Err(_)) => Err(format!("{name}: {m}")),
            (Some(Ok(out)), Ok(())) => Ok(out),
            (Some(Ok(_)), Err(e)) | (None, Err(e)) => Err(format!("{name}: {e}")),
            (None, Ok(())) => Err(format!("{name}: the section ran no process of this group")),
        };
        result.map_err(|m| Failure::new(Phase::Hook, m))
    }
}

/// One request for the `local` LPF processes of a task: each takes its own `RequestBytes`, the
/// last one the original, so that once every process has dropped its own (graph-call:
/// once parsed) nothing holds the request's bytes.
struct InputForEach<'a> {
    slot: Mutex<(Option<RequestBytes<'a>>, usize)>,
}

impl<'a> InputForEach<'a> {
    fn new(input: RequestBytes<'a>, local: usize) -> Self {
        InputForEach { slot: Mutex::new((Some(input), local.max(1))) }
    }

    fn take(&self) -> Option<RequestBytes<'a>> {
        let mut s = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        match s.1 {
            0 => None,
            1 => {
                s.1 = 0;
                s.0.take()
            }
            _ => {
                s.1 -= 1;
                s.0.clone()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_local_process_takes_the_request_once_and_the_last_takes_the_original() {
        let bytes = std::sync::Arc::new(crate::request::NativeRequest::new());
        let each = InputForEach::new(RequestBytes::Sections(bytes.clone()), 3);
        let (a, b) = (each.take().unwrap(), each.take().unwrap());
        assert_eq!(std::sync::Arc::strong_count(&bytes), 4, "the slot's, two takers', this test's");
        let c = each.take().unwrap();
        assert!(each.take().is_none(), "a fourth process of a three-process task");
        assert_eq!(std::sync::Arc::strong_count(&bytes), 4, "the slot gave its own to the last taker");
        drop((a, b, c));
        assert_eq!(std::sync::Arc::strong_count(&bytes), 1, "nothing of the hook holds the request");
    }

    fn longs(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Runs `allreduce-sum-i64` as process `pid` of `p` in the group `key`.
    fn sum(key: &str, pid: u32, p: u32, input: Vec<u8>) -> Result<Vec<u8>, Failure> {
        let s = Session::shm(key, pid, p, 20_000, "test-host".into(), &lpf::Cancel::NEVER)?;
        let mut out = vec![0u8; input.len()];
        s.hook(Program::Bundled("allreduce-sum-i64"), &input, &mut out)?;
        Ok(out)
    }

    #[test]
    fn groups_of_the_same_size_with_different_keys_keep_apart() {
        // Four jobs of two threads each (and one of three) joining at the same time: with
        // groups matched by size, their threads would pair up across jobs.
        let jobs: Vec<(String, u32)> = (0..4).map(|j| (format!("job-{j}"), 2)).chain([("job-3p".to_string(), 3)]).collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .iter()
                .enumerate()
                .flat_map(|(j, (key, p))| {
                    (0..*p).map(move |pid| (j, key.clone(), *p, pid))
                })
                .map(|(j, key, p, pid)| s.spawn(move || (j, p, sum(&key, pid, p, longs(&[100 * j as i64 + pid as i64, 1])))))
                .collect();
            for h in handles {
                let (j, p, r) = h.join().unwrap();
                let want = longs(&[(0..p as i64).map(|q| 100 * j as i64 + q).sum(), p as i64]);
                assert_eq!(r.map_err(|f| f.message).unwrap(), want, "job {j}");
            }
        });
    }

    #[test]
    fn a_program_error_with_the_group_intact_is_permanent() {
        // Unequal input lengths: allreduce reports it on every process, the section ends
        // normally, so a rerun on the same input fails the same way.
        let r: Vec<Result<Vec<u8>, Failure>> = std::thread::scope(|s| {
            let a = s.spawn(|| sum("perm", 0, 2, longs(&[1, 2])));
            let b = s.spawn(|| sum("perm", 1, 2, longs(&[1])));
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        for x in r {
            let f = x.expect_err("unequal inputs must fail");
            assert_eq!(f.phase, Phase::Hook);
            assert!(f.permanent, "not permanent: {}", f.message);
        }
        // A group that never forms (a missing thread) is not permanent: a rerun may cure it.
        let f = Session::shm("lonely", 0, 2, 200, "h".into(), &lpf::Cancel::NEVER).err().expect("a missing thread must fail the join");
        assert_eq!(f.phase, Phase::Bootstrap);
        assert!(!f.permanent);
        assert!(Failure::new(Phase::Argument, "x").permanent && Failure::new(Phase::Load, "x").permanent);
    }

    /// Issue #24 items 7 and 8 on the JVM's path: an empty secret is refused (null is
    /// the way to ask for none), and the parameters print without the secret.
    #[test]
    fn an_empty_secret_is_refused_and_none_is_printed() {
        let params = |secret: Option<&str>| TcpParams {
            master: "127.0.0.1".into(),
            port: 0,
            pid: 0,
            nprocs: 2,
            timeout_ms: 1000,
            secret: secret.map(lpf::tcp::Secret::new),
            threads: 1,
            job: "j".into(),
        };
        let f = Session::tcp(&params(Some("")), "h".into(), &lpf::Cancel::NEVER).err().expect("an empty secret must be refused");
        assert!(f.phase == Phase::Bootstrap && f.message.contains("secret is 0 bytes long"), "{}", f.message);
        let text = format!("{:?}", params(Some("a secret of 16+ bytes")));
        assert!(!text.contains("a secret of") && text.contains("redacted"), "{text}");
        assert!(Session::tcp(&params(None), "h".into(), &lpf::Cancel::NEVER).is_ok());
    }
}
