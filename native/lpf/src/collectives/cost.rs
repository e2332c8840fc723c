//! The BSP cost model of the collectives and the algorithm choice it drives: the
//! per-process model (h·g + work·c + supersteps·l) of the flat algorithms, the node
//! model of the hierarchical ones, and the switch points between them.

use super::{Algorithm, Collective, Collectives, Hierarchy, Inter};
use crate::context::Context;
use crate::error::Result;
use crate::types::SYNC_DEFAULT;

/// The parameters algorithm selection uses: g in seconds per byte of an h-relation,
/// l in seconds per superstep, c in seconds per byte combined by a reduction operator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    pub g: f64,
    pub l: f64,
    pub c: f64,
}

/// Default combine cost: about 10 GB/s, a streaming pass of one core.
pub(crate) const DEFAULT_COMBINE_COST: f64 = 1e-10;

impl CostModel {
    /// g and l from `ctx.probe()` at this context's process count (for messages of
    /// 1 KiB), c = [`DEFAULT_COMBINE_COST`]. The same on every process.
    pub fn from_probe(ctx: &Context) -> Result<CostModel> {
        let m = ctx.probe()?;
        let p = ctx.nprocs();
        Ok(CostModel { g: m.g(p, 1024, SYNC_DEFAULT), l: m.l(p, 1024, SYNC_DEFAULT), c: DEFAULT_COMBINE_COST })
    }
}

impl Collectives {
    /// The smallest n (bytes) at which `kind` switches from the direct to the
    /// two-phase algorithm under this object's cost model, or `None` if it never does
    /// (every kind other than broadcast, reduce and allreduce; broadcast at p ≤ 2).
    pub fn switch_bytes(&self, kind: Collective) -> Option<usize> {
        switch_bytes(self.cost, self.p, kind)
    }

    /// The algorithm a call of `kind` on `bytes` bytes runs.
    ///
    /// Flat choice: direct below [`Collectives::switch_bytes`], two-phase from there on
    /// (and for a reduction whose direct algorithm would not fit the scratch), local at
    /// p = 1. On a hierarchical machine ([`Collectives::is_hierarchical`]), broadcast
    /// and allreduce then compare, under the node cost model
    /// ([`Collectives::predicted_node_cost`]), the flat choice with the cheaper of the
    /// two hierarchical ones, and run the cheapest (ties go to the flat algorithm);
    /// [`Collectives::set_hierarchy`] can force either side.
    pub fn algorithm(&self, kind: Collective, bytes: usize) -> Algorithm {
        let flat = self.flat_algorithm(kind, bytes);
        if flat == Algorithm::Local
            || !self.is_hierarchical()
            || self.hierarchy == Hierarchy::Never
            || !matches!(kind, Collective::Broadcast | Collective::Allreduce)
        {
            return flat;
        }
        let hier_direct_fits = kind != Collective::Allreduce || self.direct_fits(bytes);
        let direct = Algorithm::Hierarchical(Inter::Direct);
        let two = Algorithm::Hierarchical(Inter::TwoPhase);
        let hier = if hier_direct_fits && self.predicted_node_cost(kind, direct, bytes) <= self.predicted_node_cost(kind, two, bytes) {
            direct
        } else {
            two
        };
        if self.hierarchy == Hierarchy::Always || self.predicted_node_cost(kind, hier, bytes) < self.predicted_node_cost(kind, flat, bytes) {
            hier
        } else {
            flat
        }
    }

    fn direct_fits(&self, bytes: usize) -> bool {
        bytes.checked_mul(self.p).is_some_and(|b| b <= self.scratch_bytes())
    }

    fn flat_algorithm(&self, kind: Collective, bytes: usize) -> Algorithm {
        if self.p == 1 {
            return Algorithm::Local;
        }
        if self.switch_bytes(kind).is_some_and(|s| bytes >= s) {
            return Algorithm::TwoPhase;
        }
        if !matches!(kind, Collective::Reduce | Collective::Allreduce) || self.direct_fits(bytes) {
            Algorithm::Direct
        } else {
            Algorithm::TwoPhase
        }
    }

    /// The predicted BSP cost in seconds of `alg` for `kind` on `bytes` bytes: for the
    /// flat algorithms the per-process model of the [module documentation](super); for
    /// [`Algorithm::Hierarchical`], which only the node model can describe,
    /// [`Collectives::predicted_node_cost`].
    pub(crate) fn predicted_cost(&self, kind: Collective, alg: Algorithm, bytes: usize) -> f64 {
        if let Algorithm::Hierarchical(_) = alg {
            return if matches!(kind, Collective::Broadcast | Collective::Allreduce) && self.is_hierarchical() {
                self.predicted_node_cost(kind, alg, bytes)
            } else {
                f64::INFINITY
            };
        }
        let (h, work, steps) = cost_terms(self.p, kind, alg);
        let n = bytes as f64;
        h * n * self.cost.g + work * n * self.cost.c + steps * self.cost.l
    }

    /// The predicted cost in seconds of `alg` for `kind` (broadcast or allreduce; other
    /// kinds: [`Collectives::predicted_cost`]) on `bytes` bytes under the node model: a
    /// superstep costs H·g + L·c + l, where H is the most bytes any node sends or
    /// receives over the network (between nodes) and L the most bytes any node copies
    /// inside itself (shared memory; a copy is a streaming pass like a combine, so it is
    /// charged c), plus c per byte of combining on the busiest process. For broadcast it
    /// is the worst case over the root's node. The formulas per superstep are in the
    /// documentation of [`Collectives::broadcast`] and [`Collectives::allreduce`].
    pub fn predicted_node_cost(&self, kind: Collective, alg: Algorithm, bytes: usize) -> f64 {
        if !matches!(kind, Collective::Broadcast | Collective::Allreduce) || self.p == 1 {
            return self.predicted_cost(kind, alg, bytes);
        }
        node_cost(self.cost, self.p, &self.node_sizes, kind, alg, bytes as f64)
    }
}

/// (h, local work, supersteps) per byte of n for each algorithm, as in the methods'
/// documentation.
fn cost_terms(p: usize, kind: Collective, alg: Algorithm) -> (f64, f64, f64) {
    let pf = p as f64;
    let spread = (pf - 1.0) / pf;
    match (kind, alg) {
        (_, Algorithm::Local) => (0.0, 0.0, 0.0),
        (Collective::Broadcast, Algorithm::Direct) => (pf - 1.0, 0.0, 1.0),
        (Collective::Broadcast, Algorithm::TwoPhase) => (2.0 * spread, 0.0, 2.0),
        (Collective::Reduce | Collective::Allreduce, Algorithm::Direct) => (pf - 1.0, pf - 1.0, 1.0),
        (Collective::Reduce | Collective::Allreduce, Algorithm::TwoPhase) => (2.0 * spread, spread, 2.0),
        (_, _) => (spread, 0.0, 1.0),
    }
}

/// The node model of [`Collectives::predicted_node_cost`] for broadcast and allreduce.
/// `sizes` lists the distinct node sizes k and how many nodes have each; n is in bytes.
fn node_cost(cost: CostModel, p: usize, sizes: &[(usize, usize)], kind: Collective, alg: Algorithm, n: f64) -> f64 {
    let pf = p as f64;
    let m = sizes.iter().map(|&(_, c)| c).sum::<usize>() as f64;
    // One superstep: `f(is_root_node, k)` = (network bytes, local bytes) of a node of k
    // processes; the superstep costs the largest of each. For allreduce no node is the
    // root's (`root` = None); for broadcast `root` is the index in `sizes` of the root
    // node's size.
    let step = |root: Option<usize>, f: &dyn Fn(bool, f64) -> (f64, f64)| -> f64 {
        let (mut h, mut w) = (0f64, 0f64);
        for (i, &(k, count)) in sizes.iter().enumerate() {
            let is_root = root == Some(i);
            // The root's node, and (if there is one) a node of the same size that is not.
            for r in [true, false].into_iter().filter(|&r| if r { is_root } else { !is_root || count > 1 }) {
                let (a, b) = f(r, k as f64);
                h = h.max(a);
                w = w.max(b);
            }
        }
        h * cost.g + w * cost.c + cost.l
    };
    let c = cost.c;
    match (kind, alg) {
        (_, Algorithm::Local) => 0.0,
        (Collective::Allreduce, Algorithm::Direct) => step(None, &|_, k| (k * (pf - k) * n, k * (k - 1.0) * n)) + (pf - 1.0) * n * c,
        (Collective::Allreduce, Algorithm::TwoPhase) => {
            2.0 * step(None, &|_, k| (k * (pf - k) * n / pf, k * (k - 1.0) * n / pf)) + (pf - 1.0) / pf * n * c
        }
        (Collective::Allreduce, Algorithm::Hierarchical(Inter::Direct)) => {
            step(None, &|_, k| ((k * (m - 1.0) * n).max((pf - k) * n), (k - 1.0) * n))
                + step(None, &|_, k| (0.0, (k - 1.0) * n))
                + (pf - 1.0) * n * c
        }
        (Collective::Allreduce, Algorithm::Hierarchical(Inter::TwoPhase)) => {
            step(None, &|_, k| (k * (pf - k) * n / pf, k * (k - 1.0) * n / pf))
                + step(None, &|_, k| (((pf - k) * n / pf).max(k * (m - 1.0) * n / pf), (k * (k - 1.0) + pf - k) * n / pf))
                + step(None, &|_, k| (0.0, (k - 1.0) * (pf - k) * n / pf))
                + (pf - 1.0) / pf * n * c
        }
        (Collective::Broadcast, _) => (0..sizes.len())
            .map(|r| {
                let r = Some(r);
                match alg {
                    Algorithm::Direct => step(r, &|root, k| if root { ((pf - k) * n, k * n) } else { (k * n, 0.0) }),
                    Algorithm::TwoPhase => {
                        step(r, &|root, k| if root { ((pf - k) * n / pf, (k - 1.0) * n / pf + n) } else { (k * n / pf, 0.0) })
                            + step(r, &|_, k| (k * (pf - k) * n / pf, k * (k - 1.0) * n / pf))
                    }
                    Algorithm::Hierarchical(Inter::Direct) => {
                        step(r, &|root, k| if root { ((m - 1.0) * n, k * n) } else { (n, 0.0) })
                            + step(r, &|root, k| (0.0, if root { 0.0 } else { k * n }))
                    }
                    Algorithm::Hierarchical(Inter::TwoPhase) => {
                        step(r, &|root, k| if root { ((m - 1.0) * n / m, k * n) } else { (n / m, 0.0) })
                            + step(r, &|_, _| ((m - 1.0) * n / m, 0.0))
                            + step(r, &|root, k| (0.0, if root { 0.0 } else { k * n }))
                    }
                    Algorithm::Local => 0.0,
                }
            })
            .fold(0.0, f64::max),
        _ => f64::INFINITY,
    }
}

/// Where two-phase becomes cheaper than direct: cost_d(n) = a_d·n + l and
/// cost_t(n) = a_t·n + 2l cross at n = l / (a_d - a_t).
pub(super) fn switch_bytes(cost: CostModel, p: usize, kind: Collective) -> Option<usize> {
    if p <= 1 || !matches!(kind, Collective::Broadcast | Collective::Reduce | Collective::Allreduce) {
        return None;
    }
    let slope = |alg| {
        let (h, w, _) = cost_terms(p, kind, alg);
        h * cost.g + w * cost.c
    };
    let d = slope(Algorithm::Direct) - slope(Algorithm::TwoPhase);
    // Guard against round-off making a zero difference (broadcast at p = 2) positive;
    // NaN parameters never switch.
    let switches = d > 1e-9 * slope(Algorithm::Direct) && cost.l >= 0.0;
    let x = (cost.l / d).floor() + 1.0;
    (switches && x.is_finite() && x < (usize::MAX / 2) as f64).then_some(x as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_points_follow_the_cost_model() {
        let cost = CostModel { g: 1e-9, l: 1e-6, c: 1e-9 };
        assert_eq!(switch_bytes(cost, 2, Collective::Broadcast), None);
        assert_eq!(switch_bytes(cost, 1, Collective::Allreduce), None);
        assert_eq!(switch_bytes(cost, 4, Collective::Allgather), None);
        for p in 2..10 {
            for kind in [Collective::Broadcast, Collective::Reduce, Collective::Allreduce] {
                if let Some(s) = switch_bytes(cost, p, kind) {
                    let at = |n: usize| {
                        let (hd, wd, sd) = cost_terms(p, kind, Algorithm::Direct);
                        let (ht, wt, st) = cost_terms(p, kind, Algorithm::TwoPhase);
                        let n = n as f64;
                        let d = hd * n * cost.g + wd * n * cost.c + sd * cost.l;
                        let t = ht * n * cost.g + wt * n * cost.c + st * cost.l;
                        (d, t)
                    };
                    let (d, t) = at(s);
                    assert!(t <= d * (1.0 + 1e-9), "p {p} {kind:?}: at the switch two-phase must not cost more");
                    let (d, t) = at(s.saturating_sub(2));
                    assert!(d <= t * (1.0 + 1e-9), "p {p} {kind:?}: below the switch direct must not cost more");
                }
            }
        }
        // Reductions at p = 2 switch because of the combine work.
        assert!(switch_bytes(cost, 2, Collective::Allreduce).is_some());
    }

    #[test]
    fn node_model_counts_network_bytes_per_node() {
        // Only g counts: network bytes of the busiest node, in units of n.
        let cost = CostModel { g: 1.0, l: 0.0, c: 0.0 };
        let at = |sizes: &[(usize, usize)], kind, alg| {
            let p = sizes.iter().map(|&(k, c)| k * c).sum();
            node_cost(cost, p, sizes, kind, alg, 1.0)
        };
        let hd = Algorithm::Hierarchical(Inter::Direct);
        let ht = Algorithm::Hierarchical(Inter::TwoPhase);
        let two_by_two = [(2, 2)];
        // Flat direct allreduce: each node receives 2 vectors for each of its 2 processes.
        assert_eq!(at(&two_by_two, Collective::Allreduce, Algorithm::Direct), 4.0);
        assert_eq!(at(&two_by_two, Collective::Allreduce, hd), 2.0);
        assert_eq!(at(&two_by_two, Collective::Allreduce, Algorithm::TwoPhase), 2.0);
        assert_eq!(at(&two_by_two, Collective::Allreduce, ht), 1.5);
        assert_eq!(at(&two_by_two, Collective::Broadcast, Algorithm::Direct), 2.0);
        assert_eq!(at(&two_by_two, Collective::Broadcast, hd), 1.0);
        // 1 + 2 + 1: the node of 2 sends its 2 vectors to 2 others either way.
        let uneven = [(1, 2), (2, 1)];
        assert_eq!(at(&uneven, Collective::Allreduce, Algorithm::Direct), 4.0);
        assert_eq!(at(&uneven, Collective::Allreduce, hd), 4.0);
        // Every process alone: hierarchical direct is flat direct plus a superstep.
        let cost = CostModel { g: 1.0, l: 1.0, c: 0.0 };
        let flat = node_cost(cost, 4, &[(1, 4)], Collective::Allreduce, Algorithm::Direct, 1.0);
        assert_eq!(node_cost(cost, 4, &[(1, 4)], Collective::Allreduce, hd, 1.0), flat + 1.0);
    }
}

