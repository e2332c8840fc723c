//! A TCP/hybrid job configured by the environment (as `lpfrun` or tests/netns/run.sh
//! set it up): puts around a ring, gets from the right neighbour, and collectives
//! (broadcast, allreduce), all checked. `DEMO_MODE=loop` instead syncs with puts until a
//! sync fails (fault injection), printing `ready` after 20 supersteps.
//!
//! Exit code 0: the job ran and checked out; 3: the hook returned a fatal error (the
//! message is printed as `hook FATAL: ...`); 4: init failed (`init FATAL: ...`).

use lpf::collectives::Collectives;
use lpf::tcp::{TcpConfig, TcpInit};
use lpf::{Args, Context, MSG_DEFAULT, SYNC_DEFAULT};
use std::io::Write;

fn job(ctx: &mut Context, args: Args<'_>) {
    let (pid, n) = (ctx.pid(), ctx.nprocs());
    ctx.resize_memory_register(3).unwrap();
    ctx.resize_message_queue(4).unwrap();
    ctx.sync(SYNC_DEFAULT).unwrap();
    let mut mine = [pid as u64 * 10 + 1; 512];
    let mut from_left = [0u64; 512];
    let mut got = [0u64; 512];
    let s = ctx.register_global(&mut mine).unwrap();
    let d = ctx.register_global(&mut from_left).unwrap();
    let g = ctx.register_local(&mut got).unwrap();
    ctx.sync(SYNC_DEFAULT).unwrap();
    if std::env::var("DEMO_MODE").as_deref() == Ok("loop") {
        for i in 0u64.. {
            ctx.put(s.slot(), 0, (pid + 1) % n, d.slot(), 0, 4096, MSG_DEFAULT).unwrap();
            if let Err(e) = ctx.sync(SYNC_DEFAULT) {
                println!("sync FATAL: {e}");
                return;
            }
            if i == 20 && pid == 0 {
                println!("ready");
                std::io::stdout().flush().unwrap();
            }
        }
    }
    ctx.put(s.slot(), 0, (pid + 1) % n, d.slot(), 0, 4096, MSG_DEFAULT).unwrap();
    ctx.get((pid + 1) % n, s.slot(), 0, g.slot(), 0, 4096, MSG_DEFAULT).unwrap();
    ctx.sync(SYNC_DEFAULT).unwrap();
    let left = (pid + n - 1) % n;
    assert!(ctx.slice(&d).iter().all(|&x| x == left as u64 * 10 + 1), "put from the left");
    assert!(ctx.slice(&g).iter().all(|&x| x == ((pid + 1) % n) as u64 * 10 + 1), "get from the right");
    let mut cfg = lpf::collectives::Config::new(1024);
    cfg.user_slots = 3;
    cfg.user_msgs = 4;
    let mut coll = Collectives::with_config(ctx, &cfg).unwrap();
    let mut v = [pid as u64 + 1, 1];
    coll.allreduce(ctx, &mut v, |a, b| *a += *b).unwrap();
    assert_eq!(v, [n as u64 * (n as u64 + 1) / 2, n as u64], "allreduce");
    let mut b = [if pid == 0 { 42u32 } else { 0 }; 3];
    coll.broadcast(ctx, 0, &mut b).unwrap();
    assert_eq!(b, [42; 3], "broadcast");
    coll.release(ctx).unwrap();
    if !args.output.is_empty() {
        args.output[0] = 1;
    }
}

fn main() {
    let init = match TcpConfig::from_env().and_then(TcpInit::new) {
        Ok(i) => i,
        Err(e) => {
            println!("init FATAL: {e}");
            std::process::exit(4);
        }
    };
    let mut ok = [0u8; 1];
    let (first, k) = init.local_procs();
    match init.hook(&job, Args::new(&[], &mut ok)) {
        Ok(()) => println!("RESULT ok: LPF processes {first}..{} of {} on engine {}", first + k - 1, init.total_procs(), init.engine_name()),
        Err(e) => {
            println!("hook FATAL: {e}");
            std::process::exit(3);
        }
    }
}
