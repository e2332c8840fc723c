//! One sync over the mesh, in the paper's four phases, for the group of LPF processes
//! living in this OS process (one for the TCP engine, k threads for the hybrid one):
//!
//! 1. **Meta-data exchange.** Direct: one `Meta` frame to every other process,
//!    carrying the request headers for it (puts with payloads up to
//!    [`INLINE_MAX`] coalesced, get requests) and whether this process communicates at
//!    all; large payloads follow raw. Bruck: ceil(log2 n) rounds of count blocks tell
//!    each process whom to expect, then the request headers go in `Hdrs` frames to the
//!    processes actually addressed. Either way every process has heard from
//!    every other (directly or transitively) before anything is written, so a process
//!    that left fails the sync with nothing written; and if nobody communicates the
//!    sync ends here.
//! 2. **Write-conflict resolution** at the destination: every write into this
//!    process's memory (incoming puts, puts among its own threads, its own gets) is
//!    put in one order, and each keeps only the bytes no later write covers. The
//!    surviving pieces are disjoint, so they can be filled in any order - straight from
//!    the socket into user memory - and the result is that serialisation. Remote bounds
//!    and the incoming message count are checked here; a bad request writes nothing.
//! 3. **Data exchange**: raw payloads into their pieces, gets served from memory with
//!    vectored writes, replies into their pieces.
//! 4. **Final barrier** (dissemination, ceil(log2 n) rounds) carrying the first error,
//!    so an error anywhere fails the sync everywhere with the same message.

use super::mesh::{Mesh, MetaAlgo, Seg};
use super::wire::{Get, Kind, Put, INLINE_MAX};
use crate::engine::Superstep;
use crate::error::{Error, Result};
use crate::queue::Request;
use crate::types::{Memslot, Pid};
use std::collections::BTreeMap;

const PUT_HDR: usize = 4 + 4 + 8 + 8 + 8;

/// A put arriving at this process.
struct InPut {
    origin: Pid,
    dst: Pid,
    slot: Memslot,
    off: usize,
    size: usize,
    /// Offset of the inline payload in the frame body, if inline.
    inline: Option<usize>,
}

struct InGet {
    requester: Pid,
    src: Pid,
    slot: Memslot,
    off: usize,
    size: usize,
}

/// Requests from one process, parsed from its frame body.
struct Incoming {
    body: Vec<u8>,
    /// Raw payload bytes announced after the frame.
    raw: u64,
    puts: Vec<InPut>,
    gets: Vec<InGet>,
}

fn parse_requests(body: Vec<u8>, raw: u64, start: usize) -> Result<Incoming> {
    let mut g = Get::new(&body);
    g.bytes(start)?;
    let nput = g.u32()? as usize;
    let nget = g.u32()? as usize;
    let mut puts = Vec::with_capacity(nput.min(1 << 20));
    for _ in 0..nput {
        let (origin, dst) = (g.u32()?, g.u32()?);
        let slot = Memslot::from_raw(g.usize()?);
        let (off, size) = (g.usize()?, g.usize()?);
        let inline = if size <= INLINE_MAX {
            let at = g.pos();
            g.bytes(size)?;
            Some(at)
        } else {
            None
        };
        puts.push(InPut { origin, dst, slot, off, size, inline });
    }
    let mut gets = Vec::with_capacity(nget.min(1 << 20));
    for _ in 0..nget {
        let (requester, src) = (g.u32()?, g.u32()?);
        let slot = Memslot::from_raw(g.usize()?);
        let (off, size) = (g.usize()?, g.usize()?);
        gets.push(InGet { requester, src, slot, off, size });
    }
    if !g.is_done() {
        return Err(Error::fatal("malformed request frame from a peer (trailing bytes)"));
    }
    Ok(Incoming { body, raw, puts, gets })
}

/// What this process sends to one other process.
#[derive(Default)]
struct Outgoing {
    puts: Vec<u8>,
    gets: Vec<u8>,
    nput: u32,
    nget: u32,
    /// Large put payloads, in header order.
    raw: Vec<(*const u8, usize)>,
    raw_len: u64,
    /// This process's gets from that one: (destination, size), in header order.
    my_gets: Vec<(*mut u8, usize)>,
}

impl Outgoing {
    fn body(&self, prefix: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(prefix.len() + 8 + self.puts.len() + self.gets.len());
        b.bytes(prefix);
        b.u32(self.nput);
        b.u32(self.nget);
        b.bytes(&self.puts);
        b.bytes(&self.gets);
        b
    }
    fn nmsg(&self) -> u32 {
        self.nput + self.nget
    }
}

/// Where the bytes of one write come from.
#[derive(Clone, Copy)]
enum Source {
    /// Copy from this address (inline payload, or memory of this process).
    Copy(*const u8),
    /// Raw bytes from process `node` (put payload, or reply to one of our gets).
    Raw,
}

/// One write into this process's memory.
struct Write {
    addr: usize,
    len: usize,
    src: Source,
    /// Surviving pieces `pieces[lo..hi]` (absolute address ranges, ascending).
    lo: usize,
    hi: usize,
}

/// Keeps, for every write, the bytes no later write covers (painting from the last
/// write backwards). The pieces of all writes are disjoint.
fn resolve(writes: &mut [Write]) -> Vec<(usize, usize)> {
    let mut pieces = Vec::with_capacity(writes.len());
    let mut covered: BTreeMap<usize, usize> = BTreeMap::new();
    for w in writes.iter_mut().rev() {
        let (a, b) = (w.addr, w.addr + w.len);
        let first = pieces.len();
        if w.len > 0 {
            let mut hits: Vec<(usize, usize)> =
                covered.range(..b).rev().take_while(|(_, &e)| e > a).map(|(&s, &e)| (s, e)).collect();
            hits.reverse();
            let mut at = a;
            for &(s, e) in &hits {
                if s > at {
                    pieces.push((at, s));
                }
                at = at.max(e);
            }
            if at < b {
                pieces.push((at, b));
            }
            let (mut lo, mut hi) = (a, b);
            for &(s, e) in &hits {
                covered.remove(&s);
                lo = lo.min(s);
                hi = hi.max(e);
            }
            covered.insert(lo, hi);
        }
        w.lo = first;
        w.hi = pieces.len();
    }
    pieces
}

/// The raw segments for a write of `w` whose bytes arrive in order.
fn segments(w: &Write, pieces: &[(usize, usize)], discard: bool, out: &mut Vec<Seg>) {
    if discard {
        out.push(Seg::Skip(w.len));
        return;
    }
    let mut at = w.addr;
    for &(s, e) in &pieces[w.lo..w.hi] {
        if s > at {
            out.push(Seg::Skip(s - at));
        }
        out.push(Seg::To(s as *mut u8, e - s));
        at = e;
    }
    if at < w.addr + w.len {
        out.push(Seg::Skip(w.addr + w.len - at));
    }
}

/// The first error of a sync, tagged with the process that found it (the lowest wins,
/// so every process reports the same one).
type Found = Option<(u32, String)>;

fn note(found: &mut Found, node: usize, e: Error) {
    if found.is_none() {
        *found = Some((node as u32, e.message().to_string()));
    }
}

/// One sync of the processes `steps` (global pids `offsets[me]..`) of this mesh.
pub(crate) fn sync(mesh: &mut Mesh, section: u32, step: u64, steps: &[&Superstep<'_>]) -> Result<()> {
    let r = run(mesh, section, step, steps);
    mesh.detach();
    r
}

fn run(mesh: &mut Mesh, section: u32, step: u64, steps: &[&Superstep<'_>]) -> Result<()> {
    let (me, n) = (mesh.me, mesh.n);
    let base = mesh.offsets[me];
    let nprocs = mesh.nprocs();
    debug_assert_eq!(steps.len() as Pid, mesh.offsets[me + 1] - base);

    // ---- Build what goes out. ----
    let mut out: Vec<Outgoing> = (0..n).map(|_| Outgoing::default()).collect();
    // Requests among this process's own threads (or to self).
    let mut local: Vec<(Pid, Request)> = Vec::new();
    let mut any = false;
    for (t, s) in steps.iter().enumerate() {
        let origin = base + t as Pid;
        for q in 0..nprocs {
            let reqs = s.queue.to_peer(q);
            if reqs.is_empty() {
                continue;
            }
            any = true;
            let d = mesh.node_of(q);
            if d == me {
                local.extend(reqs.iter().map(|r| (origin, *r)));
                continue;
            }
            let o = &mut out[d];
            for r in reqs {
                match *r {
                    Request::Put { src, dst_pid, dst_slot, dst_offset, size } => {
                        o.nput += 1;
                        o.puts.reserve(PUT_HDR + size.min(INLINE_MAX));
                        o.puts.u32(origin);
                        o.puts.u32(dst_pid);
                        o.puts.u64(dst_slot.to_raw() as u64);
                        o.puts.u64(dst_offset as u64);
                        o.puts.u64(size as u64);
                        if size == 0 {
                        } else if size <= INLINE_MAX {
                            // SAFETY: `src..src + size` was checked against its
                            // registration when the put was queued and stays valid
                            // until the sync returns.
                            o.puts.bytes(unsafe { std::slice::from_raw_parts(src, size) });
                        } else {
                            o.raw.push((src, size));
                            o.raw_len += size as u64;
                        }
                    }
                    Request::Get { src_pid, src_slot, src_offset, dst, size } => {
                        o.nget += 1;
                        o.gets.u32(origin);
                        o.gets.u32(src_pid);
                        o.gets.u64(src_slot.to_raw() as u64);
                        o.gets.u64(src_offset as u64);
                        o.gets.u64(size as u64);
                        o.my_gets.push((dst, size));
                    }
                }
            }
        }
    }

    // ---- Phase 1: meta-data exchange (with the request headers). ----
    let mut incoming: Vec<Option<Incoming>> = (0..n).map(|_| None).collect();
    let send_requests = |mesh: &mut Mesh, d: usize, o: &Outgoing, kind: Kind, prefix: &[u8]| {
        let body = o.body(prefix);
        mesh.send(d, kind, 0, section, step, &body, o.raw_len);
        for &(p, len) in &o.raw {
            // SAFETY: see the inline case above; `sync` detaches before returning.
            unsafe { mesh.send_mem(d, p, len) };
        }
    };
    let global_any = match mesh.meta {
        MetaAlgo::Direct => {
            for d in (0..n).filter(|&d| d != me) {
                send_requests(mesh, d, &out[d], Kind::Meta, &[any as u8]);
            }
            let mut flags = any;
            mesh.wait(|m| {
                for s in (0..n).filter(|&s| s != me) {
                    if incoming[s].is_none() {
                        match m.take(s, section, Kind::Meta, step, 0) {
                            Some(f) => {
                                flags |= f.body.first().copied().unwrap_or(0) != 0;
                                incoming[s] = Some(parse_requests(f.body, f.h.raw, 1)?);
                            }
                            None => {
                                m.check_peer(s, section, step, Kind::Meta)?;
                                return Ok(false);
                            }
                        }
                    }
                }
                Ok(true)
            })?;
            flags
        }
        MetaAlgo::Bruck => {
            // The request frames go after the count rounds: their raw payloads would
            // otherwise sit in front of round frames that the receiver needs first.
            let counts: Vec<u32> = out.iter().map(|o| o.nmsg()).collect();
            let (from, flags) = bruck(mesh, section, step, &counts, any)?;
            for d in (0..n).filter(|&d| d != me && out[d].nmsg() > 0) {
                send_requests(mesh, d, &out[d], Kind::Hdrs, &[]);
            }
            if flags {
                mesh.wait(|m| {
                    for &s in &from {
                        if incoming[s].is_none() {
                            match m.take(s, section, Kind::Hdrs, step, 0) {
                                Some(f) => incoming[s] = Some(parse_requests(f.body, f.h.raw, 0)?),
                                None => {
                                    m.check_peer(s, section, step, Kind::Hdrs)?;
                                    return Ok(false);
                                }
                            }
                        }
                    }
                    Ok(true)
                })?;
            }
            flags
        }
    };
    if !global_any {
        return Ok(());
    }

    // ---- Phase 2: checks and write-conflict resolution. ----
    let mut found: Found = None;
    let offsets = mesh.offsets.clone();
    let area_of = |pid: Pid, slot: Memslot, off: usize, size: usize, what: &dyn Fn() -> String| -> Result<*mut u8> {
        if mesh_node_of(&offsets, pid) != me {
            return Err(Error::fatal(format!("{}: process {pid} does not live here (protocol error)", what())));
        }
        // The message is formatted only on error.
        let what_lazy = std::fmt::from_fn(|f| f.write_str(&what()));
        steps[(pid - base) as usize].register.area(slot).map_err(|e| e.context(what())).and_then(|a| a.range(slot, off, size, what_lazy))
    };
    // Incoming message counts per local process, against its queue capacity.
    let mut count = vec![0usize; steps.len()];
    let mut bump = |pid: Pid| {
        if pid >= base && ((pid - base) as usize) < count.len() {
            count[(pid - base) as usize] += 1;
        }
    };
    for inc in incoming.iter().flatten() {
        inc.puts.iter().for_each(|p| bump(p.dst));
        inc.gets.iter().for_each(|g| bump(g.src));
    }
    for (_, r) in &local {
        bump(r.peer());
    }
    let mut discard = false;
    for (t, &c) in count.iter().enumerate() {
        let cap = steps[t].queue.capacity();
        if c > cap {
            discard = true;
            note(&mut found, me, Error::fatal(format!(
                "process {} is the target of {c} messages in this superstep but reserved room for {cap} \
                 (resize_message_queue)",
                base + t as Pid
            )));
        }
    }

    // The writes into this process's memory, in one order: processes 0..n (their puts
    // to us; ours among ourselves), then our own gets.
    let mut writes: Vec<Write> = Vec::new();
    // Index of the first write of each remote process's raw puts / our gets from it.
    let mut put_writes: Vec<Vec<Option<usize>>> = (0..n).map(|_| Vec::new()).collect();
    for s in 0..n {
        if s == me {
            for &(origin, r) in &local {
                if let Request::Put { src, dst_pid, dst_slot, dst_offset, size } = r {
                    let what = || format!("put from process {origin} into process {dst_pid}");
                    match area_of(dst_pid, dst_slot, dst_offset, size, &what) {
                        Ok(dst) => writes.push(Write { addr: dst as usize, len: size, src: Source::Copy(src), lo: 0, hi: 0 }),
                        Err(e) => note(&mut found, me, e),
                    }
                }
            }
            continue;
        }
        let Some(inc) = &incoming[s] else { continue };
        for p in &inc.puts {
            let what = || format!("put from process {} into process {}", p.origin, p.dst);
            let at = match area_of(p.dst, p.slot, p.off, p.size, &what) {
                Ok(dst) => {
                    let src = match p.inline {
                        Some(o) => Source::Copy(inc.body[o..].as_ptr()),
                        None => Source::Raw,
                    };
                    writes.push(Write { addr: dst as usize, len: p.size, src, lo: 0, hi: 0 });
                    Some(writes.len() - 1)
                }
                Err(e) => {
                    note(&mut found, me, e);
                    None
                }
            };
            if p.inline.is_none() {
                put_writes[s].push(at);
            }
        }
    }
    for &(requester, r) in &local {
        if let Request::Get { src_pid, src_slot, src_offset, dst, size } = r {
            let what = || format!("get by process {requester} from process {src_pid}");
            match area_of(src_pid, src_slot, src_offset, size, &what) {
                Ok(src) => writes.push(Write { addr: dst as usize, len: size, src: Source::Copy(src), lo: 0, hi: 0 }),
                Err(e) => note(&mut found, me, e),
            }
        }
    }
    let mut get_writes: Vec<usize> = vec![0; n];
    for (d, o) in out.iter().enumerate() {
        get_writes[d] = writes.len();
        for &(dst, size) in &o.my_gets {
            writes.push(Write { addr: dst as usize, len: size, src: Source::Raw, lo: 0, hi: 0 });
        }
    }
    let pieces = resolve(&mut writes);

    // Copies that need no network.
    if !discard {
        for w in &writes {
            if let Source::Copy(src) = w.src {
                for &(s, e) in &pieces[w.lo..w.hi] {
                    // SAFETY: the destination was checked against its registration
                    // above (or at the origin for our own gets) and the source against
                    // its own (at queueing, or inside the received frame body); pieces
                    // of different writes are disjoint. `copy`, not
                    // `copy_nonoverlapping`: a put to oneself may overlap its source.
                    unsafe { std::ptr::copy(src.add(s - w.addr), s as *mut u8, e - s) };
                }
            }
        }
    }
    // Raw put payloads go straight into their pieces.
    for s in (0..n).filter(|&s| s != me) {
        let Some(inc) = &incoming[s] else { continue };
        let mut segs = Vec::new();
        for (k, p) in inc.puts.iter().filter(|p| p.inline.is_none()).enumerate() {
            match put_writes[s][k] {
                Some(i) => segments(&writes[i], &pieces, discard, &mut segs),
                None => segs.push(Seg::Skip(p.size)),
            }
        }
        if inc.raw > 0 {
            // SAFETY: every `To` segment is a resolved piece of a checked destination.
            unsafe { mesh.install_plan(s, segs)? };
        }
    }

    // ---- Phase 3: data exchange. Serve the gets asked of us, then wait. ----
    for s in (0..n).filter(|&s| s != me) {
        let Some(inc) = &incoming[s] else { continue };
        if inc.gets.is_empty() {
            continue;
        }
        let mut status = Vec::with_capacity(inc.gets.len());
        let mut parts: Vec<(*const u8, usize)> = Vec::new();
        let mut raw = 0u64;
        for g in &inc.gets {
            let what = || format!("get by process {} from process {}", g.requester, g.src);
            match area_of(g.src, g.slot, g.off, g.size, &what) {
                Ok(p) => {
                    status.push(1u8);
                    parts.push((p, g.size));
                    raw += g.size as u64;
                }
                Err(e) => {
                    status.push(0u8);
                    note(&mut found, me, e);
                }
            }
        }
        mesh.send(s, Kind::GetReply, 0, section, step, &status, raw);
        let mut small: Vec<u8> = Vec::new();
        for (p, len) in parts {
            if len == 0 {
            } else if len <= INLINE_MAX {
                // SAFETY: checked against the source registration just above.
                small.extend_from_slice(unsafe { std::slice::from_raw_parts(p, len) });
            } else {
                mesh.send_owned(s, std::mem::take(&mut small));
                // SAFETY: as above; the memory stays put until this sync returns.
                unsafe { mesh.send_mem(s, p, len) };
            }
        }
        mesh.send_owned(s, small);
    }
    let mut replied: Vec<bool> = out.iter().map(|o| o.my_gets.is_empty()).collect();
    replied[me] = true;
    let watch: Vec<usize> = (0..n).filter(|&s| s != me && (incoming[s].is_some() || !replied[s])).collect();
    mesh.wait(|m| {
        let mut done = true;
        for &s in &watch {
            // The reply comes after the raw put payloads from s (stream order), so
            // its frame, once here, owns whatever raw bytes are pending.
            if !replied[s] {
                match m.take(s, section, Kind::GetReply, step, 0) {
                    None => {
                        m.check_peer(s, section, step, Kind::GetReply)?;
                        done = false;
                        continue;
                    }
                    Some(f) => {
                        replied[s] = true;
                        let gets = &out[s].my_gets;
                        if f.body.len() != gets.len() {
                            return Err(Error::fatal(format!("malformed get reply from {}", m.link(s).name)));
                        }
                        let mut segs = Vec::new();
                        for (k, &ok) in f.body.iter().enumerate() {
                            if ok != 0 {
                                segments(&writes[get_writes[s] + k], &pieces, discard, &mut segs);
                            }
                        }
                        // SAFETY: every `To` segment is a resolved piece of one of our own
                        // get destinations, checked when the get was queued.
                        unsafe { m.install_plan(s, segs)? };
                    }
                }
            }
            if m.raw_pending(s) > 0 {
                m.check_peer(s, section, step, Kind::GetReply)?;
                done = false;
            }
        }
        Ok(done)
    })?;

    // ---- Phase 4: final barrier, agreeing on the first error. ----
    match barrier(mesh, section, step, Kind::Barrier, found)? {
        None => Ok(()),
        Some((_, msg)) => Err(Error::fatal(msg)),
    }
}

fn mesh_node_of(offsets: &[Pid], pid: Pid) -> usize {
    offsets.partition_point(|&o| o <= pid).saturating_sub(1)
}

fn rounds(n: usize) -> u8 {
    let mut r = 0;
    while (1usize << r) < n {
        r += 1;
    }
    r
}

/// Randomised Bruck exchange of the message counts: returns the processes that send
/// us requests, and whether anybody communicates in this sync at all.
fn bruck(mesh: &mut Mesh, section: u32, step: u64, counts: &[u32], any: bool) -> Result<(Vec<usize>, bool)> {
    let (me, n) = (mesh.me, mesh.n);
    let v = mesh.perm[me];
    let mut blocks: Vec<(u32, u32, u32)> =
        (0..n).filter(|&d| d != me && counts[d] > 0).map(|d| (me as u32, d as u32, counts[d])).collect();
    let mut flag = any;
    for r in 0..rounds(n) {
        let dist = 1usize << r;
        let to = mesh.inv[(v + dist) % n];
        let from = mesh.inv[(v + n - dist % n) % n];
        let perm = &mesh.perm;
        let (send, keep): (Vec<_>, Vec<_>) =
            blocks.into_iter().partition(|b| ((perm[b.1 as usize] + n - v) % n) & dist != 0);
        let mut body = Vec::with_capacity(5 + 12 * send.len());
        body.u8(flag as u8);
        body.u32(send.len() as u32);
        for b in &send {
            body.u32(b.0);
            body.u32(b.1);
            body.u32(b.2);
        }
        mesh.send(to, Kind::Meta, r, section, step, &body, 0);
        blocks = keep;
        let mut got = None;
        mesh.wait(|m| match m.take(from, section, Kind::Meta, step, r) {
            Some(f) => {
                got = Some(f);
                Ok(true)
            }
            None => m.check_peer(from, section, step, Kind::Meta).map(|_| false),
        })?;
        let f = got.unwrap();
        let mut g = Get::new(&f.body);
        flag |= g.u8()? != 0;
        for _ in 0..g.u32()? {
            let b = (g.u32()?, g.u32()?, g.u32()?);
            if b.0 as usize >= n || b.1 as usize >= n {
                return Err(Error::fatal("malformed meta-data block from a peer"));
            }
            blocks.push(b);
        }
    }
    if blocks.iter().any(|b| b.1 as usize != me) {
        return Err(Error::fatal("meta-data exchange went wrong: a block did not reach its process"));
    }
    Ok((blocks.iter().map(|b| b.0 as usize).collect(), flag))
}

/// Allgather over all processes of the mesh: `mine` holds this OS process's LPF
/// processes' values, `len` each; process q's land at `all[q * len..][..len]`.
pub(crate) fn allgather(mesh: &mut Mesh, section: u32, step: u64, mine: &[u64], len: usize, all: &mut [u64]) -> Result<()> {
    let (me, n) = (mesh.me, mesh.n);
    let offsets = mesh.offsets.clone();
    let base = offsets[me] as usize;
    all[base * len..base * len + mine.len()].copy_from_slice(mine);
    let mut body = Vec::with_capacity(8 + 8 * mine.len());
    body.u64(len as u64);
    for &v in mine {
        body.u64(v);
    }
    for d in (0..n).filter(|&d| d != me) {
        mesh.send(d, Kind::Gather, 0, section, step, &body, 0);
    }
    let mut got = vec![false; n];
    got[me] = true;
    let mut bad: Option<Error> = None;
    mesh.wait(|m| {
        for s in 0..n {
            if got[s] {
                continue;
            }
            let Some(f) = m.take(s, section, Kind::Gather, step, 0) else {
                m.check_peer(s, section, step, Kind::Gather)?;
                return Ok(false);
            };
            got[s] = true;
            let mut g = Get::new(&f.body);
            let theirs = g.usize()?;
            let count = (offsets[s + 1] - offsets[s]) as usize;
            if theirs != len {
                bad.get_or_insert_with(|| Error::fatal(format!(
                    "register_global is collective, but process {} registered {len} global slots in this superstep \
                     and process {} registered {theirs}",
                    base, offsets[s]
                )));
                continue;
            }
            let at = offsets[s] as usize * len;
            for v in &mut all[at..at + count * len] {
                *v = g.u64()?;
            }
        }
        Ok(true)
    })?;
    bad.map_or(Ok(()), Err)
}

/// Dissemination barrier over all processes of the mesh; carries the error found by
/// the lowest process and returns it.
pub(crate) fn barrier(mesh: &mut Mesh, section: u32, step: u64, kind: Kind, mut found: Found) -> Result<Found> {
    let (me, n) = (mesh.me, mesh.n);
    let v = mesh.perm[me];
    for r in 0..rounds(n) {
        let dist = 1usize << r;
        let to = mesh.inv[(v + dist) % n];
        let from = mesh.inv[(v + n - dist % n) % n];
        let mut body = Vec::new();
        match &found {
            None => body.u8(0),
            Some((node, msg)) => {
                body.u8(1);
                body.u32(*node);
                body.str(msg.as_bytes());
            }
        }
        mesh.send(to, kind, r, section, step, &body, 0);
        let mut got = None;
        mesh.wait(|m| match m.take(from, section, kind, step, r) {
            Some(f) => {
                got = Some(f);
                Ok(true)
            }
            None => m.check_peer(from, section, step, kind).map(|_| false),
        })?;
        let f = got.unwrap();
        let mut g = Get::new(&f.body);
        if g.u8()? != 0 {
            let node = g.u32()?;
            let msg = String::from_utf8_lossy(g.str()?).into_owned();
            if found.as_ref().is_none_or(|(k, _)| node < *k) {
                found = Some((node, msg));
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(addr: usize, len: usize) -> Write {
        Write { addr, len, src: Source::Raw, lo: 0, hi: 0 }
    }

    #[test]
    fn later_writes_win_and_pieces_are_disjoint() {
        let mut ws = vec![w(0, 10), w(5, 10), w(2, 2), w(20, 5), w(0, 0)];
        let p = resolve(&mut ws);
        let of = |i: usize| p[ws[i].lo..ws[i].hi].to_vec();
        assert_eq!(of(0), vec![(0, 2), (4, 5)]);
        assert_eq!(of(1), vec![(5, 15)]);
        assert_eq!(of(2), vec![(2, 4)]);
        assert_eq!(of(3), vec![(20, 25)]);
        assert!(of(4).is_empty());
        let mut segs = Vec::new();
        segments(&ws[0], &p, false, &mut segs);
        let lens: Vec<(bool, usize)> = segs.iter().map(|s| match *s {
            Seg::To(_, n) => (true, n),
            Seg::Skip(n) => (false, n),
        }).collect();
        assert_eq!(lens, vec![(true, 2), (false, 2), (true, 1), (false, 5)]);
    }
}
