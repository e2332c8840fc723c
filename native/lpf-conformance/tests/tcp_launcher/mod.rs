//! Starts TCP jobs inside one test process: each TCP process is a thread that makes
//! its own TCP init over loopback; pid 0 binds port 0 and hands the port to the others.

use lpf::tcp::{MetaAlgo, TcpConfig, TcpInit};
use lpf::{Args, Context, Pid, Result};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// Runs `spmd` on `nodes.len()` TCP processes, process i bringing `nodes[i]` LPF
/// processes (threads; more than one anywhere means the hybrid engine); the first gets
/// `args`. Returns the first failure, pid 0's first.
pub fn run_over_tcp(
    nodes: &[Pid],
    meta: MetaAlgo,
    hybrid: bool,
    spmd: &(dyn Fn(&mut Context, Args<'_>) + Sync),
    args: Args<'_>,
) -> Result<()> {
    let n = nodes.len() as Pid;
    let cfg = move |pid: Pid, port: u16| {
        TcpConfig::new("127.0.0.1", port, pid, n)
            .timeout(Duration::from_secs(30))
            .threads(nodes[pid as usize])
            .hybrid(hybrid)
            .meta(meta)
            .job("conformance")
            .secret(b"conformance secret")
    };
    let (tx, rx) = mpsc::channel::<u16>();
    let rx = Mutex::new(rx);
    std::thread::scope(|s| {
        let peers: Vec<_> = (1..n)
            .map(|pid| {
                let rx = &rx;
                s.spawn(move || {
                    let port = rx.lock().unwrap().recv().expect("pid 0 failed before binding");
                    TcpInit::new(cfg(pid, port))?.hook(spmd, Args::none())
                })
            })
            .collect();
        let mine = TcpInit::prepare(cfg(0, 0)).and_then(|prepared| {
            for _ in 1..n {
                let _ = tx.send(prepared.bound_port());
            }
            prepared.join()?.hook(spmd, args)
        });
        drop(tx);
        let theirs: Vec<Result<()>> = peers.into_iter().map(|h| h.join().unwrap()).collect();
        std::iter::once(mine).chain(theirs).find(|r| r.is_err()).unwrap_or(Ok(()))
    })
}
