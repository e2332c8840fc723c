//! The BSP cost model checked: supersteps of many h-relations, measured, beside the
//! time `probe` predicts for them, h·g + l (g and l of the engine's cost table, which
//! `lpfprobe --save` writes; run `native/lpfprobe/bench/cost_model.sh`).
//!
//! Every process derives the same traffic matrix from a shared seed, so every process
//! knows h = max over processes of max(bytes sent, bytes received) and the smallest
//! message size, whatever the pattern: balanced total exchange, one-to-all, all-to-one,
//! a random permutation, and random sizes to random peers, each at several volumes and
//! word sizes. Each put moves one word to its own place at the destination.
//!
//! Output (pid 0, stdout): CSV `engine,p,pattern,word_bytes,h_bytes,messages,
//! measured_s,predicted_s,ratio` (ratio = measured / predicted).
//!
//! Arguments: p (default 2), seconds per point (default 0.05). Engine: `LPF_ENGINE`
//! (shm by default; tcp and hybrid under `lpfrun`).
use lpf::{Args, Context, Pid, Root, MSG_DEFAULT, SYNC_DEFAULT};
use std::time::Instant;

/// bytes[s][d]: what process s sends to process d in one superstep.
type Traffic = Vec<Vec<usize>>;

/// A small deterministic generator (the same numbers on every process).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

fn patterns(p: usize, volume: usize, rng: &mut Rng) -> Vec<(&'static str, Traffic)> {
    let others = (p - 1).max(1);
    let each = volume / others;
    let mut out = Vec::new();
    let m = |f: &dyn Fn(usize, usize) -> usize| (0..p).map(|s| (0..p).map(|d| if s == d { 0 } else { f(s, d) }).collect()).collect();
    out.push(("total-exchange", m(&|_, _| each)));
    out.push(("one-to-all", m(&|s, _| if s == 0 { each } else { 0 })));
    out.push(("all-to-one", m(&|_, d| if d == 0 { volume / others } else { 0 })));
    let mut perm: Vec<usize> = (0..p).collect();
    for i in (1..p).rev() {
        perm.swap(i, rng.below(i as u64 + 1) as usize);
    }
    out.push(("permutation", m(&|s, d| if perm[s] == d || (perm[s] == s && d == (s + 1) % p) { volume } else { 0 })));
    let random: Traffic =
        (0..p).map(|s| (0..p).map(|d| if s == d { 0 } else { rng.below(2 * each as u64 + 1) as usize }).collect()).collect();
    out.push(("random", random));
    out
}

/// h in bytes, and the number of w-byte messages (the last of a pair may be shorter).
fn h_relation(t: &Traffic) -> usize {
    let p = t.len();
    (0..p).map(|q| t[q].iter().sum::<usize>().max((0..p).map(|s| t[s][q]).sum())).max().unwrap_or(0)
}

fn main() {
    let p: Pid = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let seconds: f64 = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(0.05);
    let engine = std::env::var("LPF_ENGINE").unwrap_or_else(|_| "shm".into());
    let volumes = [64usize, 8 << 10, 256 << 10, 4 << 20];
    let words = [8usize, 1024, 1 << 20];
    Root::with_max_procs(p)
        .exec(p, &|ctx: &mut Context, _args: Args| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            if me == 0 {
                println!("engine,p,pattern,word_bytes,h_bytes,messages,measured_s,predicted_s,ratio");
            }
            let machine = ctx.probe().unwrap();
            let mut rng = Rng(0x00c0_57ed);
            for &volume in &volumes {
                for (name, traffic) in patterns(np, volume, &mut rng) {
                    for &w in &words {
                        if w > volume.max(8) {
                            continue;
                        }
                        // Place of sender s's bytes at destination d: after the lower senders'.
                        let recv_at = |s: usize, d: usize| (0..s).map(|r| traffic[r][d]).sum::<usize>();
                        let send_total: usize = traffic[me].iter().sum();
                        let recv_total: usize = (0..np).map(|s| traffic[s][me]).sum();
                        let msgs = |s: usize| traffic[s].iter().map(|b| b.div_ceil(w)).sum::<usize>();
                        let incoming = |d: usize| (0..np).map(|s| traffic[s][d].div_ceil(w)).sum::<usize>();
                        let queue = (0..np).map(|q| msgs(q) + incoming(q)).max().unwrap_or(0);
                        let total_msgs: usize = (0..np).map(msgs).sum();
                        let h = h_relation(&traffic);
                        let min_msg = traffic.iter().flatten().filter(|&&b| b > 0).map(|&b| b.min(w)).min().unwrap_or(w);
                        ctx.resize_memory_register(3).unwrap();
                        // The count's gets below: np - 1 messages at pid 0.
                        ctx.resize_message_queue(queue.max(np)).unwrap();
                        ctx.sync(SYNC_DEFAULT).unwrap();
                        let mut src = vec![me as u8; send_total.max(1)];
                        let mut dst = vec![0u8; recv_total.max(1)];
                        let s_reg = ctx.register_local(&mut src).unwrap();
                        let d_reg = ctx.register_global(&mut dst).unwrap();
                        ctx.sync(SYNC_DEFAULT).unwrap();
                        let superstep = |ctx: &mut Context| {
                            let mut from = 0;
                            for d in 0..np {
                                let (bytes, base) = (traffic[me][d], recv_at(me, d));
                                let mut off = 0;
                                while off < bytes {
                                    let n = w.min(bytes - off);
                                    ctx.put(s_reg.slot(), from + off, d as Pid, d_reg.slot(), base + off, n, MSG_DEFAULT).unwrap();
                                    off += n;
                                }
                                from += bytes;
                            }
                            ctx.sync(SYNC_DEFAULT).unwrap();
                        };
                        // One superstep to warm up and one to time; pid 0's count of
                        // supersteps for the measurement is fetched by everybody.
                        superstep(ctx);
                        let t = Instant::now();
                        superstep(ctx);
                        let once = t.elapsed().as_secs_f64();
                        let mut reps = [((seconds / once.max(1e-7)) as u64).clamp(3, 100_000)];
                        let r_reg = ctx.register_global(&mut reps).unwrap();
                        ctx.sync(SYNC_DEFAULT).unwrap();
                        if me != 0 {
                            ctx.get(0, r_reg.slot(), 0, r_reg.slot(), 0, 8, MSG_DEFAULT).unwrap();
                        }
                        ctx.sync(SYNC_DEFAULT).unwrap();
                        let n = ctx.slice(&r_reg)[0];
                        let t = Instant::now();
                        for _ in 0..n {
                            superstep(ctx);
                        }
                        let measured = t.elapsed().as_secs_f64() / n as f64;
                        ctx.deregister(r_reg.slot()).unwrap();
                        ctx.deregister(d_reg.slot()).unwrap();
                        ctx.deregister(s_reg.slot()).unwrap();
                        if me == 0 {
                            let g = machine.g(np as Pid, min_msg, SYNC_DEFAULT);
                            let l = machine.l(np as Pid, min_msg, SYNC_DEFAULT);
                            let predicted = h as f64 * g + l;
                            println!(
                                "{engine},{np},{name},{w},{h},{total_msgs},{measured:.3e},{predicted:.3e},{:.2}",
                                measured / predicted
                            );
                        }
                    }
                }
            }
        }, Args::none())
        .expect("the cost-model run failed");
}
