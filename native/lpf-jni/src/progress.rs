//! Per-round progress (PageRank and CDLP iterations, BFS levels, WCC and SSSP rounds,
//! LCC phases) from process 0 to the Spark driver, over a TCP connection the driver
//! listens for (`org.lpf.spark.LpfProgress` logs what arrives).
//!
//! The native loop writes the lines itself: no call into the JVM per iteration. Lines
//! are gathered and written at most every [`FLUSH_EVERY`] (the first at once, the rest
//! when the sink is dropped at the hook's end), so that fast iterations do not wake the
//! driver's reader and logger once each, taking a core from the LPF processes on small
//! machines (docs/spark.md, "Progress", has the measurements); nothing at all without a
//! sink.
//! Progress never fails the job: a sink that cannot connect or write says so once on
//! stderr and reports nothing more.
//!
//! Lines (UTF-8, `\n`-terminated): first the `hello` line the driver gave (its token and
//! what the connection is), then one per round ([`RoundProgress`]):
//! `unit round measure value seconds elapsed`, e.g. `iteration 3 residual 1.2e-2 2.1e-3
//! 6.5e-3` or `level 2 frontier 1234 1e-3 4e-3` (unit and measure one word each; round
//! a decimal integer; the value a decimal integer for a count, else like the times an f64
//! in Rust's shortest round-trip form, so the driver reads the exact residual). The
//! driver takes lines of at most 1,024 bytes.

use graphblas::dist::{Measure, RoundProgress};
use std::fmt::Write as _;
use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest a connect or a write may take before progress is given up.
const TIMEOUT: Duration = Duration::from_secs(2);

/// Lines wait at most this long before they are written.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_millis(100);

pub(crate) struct ProgressSink {
    to: String,
    out: Mutex<Out>,
}

struct Out {
    stream: Option<TcpStream>,
    pending: String,
    /// When lines were last written (`None`: never, so the first goes at once).
    flushed: Option<Instant>,
}

impl Out {
    fn flush(&mut self, to: &str) {
        if let Some(s) = self.stream.as_mut() {
            if let Err(e) = s.write_all(self.pending.as_bytes()) {
                eprintln!("lpf: progress to the driver ({to}) stopped: {e}");
                self.stream = None;
            }
        }
        self.pending.clear();
        self.flushed = Some(Instant::now());
    }
}

impl ProgressSink {
    /// Connects to `host:port` and sends `hello`; `None` (after one line on stderr) if
    /// that fails.
    pub(crate) fn connect(host: &str, port: u16, hello: &str) -> Option<ProgressSink> {
        let to = format!("{host}:{port}");
        let connected = (host, port)
            .to_socket_addrs()
            .and_then(|mut a| a.next().ok_or_else(|| std::io::Error::other("no address")))
            .and_then(|addr| TcpStream::connect_timeout(&addr, TIMEOUT))
            .and_then(|mut s| {
                s.set_write_timeout(Some(TIMEOUT))?;
                s.set_nodelay(true)?;
                s.write_all(format!("{hello}\n").as_bytes())?;
                Ok(s)
            });
        match connected {
            Ok(s) => Some(ProgressSink { to, out: Mutex::new(Out { stream: Some(s), pending: String::new(), flushed: None }) }),
            Err(e) => {
                eprintln!("lpf: progress is not reported to the driver ({to}): {e}");
                None
            }
        }
    }

    pub(crate) fn report(&self, p: &RoundProgress) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if out.stream.is_none() {
            return;
        }
        let _ = write!(out.pending, "{} {} {} ", p.unit, p.round, p.measure);
        let _ = match p.value {
            Measure::Count(c) => write!(out.pending, "{c}"),
            Measure::Real(x) => write!(out.pending, "{x:e}"),
        };
        let _ = writeln!(out.pending, " {:e} {:e}", p.seconds, p.elapsed);
        if out.flushed.is_none_or(|t| t.elapsed() >= FLUSH_EVERY) {
            out.flush(&self.to);
        }
    }
}

impl Drop for ProgressSink {
    /// The lines still waiting go out when the hook ends.
    fn drop(&mut self) {
        let out = self.out.get_mut().unwrap_or_else(|e| e.into_inner());
        if !out.pending.is_empty() {
            out.flush(&self.to);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;

    #[test]
    fn lines_carry_the_exact_residual() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let sink = ProgressSink::connect("127.0.0.1", port, "token job").unwrap();
        let r = 1.0 / 3.0 * 1e-7;
        let round = |unit, round, measure, value, seconds, elapsed| RoundProgress { unit, round, measure, value, seconds, elapsed };
        sink.report(&round("iteration", 1, "residual", Measure::Real(0.5), 0.25, 0.25));
        sink.report(&round("iteration", 2, "residual", Measure::Real(r), 0.125, 0.375));
        sink.report(&round("level", 0, "frontier", Measure::Count(12345), 0.5, 0.875));
        drop(sink);
        let lines: Vec<String> = BufReader::new(l.accept().unwrap().0).lines().map(|x| x.unwrap()).collect();
        assert_eq!(lines[0], "token job");
        assert_eq!(lines[1], "iteration 1 residual 5e-1 2.5e-1 2.5e-1");
        let f: Vec<&str> = lines[2].split(' ').collect();
        assert_eq!((f[0], f[1], f[2], f[3].parse::<f64>().unwrap()), ("iteration", "2", "residual", r));
        assert_eq!(lines[3], "level 0 frontier 12345 5e-1 8.75e-1");
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn a_driver_that_is_not_there_gives_no_sink() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        assert!(ProgressSink::connect("127.0.0.1", port, "x").is_none());
    }
}
