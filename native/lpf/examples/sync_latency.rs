//! Quick look at the cost of an empty sync and of a 1-word ring (any engine: `LPF_ENGINE`).
//! Arguments: p (default 2), empty supersteps (default 200000), ring supersteps (default:
//! as many), words put to the next process per ring superstep (default 1; each its own
//! put, to its own place, as in the probe's total exchange).
use lpf::{Args, Context, Root, MSG_DEFAULT, SYNC_DEFAULT};
use std::time::Instant;

fn main() {
    let p: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let n: u32 = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let rings: u32 = std::env::args().nth(3).and_then(|a| a.parse().ok()).unwrap_or(n);
    let words: usize = std::env::args().nth(4).and_then(|a| a.parse().ok()).unwrap_or(1).max(1);
    let mut out = [0u8; 16];
    Root::with_max_procs(p)
        .exec(p, &|ctx: &mut Context, args: Args| {
            ctx.resize_memory_register(2).unwrap();
            ctx.resize_message_queue(2 * words).unwrap();
            ctx.sync(SYNC_DEFAULT).unwrap();
            let mut a = vec![1u64; words];
            let mut b = vec![0u64; words];
            let s = ctx.register_local(&mut a).unwrap();
            let d = ctx.register_global(&mut b).unwrap();
            ctx.sync(SYNC_DEFAULT).unwrap();
            let t = Instant::now();
            for _ in 0..n {
                ctx.sync(SYNC_DEFAULT).unwrap();
            }
            let empty = t.elapsed().as_secs_f64() / n as f64;
            let t = Instant::now();
            let (pid, np) = (ctx.pid(), ctx.nprocs());
            for _ in 0..rings {
                for k in 0..words {
                    ctx.put(s.slot(), 8 * k, (pid + 1) % np, d.slot(), 8 * k, 8, MSG_DEFAULT).unwrap();
                }
                ctx.sync(SYNC_DEFAULT).unwrap();
            }
            let ring = t.elapsed().as_secs_f64() / rings.max(1) as f64;
            if pid == 0 {
                args.output[..8].copy_from_slice(&empty.to_le_bytes());
                args.output[8..].copy_from_slice(&ring.to_le_bytes());
            }
        }, Args::new(&[], &mut out))
        .unwrap();
    let empty = f64::from_le_bytes(out[..8].try_into().unwrap());
    let ring = f64::from_le_bytes(out[8..].try_into().unwrap());
    println!("p={p}: empty sync {:.3} us, {words}-word ring put+sync {:.3} us", empty * 1e6, ring * 1e6);
}
