//! The processes' standard output and error, passed on line by line (see the module
//! doc of lpfrun).

use std::time::{Duration, Instant};

/// Where a forwarded stream goes.
#[derive(Clone, Copy)]
pub(crate) enum Sink {
    Stdout,
    Stderr,
}

/// A line longer than this is passed on in pieces of this size (so that a process
/// writing without newlines cannot make lpfrun hold unbounded memory).
const MAX_LINE: usize = 64 * 1024;

/// How long lpfrun waits, after its processes ended, for output still in the pipes
/// (held open by something they started).
pub(crate) const FORWARD_GRACE: Duration = Duration::from_secs(2);

/// Writes `bytes` (whole lines) to `sink` in one locked write, so that lines of
/// different processes, and lpfrun's own messages, never mix.
fn emit(sink: Sink, bytes: &[u8]) {
    use std::io::Write;
    let _ = match sink {
        Sink::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|_| out.flush())
        }
        Sink::Stderr => std::io::stderr().lock().write_all(bytes),
    };
}

/// Threads that pass the processes' output on line by line (module docs).
#[derive(Default)]
pub(crate) struct Forwarders {
    started: usize,
    done: Option<(std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<()>)>,
}

impl Forwarders {
    pub(crate) fn start(&mut self, pipe: Option<impl std::io::Read + Send + 'static>, sink: Sink) {
        let Some(mut pipe) = pipe else { return };
        let (tx, _) = self.done.get_or_insert_with(std::sync::mpsc::channel);
        let tx = tx.clone();
        self.started += 1;
        // Threads start with lpfrun's signal mask (the handled signals blocked), so
        // every signal still goes to the sigtimedwait of the main thread.
        std::thread::spawn(move || {
            let mut pending: Vec<u8> = Vec::new();
            let mut chunk = [0u8; 16 * 1024];
            loop {
                let n = match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                pending.extend_from_slice(&chunk[..n]);
                let whole = match pending.iter().rposition(|&b| b == b'\n') {
                    Some(i) => i + 1,
                    None if pending.len() >= MAX_LINE => pending.len(),
                    None => continue,
                };
                emit(sink, &pending[..whole]);
                pending.drain(..whole);
            }
            if !pending.is_empty() {
                emit(sink, &pending);
            }
            let _ = tx.send(());
        });
    }

    /// Waits until every stream has ended, at most `grace`.
    pub(crate) fn finish(self, grace: Duration) {
        let Some((_, rx)) = self.done else { return };
        let until = Instant::now() + grace;
        for _ in 0..self.started {
            if rx.recv_timeout(until.saturating_duration_since(Instant::now())).is_err() {
                say!("lpfrun: output of the processes still open {grace:?} after they ended (a process they started holds it); not waiting for it");
                return;
            }
        }
    }
}
