//! Step 5: the iterations. Each process updates its rows with `step_block` on its
//! threads, then one superstep carries the contribution exchange and the allreduce of
//! (residual, dangling mass): every process puts its two partial sums into slot `me`
//! of everyone's partials array and all add the p pairs in process order, so every
//! process takes the same stopping decision.

use super::comm::{bytes, try_zeroed, Comm};
use super::{build::LocalGraph, DistOptions, DistResult, Exchange, IterationProgress};
use crate::algorithms::pagerank::{step_block, PageRankConfig, StepPartials, CHUNKS};
use crate::parallel::{run_blocks, run_dynamic, split_by_bounds};
use lpf::{Memslot, Pid, MSG_DEFAULT};
use std::time::Instant;

/// Which exchange ran and what it moves per iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExchangeStats {
    /// `Allgather` or `Plan` (never `Auto`).
    pub kind: Exchange,
    /// Contribution entries this process receives per iteration.
    pub recv_entries: u64,
    /// Entries all processes together would receive per iteration with each exchange.
    pub total_allgather_entries: u64,
    pub total_plan_entries: u64,
    /// Local-row update time and exchange (pack + sync) time over all iterations.
    pub compute_seconds: f64,
    pub exchange_seconds: f64,
}

pub(crate) struct IterOut {
    pub ranks: Vec<f64>,
    pub iterations: usize,
    pub residual: f64,
    pub seconds: f64,
}

/// One put of packed entries to a process that references them.
struct Send {
    pid: usize,
    displ: usize,
    count: usize,
    remote_off: usize,
}

pub(crate) struct Iteration {
    kind: Exchange,
    /// Contribution vectors, current and next, both registered global.
    x: [Vec<f64>; 2],
    slots: [Memslot; 2],
    /// (residual, dangling) of every process, registered global.
    partials: Vec<f64>,
    partials_slot: Memslot,
    /// Where this process's rows sit in `x`.
    own_off: usize,
    /// Plan: the own entries each requester needs (offsets into the own rows),
    /// concatenated by requester, the packing buffer and the puts.
    send_idx: Vec<u32>,
    send_buf: Vec<f64>,
    send_slot: Option<Memslot>,
    sends: Vec<Send>,
    /// Allgather: (owner, offset, length) of every remote non-dangling range.
    gets: Vec<(usize, usize, usize)>,
    threads: usize,
    pub(crate) stats: ExchangeStats,
}

impl Iteration {
    /// Decides the exchange, builds the plan if needed (rewriting the graph's column ids
    /// to the compact numbering: own rows, then ghosts by owner), registers the buffers.
    pub fn setup(comm: &mut Comm<'_>, g: &mut LocalGraph, opts: &DistOptions, threads: usize) -> DistResult<Iteration> {
        let me = comm.me;
        let (lo, hi) = (g.bounds[me], g.bounds[me + 1]);
        let bits = ghost_bitmap(g, me)?;
        let nghost: usize = bits.iter().map(|w| w.count_ones() as usize).sum();
        let own_nd = g.nondangling.min(hi).saturating_sub(lo);
        let ag_recv = (g.nondangling - own_nd) as u64;
        // [plan entries, allgather entries] over all processes.
        let mut totals = [nghost as u64, ag_recv];
        comm.allreduce_u64(&mut totals[..1], |a, b| *a += *b)?;
        comm.allreduce_u64(&mut totals[1..], |a, b| *a += *b)?;
        let kind = choose_exchange(opts, totals);
        let mut it = Iteration::unplanned(kind, comm.p, threads, totals);
        match kind {
            Exchange::Plan => it.plan(comm, g, bits, nghost)?,
            _ => {
                drop(bits);
                it.allgather(comm, g, ag_recv)?;
            }
        }
        it.register(comm)?;
        comm.sync()?;
        Ok(it)
    }

    /// An iteration of exchange `kind` with no buffers yet; `totals` are the plan's and
    /// the allgather's entries over all processes.
    fn unplanned(kind: Exchange, p: usize, threads: usize, totals: [u64; 2]) -> Iteration {
        Iteration {
            kind,
            x: [Vec::new(), Vec::new()],
            slots: [Memslot::INVALID; 2],
            partials: vec![0.0; 2 * p],
            partials_slot: Memslot::INVALID,
            own_off: 0,
            send_idx: Vec::new(),
            send_buf: Vec::new(),
            send_slot: None,
            sends: Vec::new(),
            gets: Vec::new(),
            threads: threads.max(1),
            stats: ExchangeStats {
                kind,
                recv_entries: 0,
                total_allgather_entries: totals[1],
                total_plan_entries: totals[0],
                compute_seconds: 0.0,
                exchange_seconds: 0.0,
            },
        }
    }

    /// The plan exchange: renumbers the columns compactly, asks every owner for the
    /// ghosts in `bits` and records the puts that answer the others' requests.
    fn plan(&mut self, comm: &mut Comm<'_>, g: &mut LocalGraph, bits: Vec<u64>, nghost: usize) -> DistResult<()> {
        let (p, me) = (comm.p, comm.me);
        let nloc = g.bounds[me + 1] - g.bounds[me];
        compact_columns(g, &bits, me);
        let (requests, counts, ghost_start) = ghost_requests(&bits, &g.bounds, p, nghost);
        drop(bits);
        let (send_idx, send_counts) = comm.alltoallv(&requests, &counts)?;
        drop(requests);
        let offsets: Vec<u64> = (0..p).map(|q| (nloc + ghost_start[q]) as u64).collect();
        let remote_offs = comm.alltoall_u64(&offsets)?;
        let mut displ = 0usize;
        for r in 0..p {
            if r != me && send_counts[r] > 0 {
                self.sends.push(Send { pid: r, displ, count: send_counts[r], remote_off: remote_offs[r] as usize });
            }
            displ += send_counts[r];
        }
        self.send_buf = vec![0.0; send_idx.len()];
        self.send_idx = send_idx;
        let what = "the contribution vectors (own rows and ghosts)";
        self.x = [try_zeroed(nloc + nghost, me, what)?, try_zeroed(nloc + nghost, me, what)?];
        self.own_off = 0;
        self.stats.recv_entries = nghost as u64;
        Ok(())
    }

    /// The allgather exchange: a get of every other process's non-dangling rows.
    fn allgather(&mut self, comm: &Comm<'_>, g: &LocalGraph, ag_recv: u64) -> DistResult<()> {
        let (p, me) = (comm.p, comm.me);
        for q in (0..p).filter(|&q| q != me) {
            let (a, b) = (g.bounds[q], g.bounds[q + 1].min(g.nondangling));
            if b > a {
                self.gets.push((q, a, b - a));
            }
        }
        let what = "the contribution vectors (every vertex, allgather exchange)";
        self.x = [try_zeroed(g.n, me, what)?, try_zeroed(g.n, me, what)?];
        self.own_off = g.bounds[me];
        self.stats.recv_entries = ag_recv;
        Ok(())
    }

    /// Registers the contribution vectors, the partials and (plan) the packing buffer.
    fn register(&mut self, comm: &mut Comm<'_>) -> DistResult<()> {
        // SAFETY: the vectors live in `self` and are never resized until `release`
        // deregisters them; they are touched only between syncs.
        unsafe {
            self.slots[0] = comm.register_global(self.x[0].as_mut_ptr(), self.x[0].len())?;
            self.slots[1] = comm.register_global(self.x[1].as_mut_ptr(), self.x[1].len())?;
            self.partials_slot = comm.register_global(self.partials.as_mut_ptr(), self.partials.len())?;
            if self.kind == Exchange::Plan {
                self.send_slot = Some(comm.register_local(self.send_buf.as_mut_ptr(), self.send_buf.len())?);
            }
        }
        Ok(())
    }

    /// Deregisters the buffers (collective: every process in the same order).
    pub fn release(self, comm: &mut Comm<'_>) -> DistResult<()> {
        if comm.ctx.failure().is_some() {
            return Ok(());
        }
        if let Some(s) = self.send_slot {
            comm.deregister(s)?;
        }
        comm.deregister(self.partials_slot)?;
        comm.deregister(self.slots[1])?;
        comm.deregister(self.slots[0])?;
        Ok(())
    }

    /// Queues the messages that complete `x[which]` everywhere at the next sync.
    fn post(&mut self, comm: &mut Comm<'_>, which: usize) -> DistResult<()> {
        let slot = self.slots[which];
        match self.kind {
            Exchange::Plan => {
                let x = &self.x[which];
                let idx = &self.send_idx;
                if self.threads > 1 && idx.len() > 1 << 16 {
                    let bounds = crate::parallel::even_blocks(idx.len(), self.threads);
                    let parts: Vec<(&mut [f64], usize)> =
                        split_by_bounds(&mut self.send_buf, &bounds).into_iter().zip(bounds.iter().copied()).collect();
                    run_blocks(parts, |_, (out, lo)| {
                        for (o, &i) in out.iter_mut().zip(&idx[lo..]) {
                            *o = x[i as usize];
                        }
                    })?;
                } else {
                    for (o, &i) in self.send_buf.iter_mut().zip(idx) {
                        *o = x[i as usize];
                    }
                }
                let src = self.send_slot.expect("plan has a send slot");
                for s in &self.sends {
                    comm.ctx.put(src, bytes::<f64>(s.displ), s.pid as Pid, slot, bytes::<f64>(s.remote_off), bytes::<f64>(s.count), MSG_DEFAULT)?;
                }
            }
            _ => {
                for &(q, off, len) in &self.gets {
                    comm.ctx.get(q as Pid, slot, bytes::<f64>(off), slot, bytes::<f64>(off), bytes::<f64>(len), MSG_DEFAULT)?;
                }
            }
        }
        Ok(())
    }

    pub fn run(
        &mut self,
        comm: &mut Comm<'_>,
        g: &LocalGraph,
        cfg: &PageRankConfig,
        observe: &mut dyn FnMut(&IterationProgress),
    ) -> DistResult<IterOut> {
        let (p, me, n) = (comm.p, comm.me, g.n);
        let nloc = g.graph.n();
        if n == 0 {
            return Ok(IterOut { ranks: Vec::new(), iterations: 0, residual: 0.0, seconds: 0.0 });
        }
        let alpha = cfg.alpha;
        let r0 = 1.0 / n as f64;
        let mut ranks = vec![r0; nloc];
        // Start vector: own contributions, then one exchange for the remote ones.
        let own = self.own_off;
        for (x, &d) in self.x[0][own..own + nloc].iter_mut().zip(g.graph.inv_outdeg()) {
            *x = r0 * d;
        }
        self.post(comm, 0)?;
        comm.sync()?;
        let chunks = g.graph.row_blocks(CHUNKS.min(nloc.max(1)));
        let mut cur = 0usize;
        let mut dangling = g.dangling0;
        let mut residual = f64::INFINITY;
        let mut iterations = 0usize;
        let start = Instant::now();
        while iterations < cfg.max_iters {
            let t = Instant::now();
            let base = (alpha * dangling + (1.0 - alpha)) / n as f64;
            let next = 1 - cur;
            let (a, b) = self.x.split_at_mut(1);
            let (xc, xn) = if cur == 0 { (&a[0], &mut b[0]) } else { (&b[0], &mut a[0]) };
            let work: Vec<_> = split_by_bounds(&mut ranks, &chunks)
                .into_iter()
                .zip(split_by_bounds(&mut xn[own..own + nloc], &chunks))
                .zip(chunks.iter().copied())
                .collect();
            let xc: &[f64] = xc;
            let graph = &g.graph;
            let parts: Vec<StepPartials> =
                run_dynamic(work, self.threads, |_, ((r, co), lo)| step_block(graph, lo, xc, alpha, base, r, co))?;
            let t_mid = Instant::now();
            self.stats.compute_seconds += (t_mid - t).as_secs_f64();
            self.partials[2 * me] = parts.iter().map(|s| s.residual).sum();
            self.partials[2 * me + 1] = parts.iter().map(|s| s.dangling).sum();
            self.post(comm, next)?;
            for q in (0..p).filter(|&q| q != me) {
                let off = bytes::<f64>(2 * me);
                comm.ctx.put(self.partials_slot, off, q as Pid, self.partials_slot, off, bytes::<f64>(2), MSG_DEFAULT)?;
            }
            if p > 1 {
                comm.sync()?;
            }
            self.stats.exchange_seconds += t_mid.elapsed().as_secs_f64();
            residual = 0.0;
            dangling = 0.0;
            for q in 0..p {
                residual += self.partials[2 * q];
                dangling += self.partials[2 * q + 1];
            }
            cur = next;
            iterations += 1;
            observe(&IterationProgress {
                iteration: iterations,
                residual,
                seconds: t.elapsed().as_secs_f64(),
                elapsed: start.elapsed().as_secs_f64(),
            });
            if residual < cfg.tol {
                break;
            }
        }
        if crate::settings::Settings::from_env()?.debug {
            eprintln!(
                "process {me}: rows {nloc}, edges {}, recv {} entries, compute {:.5} s/iter, exchange {:.5} s/iter",
                g.graph.nnz(),
                self.stats.recv_entries,
                self.stats.compute_seconds / iterations.max(1) as f64,
                self.stats.exchange_seconds / iterations.max(1) as f64
            );
        }
        Ok(IterOut { ranks, iterations, residual, seconds: start.elapsed().as_secs_f64() })
    }
}

/// The ghosts: the remote columns this process's block references, as a bitmap over 0..n.
fn ghost_bitmap(g: &LocalGraph, me: usize) -> DistResult<Vec<u64>> {
    let (lo, hi) = (g.bounds[me], g.bounds[me + 1]);
    let mut bits = try_zeroed::<u64>(g.n.div_ceil(64), me, "the bitmap of referenced columns")?;
    let (_, src) = g.graph.csr();
    for &s in src {
        let s = s as usize;
        if s < lo || s >= hi {
            bits[s >> 6] |= 1 << (s & 63);
        }
    }
    Ok(bits)
}

/// The exchange asked for, or with `Auto` the plan when its entries (`totals[0]`) are
/// few enough against the allgather's (`totals[1]`).
fn choose_exchange(opts: &DistOptions, totals: [u64; 2]) -> Exchange {
    match opts.exchange {
        Exchange::Auto => {
            if (totals[0] as f64) < opts.auto_plan_ratio * totals[1] as f64 {
                Exchange::Plan
            } else {
                Exchange::Allgather
            }
        }
        k => k,
    }
}

/// Rewrites the graph's column ids to the compact numbering: own rows 0..nloc, then
/// ghosts in ascending id order (so grouped by owner); rank in the bitmap gives a
/// ghost's position.
fn compact_columns(g: &mut LocalGraph, bits: &[u64], me: usize) {
    let (lo, hi) = (g.bounds[me], g.bounds[me + 1]);
    let nloc = hi - lo;
    let mut prefix = Vec::with_capacity(bits.len() + 1);
    let mut acc = 0u32;
    for w in bits {
        prefix.push(acc);
        acc += w.count_ones();
    }
    let rank = |s: usize| prefix[s >> 6] + (bits[s >> 6] & ((1u64 << (s & 63)) - 1)).count_ones();
    g.graph.map_sources(|s| {
        let s = s as usize;
        if s >= lo && s < hi {
            (s - lo) as u32
        } else {
            nloc as u32 + rank(s)
        }
    });
}

/// The requests for the ghosts in `bits` (as offsets into their owner's rows), by
/// owner: the requests, how many go to each owner, and where each owner's ghosts start
/// among them.
fn ghost_requests(bits: &[u64], bounds: &[usize], p: usize, nghost: usize) -> (Vec<u32>, Vec<usize>, Vec<usize>) {
    let mut counts = vec![0usize; p];
    let mut requests = Vec::with_capacity(nghost);
    let mut ghost_start = vec![0usize; p];
    let mut q = 0usize;
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            let s = (w << 6) | word.trailing_zeros() as usize;
            word &= word - 1;
            while s >= bounds[q + 1] {
                q += 1;
                ghost_start[q] = requests.len();
            }
            counts[q] += 1;
            requests.push((s - bounds[q]) as u32);
        }
    }
    for g in ghost_start.iter_mut().skip(q + 1) {
        *g = requests.len();
    }
    (requests, counts, ghost_start)
}
