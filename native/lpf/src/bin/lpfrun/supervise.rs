//! Waiting for the processes: how each ended, which one caused a failure, and the
//! signals lpfrun forwards.

use std::time::{Duration, Instant};

fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    format!("signal {sig} ({name})")
}

/// How a child ended, from its wait status: lpfrun's exit code for it (128 + signal
/// for a signal), and the words that report it.
fn ended(status: i32) -> (i32, String) {
    if libc::WIFEXITED(status) {
        (libc::WEXITSTATUS(status), format!("exited with status {}", libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        (128 + libc::WTERMSIG(status), format!("was killed by {}", signal_name(libc::WTERMSIG(status))))
    } else {
        (1, format!("ended with wait status {status:#x}"))
    }
}

/// The signals lpfrun waits for: children ending, and requests to stop.
const STOP_SIGNALS: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The signal a child sends lpfrun (`LPF_LAUNCHER_PID`) just before it ends the job
/// with `lpf_abort`'s exit status ([`lpf::abort_job`]): its peers, seeing it go, may
/// exit with their own errors at the same moment, and it must be named as the cause.
const ABORT_SIGNAL: i32 = libc::SIGUSR1;

pub(crate) fn wait_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill the set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, ABORT_SIGNAL);
        for s in STOP_SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// One local process of the job.
pub(crate) struct Proc {
    pub pid: u32,
    pub os_pid: libc::pid_t,
}

/// Signal `sig` to every running child's process group.
pub(crate) fn stop_all(running: &[Proc], sig: i32) {
    for p in running {
        // SAFETY: kill(2) on the group of a child not reaped yet (its pid is not reused).
        unsafe { libc::kill(-p.os_pid, sig) };
    }
}

/// Waits for the children. When one fails (non-zero exit or a signal), lpfrun names
/// the one that caused it, with its pid, OS pid and how it ended, then sends the others
/// SIGTERM and, 2 s later, SIGKILL. A SIGTERM, SIGINT or SIGHUP to lpfrun is forwarded
/// to every child the same way (a second one kills them at once). Returns lpfrun's
/// exit code: the cause's code (128 + signal for a signal), else 128 + the stop signal,
/// else 0.
///
/// The cause is not simply the first child seen to fail: a killed process's peers see
/// its connections close and may exit before the kernel reports its own end (and
/// waitpid reports children that ended together in pid order). So failures are
/// gathered for [`SETTLE`] after the first, and a child killed by a signal (none is sent
/// by lpfrun before the report) goes before those that exited with an error, each in
/// the order seen; one that said it ended the job ([`ABORT_SIGNAL`]) goes first.
pub(crate) fn supervise(running: &mut Vec<Proc>, set: &libc::sigset_t) -> i32 {
    // OS pids of the children that sent ABORT_SIGNAL.
    let mut aborted: Vec<libc::pid_t> = Vec::new();
    let mut first_failure: Option<i32> = None;
    let mut stopped_by: Option<i32> = None;
    let mut kill_at: Option<Instant> = None;
    // Failures seen but not reported yet, in the order seen, and when to report.
    let mut failed: Vec<(Proc, i32)> = Vec::new();
    let mut report_at: Option<Instant> = None;
    let grace = Duration::from_secs(2);
    loop {
        // Reap every child that has ended.
        loop {
            let mut status = 0;
            // SAFETY: waitpid on any of our children, without blocking.
            let os_pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if os_pid <= 0 {
                break;
            }
            let Some(i) = running.iter().position(|p| p.os_pid == os_pid) else { continue };
            let p = running.remove(i);
            let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            if !ok && first_failure.is_none() && stopped_by.is_none() {
                report_at.get_or_insert(Instant::now() + SETTLE);
                failed.push((p, status));
            }
        }
        if report_at.is_some_and(|t| running.is_empty() || Instant::now() >= t) {
            report_at = None;
            take_abort_signals(&mut aborted);
            // A stable sort: among equals, the order seen.
            failed.sort_by_key(|(p, status)| (!aborted.contains(&p.os_pid), !libc::WIFSIGNALED(*status)));
            let (p, status) = &failed[0];
            let (code, mut how) = ended(*status);
            if aborted.contains(&p.os_pid) {
                how = format!("ended the job (lpf_abort) and {how}");
            }
            say!("lpfrun: pid {} (OS process {}) {how}; stopping the other {} process(es)", p.pid, p.os_pid, running.len());
            first_failure = Some(code);
            stop_all(running, libc::SIGTERM);
            kill_at = Some(Instant::now() + grace);
        }
        if running.is_empty() {
            return first_failure.or(stopped_by.map(|s| 128 + s)).unwrap_or(0);
        }
        if kill_at.is_some_and(|t| Instant::now() >= t) {
            stop_all(running, libc::SIGKILL);
            kill_at = None;
        }
        let wait = report_at.map_or(Duration::from_millis(100), |t| t.saturating_duration_since(Instant::now()));
        let timeout = libc::timespec { tv_sec: 0, tv_nsec: wait.min(Duration::from_millis(100)).subsec_nanos() as _ };
        // SAFETY: siginfo_t is plain data, for which all zero bytes is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits for one of the blocked signals of `set`, at most 100 ms; `info`
        // is ours to fill.
        let sig = unsafe { libc::sigtimedwait(set, &mut info, &timeout) };
        if sig == ABORT_SIGNAL {
            // SAFETY: sigtimedwait filled `info` for this signal (si_pid is the sender's).
            aborted.push(unsafe { info.si_pid() });
        }
        if STOP_SIGNALS.contains(&sig) {
            if stopped_by.is_none() && first_failure.is_none() {
                say!("lpfrun: got {}; stopping the {} process(es)", signal_name(sig), running.len());
                stopped_by = Some(sig);
                report_at = None;
                stop_all(running, sig);
                kill_at = Some(Instant::now() + grace);
            } else {
                stop_all(running, libc::SIGKILL);
            }
        }
    }
}

/// Adds the senders of pending [`ABORT_SIGNAL`]s to `aborted`, without waiting: one
/// sent just before the children were all reaped has not been taken by the main wait.
fn take_abort_signals(aborted: &mut Vec<libc::pid_t>) {
    // SAFETY: sigemptyset/sigaddset fill a set we own; sigtimedwait with a zero timeout
    // only takes a pending signal (blocked since before the children started).
    unsafe {
        let mut only: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut only);
        libc::sigaddset(&mut only, ABORT_SIGNAL);
        let now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        let mut info: libc::siginfo_t = std::mem::zeroed();
        while libc::sigtimedwait(&only, &mut info, &now) == ABORT_SIGNAL {
            aborted.push(info.si_pid());
        }
    }
}

/// How long lpfrun gathers failures after the first before it names the cause.
const SETTLE: Duration = Duration::from_millis(250);
