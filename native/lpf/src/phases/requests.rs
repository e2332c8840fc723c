//! The request headers of a sync: what each process tells each other process in the
//! meta-data exchange (puts with small payloads inline, the headers of large puts, get
//! requests), built from the supersteps of the LPF processes of one transport node and
//! parsed at the receiver. The same format serves every transport; how the large
//! payloads travel (raw bytes on a TCP stream, MPI messages, one-sided writes) is the
//! transport's business.

use crate::engine::Superstep;
use super::Layout;
use crate::error::{Error, Result};
use crate::queue::Request;
use crate::types::{Memslot, Pid};
use crate::wire::{Get, Put, INLINE_MAX};

/// A request header on the wire: `origin or requester u32 | destination or source pid
/// u32 | slot u64 | offset u64 | size u64`, little endian (a put's inline payload
/// follows its header).
const REQ_HDR: usize = 4 + 4 + 8 + 8 + 8;

/// The request header fields: the two pids, slot, offset, size.
type ReqFields = (Pid, Pid, Memslot, usize, usize);

/// Appends a request header (assembled in place, appended at once).
pub(super) fn encode_request(out: &mut Vec<u8>, (a, b, slot, off, size): ReqFields) {
    let mut h = [0u8; REQ_HDR];
    h[0..4].copy_from_slice(&a.to_le_bytes());
    h[4..8].copy_from_slice(&b.to_le_bytes());
    h[8..16].copy_from_slice(&(slot.to_raw() as u64).to_le_bytes());
    h[16..24].copy_from_slice(&(off as u64).to_le_bytes());
    h[24..32].copy_from_slice(&(size as u64).to_le_bytes());
    out.extend_from_slice(&h);
}

/// Reads a request header.
fn decode_request(g: &mut Get<'_>) -> Result<ReqFields> {
    let h: &[u8; REQ_HDR] = g.bytes(REQ_HDR)?.try_into().expect("REQ_HDR bytes");
    let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap());
    let usize_at = |i: usize| {
        usize::try_from(u64::from_le_bytes(h[i..i + 8].try_into().unwrap())).map_err(|_| Error::protocol("malformed frame from a peer (size)"))
    };
    Ok((u32_at(0), u32_at(4), Memslot::from_raw(usize_at(8)?), usize_at(16)?, usize_at(24)?))
}

/// A put arriving at this node.
pub(crate) struct InPut {
    pub origin: Pid,
    pub dst: Pid,
    pub slot: Memslot,
    pub off: usize,
    pub size: usize,
    /// Offset of the inline payload in the frame body, if inline.
    pub inline: Option<usize>,
}

/// A get asked of this node.
pub(crate) struct InGet {
    pub requester: Pid,
    pub src: Pid,
    pub slot: Memslot,
    pub off: usize,
    pub size: usize,
}

/// Requests from one node, parsed from its message body.
#[derive(Default)]
pub(crate) struct Incoming {
    pub body: Vec<u8>,
    /// Payload bytes the sender announced besides the body (its large puts).
    pub raw: u64,
    pub puts: Vec<InPut>,
    pub gets: Vec<InGet>,
}

impl Incoming {
    /// The puts whose payload is not inline (in header order).
    pub fn raw_puts(&self) -> impl Iterator<Item = &InPut> {
        self.puts.iter().filter(|p| p.inline.is_none())
    }
}

/// Whether the requests in `body[start..]` are none at all (the common message of a
/// small sync, told without parsing).
pub(crate) fn asks_nothing(body: &[u8], start: usize) -> bool {
    body.len() == start + 8 && body[start..].iter().all(|&b| b == 0)
}

/// Parses the requests in `body[start..]` into `inc`, an `Incoming` whose vectors are
/// reused (kept from an earlier sync: [`Pools::recycle`]).
///
/// [`Pools::recycle`]: super::driver::Pools::recycle
pub(crate) fn parse_requests(inc: &mut Incoming, body: Vec<u8>, raw: u64, start: usize) -> Result<()> {
    let mut g = Get::new(&body);
    g.bytes(start)?;
    let nput = g.u32()? as usize;
    let nget = g.u32()? as usize;
    let (puts, gets) = (&mut inc.puts, &mut inc.gets);
    puts.clear();
    gets.clear();
    puts.reserve(nput.min(1 << 20));
    for _ in 0..nput {
        let (origin, dst, slot, off, size) = decode_request(&mut g)?;
        let inline = if size <= INLINE_MAX {
            let at = g.pos();
            g.bytes(size)?;
            Some(at)
        } else {
            None
        };
        puts.push(InPut { origin, dst, slot, off, size, inline });
    }
    gets.reserve(nget.min(1 << 20));
    for _ in 0..nget {
        let (requester, src, slot, off, size) = decode_request(&mut g)?;
        gets.push(InGet { requester, src, slot, off, size });
    }
    if !g.is_done() {
        return Err(Error::protocol("malformed request message from a peer (trailing bytes)"));
    }
    inc.body = body;
    inc.raw = raw;
    Ok(())
}

/// A large put as its origin keeps it: where the bytes are, and where they go.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) struct RawPut {
    pub src: *const u8,
    pub size: usize,
    /// The destination process (global pid).
    pub dst_pid: Pid,
    pub dst_slot: Memslot,
    pub dst_offset: usize,
}

/// What this node sends to one other node.
#[derive(Default)]
pub(crate) struct Outgoing {
    puts: Vec<u8>,
    gets: Vec<u8>,
    pub nput: u32,
    pub nget: u32,
    /// Large put payloads, in header order.
    pub raw: Vec<RawPut>,
    pub raw_len: u64,
    /// This node's gets from that one, in header order.
    pub my_gets: Vec<MyGet>,
}

/// A get as its requester keeps it.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) struct MyGet {
    pub dst: *mut u8,
    pub size: usize,
    /// The source process (global pid).
    pub src_pid: Pid,
    pub src_slot: Memslot,
    pub src_offset: usize,
}

impl Outgoing {
    /// The message body as parts (for transports that gather them without a copy):
    /// `prefix`, the counts (written into `counts`), the put and get headers.
    pub fn parts<'a>(&'a self, prefix: &'a [u8], counts: &'a mut [u8; 8]) -> [&'a [u8]; 4] {
        counts[..4].copy_from_slice(&self.nput.to_le_bytes());
        counts[4..].copy_from_slice(&self.nget.to_le_bytes());
        [prefix, &counts[..], &self.puts, &self.gets]
    }
    pub fn nmsg(&self) -> u32 {
        self.nput + self.nget
    }
    /// Empties it, keeping its buffers for the next sync.
    fn clear(&mut self) {
        self.puts.clear();
        self.gets.clear();
        self.nput = 0;
        self.nget = 0;
        self.raw.clear();
        self.raw_len = 0;
        self.my_gets.clear();
    }
}

/// The requests of one node's LPF processes, sorted by destination node.
#[derive(Default)]
pub(crate) struct Built {
    /// `out[d]`: what goes to node d (empty for this node).
    pub out: Vec<Outgoing>,
    /// Requests among this node's own LPF processes (or to self), with their origin.
    pub local: Vec<(Pid, Request)>,
    /// Whether any process of this node communicates in this superstep.
    pub any: bool,
}

impl Built {
    /// Builds the outgoing requests of this node's LPF processes `steps` (global pids
    /// `layout.offsets[layout.me]..`), sorted by destination node, into this one's
    /// buffers (a node that syncs often allocates nothing here once warm).
    pub fn rebuild(&mut self, steps: &[&Superstep<'_>], layout: &Layout) {
        // A build without requests left everything empty (the common small sync).
        if self.any {
            self.out.iter_mut().for_each(Outgoing::clear);
            self.local.clear();
        }
        self.out.resize_with(layout.n, Outgoing::default);
        self.any = fill(steps, layout, &mut self.out, &mut self.local);
    }
}

/// Sorts the requests of `steps` into `out` (per destination node) and `local`;
/// returns whether there are any.
fn fill(steps: &[&Superstep<'_>], layout: &Layout, out: &mut [Outgoing], local: &mut Vec<(Pid, Request)>) -> bool {
    let (me, base) = (layout.me, layout.offsets[layout.me]);
    let mut any = false;
    for (t, s) in steps.iter().enumerate() {
        let origin = base + t as Pid;
        let reqs = s.queue.grouped();
        any |= !reqs.is_empty();
        for r in reqs {
            let d = layout.node_of(r.peer());
            if d == me {
                local.push((origin, *r));
                continue;
            }
            let o = &mut out[d];
            match *r {
                Request::Put { src, dst_pid, dst_slot, dst_offset, size } => {
                    o.nput += 1;
                    o.puts.reserve(REQ_HDR + size.min(INLINE_MAX));
                    encode_request(&mut o.puts, (origin, dst_pid, dst_slot, dst_offset, size));
                    if size == 0 {
                    } else if size <= INLINE_MAX {
                        // SAFETY: `src..src + size` was checked against its
                        // registration when the put was queued and stays valid
                        // until the sync returns.
                        o.puts.bytes(unsafe { std::slice::from_raw_parts(src, size) });
                    } else {
                        o.raw.push(RawPut { src, size, dst_pid, dst_slot, dst_offset });
                        o.raw_len += size as u64;
                    }
                }
                Request::Get { src_pid, src_slot, src_offset, dst, size } => {
                    o.nget += 1;
                    encode_request(&mut o.gets, (origin, src_pid, src_slot, src_offset, size));
                    o.my_gets.push(MyGet { dst, size, src_pid, src_slot, src_offset });
                }
            }
        }
    }
    any
}
