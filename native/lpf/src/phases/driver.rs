//! The sync of every network engine (TCP, MPI message passing, MPI one-sided, RDMA;
//! alone or under the hybrid engine) as one sequence of named phases over a
//! [`Transport`], which supplies only how data moves: 1. [`exchange_meta`] (the
//! transport may send large put payloads along, [`Transport::send_payloads`]; if nobody
//! communicates, the sync ends there); 2. [`resolve_conflicts`] ([`super::conflict`];
//! no plan and no phase 3 when every byte to write is here already, [`all_inline`]);
//! 3. [`Transport::exchange`]; 4. [`Transport::complete`] (TCP: the barrier agreeing
//! on the first error; MPI: that error for this node only, docs/mpi.md "Errors"). The
//! buffers of the requests and of the plan are kept for the next sync in [`Pools`].

use super::conflict::{all_inline, apply_inline, plan_reusing, Locals, Plan, PlanBuffers};
use super::requests::{Built, Incoming, InGet, Outgoing};
use super::{meta_exchange, note, Channel, Found};
use crate::engine::Superstep;
use crate::error::Result;
use crate::wire::Kind;

/// Which sync a message belongs to: the section (hook or rehook) and the collective
/// step in it. Together with the message's kind and round it names every control
/// message of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SyncId {
    pub section: u32,
    pub step: u64,
}

/// The buffers of one sync kept for the next, so that a node that syncs often
/// allocates little once warm: its requests, sorted by destination, and the writes and
/// pieces of its plan.
#[derive(Default)]
pub(crate) struct Pools {
    built: Option<Built>,
    plan: Option<PlanBuffers>,
}

/// A channel that keeps a sync's buffers for the next one.
pub(crate) trait Pooled: Channel {
    fn pools(&mut self) -> &mut Pools;
}

/// What phase 3 works with: the requests both ways and the plan of this node's memory.
pub(crate) struct Exchange<'a, 'l, 's> {
    pub id: SyncId,
    /// This node's LPF processes.
    pub loc: &'a Locals<'l, 's>,
    /// `out[d]`: this node's requests to node d.
    pub out: &'a [Outgoing],
    /// `incoming[s]`: node s's requests to this node (None: none).
    pub incoming: &'a [Option<Incoming>],
    pub plan: &'a mut Plan,
}

impl Exchange<'_, '_, '_> {
    /// The nodes other than this one.
    pub fn peers(&self) -> impl Iterator<Item = usize> + use<> {
        let me = self.loc.me;
        (0..self.out.len()).filter(move |&q| q != me)
    }

    /// Checks the gets node `s` asks of this node, in its order: `each(get, Some(address
    /// of its source bytes))`, or `each(get, None)` for a rejected one (its error is
    /// noted in the plan).
    pub fn serve_gets(&mut self, s: usize, mut each: impl FnMut(&InGet, Option<*const u8>)) {
        let Some(inc) = &self.incoming[s] else { return };
        for g in &inc.gets {
            let what = || format!("get by process {} from process {}", g.requester, g.src);
            match self.loc.area_of(g.src, g.slot, g.off, g.size, "lpf_get", &what) {
                Ok(p) => each(g, Some(p)),
                Err(e) => {
                    note(&mut self.plan.found, self.loc.me, e);
                    each(g, None)
                }
            }
        }
    }
}

/// How the data of a sync moves between nodes of channel `C`; one implementation per
/// transport, holding whatever state one sync of it needs.
pub(crate) trait Transport<C: Channel> {
    /// Phase 1: after the request headers for node `d` left, sends the data of the
    /// large puts of `o` that travels with them (the default: none does).
    fn send_payloads(&mut self, ch: &mut C, d: usize, o: &Outgoing) -> Result<()> {
        let _ = (ch, d, o);
        Ok(())
    }
    /// Phase 3: moves the data of the large puts and of the gets into the plan's
    /// surviving pieces, and notes in the plan what it finds wrong.
    fn exchange(&mut self, ch: &mut C, x: &mut Exchange<'_, '_, '_>) -> Result<()>;
    /// Phase 4: ends a sync that exchanged requests, given the first error found on
    /// this node.
    fn complete(&mut self, ch: &mut C, id: SyncId, found: Found) -> Result<()>;
}

/// One sync of the LPF processes `steps` of this node (global pids
/// `offsets[me]..`, one on the TCP and MPI engines, a node's threads on the hybrid
/// one).
pub(crate) fn sync<C: Pooled, T: Transport<C>>(ch: &mut C, t: &mut T, id: SyncId, steps: &[&Superstep<'_>]) -> Result<()> {
    // Out of the channel while the phases borrow it; an Option, so that nothing is
    // built in its place and dropped after.
    let mut built = ch.pools().built.take().unwrap_or_default();
    built.rebuild(steps, ch.layout());
    let r = phases(ch, t, id, steps, &built);
    ch.pools().built = Some(built);
    r
}

fn phases<C: Pooled, T: Transport<C>>(ch: &mut C, t: &mut T, id: SyncId, steps: &[&Superstep<'_>], built: &Built) -> Result<()> {
    let me = ch.layout().me;
    let loc = Locals { steps, base: ch.layout().offsets[me], me };
    let Some(incoming) = exchange_meta(ch, t, id, built)? else { return Ok(()) };
    if all_inline(&incoming, &built.local, &built.out) {
        // Every byte to write is here: no plan, no data exchange.
        let found = apply_inline(&loc, &incoming, &built.local);
        ch.recycle_table(incoming);
        return t.complete(ch, id, found);
    }
    let mut plan = resolve_conflicts(ch, &loc, &incoming, built);
    let r = t.exchange(ch, &mut Exchange { id, loc: &loc, out: &built.out, incoming: &incoming, plan: &mut plan });
    let found = plan.found.take();
    ch.pools().plan = Some(plan.into_buffers());
    ch.recycle_table(incoming);
    r?;
    t.complete(ch, id, found)
}

/// Phase 1: the requests from each node (None: none), or None if nobody communicates
/// in this sync (then it is over).
pub(crate) fn exchange_meta<C: Channel, T: Transport<C>>(ch: &mut C, t: &mut T, id: SyncId, built: &Built) -> Result<Option<Vec<Option<Incoming>>>> {
    let mut failed = None;
    let mut send = |ch: &mut C, d: usize, o: &Outgoing, kind: Kind, prefix: &[u8]| {
        let mut counts = [0u8; 8];
        ch.post_parts(d, kind, 0, id.section, id.step, &o.parts(prefix, &mut counts), o.raw_len);
        if let Err(e) = t.send_payloads(ch, d, o) {
            failed.get_or_insert(e);
        }
    };
    let r = meta_exchange(ch, id.section, id.step, &built.out, built.any, &mut send);
    if let Some(e) = failed {
        return Err(e);
    }
    let (incoming, anybody) = r?;
    if !anybody {
        ch.recycle_table(incoming);
        return Ok(None);
    }
    Ok(Some(incoming))
}

/// Phase 2: the plan of this node's memory (in the buffers of the last one), with the
/// writes whose bytes are here already done.
pub(crate) fn resolve_conflicts<C: Pooled>(ch: &mut C, loc: &Locals<'_, '_>, incoming: &[Option<Incoming>], built: &Built) -> Plan {
    let (writes, pieces) = ch.pools().plan.take().unwrap_or_default();
    let plan = plan_reusing(loc, incoming, &built.local, &built.out, writes, pieces);
    plan.copy_local();
    plan
}
