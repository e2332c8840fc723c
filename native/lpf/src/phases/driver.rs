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
use super::requests::{asks_nothing, parse_requests, Built, Incoming, InGet, Outgoing};
use super::{meta_exchange, note, Channel, Found};
use crate::engine::Superstep;
use crate::error::Result;
use crate::wire::{Frame, Kind};

pub(crate) use crate::wire::SyncId;

/// The buffers of one sync kept for the next, so that a node that syncs often
/// allocates little once warm: its requests, sorted by destination, the writes and
/// pieces of its plan, the table of the requests from each node, the parsed requests
/// and the bodies of the small messages they came in (which the channel receives into).
#[derive(Default)]
pub(crate) struct Pools {
    built: Option<Built>,
    plan: Option<PlanBuffers>,
    table: Vec<Option<Incoming>>,
    incomings: Vec<Incoming>,
    bodies: Vec<Vec<u8>>,
}

/// Bodies up to this many bytes, and parsed requests of up to this many entries, are
/// kept, at most two per node: a burst of large syncs should not pin memory.
const KEEP_BYTES: usize = 16 << 10;
const KEEP_REQUESTS: usize = 4096;

impl Pools {
    /// The requests in `body[start..]` of message `f` (None: none), parsed into an
    /// `Incoming` kept from an earlier sync (or a new one), of a job of `nodes` nodes.
    pub fn requests(&mut self, f: Frame, start: usize, nodes: usize) -> Result<Option<Incoming>> {
        if asks_nothing(&f.body, start) {
            self.recycle_body(f.body, nodes);
            return Ok(None);
        }
        let mut inc = self.incomings.pop().unwrap_or_default();
        parse_requests(&mut inc, f.body, f.h.raw, start)?;
        if inc.puts.is_empty() && inc.gets.is_empty() {
            self.recycle(inc, nodes);
            return Ok(None);
        }
        Ok(Some(inc))
    }
    /// Keeps the buffers of requests that are done with, of a job of `nodes` nodes.
    pub fn recycle(&mut self, mut inc: Incoming, nodes: usize) {
        self.recycle_body(std::mem::take(&mut inc.body), nodes);
        if inc.puts.capacity() + inc.gets.capacity() <= KEEP_REQUESTS && self.incomings.len() < 2 * nodes {
            self.incomings.push(inc);
        }
    }
    /// Keeps the body of a message that is done with.
    pub fn recycle_body(&mut self, mut body: Vec<u8>, nodes: usize) {
        if body.capacity() > 0 && body.capacity() <= KEEP_BYTES && self.bodies.len() < 2 * nodes {
            body.clear();
            self.bodies.push(body);
        }
    }
    /// An empty buffer for a message body of `len` bytes: a kept one when it is small,
    /// else a new one (nothing allocated yet).
    pub fn body(&mut self, len: usize) -> Vec<u8> {
        if len == 0 || len > KEEP_BYTES {
            return Vec::new();
        }
        self.bodies.pop().unwrap_or_default()
    }
    /// The table of the requests from each of `nodes` nodes, every entry None: the last
    /// sync's, whose requests go back to the pool now (after this node's messages left,
    /// off the path from their arrival to the next send).
    pub fn table(&mut self, nodes: usize) -> Vec<Option<Incoming>> {
        let mut table = std::mem::take(&mut self.table);
        for inc in table.iter_mut().filter_map(Option::take) {
            self.recycle(inc, nodes);
        }
        table.resize_with(nodes, || None);
        table
    }
    /// Keeps the table of a sync that is over, with its requests (see [`Pools::table`]).
    pub fn recycle_table(&mut self, table: Vec<Option<Incoming>>) {
        self.table = table;
    }
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

impl<'a> Exchange<'a, '_, '_> {
    /// The nodes other than this one.
    pub fn peers(&self) -> impl Iterator<Item = usize> + use<> {
        let me = self.loc.me;
        (0..self.out.len()).filter(move |&q| q != me)
    }

    /// The nodes that ask gets of this one (to [`Exchange::serve_gets`]).
    pub fn askers(&self) -> impl Iterator<Item = usize> + use<'a> {
        let incoming = self.incoming;
        self.peers().filter(move |&s| incoming[s].as_ref().is_some_and(|inc| !inc.gets.is_empty()))
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
pub(crate) fn sync<C: Channel, T: Transport<C>>(ch: &mut C, t: &mut T, id: SyncId, steps: &[&Superstep<'_>]) -> Result<()> {
    // Out of the channel while the phases borrow it; an Option, so that nothing is
    // built in its place and dropped after.
    let mut built = ch.pools().built.take().unwrap_or_default();
    built.rebuild(steps, ch.layout());
    let r = phases(ch, t, id, steps, &built);
    ch.pools().built = Some(built);
    r
}

fn phases<C: Channel, T: Transport<C>>(ch: &mut C, t: &mut T, id: SyncId, steps: &[&Superstep<'_>], built: &Built) -> Result<()> {
    let me = ch.layout().me;
    let loc = Locals { steps, base: ch.layout().offsets[me], me };
    let Some(incoming) = exchange_meta(ch, t, id, built)? else { return Ok(()) };
    if all_inline(&incoming, &built.local, &built.out) {
        // Every byte to write is here: no plan, no data exchange.
        let found = apply_inline(&loc, &incoming, &built.local);
        ch.pools().recycle_table(incoming);
        return t.complete(ch, id, found);
    }
    let mut plan = resolve_conflicts(ch, &loc, &incoming, built);
    let r = t.exchange(ch, &mut Exchange { id, loc: &loc, out: &built.out, incoming: &incoming, plan: &mut plan });
    let found = plan.found.take();
    ch.pools().plan = Some(plan.into_buffers());
    ch.pools().recycle_table(incoming);
    r?;
    t.complete(ch, id, found)
}

/// Phase 1: the requests from each node (None: none), or None if nobody communicates
/// in this sync (then it is over).
pub(crate) fn exchange_meta<C: Channel, T: Transport<C>>(ch: &mut C, t: &mut T, id: SyncId, built: &Built) -> Result<Option<Vec<Option<Incoming>>>> {
    let mut failed = None;
    let mut send = |ch: &mut C, d: usize, o: &Outgoing, kind: Kind, prefix: &[u8]| {
        let mut counts = [0u8; 8];
        ch.post_parts(d, id.tag(kind), &o.parts(prefix, &mut counts), o.raw_len);
        if let Err(e) = t.send_payloads(ch, d, o) {
            failed.get_or_insert(e);
        }
    };
    let r = meta_exchange(ch, id, &built.out, built.any, &mut send);
    if let Some(e) = failed {
        return Err(e);
    }
    let (incoming, anybody) = r?;
    if !anybody {
        ch.pools().recycle_table(incoming);
        return Ok(None);
    }
    Ok(Some(incoming))
}

/// Phase 2: the plan of this node's memory (in the buffers of the last one), with the
/// writes whose bytes are here already done.
pub(crate) fn resolve_conflicts<C: Channel>(ch: &mut C, loc: &Locals<'_, '_>, incoming: &[Option<Incoming>], built: &Built) -> Plan {
    let (writes, pieces) = ch.pools().plan.take().unwrap_or_default();
    let plan = plan_reusing(loc, incoming, &built.local, &built.out, writes, pieces);
    plan.copy_local();
    plan
}

#[cfg(test)]
mod tests {
    //! Whole syncs through [`sync`] over an in-memory transport: p simulated processes
    //! (threads, one per node) on the fake channel of the phases' tests, large put
    //! payloads and get data moved by [`MemTransport`], the result compared with a
    //! plain byte-array model of the writes in the driver's order. Every wait gives up
    //! after [`PATIENCE`], so a node that ends a sync early fails an assertion.

    use super::*;
    use crate::error::{Error, Reason};
    use crate::phases::tests::{on_nodes, process, FakeChannel, Rng};
    use crate::phases::{final_barrier, MetaAlgo};
    use crate::queue::Request;
    use crate::types::Pid;
    use crate::wire::{Get, Put, INLINE_MAX};
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    /// Put payloads in flight: (to, from, step) -> the payloads in send order.
    type Payloads = Mutex<HashMap<(usize, usize, u64), Vec<Vec<u8>>>>;

    /// Data moves by copying through [`Payloads`] (puts) and get replies on the channel.
    struct MemTransport {
        payloads: Arc<Payloads>,
        /// An error the exchange phase reports instead of moving data.
        fail: Option<Error>,
    }

    impl Transport<FakeChannel> for MemTransport {
        fn send_payloads(&mut self, ch: &mut FakeChannel, d: usize, o: &Outgoing) -> Result<()> {
            let me = ch.layout().me;
            // SAFETY: the sources stay valid and unchanged until the sync returns.
            let sent: Vec<Vec<u8>> = o.raw.iter().map(|r| unsafe { std::slice::from_raw_parts(r.src, r.size) }.to_vec()).collect();
            // The step is not known here: the test runs one sync per network.
            self.payloads.lock().unwrap().insert((d, me, 0), sent);
            ch.net.arrived.notify_all();
            Ok(())
        }

        fn exchange(&mut self, ch: &mut FakeChannel, x: &mut Exchange<'_, '_, '_>) -> Result<()> {
            if let Some(e) = self.fail.take() {
                return Err(e);
            }
            let me = x.loc.me;
            for s in x.peers() {
                let Some(inc) = &x.incoming[s] else { continue };
                if inc.raw_puts().next().is_none() {
                    continue;
                }
                let never = || Error::timeout(format!("node {me}: the put payloads of node {s} never came"));
                let sent = ch.net.wait_for(&self.payloads, |inbox| inbox.remove(&(me, s, 0))).ok_or_else(never)?;
                assert_eq!(sent.len(), inc.raw_puts().count(), "node {me}: payloads from node {s}");
                for (k, data) in sent.iter().enumerate() {
                    if let Some(i) = x.plan.put_writes[s][k] {
                        x.plan.fill(i, data);
                    }
                }
            }
            // Gets asked of us: a status byte each, the data after it.
            for s in x.askers() {
                let mut body = Vec::new();
                x.serve_gets(s, |g, at| {
                    body.u8(at.is_some() as u8);
                    if let Some(p) = at {
                        // SAFETY: checked against the source's registration by serve_gets.
                        body.bytes(unsafe { std::slice::from_raw_parts(p, g.size) });
                    }
                });
                ch.post(s, x.id.tag(Kind::GetReply), &body, 0);
            }
            for d in x.peers().filter(|&d| !x.out[d].my_gets.is_empty()) {
                let f = ch.expect(d, x.id.tag(Kind::GetReply))?;
                let mut g = Get::new(&f.body);
                for (k, mg) in x.out[d].my_gets.iter().enumerate() {
                    if g.u8()? != 0 {
                        x.plan.fill(x.plan.get_writes[d] + k, g.bytes(mg.size)?);
                    }
                }
            }
            Ok(())
        }

        fn complete(&mut self, ch: &mut FakeChannel, id: SyncId, found: Found) -> Result<()> {
            final_barrier(ch, id, found)
        }
    }

    /// Bytes of each process's global slot: puts and gets write `[0, TARGET)`, gets
    /// read `[TARGET, MEM)`, which nothing writes (so reads conflict with no write).
    const TARGET: usize = 3 * INLINE_MAX;
    const MEM: usize = TARGET + 2 * INLINE_MAX;

    /// One simulated process's requests: puts from its own source buffer, gets.
    #[derive(Clone)]
    enum Req {
        Put { to: usize, src_off: usize, dst_off: usize, size: usize },
        Get { from: usize, src_off: usize, dst_off: usize, size: usize },
    }

    /// Per process: its memory, its put sources, its requests.
    type Job = (Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<Vec<Req>>);

    /// The initial memory and put sources of p processes, and random requests: sizes
    /// both inline and large, often overlapping, to other processes and to itself.
    fn random_job(rng: &mut Rng, p: usize, talks: &[bool]) -> Job {
        let bytes = |rng: &mut Rng, n: usize| (0..n).map(|_| rng.below(256) as u8).collect::<Vec<u8>>();
        let mem = (0..p).map(|_| bytes(rng, MEM)).collect();
        let src = (0..p).map(|_| bytes(rng, TARGET)).collect();
        let reqs = (0..p)
            .map(|me| {
                let count = if talks[me] { rng.below(12) } else { 0 };
                (0..count)
                    .map(|_| {
                        let size = match rng.below(3) {
                            0 => rng.below(64),
                            1 => rng.below(INLINE_MAX),
                            _ => INLINE_MAX + 1 + rng.below(INLINE_MAX),
                        };
                        let (peer, dst_off) = (rng.below(p), rng.below(TARGET - size + 1));
                        if rng.below(3) == 0 {
                            let src_off = TARGET + rng.below(MEM - TARGET - size + 1);
                            Req::Get { from: peer, src_off, dst_off, size }
                        } else {
                            Req::Put { to: peer, src_off: rng.below(TARGET - size + 1), dst_off, size }
                        }
                    })
                    .collect()
            })
            .collect();
        (mem, src, reqs)
    }

    /// The memory after the sync, as the driver orders the writes into node d: the
    /// puts of nodes 0..p to d (each node's in call order), then d's gets from itself,
    /// then its gets from the others by node (each in call order).
    fn model(mem: &[Vec<u8>], src: &[Vec<u8>], reqs: &[Vec<Req>]) -> Vec<Vec<u8>> {
        let mut after = mem.to_vec();
        for (d, m) in after.iter_mut().enumerate() {
            for (s, rs) in reqs.iter().enumerate() {
                for r in rs {
                    if let Req::Put { to, src_off, dst_off, size } = *r {
                        if to == d {
                            m[dst_off..dst_off + size].copy_from_slice(&src[s][src_off..src_off + size]);
                        }
                    }
                }
            }
            let mut gets: Vec<_> = reqs[d]
                .iter()
                .filter_map(|r| match *r {
                    Req::Get { from, src_off, dst_off, size } => Some((from, src_off, dst_off, size)),
                    Req::Put { .. } => None,
                })
                .collect();
            // Stable: each node's gets stay in call order.
            gets.sort_by_key(|&(from, ..)| if from == d { 0 } else { 1 + from });
            for (from, src_off, dst_off, size) in gets {
                m[dst_off..dst_off + size].copy_from_slice(&mem[from][src_off..src_off + size]);
            }
        }
        after
    }

    /// Runs one sync of `reqs` on p simulated processes (memory `mem`, put sources
    /// `src`); with `fail`, every node's transport fails its exchange with that error.
    fn run(mem: &mut [Vec<u8>], src: &[Vec<u8>], reqs: &[Vec<Req>], meta: MetaAlgo, fail: Option<fn() -> Error>) -> Vec<Result<()>> {
        let p = mem.len();
        let payloads = Arc::new(Payloads::default());
        let mems: Vec<usize> = mem.iter_mut().map(|m| m.as_mut_ptr() as usize).collect();
        on_nodes(p, meta, |ch, me| {
            let (register, mut queue, slot) = process(p, mems[me] as *mut u8, MEM, 64 * p);
            for r in &reqs[me] {
                let base = mems[me] as *mut u8;
                queue
                    .push(match *r {
                        Req::Put { to, src_off, dst_off, size } => Request::Put {
                            src: src[me][src_off..].as_ptr(),
                            dst_pid: to as Pid,
                            dst_slot: slot,
                            dst_offset: dst_off,
                            size,
                        },
                        Req::Get { from, src_off, dst_off, size } => {
                            // SAFETY: dst_off + size <= TARGET < MEM, inside this process's memory.
                            let dst = unsafe { base.add(dst_off) };
                            Request::Get { src_pid: from as Pid, src_slot: slot, src_offset: src_off, dst, size }
                        }
                    })
                    .unwrap();
            }
            queue.group_by_peer(p as Pid);
            let mut t = MemTransport { payloads: payloads.clone(), fail: fail.map(|f| f()) };
            sync(ch, &mut t, SyncId { section: 0, step: 0 }, &[&Superstep { register: &register, queue: &queue }])
        })
    }

    /// Random jobs of 1..=7 processes, direct and Bruck meta-data: every sync succeeds
    /// and leaves every process's memory as the model says. Who communicates: nobody,
    /// one process, or a random set (the others must still take part in the sync:
    /// a process that ends it early, ignoring that somebody communicates, leaves the
    /// others waiting, and their wait fails after PATIENCE).
    #[test]
    fn syncs_write_what_the_byte_array_model_says() {
        let mut rng = Rng(16);
        for p in 1..=7usize {
            for trial in 0..9 {
                let meta = if trial % 2 == 0 { MetaAlgo::Direct } else { MetaAlgo::Bruck };
                let talks = rng.talkers(p, trial);
                let (mut mem, src, reqs) = random_job(&mut rng, p, &talks);
                let want = model(&mem, &src, &reqs);
                for (me, r) in run(&mut mem, &src, &reqs, meta, None).into_iter().enumerate() {
                    r.unwrap_or_else(|e| panic!("p {p}, trial {trial}, process {me}: {e}"));
                }
                for d in 0..p {
                    if let Some(at) = (0..MEM).find(|&i| mem[d][i] != want[d][i]) {
                        panic!("p {p}, trial {trial} ({meta:?}): process {d}'s byte {at} is {}, the model says {}", mem[d][at], want[d][at]);
                    }
                }
            }
        }
    }

    /// Many puts to one destination, all overlapping, inline and large mixed: the
    /// survivors of conflict resolution are filled by the transport in pieces.
    #[test]
    fn overlapping_puts_from_every_process_end_as_the_model_says() {
        let mut rng = Rng(99);
        let p = 4;
        let (mut mem, src, _) = random_job(&mut rng, p, &[false; 4]);
        let reqs: Vec<Vec<Req>> = (0..p)
            .map(|_| {
                (0..20)
                    .map(|_| {
                        let size = 1 + rng.below(2 * INLINE_MAX);
                        let dst_off = rng.below(512);
                        Req::Put { to: 0, src_off: rng.below(TARGET - size), dst_off, size }
                    })
                    .collect()
            })
            .collect();
        let want = model(&mem, &src, &reqs);
        for r in run(&mut mem, &src, &reqs, MetaAlgo::Direct, None) {
            r.unwrap();
        }
        assert!(mem[0] == want[0], "process 0's memory differs from the model");
    }

    /// The pools hand back what they kept: a table's requests (emptied, the table of
    /// the length asked for), small bodies, never large ones, at most two per node.
    #[test]
    fn pools_reuse_small_buffers_and_drop_large_ones() {
        let mut pools = Pools::default();
        let mut table = pools.table(3);
        assert_eq!(table.len(), 3);
        let inc = Incoming { body: Vec::with_capacity(100), ..Default::default() };
        let body_at = inc.body.as_ptr();
        table[1] = Some(inc);
        pools.recycle_table(table);
        let table = pools.table(2);
        assert!(table.len() == 2 && table.iter().all(Option::is_none));
        let body = pools.body(50);
        assert_eq!(body.as_ptr(), body_at, "the body of the table's request is reused");
        pools.recycle_body(Vec::with_capacity(KEEP_BYTES + 1), 2);
        assert_eq!(pools.body(10).capacity(), 0, "a large body is not kept");
        for _ in 0..5 {
            pools.recycle_body(Vec::with_capacity(8), 2);
        }
        assert_eq!(pools.bodies.len(), 4, "at most two bodies per node");
        assert_eq!(pools.body(KEEP_BYTES + 1).capacity(), 0, "a large body is not taken from the pool");
    }

    /// A transport's error ends the sync with that error's reason; an error conflict
    /// resolution finds (a put beyond the destination's registration) ends it on every
    /// node as misuse of lpf_put (the final barrier carries it).
    #[test]
    fn errors_surface_with_their_reason() {
        let mut rng = Rng(5);
        let p = 3;
        let (mut mem, src, _) = random_job(&mut rng, p, &[false; 3]);
        let large = INLINE_MAX + 100;
        let reqs: Vec<Vec<Req>> = (0..p).map(|me| vec![Req::Put { to: (me + 1) % p, src_off: 0, dst_off: 0, size: large }]).collect();
        let peer_left = || Error::peer_left(Some(2), "process 2 vanished (test)");
        for r in run(&mut mem, &src, &reqs, MetaAlgo::Direct, Some(peer_left)) {
            let e = r.expect_err("the sync must fail");
            assert_eq!(e.reason(), Reason::PeerLeft { pid: Some(2) }, "{e}");
        }
        let beyond: Vec<Vec<Req>> = (0..p).map(|me| vec![Req::Put { to: (me + 1) % p, src_off: 0, dst_off: MEM - 10, size: large }]).collect();
        for r in run(&mut mem, &src, &beyond, MetaAlgo::Bruck, None) {
            let e = r.expect_err("the sync must fail");
            assert_eq!(e.reason(), Reason::Misuse { call: "lpf_put" }, "{e}");
        }
    }
}
