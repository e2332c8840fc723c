//! Cases for `lpf::collectives`, run on any engine through a [`Launcher`] (instantiate
//! with [`collectives_suite!`](crate::collectives_suite)).
//!
//! Every case runs at p = 1, 2, 3, 4, 8 and compares each result with a sequential
//! computation that every process can do on its own (the inputs of all processes are
//! generated from a seed). Sizes straddle each algorithm switch point: the cases pin
//! the cost model ([`TEST_COST`]) so the switch points are known, and check that both
//! algorithms actually ran. Reductions use operators that are associative but not
//! commutative (2x2 matrix products, string concatenation encoded in integers) and
//! floating-point sums, which must come out bitwise equal to the process-ordered fold.

use crate::{counts, Launcher, Rng};
use lpf::collectives::{Algorithm, Collective, Collectives, Config, CostModel, Hierarchy, Inter};
use lpf::{Args, Context, ErrorKind, Pid, MSG_DEFAULT, SYNC_DEFAULT};
use std::collections::HashSet;

type Section<'a> = &'a (dyn Fn(&mut Context, Args<'_>) + Sync);

/// l/g = 1000 bytes: switch points between about 90 bytes (p = 8) and 2 KB (p = 2).
pub(crate) const TEST_COST: CostModel = CostModel { g: 1e-9, l: 1e-6, c: 1e-9 };

/// The max_bytes the cases use.
const MAX: usize = 48 << 10;

fn run_ok(l: &dyn Launcher, p: Pid, what: &str, spmd: Section<'_>) {
    if let Err(e) = l.run(p, spmd, Args::none()) {
        panic!("{what}, p = {p}: the section failed: {e}");
    }
}

fn collectives(ctx: &mut Context, max_bytes: usize) -> Collectives {
    let cfg = Config { cost: Some(TEST_COST), ..Config::new(max_bytes) };
    Collectives::with_config(ctx, &cfg).unwrap_or_else(|e| panic!("pid {}: Collectives::with_config: {e}", ctx.pid()))
}

fn mix(seed: u64, pid: usize, i: usize) -> u64 {
    let mut r = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ ((pid as u64) << 40) ^ i as u64);
    r.next_u64();
    r.next_u64()
}

fn gen_u64(seed: u64, pid: usize, n: usize) -> Vec<u64> {
    (0..n).map(|i| mix(seed, pid, i)).collect()
}

fn gen_mat(seed: u64, pid: usize, n: usize) -> Vec<[u64; 4]> {
    (0..n).map(|i| std::array::from_fn(|k| mix(seed, pid, 4 * i + k))).collect()
}

/// Values of mixed magnitude, so that a different summation order changes the bits.
fn gen_f64(seed: u64, pid: usize, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let x = mix(seed, pid, i);
            ((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 10f64.powi((x % 9) as i32 - 4)
        })
        .collect()
}

/// A string of 1 to 3 "digits" in base B, encoded as (value, length): concatenation
/// is associative (in wrapping arithmetic too) but not commutative.
fn gen_str(seed: u64, pid: usize, n: usize) -> Vec<[u64; 2]> {
    (0..n).map(|i| [mix(seed, pid, i) % 1_000_000, 1 + (pid + i) as u64 % 3]).collect()
}

fn mat_mul(a: &mut [u64; 4], b: &[u64; 4]) {
    let m = |x: u64, y: u64| x.wrapping_mul(y);
    *a = [
        m(a[0], b[0]).wrapping_add(m(a[1], b[2])),
        m(a[0], b[1]).wrapping_add(m(a[1], b[3])),
        m(a[2], b[0]).wrapping_add(m(a[3], b[2])),
        m(a[2], b[1]).wrapping_add(m(a[3], b[3])),
    ];
}

const BASE: u64 = 1_000_003;

fn concat(a: &mut [u64; 2], b: &[u64; 2]) {
    a[0] = a[0].wrapping_mul(BASE.wrapping_pow(b[1] as u32)).wrapping_add(b[0]);
    a[1] += b[1];
}

/// The process-ordered fold x_0 ⊕ x_1 ⊕ … ⊕ x_{p-1}, element by element.
fn fold_all<T: Copy>(p: usize, gen: impl Fn(usize) -> Vec<T>, op: impl Fn(&mut T, &T)) -> Vec<T> {
    let mut acc = gen(0);
    for q in 1..p {
        for (a, b) in acc.iter_mut().zip(&gen(q)) {
            op(a, b);
        }
    }
    acc
}

/// Element counts around every interesting point: empty, one element, around p, around
/// the switch point (in elements of `elem` bytes) and up to the largest allowed.
fn sizes(p: usize, switch: Option<usize>, elem: usize, max_bytes: usize) -> Vec<usize> {
    let max = max_bytes / elem;
    let mut v = vec![0, 1, 2, p.saturating_sub(1), p, p + 1, 3 * p + 1, max];
    if let Some(s) = switch {
        let e = s.div_ceil(elem);
        v.extend([e.saturating_sub(2), e.saturating_sub(1), e, e + 1, e + p + 1, 2 * e + 3, 7 * e + 5]);
    }
    v.retain(|&n| n <= max);
    v.sort_unstable();
    v.dedup();
    v
}

/// The flat algorithm the switch point says (or the direct reduction does not fit).
fn flat_algorithm(c: &Collectives, p: usize, kind: Collective, bytes: usize) -> Algorithm {
    let direct_fits = !matches!(kind, Collective::Reduce | Collective::Allreduce) || bytes * p <= c.scratch_bytes();
    if p == 1 {
        Algorithm::Local
    } else if c.switch_bytes(kind).is_some_and(|s| bytes >= s) || !direct_fits {
        Algorithm::TwoPhase
    } else {
        Algorithm::Direct
    }
}

/// Whether `kind` may run hierarchically with `c` (machine and operation).
fn hierarchical_possible(c: &Collectives, kind: Collective) -> bool {
    c.is_hierarchical() && matches!(kind, Collective::Broadcast | Collective::Allreduce)
}

/// Asserts that `c` picks the algorithm its switch point and, on a hierarchical machine,
/// its node cost model and hierarchy policy say, and returns it.
fn expect_algorithm(c: &Collectives, p: usize, kind: Collective, bytes: usize) -> Algorithm {
    let alg = c.algorithm(kind, bytes);
    let flat = flat_algorithm(c, p, kind, bytes);
    let what = format!("{kind:?} on {bytes} bytes at p = {p}, nodes {:?}, {:?}", c.nodes(), c.hierarchy());
    if p == 1 || !hierarchical_possible(c, kind) || c.hierarchy() == Hierarchy::Never {
        assert_eq!(alg, flat, "{what}");
        return alg;
    }
    let cost = |a| c.predicted_node_cost(kind, a, bytes);
    let hd = Algorithm::Hierarchical(Inter::Direct);
    let ht = Algorithm::Hierarchical(Inter::TwoPhase);
    let hd_allowed = kind == Collective::Broadcast || bytes * p <= c.scratch_bytes();
    let best = if hd_allowed && cost(hd) <= cost(ht) { hd } else { ht };
    match c.hierarchy() {
        Hierarchy::Always => assert_eq!(alg, best, "{what}"),
        _ if cost(best) < cost(flat) => assert_eq!(alg, best, "{what}: {} < {}", cost(best), cost(flat)),
        _ => assert_eq!(alg, flat, "{what}: {} >= {}", cost(best), cost(flat)),
    }
    alg
}

/// Both algorithms ran wherever the cost model has a switch point (on a hierarchical
/// machine a hierarchical algorithm may stand in for either).
fn check_both_ran(c: &Collectives, p: usize, kind: Collective, seen: &HashSet<Algorithm>) {
    let hier = seen.iter().any(|a| matches!(a, Algorithm::Hierarchical(_)));
    if p == 1 {
        assert_eq!(seen.iter().copied().collect::<Vec<_>>(), vec![Algorithm::Local]);
    } else if hier {
        assert!(hierarchical_possible(c, kind), "{kind:?} p = {p}: {seen:?} on nodes {:?}", c.nodes());
        assert!(!seen.contains(&Algorithm::Local));
    } else if c.switch_bytes(kind).is_some() {
        assert!(seen.contains(&Algorithm::Direct) && seen.contains(&Algorithm::TwoPhase), "{kind:?} p = {p}: {seen:?}");
    } else {
        assert_eq!(seen.iter().copied().collect::<Vec<_>>(), vec![Algorithm::Direct], "{kind:?} p = {p}");
    }
}

pub fn coll_allreduce(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, "allreduce", &|ctx, _| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            let mut c = collectives(ctx, MAX);
            let kind = Collective::Allreduce;
            let mut seen = HashSet::new();
            // Non-commutative: 2x2 matrix products.
            for (round, n) in sizes(np, c.switch_bytes(kind), 32, MAX).into_iter().enumerate() {
                let seed = 100 + round as u64;
                let mut data = gen_mat(seed, me, n);
                seen.insert(expect_algorithm(&c, np, kind, n * 32));
                c.allreduce(ctx, &mut data, mat_mul).unwrap();
                let want = fold_all(np, |q| gen_mat(seed, q, n), mat_mul);
                assert_eq!(data, want, "pid {me}: matrix allreduce of {n} elements");
                if np > 1 && n > 0 {
                    // The check can tell the order: the reversed product differs.
                    let rev = fold_all(np, |q| gen_mat(seed, np - 1 - q, n), mat_mul);
                    assert_ne!(rev, want);
                }
            }
            check_both_ran(&c, np, kind, &seen);
            // Floating-point sums: bitwise the process-ordered sum, on both algorithms.
            for (round, n) in sizes(np, c.switch_bytes(kind), 8, MAX).into_iter().enumerate() {
                let seed = 200 + round as u64;
                let mut data = gen_f64(seed, me, n);
                c.allreduce(ctx, &mut data, |a, b| *a += *b).unwrap();
                let want = fold_all(np, |q| gen_f64(seed, q, n), |a, b| *a += *b);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&data), bits(&want), "pid {me}: f64 allreduce of {n} elements");
            }
            // A few words (what PageRank does) and another operator.
            let mut three = [me as f64, 1.0, (me * me) as f64];
            c.allreduce(ctx, &mut three, |a, b| *a += *b).unwrap();
            let s = (0..np).map(|q| q as f64).sum::<f64>();
            let s2 = (0..np).map(|q| (q * q) as f64).sum::<f64>();
            assert_eq!(three, [s, np as f64, s2]);
            let mut mx = [me as u64 * 7 % 5];
            c.allreduce(ctx, &mut mx, |a, b| *a = (*a).max(*b)).unwrap();
            assert_eq!(mx[0], (0..np as u64).map(|q| q * 7 % 5).max().unwrap());
        });
    }
}

pub fn coll_reduce(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, "reduce", &|ctx, _| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            let mut c = collectives(ctx, MAX);
            let kind = Collective::Reduce;
            let mut seen = HashSet::new();
            let mut roots = vec![0, np - 1, np / 2];
            roots.dedup();
            for root in roots {
                for (round, n) in sizes(np, c.switch_bytes(kind), 32, MAX).into_iter().enumerate() {
                    let seed = 300 + (root * 100 + round) as u64;
                    let mut data = gen_mat(seed, me, n);
                    seen.insert(expect_algorithm(&c, np, kind, n * 32));
                    c.reduce(ctx, root as Pid, &mut data, mat_mul).unwrap();
                    if me == root {
                        assert_eq!(data, fold_all(np, |q| gen_mat(seed, q, n), mat_mul), "root {root}, {n} matrices");
                    } else {
                        assert_eq!(data, gen_mat(seed, me, n), "pid {me}: reduce changed a non-root's data");
                    }
                }
                for (round, n) in sizes(np, c.switch_bytes(kind), 16, MAX).into_iter().enumerate() {
                    let seed = 400 + (root * 100 + round) as u64;
                    let mut data = gen_str(seed, me, n);
                    c.reduce(ctx, root as Pid, &mut data, concat).unwrap();
                    if me == root {
                        let want = fold_all(np, |q| gen_str(seed, q, n), concat);
                        assert_eq!(data, want, "root {root}, {n} strings");
                        if n > 0 {
                            let digits: u64 = (0..np).map(|q| 1 + (q as u64) % 3).sum();
                            assert_eq!(data[0][1], digits);
                        }
                    } else {
                        assert_eq!(data, gen_str(seed, me, n));
                    }
                }
            }
            check_both_ran(&c, np, kind, &seen);
        });
    }
}

pub fn coll_broadcast(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, "broadcast", &|ctx, _| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            let mut c = collectives(ctx, MAX);
            let kind = Collective::Broadcast;
            let mut seen = HashSet::new();
            for root in [0, np - 1, np / 2] {
                for (round, n) in sizes(np, c.switch_bytes(kind), 8, MAX).into_iter().enumerate() {
                    let seed = 500 + (root * 100 + round) as u64;
                    let mut data = if me == root { gen_u64(seed, root, n) } else { vec![u64::MAX; n] };
                    seen.insert(expect_algorithm(&c, np, kind, n * 8));
                    c.broadcast(ctx, root as Pid, &mut data).unwrap();
                    assert_eq!(data, gen_u64(seed, root, n), "pid {me}: broadcast from {root} of {n} words");
                }
                // Odd-sized elements: byte offsets that are not multiples of 8.
                for (round, n) in sizes(np, c.switch_bytes(kind), 3, MAX).into_iter().enumerate() {
                    let seed = 600 + (root * 100 + round) as u64;
                    let make = || gen_u64(seed, root, n).into_iter().map(|x| [x as u8, (x >> 8) as u8, (x >> 16) as u8]).collect::<Vec<_>>();
                    let mut data = if me == root { make() } else { vec![[0xa5u8; 3]; n] };
                    c.broadcast(ctx, root as Pid, &mut data).unwrap();
                    assert_eq!(data, make(), "pid {me}: broadcast from {root} of {n} triples");
                }
            }
            check_both_ran(&c, np, kind, &seen);
        });
    }
}

pub fn coll_scatter_gather(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, "scatter/gather", &|ctx, _| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            let mut c = collectives(ctx, MAX);
            for root in [0, np - 1, np / 2] {
                for k in [0, 1, 3, 17, 250, MAX / 8 / np] {
                    let seed = 700 + (root * 1000 + k) as u64;
                    assert_eq!(expect_algorithm(&c, np, Collective::Scatter, np * k * 8), if np == 1 { Algorithm::Local } else { Algorithm::Direct });
                    let all = gen_u64(seed, root, np * k);
                    let src = if me == root { all.clone() } else { Vec::new() };
                    let mut mine = vec![0u64; k];
                    c.scatter(ctx, root as Pid, &src, &mut mine).unwrap();
                    assert_eq!(mine, all[me * k..(me + 1) * k], "pid {me}: scatter from {root}, k = {k}");
                    // Gather it back, each block changed by its owner.
                    for x in mine.iter_mut() {
                        *x = x.rotate_left(me as u32 + 1);
                    }
                    let mut back = if me == root { vec![0u64; np * k] } else { Vec::new() };
                    c.gather(ctx, root as Pid, &mine, &mut back).unwrap();
                    if me == root {
                        for q in 0..np {
                            for i in 0..k {
                                assert_eq!(back[q * k + i], all[q * k + i].rotate_left(q as u32 + 1), "gather to {root}, k = {k}");
                            }
                        }
                    }
                }
            }
        });
    }
}

pub fn coll_allgather(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, "allgather", &|ctx, _| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            let mut c = collectives(ctx, MAX);
            for k in [0, 1, 2, 5, 64, 700, MAX / 8 / np] {
                let seed = 800 + k as u64;
                let mine = gen_u64(seed, me, k);
                let mut all = vec![0u64; np * k];
                c.allgather(ctx, &mine, &mut all).unwrap();
                for q in 0..np {
                    assert_eq!(all[q * k..(q + 1) * k], gen_u64(seed, q, k)[..], "pid {me}: allgather k = {k}, part {q}");
                }
            }
            // Uneven parts: block distributions of n not divisible by p, and parts of
            // very different sizes, some empty.
            let mut rng = Rng::new(77);
            for round in 0..12 {
                let counts: Vec<usize> = match round {
                    0..=5 => {
                        let n = [0, 1, np + 1, 1001, 4097, MAX / 8][round];
                        (0..np).map(|q| (q + 1) * n / np - q * n / np).collect()
                    }
                    _ => (0..np).map(|_| if rng.below(3) == 0 { 0 } else { rng.below(700) as usize }).collect(),
                };
                let n: usize = counts.iter().sum();
                let seed = 900 + round as u64;
                let whole = gen_f64(seed, 0, n);
                let off: usize = counts[..me].iter().sum();
                let mut data = vec![f64::NAN; n];
                data[off..off + counts[me]].copy_from_slice(&whole[off..off + counts[me]]);
                c.allgatherv(ctx, &counts, &mut data).unwrap();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&data), bits(&whole), "pid {me}: allgatherv counts {counts:?}");
            }
        });
    }
}

pub fn coll_alltoall(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, "alltoall", &|ctx, _| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            let mut c = collectives(ctx, MAX);
            for k in [0, 1, 3, 100, MAX / 4 / np] {
                let seed = 1000 + k as u64;
                // Element i of block q from process r: r, q, i and the seed.
                let val = |r: usize, q: usize, i: usize| ((r as u32) << 24) ^ ((q as u32) << 16) ^ (i as u32) ^ (seed as u32).rotate_left(7);
                let src: Vec<u32> = (0..np * k).map(|j| val(me, j / k.max(1), j % k.max(1))).collect();
                let mut dst = vec![0u32; np * k];
                c.alltoall(ctx, &src, &mut dst).unwrap();
                for r in 0..np {
                    for i in 0..k {
                        assert_eq!(dst[r * k + i], val(r, me, i), "pid {me}: alltoall k = {k}, block from {r}");
                    }
                }
            }
        });
    }
}

/// Limits and coexistence: calls above max_bytes fail with OutOfMemory and no effect;
/// the program's own registrations and messages, pending across a collective, work
/// with the capacities `with_config` reserved for them; the machine's own cost model
/// (probe) works; release and re-create.
pub fn coll_limits_and_user_messages(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, "limits", &|ctx, _| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            let cfg = Config { user_slots: 2, user_msgs: np, ..Config::new(1024) };
            let mut c = Collectives::with_config(ctx, &cfg).unwrap();
            // Too large: OutOfMemory everywhere, data untouched, nothing pending.
            let mut big = vec![me as u64; 129];
            let e = c.allreduce(ctx, &mut big, |a, b| *a += *b).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::OutOfMemory, "{e}");
            assert!(big.iter().all(|&x| x == me as u64));
            let e = c.broadcast(ctx, 0, &mut big).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::OutOfMemory, "{e}");
            // The program's own communication, queued before the collective.
            let mut mine = [me as u64 + 1000];
            let mut from_left = vec![0u64; 1];
            let src = ctx.register_local(&mut mine).unwrap();
            let mut dst = ctx.register_global(&mut from_left).unwrap();
            ctx.sync(SYNC_DEFAULT).unwrap();
            for round in 0..3u64 {
                ctx.put(src.slot(), 0, ((me + 1) % np) as Pid, dst.slot(), 0, 8, MSG_DEFAULT).unwrap();
                let mut v = [me as u64 + round, 1];
                c.allreduce(ctx, &mut v, |a, b| *a += *b).unwrap();
                assert_eq!(v, [(0..np as u64).sum::<u64>() + np as u64 * round, np as u64]);
                if np == 1 {
                    // At p = 1 a collective does not sync (documented): complete it here.
                    ctx.sync(SYNC_DEFAULT).unwrap();
                }
                assert_eq!(ctx.slice(&dst)[0], ((me + np - 1) % np) as u64 + 1000, "the user's put completed");
                ctx.slice_mut(&mut dst)[0] = 0;
                let mut w = vec![0u64; 128];
                if me == 0 {
                    w.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64 * round);
                }
                c.broadcast(ctx, 0, &mut w).unwrap();
                assert!(w.iter().enumerate().all(|(i, &x)| x == i as u64 * round));
            }
            drop(src);
            ctx.deregister(dst.slot()).unwrap();
            drop(dst);
            c.release(ctx).unwrap();
            // The machine's own cost model, re-created after release.
            let mut c = Collectives::with_config(ctx, &Config { user_slots: 2, user_msgs: np, ..Config::new(1 << 20) }).unwrap();
            assert_eq!(c.cost_model(), lpf::collectives::CostModel::from_probe(ctx).unwrap());
            for n in [3usize, 1000, 1 << 17] {
                let mut v = gen_f64(n as u64, me, n);
                c.allreduce(ctx, &mut v, |a, b| *a += *b).unwrap();
                let want = fold_all(np, |q| gen_f64(n as u64, q, n), |a, b| *a += *b);
                assert!(v.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "n = {n}");
                let counts: Vec<usize> = (0..np).map(|q| (q + 1) * n / np - q * n / np).collect();
                let off = me * n / np;
                let mut x = vec![0.0; n];
                x[off..off + counts[me]].copy_from_slice(&want[off..off + counts[me]]);
                c.allgatherv(ctx, &counts, &mut x).unwrap();
                assert!(x.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
            }
        });
    }
}

/// A random sequence of collectives of every kind, sizes and roots, back to back with
/// one scratch (so that no call can disturb the next), each checked against the
/// sequential result.
pub fn coll_random_sequence(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, "random sequence", &|ctx, _| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            let mut c = collectives(ctx, 16 << 10);
            let mut rng = Rng::new(4242 + np as u64);
            for step in 0..60u64 {
                let seed = 10_000 + step;
                // The same draws everywhere, so every process sets the same policy.
                c.set_hierarchy([Hierarchy::Auto, Hierarchy::Never, Hierarchy::Always][rng.below(3) as usize]);
                let root = rng.below(np as u64) as usize;
                let n = match rng.below(3) {
                    0 => rng.below(8),
                    1 => rng.below(64),
                    _ => rng.below(1024 / np as u64) * np as u64 + rng.below(np as u64),
                } as usize;
                match rng.below(7) {
                    0 => {
                        let mut d = if me == root { gen_u64(seed, root, n) } else { vec![0; n] };
                        c.broadcast(ctx, root as Pid, &mut d).unwrap();
                        assert_eq!(d, gen_u64(seed, root, n), "step {step}");
                    }
                    1 => {
                        let mut d = gen_str(seed, me, n);
                        c.reduce(ctx, root as Pid, &mut d, concat).unwrap();
                        let want = if me == root { fold_all(np, |q| gen_str(seed, q, n), concat) } else { gen_str(seed, me, n) };
                        assert_eq!(d, want, "step {step}");
                    }
                    2 => {
                        let mut d = gen_mat(seed, me, n / 4);
                        c.allreduce(ctx, &mut d, mat_mul).unwrap();
                        assert_eq!(d, fold_all(np, |q| gen_mat(seed, q, n / 4), mat_mul), "step {step}");
                    }
                    3 => {
                        let k = n / np;
                        let all = gen_u64(seed, root, np * k);
                        let mut mine = vec![0; k];
                        c.scatter(ctx, root as Pid, if me == root { &all } else { &[] }, &mut mine).unwrap();
                        assert_eq!(mine, all[me * k..(me + 1) * k], "step {step}");
                    }
                    4 => {
                        let k = n / np;
                        let mut all = if me == root { vec![0; np * k] } else { Vec::new() };
                        c.gather(ctx, root as Pid, &gen_u64(seed, me, k), &mut all).unwrap();
                        if me == root {
                            assert_eq!(all, (0..np).flat_map(|q| gen_u64(seed, q, k)).collect::<Vec<_>>(), "step {step}");
                        }
                    }
                    5 => {
                        let k = n / np;
                        let mut all = vec![0; np * k];
                        c.allgather(ctx, &gen_u64(seed, me, k), &mut all).unwrap();
                        assert_eq!(all, (0..np).flat_map(|q| gen_u64(seed, q, k)).collect::<Vec<_>>(), "step {step}");
                    }
                    _ => {
                        let k = n / np;
                        let mut dst = vec![0; np * k];
                        c.alltoall(ctx, &gen_u64(seed, me, np * k), &mut dst).unwrap();
                        let want: Vec<u64> = (0..np).flat_map(|r| gen_u64(seed, r, np * k)[me * k..(me + 1) * k].to_vec()).collect();
                        assert_eq!(dst, want, "step {step}");
                    }
                }
            }
        });
    }
}

/// l/g = 1000 bytes as in [`TEST_COST`], but shared-memory copies and combining 100
/// times cheaper than the network: where hierarchical algorithms pay.
pub(crate) const HIER_COST: CostModel = CostModel { g: 1e-9, l: 1e-6, c: 1e-11 };

/// Hierarchical broadcast and allreduce: `ctx.nodes()` is what the launcher says (and a
/// partition of the pids into consecutive ranges); under each policy (Auto, Never,
/// Always) the algorithm is the one the node cost model says, and every result equals
/// the sequential computation (non-commutative operators, floating-point sums bitwise).
/// On a hierarchical machine (several nodes, some with several processes) Always runs
/// both hierarchical variants of allreduce, Auto picks a hierarchical one somewhere for
/// both operations, and reduce stays flat; elsewhere nothing hierarchical runs.
pub fn coll_hierarchical(l: &dyn Launcher) {
    for p in counts(l) {
        run_ok(l, p, "hierarchical", &|ctx, _| {
            let (me, np) = (ctx.pid() as usize, ctx.nprocs() as usize);
            let nodes = ctx.nodes();
            if let Some(want) = l.nodes(np as Pid) {
                assert_eq!(nodes, want, "pid {me}: ctx.nodes() on {}", ctx.engine_name());
            }
            assert_eq!(nodes.first().map(|r| r.start), Some(0));
            assert_eq!(nodes.last().map(|r| r.end), Some(np as Pid));
            assert!(nodes.windows(2).all(|w| w[0].end == w[1].start) && nodes.iter().all(|r| !r.is_empty()), "{nodes:?}");
            let hierarchical = nodes.len() > 1 && nodes.len() < np;
            let cfg = Config { cost: Some(HIER_COST), ..Config::new(MAX) };
            let mut c = Collectives::with_config(ctx, &cfg).unwrap();
            assert_eq!(c.is_hierarchical(), hierarchical);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            for policy in [Hierarchy::Always, Hierarchy::Auto, Hierarchy::Never] {
                c.set_hierarchy(policy);
                let mut seen = HashSet::new();
                let mut seen_bcast = HashSet::new();
                // Sizes around the flat switch points and the hierarchical crossovers
                // (about 500 B to 2 KB at this cost model).
                let mut sizes_b: Vec<usize> = vec![0, 8, 16, 64, 256, 400, 504, 600, 800, 1024, 1600, 2048, 3000, 6000, 12 << 10, MAX];
                sizes_b.extend(c.switch_bytes(Collective::Allreduce));
                sizes_b.extend(c.switch_bytes(Collective::Broadcast));
                sizes_b.retain(|&b| b <= MAX);
                for (round, bytes) in sizes_b.into_iter().enumerate() {
                    let seed = 20_000 + round as u64 * 10;
                    // Matrices (non-commutative).
                    let n = bytes / 32;
                    seen.insert(expect_algorithm(&c, np, Collective::Allreduce, n * 32));
                    let mut data = gen_mat(seed, me, n);
                    c.allreduce(ctx, &mut data, mat_mul).unwrap();
                    assert_eq!(data, fold_all(np, |q| gen_mat(seed, q, n), mat_mul), "pid {me}: {policy:?} matrix allreduce of {n}");
                    // Strings (non-commutative, 16-byte elements).
                    let n = bytes / 16;
                    seen.insert(expect_algorithm(&c, np, Collective::Allreduce, n * 16));
                    let mut data = gen_str(seed + 1, me, n);
                    c.allreduce(ctx, &mut data, concat).unwrap();
                    assert_eq!(data, fold_all(np, |q| gen_str(seed + 1, q, n), concat), "pid {me}: {policy:?} string allreduce of {n}");
                    // f64 sums: bitwise the left-to-right fold, on every path.
                    let n = bytes / 8;
                    seen.insert(expect_algorithm(&c, np, Collective::Allreduce, n * 8));
                    let mut data = gen_f64(seed + 2, me, n);
                    c.allreduce(ctx, &mut data, |a, b| *a += *b).unwrap();
                    let want = fold_all(np, |q| gen_f64(seed + 2, q, n), |a, b| *a += *b);
                    assert_eq!(bits(&data), bits(&want), "pid {me}: {policy:?} f64 allreduce of {n}");
                    // Reduce stays flat (and correct) whatever the policy.
                    let root = (round * 5 + 1) % np;
                    let n = bytes / 16;
                    let alg = c.algorithm(Collective::Reduce, n * 16);
                    assert_eq!(alg, flat_algorithm(&c, np, Collective::Reduce, n * 16), "reduce of {n} strings");
                    let mut data = gen_str(seed + 3, me, n);
                    c.reduce(ctx, root as Pid, &mut data, concat).unwrap();
                    let want = if me == root { fold_all(np, |q| gen_str(seed + 3, q, n), concat) } else { gen_str(seed + 3, me, n) };
                    assert_eq!(data, want, "pid {me}: {policy:?} reduce to {root} of {n} strings");
                    // Broadcast from every root: each node, first and last process.
                    for root in 0..np {
                        let n = bytes / 8;
                        seen_bcast.insert(expect_algorithm(&c, np, Collective::Broadcast, n * 8));
                        let seed = seed + 4 + root as u64;
                        let mut data = if me == root { gen_u64(seed, root, n) } else { vec![u64::MAX; n] };
                        c.broadcast(ctx, root as Pid, &mut data).unwrap();
                        assert_eq!(data, gen_u64(seed, root, n), "pid {me}: {policy:?} broadcast from {root} of {n} words");
                    }
                    // Odd element size (3 bytes): blocks at unaligned byte offsets.
                    let n = bytes / 3;
                    let root = np - 1;
                    let make = || gen_u64(seed + 9, root, n).into_iter().map(|x| [x as u8, (x >> 8) as u8, (x >> 16) as u8]).collect::<Vec<_>>();
                    let mut data = if me == root { make() } else { vec![[0x5au8; 3]; n] };
                    seen_bcast.insert(expect_algorithm(&c, np, Collective::Broadcast, n * 3));
                    c.broadcast(ctx, root as Pid, &mut data).unwrap();
                    assert_eq!(data, make(), "pid {me}: {policy:?} broadcast of {n} triples");
                }
                let hier = |s: &HashSet<Algorithm>| s.iter().filter(|a| matches!(a, Algorithm::Hierarchical(_))).count();
                match (hierarchical, policy) {
                    (true, Hierarchy::Always) => {
                        assert!(seen.contains(&Algorithm::Hierarchical(Inter::Direct)) && seen.contains(&Algorithm::Hierarchical(Inter::TwoPhase)), "allreduce, {nodes:?}: {seen:?}");
                        assert_eq!(hier(&seen), seen.len(), "allreduce, {nodes:?}: {seen:?}");
                        assert_eq!(hier(&seen_bcast), seen_bcast.len(), "broadcast, {nodes:?}: {seen_bcast:?}");
                        if nodes.len() >= 3 {
                            assert_eq!(hier(&seen_bcast), 2, "broadcast, {nodes:?}: {seen_bcast:?}");
                        }
                    }
                    (true, Hierarchy::Auto) => {
                        // Allreduce gains when every node has several processes (then
                        // flat sends each vector into a node k times); with single-process
                        // nodes about (2 + 1, 1 + 2 + 1) the busiest node moves as much
                        // either way, and the model rightly stays flat. Broadcast always
                        // gains for large enough vectors.
                        if nodes.iter().all(|r| r.len() > 1) {
                            assert!(hier(&seen) >= 1, "allreduce, {nodes:?}: {seen:?}");
                        }
                        assert!(hier(&seen) < seen.len(), "allreduce, {nodes:?}: {seen:?}");
                        assert!(hier(&seen_bcast) >= 1, "broadcast, {nodes:?}: {seen_bcast:?}");
                    }
                    _ => assert_eq!(hier(&seen) + hier(&seen_bcast), 0, "{nodes:?} {policy:?}: {seen:?} {seen_bcast:?}"),
                }
            }
        });
    }
}
