//! The cases of the suite. Each runs its sections at every count in
//! [`PROCESS_COUNTS`](crate::PROCESS_COUNTS) unless it needs at least two processes.

use crate::{counts, setup, Launcher, Rng};
use lpf::{Args, Context, ErrorKind, Memslot, Pid, Reason, MSG_DEFAULT, SYNC_DEFAULT};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Mutex;

type Section<'a> = &'a (dyn Fn(&mut Context, Args<'_>) + Sync);

fn run_ok(l: &dyn Launcher, p: Pid, spmd: Section<'_>) {
    if let Err(e) = l.run(p, spmd, Args::none()) {
        panic!("p = {p}: the section failed: {e}");
    }
}

/// Runs `spmd` on `p` processes, as `l.run`, for a section that ends in an error on
/// purpose. The launcher turns a panic of `spmd` into an error too (and returns pid 0's
/// first), so an assertion failing inside `spmd` would pass as the expected failure,
/// or hide behind pid 0's error when it fails on another process. So a panic of `spmd`
/// on any process fails the case here (on every rank under mpirun: the panics are
/// gathered); the panic goes on unwinding, so the process still fails the section as
/// before.
fn run_failing(l: &dyn Launcher, p: Pid, spmd: Section<'_>, args: Args<'_>) -> lpf::Result<()> {
    let panics = Mutex::new(Vec::new());
    let run = |ctx: &mut Context, args: Args<'_>| {
        let pid = ctx.pid();
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| spmd(ctx, args))) {
            let what = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            panics.lock().unwrap_or_else(|e| e.into_inner()).push(format!("process {pid}: {}", what.unwrap_or_default()));
            resume_unwind(panic);
        }
    };
    let result = l.run(p, &run, args);
    let panics = l.gather(panics.into_inner().unwrap_or_else(|e| e.into_inner()));
    assert!(panics.is_empty(), "p = {p}: the SPMD function panicked: {panics:#?}");
    result
}

fn run_fatal(l: &dyn Launcher, p: Pid, spmd: Section<'_>) -> lpf::Error {
    match run_failing(l, p, spmd, Args::none()) {
        Ok(()) => panic!("p = {p}: the section should have failed"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Fatal, "p = {p}: {e}");
            e
        }
    }
}

/// Reasons checked inside the SPMD function of a section that fails anyway: the
/// mismatches of every process are collected and asserted after the run (the section
/// goes on, where a failed assertion would end the process; [`run_failing`] fails the
/// case on such a panic too).
#[derive(Default)]
struct Mismatches(Mutex<Vec<String>>);

impl Mismatches {
    fn check(&self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).push(what());
        }
    }
    fn assert_none(self, case: impl std::fmt::Display) {
        let found = self.0.into_inner().unwrap_or_else(|e| e.into_inner());
        assert!(found.is_empty(), "{case}: {found:#?}");
    }
}

fn sync(ctx: &mut Context) {
    ctx.sync(SYNC_DEFAULT).unwrap_or_else(|e| panic!("pid {}: sync: {e}", ctx.pid()));
}

fn words(n: usize) -> usize {
    n * 8
}

pub fn probe_is_sane(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            let m = ctx.probe().unwrap();
            assert!(m.p >= n && m.free_p >= 1, "p {} free_p {} nprocs {n}", m.p, m.free_p);
            let mut mine = Vec::new();
            for size in [0usize, 8, 1024, 1 << 20] {
                let (g, lat) = (m.g(n, size, SYNC_DEFAULT), m.l(n, size, SYNC_DEFAULT));
                assert!(g > 0.0 && lat > 0.0, "g {g} l {lat}");
                mine.extend([g.to_bits(), lat.to_bits()]);
            }
            // Identical on every process: everyone sends its values to pid 0.
            setup(ctx, 2, n as usize);
            let k = mine.len();
            let mut all = vec![0u64; k * n as usize];
            let src = ctx.register_local(&mut mine).unwrap();
            let dst = ctx.register_global(&mut all).unwrap();
            sync(ctx);
            ctx.put(src.slot(), 0, 0, dst.slot(), words(k * pid as usize), words(k), MSG_DEFAULT).unwrap();
            sync(ctx);
            if pid == 0 {
                let all = ctx.slice(&dst);
                for q in 1..n as usize {
                    assert_eq!(all[q * k..(q + 1) * k], all[..k], "probe differs on process {q}");
                }
            }
        });
    }
}

pub fn nothing_is_preallocated(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let mut a = [1u64; 4];
            let mut b = [0u64; 4];
            assert_eq!(ctx.register_local(&mut a).err().unwrap().kind(), ErrorKind::OutOfMemory);
            assert_eq!(ctx.register_global(&mut b).err().unwrap().kind(), ErrorKind::OutOfMemory);
            ctx.resize_memory_register(2).unwrap();
            // Usable only after the next sync.
            assert_eq!(ctx.register_local(&mut a).err().unwrap().kind(), ErrorKind::OutOfMemory);
            sync(ctx);
            let src = ctx.register_local(&mut a).unwrap();
            let dst = ctx.register_global(&mut b).unwrap();
            sync(ctx);
            let e = ctx.put(src.slot(), 0, 0, dst.slot(), 0, 8, MSG_DEFAULT).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::OutOfMemory, "{e}");
            sync(ctx);
            assert_eq!(ctx.slice(&dst), &[0, 0, 0, 0]);
        });
    }
}

const BLOCK: usize = 64;

fn value(from: Pid, to: Pid, round: usize, i: usize) -> u64 {
    ((from as u64) << 40) | ((to as u64) << 24) | ((round as u64) << 12) | i as u64
}

pub fn put_all_to_all(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            let np = n as usize;
            setup(ctx, 2, np);
            let mut src = vec![0u64; np * BLOCK];
            let mut dst = vec![0u64; np * BLOCK];
            let mut s = ctx.register_local(&mut src).unwrap();
            let d = ctx.register_global(&mut dst).unwrap();
            sync(ctx);
            for round in 0..3 {
                for (i, x) in ctx.slice_mut(&mut s).iter_mut().enumerate() {
                    *x = value(pid, (i / BLOCK) as Pid, round, i % BLOCK);
                }
                for q in 0..n {
                    let off = words(q as usize * BLOCK);
                    ctx.put(s.slot(), off, q, d.slot(), words(pid as usize * BLOCK), words(BLOCK), MSG_DEFAULT).unwrap();
                }
                sync(ctx);
                for (i, &x) in ctx.slice(&d).iter().enumerate() {
                    assert_eq!(x, value((i / BLOCK) as Pid, pid, round, i % BLOCK), "pid {pid} word {i}");
                }
            }
        });
    }
}

pub fn get_all_to_all(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            let np = n as usize;
            setup(ctx, 2, np);
            let mut src = vec![0u64; np * BLOCK];
            let mut dst = vec![0u64; np * BLOCK];
            let mut s = ctx.register_global(&mut src).unwrap();
            let d = ctx.register_local(&mut dst).unwrap();
            sync(ctx);
            for round in 0..3 {
                for (i, x) in ctx.slice_mut(&mut s).iter_mut().enumerate() {
                    *x = value(pid, (i / BLOCK) as Pid, round, i % BLOCK);
                }
                // The sources must be written before anyone reads them.
                sync(ctx);
                for q in 0..n {
                    ctx.get(q, s.slot(), words(pid as usize * BLOCK), d.slot(), words(q as usize * BLOCK), words(BLOCK), MSG_DEFAULT)
                        .unwrap();
                }
                sync(ctx);
                for (i, &x) in ctx.slice(&d).iter().enumerate() {
                    assert_eq!(x, value((i / BLOCK) as Pid, pid, round, i % BLOCK), "pid {pid} word {i}");
                }
            }
        });
    }
}

pub fn put_and_get_to_self(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let pid = ctx.pid() as u64;
            setup(ctx, 3, 2);
            let mut a: Vec<u64> = (0..100).map(|i| pid * 1000 + i).collect();
            let mut b = vec![0u64; 100];
            let mut c = vec![0u64; 100];
            let sa = ctx.register_global(&mut a).unwrap();
            let sb = ctx.register_global(&mut b).unwrap();
            let sc = ctx.register_local(&mut c).unwrap();
            sync(ctx);
            let me = ctx.pid();
            ctx.put(sa.slot(), words(10), me, sb.slot(), words(20), words(50), MSG_DEFAULT).unwrap();
            ctx.get(me, sa.slot(), words(0), sc.slot(), words(50), words(50), MSG_DEFAULT).unwrap();
            sync(ctx);
            let (b, c) = (ctx.slice(&sb), ctx.slice(&sc));
            for i in 0..100u64 {
                let want_b = if (20..70).contains(&i) { pid * 1000 + i - 10 } else { 0 };
                let want_c = if i >= 50 { pid * 1000 + i - 50 } else { 0 };
                assert_eq!((b[i as usize], c[i as usize]), (want_b, want_c), "word {i}");
            }
        });
    }
}

/// One message of a random overlapping-writes plan: `origin` writes bytes of value `id`
/// into `dest`'s buffer at `start..start + len`.
#[derive(Clone, Copy, Debug)]
struct Msg {
    id: u8,
    origin: Pid,
    dest: Pid,
    start: usize,
    len: usize,
}

fn plan(seed: u64, n: Pid, area: usize) -> Vec<Msg> {
    let mut rng = Rng::new(seed);
    let count = 1 + rng.below(60) as usize;
    (0..count)
        .map(|k| {
            let start = rng.below(area as u64) as usize;
            let len = 1 + rng.below((area - start) as u64) as usize;
            Msg { id: (k + 1) as u8, origin: rng.below(n as u64) as Pid, dest: rng.below(n as u64) as Pid, start, len }
        })
        .collect()
}

/// Whether `result` is what applying `msgs` in some order to a zeroed buffer gives:
/// each byte must hold a covering message's id (0 if none), and "this byte's writer
/// came after every other message covering it" must admit a total order (no cycle).
fn is_some_serialisation(result: &[u8], msgs: &[Msg]) -> Result<(), String> {
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); 256];
    for (b, &v) in result.iter().enumerate() {
        let covering: Vec<u8> = msgs.iter().filter(|m| (m.start..m.start + m.len).contains(&b)).map(|m| m.id).collect();
        if covering.is_empty() {
            if v != 0 {
                return Err(format!("byte {b} = {v} but no message covers it"));
            }
            continue;
        }
        if !covering.contains(&v) {
            return Err(format!("byte {b} = {v}, not one of the covering messages {covering:?}"));
        }
        for &c in covering.iter().filter(|&&c| c != v) {
            after[c as usize].push(v as usize);
        }
    }
    let mut indegree = [0usize; 256];
    for edges in &after {
        for &t in edges {
            indegree[t] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..256).filter(|&i| indegree[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = ready.pop() {
        seen += 1;
        for &t in &after[i] {
            indegree[t] -= 1;
            if indegree[t] == 0 {
                ready.push(t);
            }
        }
    }
    if seen == 256 {
        Ok(())
    } else {
        Err("the bytes' writers need a cyclic order: no serialisation gives this".into())
    }
}

pub fn overlapping_puts_serialise(l: &dyn Launcher) {
    const AREA: usize = 97;
    // The checker itself must reject what no serialisation gives.
    let a = Msg { id: 1, origin: 0, dest: 0, start: 0, len: 2 };
    let b = Msg { id: 2, origin: 0, dest: 0, start: 0, len: 2 };
    assert!(is_some_serialisation(&[1, 2], &[a, b]).is_err());
    assert!(is_some_serialisation(&[2, 2], &[a, b]).is_ok());
    assert!(is_some_serialisation(&[3, 0], &[a]).is_err());
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            setup(ctx, 2, 64 * n as usize);
            let mut src = vec![0u8; 64 * AREA];
            let mut dst = vec![0u8; AREA];
            let mut s = ctx.register_local(&mut src).unwrap();
            let mut d = ctx.register_global(&mut dst).unwrap();
            sync(ctx);
            for seed in 0..25u64 {
                let msgs = plan(seed * 31 + n as u64, n, AREA);
                ctx.slice_mut(&mut d).fill(0);
                for (k, m) in msgs.iter().enumerate() {
                    ctx.slice_mut(&mut s)[k * AREA..(k + 1) * AREA].fill(m.id);
                }
                for (k, m) in msgs.iter().enumerate().filter(|(_, m)| m.origin == pid) {
                    ctx.put(s.slot(), k * AREA, m.dest, d.slot(), m.start, m.len, MSG_DEFAULT).unwrap();
                }
                sync(ctx);
                let mine: Vec<Msg> = msgs.iter().copied().filter(|m| m.dest == pid).collect();
                if let Err(why) = is_some_serialisation(ctx.slice(&d), &mine) {
                    panic!("pid {pid} seed {seed}: {why}");
                }
                sync(ctx);
            }
        });
    }
}

pub fn registrations_grow_shrink_and_interleave(l: &dyn Launcher) {
    const SLOTS: usize = 12;
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            let mut arena = vec![0u64; SLOTS];
            let mut source = vec![0u64; SLOTS];
            let base = arena.as_mut_ptr();
            let mut capacity = 3;
            setup(ctx, capacity, SLOTS);
            let mut src = ctx.register_local(&mut source).unwrap();
            // (slot, arena index) of the registered global slots, the same on every process.
            let mut active: Vec<(Memslot, usize)> = Vec::new();
            let mut rng = Rng::new(7);
            for round in 1..60u64 {
                match rng.below(4) {
                    0 | 1 if active.len() + 1 < capacity => {
                        let free = (0..SLOTS).find(|i| active.iter().all(|a| a.1 != *i)).unwrap();
                        // SAFETY: `arena` outlives the section's use of the slot and is
                        // only read by this thread between syncs.
                        let slot = unsafe { ctx.register_global_raw(base.add(free).cast(), 8) }.unwrap();
                        active.push((slot, free));
                    }
                    2 if !active.is_empty() => {
                        let k = rng.below(active.len() as u64) as usize;
                        ctx.deregister(active.remove(k).0).unwrap();
                    }
                    _ => {
                        capacity = active.len() + 1 + rng.below(SLOTS as u64 - active.len() as u64) as usize;
                        ctx.resize_memory_register(capacity).unwrap();
                    }
                }
                sync(ctx);
                let right = (pid + 1) % n;
                for (k, &(slot, _)) in active.iter().enumerate() {
                    ctx.slice_mut(&mut src)[k] = (round << 48) | ((pid as u64) << 32) | slot.to_raw() as u64 & 0xffff_ffff;
                    ctx.put(src.slot(), words(k), right, slot, 0, 8, MSG_DEFAULT).unwrap();
                }
                sync(ctx);
                let left = (pid + n - 1) % n;
                for &(slot, i) in &active {
                    // SAFETY: as above.
                    let got = unsafe { *base.add(i) };
                    let want = (round << 48) | ((left as u64) << 32) | slot.to_raw() as u64 & 0xffff_ffff;
                    assert_eq!(got, want, "pid {pid} round {round} slot {slot}");
                }
            }
            drop(src);
        });
    }
}

pub fn register_shrink_is_delayed(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let mut bufs = [[0u8; 4]; 6];
            let [b0, b1, b2, b3, b4, b5] = &mut bufs;
            setup(ctx, 5, 0);
            let r0 = ctx.register_local(b0).unwrap();
            let r1 = ctx.register_global(b1).unwrap();
            let r2 = ctx.register_local(b2).unwrap();
            ctx.resize_memory_register(2).unwrap();
            // The old capacity stays usable until the sync.
            let r3 = ctx.register_local(b3).unwrap();
            sync(ctx);
            assert_eq!(ctx.register_local(b4).err().unwrap().kind(), ErrorKind::OutOfMemory);
            ctx.deregister(r0.slot()).unwrap();
            ctx.deregister(r2.slot()).unwrap();
            ctx.deregister(r3.slot()).unwrap();
            let r4 = ctx.register_local(b5).unwrap();
            assert!(ctx.register_local(b4).is_err());
            // Last request before a sync wins.
            ctx.resize_memory_register(10).unwrap();
            ctx.resize_memory_register(3).unwrap();
            sync(ctx);
            let _r5 = ctx.register_local(b4).unwrap();
            drop((r1, r4));
        });
    }
}

pub fn queue_shrink_is_delayed(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let pid = ctx.pid();
            let mut a = [pid as u64; 4];
            let mut b = [0u64; 4];
            setup(ctx, 2, 4);
            let s = ctx.register_local(&mut a).unwrap();
            let d = ctx.register_global(&mut b).unwrap();
            sync(ctx);
            ctx.resize_message_queue(1).unwrap();
            for k in 0..4 {
                ctx.put(s.slot(), words(k), pid, d.slot(), words(k), 8, MSG_DEFAULT).unwrap();
            }
            sync(ctx);
            assert_eq!(ctx.slice(&d), &[pid as u64; 4]);
            ctx.put(s.slot(), 0, pid, d.slot(), 0, 8, MSG_DEFAULT).unwrap();
            assert_eq!(ctx.put(s.slot(), 0, pid, d.slot(), 0, 8, MSG_DEFAULT).unwrap_err().kind(), ErrorKind::OutOfMemory);
            sync(ctx);
        });
    }
}

pub fn out_of_memory_resizes_have_no_effect(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let pid = ctx.pid();
            setup(ctx, 3, 3);
            for huge in [usize::MAX, usize::MAX / 10, usize::MAX / 2 + 1] {
                assert_eq!(ctx.resize_memory_register(huge).unwrap_err().kind(), ErrorKind::OutOfMemory);
                assert_eq!(ctx.resize_message_queue(huge).unwrap_err().kind(), ErrorKind::OutOfMemory);
            }
            sync(ctx);
            let mut a = [1u64; 3];
            let mut b = [0u64; 3];
            let mut c = [0u64; 1];
            let s = ctx.register_local(&mut a).unwrap();
            let d = ctx.register_global(&mut b).unwrap();
            let _e = ctx.register_local(&mut c).unwrap();
            let mut x = [0u64; 1];
            assert_eq!(ctx.register_local(&mut x).err().unwrap().kind(), ErrorKind::OutOfMemory);
            sync(ctx);
            for k in 0..3 {
                ctx.put(s.slot(), words(k), pid, d.slot(), words(k), 8, MSG_DEFAULT).unwrap();
            }
            assert_eq!(ctx.put(s.slot(), 0, pid, d.slot(), 0, 8, MSG_DEFAULT).unwrap_err().kind(), ErrorKind::OutOfMemory);
            sync(ctx);
            assert_eq!(ctx.slice(&d), &[1, 1, 1]);
        });
    }
}

pub fn zero_size_and_null_registrations(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            setup(ctx, 3, 2 * n as usize);
            // SAFETY: a zero-size area is never read or written.
            let g = unsafe { ctx.register_global_raw(std::ptr::null_mut(), 0) }.unwrap();
            // SAFETY: as above.
            let lo = unsafe { ctx.register_local_raw(std::ptr::null_mut(), 0) }.unwrap();
            let mut empty: [u32; 0] = [];
            let e = ctx.register_global(&mut empty).unwrap();
            sync(ctx);
            ctx.put(lo, 0, (pid + 1) % n, g, 0, 0, MSG_DEFAULT).unwrap();
            ctx.get((pid + 1) % n, e.slot(), 0, lo, 0, 0, MSG_DEFAULT).unwrap();
            // 0 bytes are skipped whatever they name (#17 item 7): invalid slots and pid.
            ctx.put(Memslot::INVALID, 9, n, Memslot::INVALID, 9, 0, MSG_DEFAULT).unwrap();
            ctx.get(n, Memslot::INVALID, 9, Memslot::INVALID, 9, 0, MSG_DEFAULT).unwrap();
            sync(ctx);
            ctx.deregister(g).unwrap();
            ctx.deregister(lo).unwrap();
            ctx.deregister(e.slot()).unwrap();
            sync(ctx);
        });
    }
}

pub fn random_supersteps_match_a_model(l: &dyn Launcher) {
    const WORDS: usize = 256;
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            let np = n as usize;
            setup(ctx, 1, 64);
            let mut mem: Vec<u64> = (0..WORDS as u64).map(|i| ((pid as u64) << 32) | i).collect();
            let mut model: Vec<Vec<u64>> = (0..np).map(|q| (0..WORDS as u64).map(|i| ((q as u64) << 32) | i).collect()).collect();
            let m = ctx.register_global(&mut mem).unwrap();
            sync(ctx);
            let mut rng = Rng::new(1234 + n as u64);
            for step in 0..40 {
                // This step reads from one half of every buffer and writes the other.
                let (read, write) = if step % 2 == 0 { (0, WORDS / 2) } else { (WORDS / 2, 0) };
                let mut next_free = vec![0usize; np];
                let mut writes = Vec::new();
                for _ in 0..rng.below(40) {
                    let (from, to) = (rng.below(n as u64) as Pid, rng.below(n as u64) as Pid);
                    let len = 1 + rng.below(8) as usize;
                    if next_free[to as usize] + len > WORDS / 2 {
                        continue;
                    }
                    let src_off = read + rng.below((WORDS / 2 - len) as u64) as usize;
                    let dst_off = write + next_free[to as usize];
                    next_free[to as usize] += len;
                    let by_get = rng.below(2) == 0;
                    writes.push((from, to, src_off, dst_off, len, by_get));
                }
                let mut per_process = vec![0usize; np];
                for &(from, to, _, _, _, by_get) in &writes {
                    per_process[if by_get { to } else { from } as usize] += 1;
                    per_process[if by_get { from } else { to } as usize] += 1;
                }
                for &(from, to, src_off, dst_off, len, by_get) in &writes {
                    if !by_get && from == pid {
                        ctx.put(m.slot(), words(src_off), to, m.slot(), words(dst_off), words(len), MSG_DEFAULT).unwrap();
                    }
                    if by_get && to == pid {
                        ctx.get(from, m.slot(), words(src_off), m.slot(), words(dst_off), words(len), MSG_DEFAULT).unwrap();
                    }
                    let chunk: Vec<u64> = model[from as usize][src_off..src_off + len].to_vec();
                    model[to as usize][dst_off..dst_off + len].copy_from_slice(&chunk);
                }
                sync(ctx);
                assert_eq!(ctx.slice(&m), &model[pid as usize][..], "pid {pid} step {step}");
            }
        });
    }
}

pub fn nested_exec(l: &dyn Launcher) {
    if !l.supports_nested_exec() {
        return;
    }
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let outer = ctx.pid();
            let free = ctx.probe().unwrap().free_p;
            let input = (outer as u64).to_le_bytes();
            let mut output = [0u8; 8];
            ctx.exec(lpf::MAX_P, &|inner: &mut Context, args: Args<'_>| {
                let (pid, n) = (inner.pid(), inner.nprocs());
                assert!(n <= free && n >= 1, "nested section of {n} with free_p {free}");
                if pid == 0 {
                    assert_eq!(args.input.len(), 8);
                } else {
                    assert!(args.input.is_empty() && args.output.is_empty());
                }
                // Nothing is pre-allocated in a nested section either.
                let mut x = [0u64; 1];
                assert!(inner.register_local(&mut x).is_err());
                setup(inner, 2, 2);
                let mut mine = [pid as u64 + 1];
                let mut sum = [0u64; 1];
                let s = inner.register_local(&mut mine).unwrap();
                let d = inner.register_global(&mut sum).unwrap();
                sync(inner);
                inner.put(s.slot(), 0, (pid + 1) % n, d.slot(), 0, 8, MSG_DEFAULT).unwrap();
                sync(inner);
                let left = (pid + n - 1) % n;
                assert_eq!(inner.slice(&d)[0], left as u64 + 1);
                if pid == 0 {
                    let v = u64::from_le_bytes(args.input.try_into().unwrap()) * 100 + n as u64;
                    args.output.copy_from_slice(&v.to_le_bytes());
                }
            }, Args::new(&input, &mut output))
            .unwrap();
            let v = u64::from_le_bytes(output);
            assert_eq!(v / 100, outer as u64);
            assert!(v % 100 >= 1 && v % 100 <= free as u64);
            // The outer section goes on afterwards.
            setup(ctx, 1, 1);
        });
    }
}

pub fn rehook_isolates_registrations(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            setup(ctx, 2, 2);
            let mut outer = [0u64; 1];
            let mut one = [pid as u64 + 7];
            let d = ctx.register_global(&mut outer).unwrap();
            let s = ctx.register_local(&mut one).unwrap();
            sync(ctx);
            let mut out = [0u8; 8];
            ctx.rehook(&|inner: &mut Context, args: Args<'_>| {
                assert_eq!((inner.pid(), inner.nprocs()), (pid, n));
                let mut y = [0u64; 1];
                assert_eq!(inner.register_global(&mut y).err().unwrap().kind(), ErrorKind::OutOfMemory, "fresh register");
                setup(inner, 2, 1);
                let mut val = [pid as u64 * 3];
                let dy = inner.register_global(&mut y).unwrap();
                let sv = inner.register_local(&mut val).unwrap();
                sync(inner);
                inner.put(sv.slot(), 0, (pid + 1) % n, dy.slot(), 0, 8, MSG_DEFAULT).unwrap();
                sync(inner);
                assert_eq!(inner.slice(&dy)[0], ((pid + n - 1) % n) as u64 * 3);
                args.output.copy_from_slice(&inner.slice(&dy)[0].to_le_bytes());
            }, Args::new(&[], &mut out))
            .unwrap();
            assert_eq!(u64::from_le_bytes(out), ((pid + n - 1) % n) as u64 * 3);
            // The outer context's registrations were untouched.
            assert_eq!(ctx.slice(&d)[0], 0);
            ctx.put(s.slot(), 0, (pid + 1) % n, d.slot(), 0, 8, MSG_DEFAULT).unwrap();
            sync(ctx);
            assert_eq!(ctx.slice(&d)[0], (pid + n - 1) as u64 % n as u64 + 7);
            // A fatal error in the rehooked section fails it, not the caller. (The put's
            // misuse, by its reason: a panic of the rehooked function, a failing setup
            // say, fails the rehook too, with Reason::Other.)
            let r = ctx.rehook(&|inner: &mut Context, _| {
                setup(inner, 1, 1);
                let _ = inner.put(Memslot::from_raw(2 << 1), 0, 0, Memslot::from_raw(3 << 1 | 1), 0, 1, MSG_DEFAULT);
                let _ = inner.sync(SYNC_DEFAULT);
            }, Args::none());
            let e = r.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Fatal, "{e}");
            assert_eq!(e.reason(), Reason::Misuse { call: "lpf_put" }, "pid {pid}: {e}");
            sync(ctx);
        });
    }
}

pub fn unmatched_syncs_are_fatal(l: &dyn Launcher) {
    for p in counts(l).into_iter().filter(|&p| p >= 2) {
        let wrong = Mismatches::default();
        let e = run_fatal(l, p, &|ctx, _| {
            let pid = ctx.pid();
            sync(ctx);
            if pid == 0 {
                let e = ctx.sync(SYNC_DEFAULT).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::Fatal);
                wrong.check(matches!(e.reason(), Reason::PeerLeft { .. }), || format!("{:?}: {e}", e.reason()));
                // The failed state is sticky.
                assert!(ctx.sync(SYNC_DEFAULT).is_err());
            }
        });
        assert!(e.message().contains("left"), "{e}");
        // The section's result keeps its reason through the launcher, as its message.
        assert!(matches!(e.reason(), Reason::PeerLeft { .. }), "p = {p}: {:?}: {e}", e.reason());
        wrong.assert_none(format_args!("p = {p}"));
    }
}

pub fn early_return_is_fatal_and_output_arrives(l: &dyn Launcher) {
    for p in counts(l).into_iter().filter(|&p| p >= 2) {
        let mut out = [0u8; 5];
        let wrong = Mismatches::default();
        let r = run_failing(l, p, &|ctx, args| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            setup(ctx, 0, 0);
            if pid == n - 1 {
                return;
            }
            if pid == 0 {
                args.output.copy_from_slice(b"first");
            }
            for _ in 0..3 {
                let e = ctx.sync(SYNC_DEFAULT).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::Fatal);
                // A process that left (the last, or one that failed because of it).
                let me = ctx.pid();
                wrong.check(matches!(e.reason(), Reason::PeerLeft { pid } if pid != Some(me)), || format!("pid {me}: {:?}: {e}", e.reason()));
            }
        }, Args::new(&[], &mut out));
        let e = r.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Fatal);
        assert!(matches!(e.reason(), Reason::PeerLeft { .. }), "p = {p}: {:?}: {e}", e.reason());
        assert_eq!(&out, b"first", "p = {p}");
        wrong.assert_none(format_args!("p = {p}"));
    }
}

/// One kind of illegal call, made by the last process after a good superstep.
struct BadCall {
    name: &'static str,
    expect: &'static str,
    call: fn(&mut Context, Memslot, Memslot, Memslot, Memslot) -> lpf::Result<()>,
}

const BAD_CALLS: &[BadCall] = &[
    BadCall { name: "unknown slot", expect: "not registered", call: |c, _, d, _, _| c.put(Memslot::from_raw(40 << 1), 0, 0, d, 0, 8, MSG_DEFAULT) },
    BadCall { name: "deregistered slot", expect: "not registered", call: |c, _, _, _, gone| c.put(gone, 0, 0, gone, 0, 8, MSG_DEFAULT) },
    BadCall { name: "invalid memslot", expect: "INVALID", call: |c, s, _, _, _| c.put(s, 0, 0, Memslot::INVALID, 0, 8, MSG_DEFAULT) },
    BadCall { name: "pid out of range", expect: "nprocs", call: |c, s, d, _, _| { let p = c.nprocs(); c.put(s, 0, p, d, 0, 8, MSG_DEFAULT) } },
    BadCall { name: "get pid out of range", expect: "nprocs", call: |c, s, d, _, _| c.get(Pid::MAX, d, 0, s, 0, 8, MSG_DEFAULT) },
    BadCall { name: "source past its area", expect: "exceeds", call: |c, s, d, _, _| c.put(s, 8, 0, d, 0, 64, MSG_DEFAULT) },
    BadCall { name: "size overflow", expect: "exceeds", call: |c, s, d, _, _| c.put(s, usize::MAX, 0, d, 0, 2, MSG_DEFAULT) },
    BadCall { name: "get destination past its area", expect: "exceeds", call: |c, s, d, _, _| c.get(0, d, 0, s, 60, 8, MSG_DEFAULT) },
    BadCall { name: "put into a local slot", expect: "local", call: |c, s, _, local, _| c.put(s, 0, 0, local, 0, 8, MSG_DEFAULT) },
    BadCall { name: "get from a local slot", expect: "local", call: |c, s, _, local, _| c.get(0, local, 0, s, 0, 8, MSG_DEFAULT) },
    BadCall { name: "slot registered this superstep", expect: "next sync", call: |c, s, _, _, _| {
        // SAFETY: zero-size, never touched.
        let fresh = unsafe { c.register_global_raw(std::ptr::null_mut(), 0) }?;
        c.put(s, 0, 0, fresh, 0, 8, MSG_DEFAULT)
    } },
];

pub fn bad_arguments_are_rejected(l: &dyn Launcher) {
    for p in counts(l) {
        for bad in BAD_CALLS {
            let wrong = Mismatches::default();
            let e = run_fatal(l, p, &|ctx, _| {
                let (pid, n) = (ctx.pid(), ctx.nprocs());
                setup(ctx, 6, 2 * n as usize);
                let mut src = [pid as u64 + 1; 8];
                let mut dst = [0u64; 8];
                let mut other = [0u64; 8];
                let mut gone = [0u64; 1];
                let s = ctx.register_local(&mut src).unwrap();
                let d = ctx.register_global(&mut dst).unwrap();
                let local = ctx.register_local(&mut other).unwrap();
                let g = ctx.register_global(&mut gone).unwrap();
                sync(ctx);
                ctx.deregister(g.slot()).unwrap();
                // Good messages in the same superstep are dropped with it.
                ctx.put(s.slot(), 0, (pid + 1) % n, d.slot(), 0, 8, MSG_DEFAULT).unwrap();
                if pid == n - 1 {
                    let e = (bad.call)(ctx, s.slot(), d.slot(), local.slot(), g.slot()).unwrap_err();
                    assert_eq!(e.kind(), ErrorKind::Fatal, "{}: {e}", bad.name);
                    assert!(e.message().contains(bad.expect), "{}: message `{}` lacks `{}`", bad.name, e.message(), bad.expect);
                    wrong.check(matches!(e.reason(), Reason::Misuse { call: "lpf_put" | "lpf_get" }), || format!("{:?}: {e}", e.reason()));
                }
                assert_eq!(ctx.sync(SYNC_DEFAULT).unwrap_err().kind(), ErrorKind::Fatal, "{}", bad.name);
                assert_eq!(ctx.slice(&d), &[0u64; 8], "{}: nothing may be written", bad.name);
                assert_eq!(ctx.slice(&local), &[0u64; 8]);
            });
            assert!(e.message().contains(bad.expect) || e.message().contains("left"), "{}: {e}", bad.name);
            assert!(
                matches!(e.reason(), Reason::Misuse { call: "lpf_put" | "lpf_get" } | Reason::PeerLeft { .. }),
                "p = {p}, {}: {:?}: {e}",
                bad.name,
                e.reason()
            );
            wrong.assert_none(format_args!("p = {p}, {}", bad.name));
        }
    }
}

pub fn remote_bounds_are_checked_at_the_call(l: &dyn Launcher) {
    for p in counts(l) {
        for by_get in [false, true] {
            let wrong = Mismatches::default();
            let e = run_fatal(l, p, &|ctx, _| {
                let (pid, n) = (ctx.pid(), ctx.nprocs());
                setup(ctx, 2, 2 * n as usize);
                // Each process registers a different size under the same global slot.
                let mut mine = vec![0u64; pid as usize + 1];
                let mut src = [9u64; 4];
                let g = ctx.register_global(&mut mine).unwrap();
                let s = ctx.register_local(&mut src).unwrap();
                sync(ctx);
                let last = n - 1;
                // In bounds at pid 0 and in bounds of pid 0's own area at the last
                // process but for one word: the origin knows every process's size.
                if pid == 0 {
                    let r = if by_get {
                        ctx.get(last, g.slot(), words(n as usize), s.slot(), 0, 8, MSG_DEFAULT)
                    } else {
                        ctx.put(s.slot(), 0, last, g.slot(), words(n as usize - 1), 16, MSG_DEFAULT)
                    };
                    let e = r.unwrap_err();
                    assert!(e.is_fatal() && e.message().contains("exceeds"), "{e}");
                    let call = if by_get { "lpf_get" } else { "lpf_put" };
                    wrong.check(e.reason() == Reason::Misuse { call }, || format!("{:?}: {e}", e.reason()));
                    assert!(e.message().contains(&format!("at process {last}")), "{e}");
                    assert!(e.message().contains(&format!("{} bytes", 8 * n)), "{e}");
                }
                // The fatal error put pid 0 in the failed state; everyone's sync fails.
                assert_eq!(ctx.failure().is_some(), pid == 0);
                let e = ctx.sync(SYNC_DEFAULT).unwrap_err();
                assert!(e.is_fatal(), "{e}");
                assert!(ctx.slice(&g).iter().all(|&x| x == 0));
                assert_eq!(ctx.slice(&s), &[9u64; 4]);
            });
            assert!(e.message().contains("exceeds") || e.message().contains("left"), "{e}");
            wrong.assert_none(format_args!("p = {p}, by_get {by_get}"));
        }
    }
}

pub fn registration_sizes_are_learnt_per_process(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            setup(ctx, 4, 4 * n as usize);
            // Sizes differ per process and per slot; each process fills the right end
            // of both of its right neighbour's areas exactly.
            let mut small = vec![0u64; pid as usize + 2];
            let mut large = vec![0u64; 3 * pid as usize + 5];
            let mut src = [pid as u64 + 100; 1];
            let gs = ctx.register_global(&mut small).unwrap();
            let s = ctx.register_local(&mut src).unwrap();
            let gl = ctx.register_global(&mut large).unwrap();
            sync(ctx);
            let right = (pid + 1) % n;
            ctx.put(s.slot(), 0, right, gs.slot(), words(right as usize + 1), 8, MSG_DEFAULT).unwrap();
            ctx.put(s.slot(), 0, right, gl.slot(), words(3 * right as usize + 4), 8, MSG_DEFAULT).unwrap();
            sync(ctx);
            let left = (pid + n - 1) % n;
            assert_eq!(*ctx.slice(&gs).last().unwrap(), left as u64 + 100);
            assert_eq!(*ctx.slice(&gl).last().unwrap(), left as u64 + 100);
        });
    }
}

pub fn non_collective_calls_fail_everywhere(l: &dyn Launcher) {
    for p in counts(l).into_iter().filter(|&p| p >= 2) {
        // Only pid 0 registers a global slot: register_global is collective.
        let wrong = Mismatches::default();
        let e = run_fatal(l, p, &|ctx, _| {
            setup(ctx, 1, 1);
            let mut x = [0u64; 2];
            let _g = (ctx.pid() == 0).then(|| ctx.register_global(&mut x).unwrap());
            let e = ctx.sync(SYNC_DEFAULT).unwrap_err();
            assert!(e.is_fatal());
            wrong.check(matches!(e.reason(), Reason::OutOfStep | Reason::PeerLeft { .. }), || format!("{:?}: {e}", e.reason()));
        });
        assert!(e.message().contains("collective") || e.message().contains("left"), "{e}");
        wrong.assert_none(format_args!("p = {p}"));
        // Only pid 0 rehooks while the others sync.
        let e = run_fatal(l, p, &|ctx, _| {
            setup(ctx, 1, 1);
            if ctx.pid() == 0 {
                assert!(ctx.rehook(&|_, _| {}, Args::none()).unwrap_err().is_fatal());
            } else {
                assert!(ctx.sync(SYNC_DEFAULT).unwrap_err().is_fatal());
            }
        });
        assert!(e.message().contains("out of step") || e.message().contains("left"), "{e}");
    }
}

pub fn too_many_incoming_messages_fail(l: &dyn Launcher) {
    let agreed = l.errors_agreed_at_sync();
    for p in counts(l).into_iter().filter(|&p| p >= 2) {
        let wrong = Mismatches::default();
        let e = run_fatal(l, p, &|ctx, _| {
            let pid = ctx.pid();
            setup(ctx, 2, 1);
            let mut a = [pid as u64; 1];
            let mut b = vec![0u64; ctx.nprocs() as usize];
            let s = ctx.register_local(&mut a).unwrap();
            let d = ctx.register_global(&mut b).unwrap();
            sync(ctx);
            // Every process puts into pid 0, whose queue holds one message.
            ctx.put(s.slot(), 0, 0, d.slot(), words(pid as usize), 8, MSG_DEFAULT).unwrap();
            let e = match ctx.sync(SYNC_DEFAULT) {
                Err(e) => e,
                // Without agreement at the sync, only the destination's fails at once;
                // the others' next sync must.
                Ok(()) if !agreed && pid != 0 => ctx.sync(SYNC_DEFAULT).unwrap_err(),
                Ok(()) => panic!("pid {pid}: the sync should have failed"),
            };
            assert!(e.message().contains("reserved"), "{e}");
            // Found at pid 0's node; elsewhere told by the sync, or without agreement by
            // that node leaving.
            wrong.check(
                e.reason() == Reason::ResourceExhausted || (!agreed && matches!(e.reason(), Reason::PeerLeft { .. })),
                || format!("pid {pid}: {:?}: {e}", e.reason()),
            );
            assert!(ctx.slice(&d).iter().all(|&x| x == 0));
        });
        assert!(e.message().contains("reserved"), "{e}");
        assert_eq!(e.reason(), Reason::ResourceExhausted, "p = {p}: {e}");
        wrong.assert_none(format_args!("p = {p}"));
    }
}

pub fn many_sections_in_a_row(l: &dyn Launcher) {
    for p in counts(l).into_iter().filter(|&p| p == 2 || p == 3) {
        for round in 0..30u64 {
            run_ok(l, p, &|ctx, _| {
                let (pid, n) = (ctx.pid(), ctx.nprocs());
                setup(ctx, 2, 1);
                let mut a = [round * 10 + pid as u64];
                let mut b = [0u64];
                let s = ctx.register_local(&mut a).unwrap();
                let d = ctx.register_global(&mut b).unwrap();
                sync(ctx);
                ctx.put(s.slot(), 0, (pid + 1) % n, d.slot(), 0, 8, MSG_DEFAULT).unwrap();
                sync(ctx);
                assert_eq!(ctx.slice(&d)[0], round * 10 + ((pid + n - 1) % n) as u64);
            });
        }
    }
}

/// Thousands of small puts and gets in one superstep: their headers (and the puts'
/// inline payloads) make meta-data messages far larger than any eager buffer of a
/// transport, so the long-message paths are exercised.
pub fn many_small_messages_in_one_sync(l: &dyn Launcher) {
    const K: usize = 3000;
    for p in counts(l).into_iter().filter(|&p| p <= 4) {
        run_ok(l, p, &|ctx, _| {
            let (pid, n) = (ctx.pid(), ctx.nprocs());
            setup(ctx, 3, 4 * K);
            let mut src: Vec<u64> = (0..K).map(|i| value(pid, 0, 0, i)).collect();
            let mut put_dst = vec![0u64; K];
            let mut get_dst = vec![0u64; K];
            let s = ctx.register_global(&mut src).unwrap();
            let d = ctx.register_global(&mut put_dst).unwrap();
            let g = ctx.register_local(&mut get_dst).unwrap();
            sync(ctx);
            let (next, prev) = ((pid + 1) % n, (pid + n - 1) % n);
            for i in 0..K {
                // Reversed order on the destination, one word each.
                ctx.put(s.slot(), words(i), next, d.slot(), words(K - 1 - i), 8, MSG_DEFAULT).unwrap();
                ctx.get(prev, s.slot(), words(i), g.slot(), words(i), 8, MSG_DEFAULT).unwrap();
            }
            sync(ctx);
            for i in 0..K {
                assert_eq!(ctx.slice(&d)[K - 1 - i], value(prev, 0, 0, i), "pid {pid}: put word {i}");
                assert_eq!(ctx.slice(&g)[i], value(prev, 0, 0, i), "pid {pid}: get word {i}");
            }
        });
    }
}

/// Payloads above the inline limit (raw data messages, or one-sided operations): the
/// SPMD section of all-to-all puts and gets of 48 KiB blocks, plus large puts that
/// overlap at the last process and must end as a serialisation. Engines with a
/// launcher of their own (TCP layouts, the MPI runner) run it directly.
pub fn large_payloads_section(ctx: &mut Context, _: Args<'_>) {
    const WORDS: usize = 6 * 1024; // 48 KiB blocks
    let (pid, n) = (ctx.pid(), ctx.nprocs());
    let np = n as usize;
    setup(ctx, 4, 4 * np);
    let mut src: Vec<u64> = (0..np * WORDS).map(|i| ((pid as u64) << 32) | i as u64).collect();
    let mut dst = vec![0u64; np * WORDS];
    let mut got = vec![0u64; np * WORDS];
    let mut over = vec![0u64; 2 * WORDS];
    let s = ctx.register_global(&mut src).unwrap();
    let d = ctx.register_global(&mut dst).unwrap();
    let g = ctx.register_local(&mut got).unwrap();
    let o = ctx.register_global(&mut over).unwrap();
    sync(ctx);
    let b = words(WORDS);
    for q in 0..n {
        ctx.put(s.slot(), b * q as usize, q, d.slot(), b * pid as usize, b, MSG_DEFAULT).unwrap();
        ctx.get(q, s.slot(), b * pid as usize, g.slot(), b * q as usize, b, MSG_DEFAULT).unwrap();
    }
    // Every process writes words [pid * WORDS / n, + WORDS) of the last process's
    // `over`: these puts overlap.
    let target = n - 1;
    let start = pid as usize * WORDS / np;
    ctx.put(s.slot(), 0, target, o.slot(), words(start), b, MSG_DEFAULT).unwrap();
    sync(ctx);
    let want = |i: usize| (((i / WORDS) as u64) << 32) | (pid as usize * WORDS + i % WORDS) as u64;
    for (i, &x) in ctx.slice(&d).iter().enumerate() {
        assert_eq!(x, want(i), "put word {i}");
    }
    for (i, &x) in ctx.slice(&g).iter().enumerate() {
        assert_eq!(x, want(i), "get word {i}");
    }
    if pid == target {
        // Each word comes from a writer covering it, at the right offset, and no two
        // writers appear in both orders (beat[q][c]: q's write survived over c's).
        let mut beat = vec![vec![false; np]; np];
        for (w, &x) in ctx.slice(&o).iter().enumerate() {
            let covering: Vec<usize> = (0..np).filter(|&q| (q * WORDS / np..q * WORDS / np + WORDS).contains(&w)).collect();
            if covering.is_empty() {
                assert_eq!(x, 0, "word {w} written by nobody");
                continue;
            }
            let q = (x >> 32) as usize;
            assert!(covering.contains(&q), "word {w} from {q}, covered by {covering:?}");
            assert_eq!(x & 0xffff_ffff, (w - q * WORDS / np) as u64, "word {w} offset");
            for &c in covering.iter().filter(|&&c| c != q) {
                assert!(!beat[c][q], "writers {c} and {q} in both orders");
                beat[q][c] = true;
            }
        }
    }
}
