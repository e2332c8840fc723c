//! Dense numbering of byte-string vertex ids (Spark's string ids): an ordered,
//! distributed dictionary.
//!
//! Every process holds some ids (the endpoints of its edges, with any duplicates, and
//! ids of vertices without edges); the vertices are their union, numbered `0..n` in
//! ascending unsigned byte order (`memcmp`, a prefix before its extensions: Spark's
//! order of `UTF8String`), the same on every process whatever the partition of the
//! input.
//!
//! **Ranges, not hashes.** Each process owns a range of the byte order, cut by `p - 1`
//! splitters that every process holds, so the numbers follow the ids' order: the owners'
//! counts' prefix sums are the first numbers of the ranges, "the smallest vertex of a
//! component" (WCC) is the smallest id, and anybody can tell the owner of an id or of a
//! number without a word. Hash owners would balance without sampling but would need a
//! global sort of all ids to number them in order.
//!
//! **Numbering** ([`number_byte_keys`]): each process deduplicates its ids (a hash
//! table) and sorts them; regular sampling chooses the splitters (each process
//! contributes evenly spaced ids of its sorted ones, in proportion to its share of all,
//! about [`SAMPLES`]`·p²` in all, so an owner receives about `(1 + 1/`[`SAMPLES`]`)/p` of
//! the processes' distinct ids even when one process holds them all); the ids move to
//! their owners, who merge and deduplicate them; an allgather of the owners' counts gives
//! `n` and each owner its first number; the numbers go back to the senders. On the wire
//! an id is its length (`u32`) and its bytes. Cost: three irregular exchanges (the
//! samples, `4 + len` bytes per sample on every process; every process's distinct ids to
//! their owners, `4 + len` bytes each; their numbers back, 4 bytes each), two allgathers
//! of one word and four error agreements (allreduces of one word): a dozen supersteps,
//! and `h` ≈ the `4 + len` bytes of a process's distinct ids plus 4 bytes per id.
//!
//! **Look-ups**: [`number_of`] (an id every process names, e.g. a BFS source: its owner
//! searches, one allreduce of a word tells everybody) and [`keys_of`] (the ids of any
//! numbers, e.g. the vertices whose values a process holds or WCC's labels: a request
//! of 4 bytes a number to the numbers' owners, a reply of `4 + len` bytes a number).
//!
//! Limits: an id longer than `u32::MAX` bytes, or more than [`MAX_N`] vertices, is an
//! error on every process; every buffer is sized before it is claimed, fallibly.

use super::comm::{bytes, oom, try_filled, try_zeroed, Comm};
use super::relabel::{too_many, MAX_N};
use super::{DistError, DistResult};
use crate::prng::mix64;

/// Samples per process and per process of the job (the oversampling of regular sampling).
const SAMPLES: usize = 4;

/// Bytes of an encoded id's length.
const LEN_BYTES: usize = 4;

/// Byte strings in one buffer: key `i` is `bytes[ends[i - 1]..ends[i]]` (from 0 for the
/// first); no allocation per key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByteKeys {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl ByteKeys {
    pub fn new() -> ByteKeys {
        ByteKeys::default()
    }

    /// Room for `keys` keys of `bytes` bytes in all, claimed fallibly (the error names
    /// `what` and this process, `me`).
    pub(crate) fn with_capacity(keys: usize, bytes: usize, me: usize, what: &str) -> DistResult<ByteKeys> {
        let mut k = ByteKeys::new();
        k.bytes.try_reserve_exact(bytes).map_err(|_| oom(bytes, me, what))?;
        k.ends.try_reserve_exact(keys).map_err(|_| oom(self::bytes::<usize>(keys), me, what))?;
        Ok(k)
    }

    /// Appends `key` (growing as a `Vec` does; no allocation within the capacity).
    pub fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    /// [`ByteKeys::push`], growing fallibly.
    pub(crate) fn try_push(&mut self, key: &[u8], me: usize, what: &str) -> DistResult<()> {
        let more = |have: usize, add: usize| have.saturating_add(add).max(2 * have);
        self.bytes.try_reserve(key.len()).map_err(|_| oom(more(self.bytes.capacity(), key.len()), me, what))?;
        self.ends.try_reserve(1).map_err(|_| oom(bytes::<usize>(more(self.ends.capacity(), 1)), me, what))?;
        self.push(key);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes of all keys together.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + Clone + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The bytes its buffers hold (their capacities).
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.bytes.capacity() + bytes::<usize>(self.ends.capacity())
    }

    /// In ascending keys: the position of `key`, or where it would go.
    fn search(&self, key: &[u8]) -> Result<usize, usize> {
        let at = self.partition_point(|k| k < key);
        if at < self.len() && self.get(at) == key {
            Ok(at)
        } else {
            Err(at)
        }
    }

    /// The number of leading keys for which `pred` holds (it must hold for a prefix).
    fn partition_point(&self, pred: impl Fn(&[u8]) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// The largest inputs [`number_byte_keys`] accepts (lower in the tests).
#[derive(Clone, Copy, Debug)]
struct Limits {
    /// Bytes of one id (its length goes as a `u32`).
    key_bytes: usize,
    /// Vertices (the numbers are `u32`).
    vertices: u64,
}

const LIMITS: Limits = Limits { key_bytes: u32::MAX as usize, vertices: MAX_N };

/// One process's part of the numbering of all ids.
#[derive(Clone, Debug)]
pub(crate) struct KeyDictionary {
    /// Vertices of all processes.
    pub n: u64,
    /// `firsts[q]`: the number of process q's first id; `firsts[p] = n`.
    firsts: Vec<u64>,
    /// This process's ids, ascending: `keys.get(i)` is vertex `first() + i`.
    pub keys: ByteKeys,
    /// Ascending; process q owns the ids `x` with `q` splitters `<= x` (fewer than
    /// `p - 1` when there were fewer samples: the last processes own nothing).
    splitters: ByteKeys,
    me: usize,
}

impl KeyDictionary {
    /// The number of this process's first id.
    pub fn first(&self) -> u64 {
        self.firsts[self.me]
    }

    /// The process whose range holds `key` (whether or not it is a vertex).
    pub(crate) fn owner_of_key(&self, key: &[u8]) -> usize {
        owner(&self.splitters, key)
    }

    /// The bytes this part holds (the capacities of its vectors).
    pub(crate) fn capacity_bytes(&self) -> usize {
        bytes::<u64>(self.firsts.capacity()) + self.keys.capacity_bytes() + self.splitters.capacity_bytes()
    }

    /// The process holding the id of vertex `k < n` (processes without ids hold none).
    pub(crate) fn owner_of_number(&self, k: u64) -> usize {
        self.firsts.partition_point(|&f| f <= k) - 1
    }
}

/// What [`number_byte_keys`] gives a process: its part of the dictionary and the numbers
/// of its ids.
pub(crate) struct Numbered {
    pub(crate) dict: KeyDictionary,
    /// The number of each of its `ends`, in order.
    pub ends: Vec<u32>,
    /// The number of each of its `extra` ids, in order (they came back with the others:
    /// 4 bytes an id, no exchange of their own).
    pub extra: Vec<u32>,
}

/// Numbers the union of every process's `ends` and `extra` (see the module doc).
/// Collective.
pub(crate) fn number_byte_keys(comm: &mut Comm<'_>, ends: &ByteKeys, extra: &ByteKeys) -> DistResult<Numbered> {
    number_within(comm, ends, extra, LIMITS)
}

fn number_within(comm: &mut Comm<'_>, ends: &ByteKeys, extra: &ByteKeys, limits: Limits) -> DistResult<Numbered> {
    let (p, me) = (comm.p, comm.me);
    let local = comm.agree(LocalKeys::new(ends, extra, limits, me))?;
    let u = local.distinct.len();
    let total: u64 = comm.allgather_u64(u as u64)?.iter().sum();

    let samples = comm.agree(encode(sample_positions(u, total, p).map(|j| local.distinct.get(local.sorted[j])), me, "the sample of the vertex ids"))?;
    let (samples, _) = comm.allgatherv(&samples)?;
    let routed = comm.agree(splitters(&samples, p, me).and_then(|splitters| {
        // Sorted ids go to ascending owners: each owner's part is a stretch.
        let mut counts = vec![0usize; p];
        for &i in &local.sorted {
            let key = local.distinct.get(i);
            counts[owner(&splitters, key)] += LEN_BYTES + key.len();
        }
        let send = encode(local.sorted.iter().map(|&i| local.distinct.get(i)), me, "the vertex ids sent to their owners")?;
        Ok((splitters, send, counts))
    }))?;
    drop(samples);
    let (splitters, send, counts) = routed;
    let LocalKeys { ids: mut numbers, extra_ids: mut extra_numbers, rank, .. } = local;
    let (recv, recv_counts) = comm.alltoallv(&send, &counts)?;
    drop(send);

    let owned = comm.agree(Owned::merge(&recv, &recv_counts, limits, me))?;
    drop(recv);
    let mut firsts = vec![0u64; p + 1];
    for (q, c) in comm.allgather_u64(owned.keys.len() as u64)?.into_iter().enumerate() {
        firsts[q + 1] = firsts[q] + c;
    }
    let n = firsts[p];
    if n > limits.vertices {
        return Err(too_many(n));
    }
    let mut reply = owned.ranks;
    for r in &mut reply {
        *r += firsts[me] as u32;
    }
    let (numbers_sorted, _) = comm.alltoallv(&reply, &owned.from)?;
    drop(reply);

    for x in numbers.iter_mut().chain(&mut extra_numbers) {
        *x = numbers_sorted[rank[*x as usize] as usize];
    }
    Ok(Numbered { dict: KeyDictionary { n, firsts, keys: owned.keys, splitters, me }, ends: numbers, extra: extra_numbers })
}

/// This process's distinct ids, each once.
struct LocalKeys {
    /// In order of first appearance (the local id of a key is its index).
    distinct: ByteKeys,
    /// The local id of every key of `ends`, and of `extra`.
    ids: Vec<u32>,
    extra_ids: Vec<u32>,
    /// The local ids in ascending key order.
    sorted: Vec<usize>,
    /// `rank[id]`: the position of `id` in `sorted`.
    rank: Vec<u32>,
}

impl LocalKeys {
    fn new(ends: &ByteKeys, extra: &ByteKeys, limits: Limits, me: usize) -> DistResult<LocalKeys> {
        let mut table = KeyTable::new(limits, me)?;
        let mut ids = try_zeroed::<u32>(ends.len(), me, "the local numbers of the edge endpoints")?;
        for (i, key) in ends.iter().enumerate() {
            check_length(key, i, "edge endpoint", limits, me)?;
            ids[i] = table.id(key)?;
        }
        let mut extra_ids = try_zeroed::<u32>(extra.len(), me, "the local numbers of the vertex ids")?;
        for (i, key) in extra.iter().enumerate() {
            check_length(key, i, "vertex id", limits, me)?;
            extra_ids[i] = table.id(key)?;
        }
        let distinct = table.keys;
        let sorted = sorted_order(&distinct, me, "the order of the distinct vertex ids")?;
        let mut rank = try_zeroed::<u32>(sorted.len(), me, "the ranks of the distinct vertex ids")?;
        for (j, &i) in sorted.iter().enumerate() {
            rank[i] = j as u32;
        }
        Ok(LocalKeys { distinct, ids, extra_ids, sorted, rank })
    }
}

fn check_length(key: &[u8], i: usize, what: &str, limits: Limits, me: usize) -> DistResult<()> {
    if key.len() > limits.key_bytes {
        return Err(DistError::Invalid(format!(
            "{what} {i} of process {me} is an id of {} bytes; ids of at most {} bytes are supported (32-bit lengths)",
            key.len(),
            limits.key_bytes
        )));
    }
    Ok(())
}

/// The positions that sort `keys` ascending (equal keys in their order).
fn sorted_order(keys: &ByteKeys, me: usize, what: &str) -> DistResult<Vec<usize>> {
    let mut order = try_zeroed::<usize>(keys.len(), me, what)?;
    for (i, o) in order.iter_mut().enumerate() {
        *o = i;
    }
    // Stable: ascending runs (the owners' received parts) cost a merge, not a sort.
    order.sort_by(|&a, &b| keys.get(a).cmp(keys.get(b)));
    Ok(order)
}

/// Open addressing over the distinct keys: a slot holds a key's local id or [`FREE`].
struct KeyTable {
    keys: ByteKeys,
    slots: Vec<u32>,
    limits: Limits,
    me: usize,
}

const FREE: u32 = u32::MAX;
const TABLE_WHAT: &str = "the table of distinct vertex ids";

impl KeyTable {
    fn new(limits: Limits, me: usize) -> DistResult<KeyTable> {
        Ok(KeyTable { keys: ByteKeys::new(), slots: try_filled(1024, FREE, me, TABLE_WHAT)?, limits, me })
    }

    /// The slot of `key`, or the free slot where it goes.
    fn slot(&self, key: &[u8]) -> usize {
        let mask = self.slots.len() - 1;
        let mut s = hash_bytes(key) as usize & mask;
        while self.slots[s] != FREE && self.keys.get(self.slots[s] as usize) != key {
            s = (s + 1) & mask;
        }
        s
    }

    /// The local id of `key`, a new one if it is new.
    fn id(&mut self, key: &[u8]) -> DistResult<u32> {
        let s = self.slot(key);
        if self.slots[s] != FREE {
            return Ok(self.slots[s]);
        }
        if self.keys.len() as u64 >= self.limits.vertices {
            let max = self.limits.vertices;
            return Err(DistError::Invalid(format!(
                "the graph has more than {max} vertices (process {} alone holds more distinct ids); at most {max} are supported (32-bit vertex ids)",
                self.me
            )));
        }
        // Below `limits.vertices <= u32::MAX`, so never FREE.
        let id = self.keys.len() as u32;
        self.keys.try_push(key, self.me, "the distinct vertex ids")?;
        self.slots[s] = id;
        if 2 * self.keys.len() > self.slots.len() {
            let cap = self.slots.len().checked_mul(2).ok_or_else(|| oom(usize::MAX, self.me, TABLE_WHAT))?;
            self.slots = try_filled(cap, FREE, self.me, TABLE_WHAT)?;
            for i in 0..self.keys.len() {
                let s = self.slot(self.keys.get(i));
                self.slots[s] = i as u32;
            }
        }
        Ok(id)
    }
}

/// A hash of a byte string: SplitMix64's mixer over its 8-byte words and its length.
fn hash_bytes(key: &[u8]) -> u64 {
    let mut h = mix64(key.len() as u64 ^ 0x243f_6a88_85a3_08d3);
    let mut words = key.chunks_exact(8);
    for w in &mut words {
        h = mix64(h ^ u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = mix64(h ^ u64::from_le_bytes(w));
    }
    h
}

/// Which of its `u` sorted distinct ids a process contributes to the sample: evenly
/// spaced, about `SAMPLES·p²·u/total` of them (at least one if it has any, at most `u`).
fn sample_positions(u: usize, total: u64, p: usize) -> impl Iterator<Item = usize> + Clone {
    let want = (SAMPLES * p * p) as u128;
    let s = if total == 0 { 0 } else { (want * u as u128).div_ceil(total as u128).min(u as u128) as usize };
    (0..s).map(move |j| (j as u128 * u as u128 / s as u128) as usize)
}

/// The splitters from all processes' samples (the same on every process): the samples
/// at `k·m/p`, k = 1..p, of the `m` sorted ones.
fn splitters(samples: &[u8], p: usize, me: usize) -> DistResult<ByteKeys> {
    let samples = decode(samples, me, "the sample of the vertex ids")?;
    let order = sorted_order(&samples, me, "the order of the sampled vertex ids")?;
    let m = order.len();
    let picked = if m == 0 { Vec::new() } else { (1..p).map(|k| order[k * m / p]).collect() };
    let mut splitters = ByteKeys::with_capacity(picked.len(), picked.iter().map(|&i| samples.get(i).len()).sum(), me, "the splitters")?;
    for i in picked {
        splitters.push(samples.get(i));
    }
    Ok(splitters)
}

fn owner(splitters: &ByteKeys, key: &[u8]) -> usize {
    splitters.partition_point(|s| s <= key)
}

/// What an owner received, merged.
struct Owned {
    /// The distinct ids of its range, ascending.
    keys: ByteKeys,
    /// For every id received (in the order received), its position in `keys`.
    ranks: Vec<u32>,
    /// How many ids came from each process.
    from: Vec<usize>,
}

impl Owned {
    fn merge(recv: &[u8], byte_counts: &[usize], limits: Limits, me: usize) -> DistResult<Owned> {
        let mut from = Vec::with_capacity(byte_counts.len());
        let mut at = 0;
        for &c in byte_counts {
            from.push(frames(&recv[at..at + c]).count());
            at += c;
        }
        let got = decode(recv, me, "the vertex ids received by their owner")?;
        let order = sorted_order(&got, me, "the order of the received vertex ids")?;
        // Position j of the order starts a new distinct id.
        let new = |j: usize| j == 0 || got.get(order[j - 1]) != got.get(order[j]);
        let (mut distinct, mut distinct_bytes) = (0usize, 0usize);
        for j in (0..order.len()).filter(|&j| new(j)) {
            distinct += 1;
            distinct_bytes += got.get(order[j]).len();
        }
        if distinct as u64 > limits.vertices {
            let max = limits.vertices;
            return Err(DistError::Invalid(format!(
                "the graph has more than {max} vertices (process {me} owns {distinct}); at most {max} are supported (32-bit vertex ids)"
            )));
        }
        let mut keys = ByteKeys::with_capacity(distinct, distinct_bytes, me, "the vertex ids of an owner's range")?;
        let mut ranks = try_zeroed::<u32>(got.len(), me, "the numbers of the received vertex ids")?;
        for (j, &i) in order.iter().enumerate() {
            if new(j) {
                keys.push(got.get(i));
            }
            ranks[i] = (keys.len() - 1) as u32;
        }
        Ok(Owned { keys, ranks, from })
    }
}

/// The number of the id `key`, which every process passes (e.g. a BFS source), or
/// `None` if it is no vertex. Collective: its owner searches, one allreduce of a word.
#[cfg(test)]
pub(crate) fn number_of(comm: &mut Comm<'_>, dict: &KeyDictionary, key: &[u8]) -> DistResult<Option<u32>> {
    Ok(numbers_of(comm, dict, &[key])?[0])
}

/// The numbers of the ids `keys`, which every process passes alike (a source list), each
/// `None` if it is no vertex. Collective: each key's owner searches, one allreduce of a
/// word per key.
pub(crate) fn numbers_of(comm: &mut Comm<'_>, dict: &KeyDictionary, keys: &[&[u8]]) -> DistResult<Vec<Option<u32>>> {
    let mut v: Vec<u64> = keys
        .iter()
        .map(|key| {
            let mine = if dict.owner_of_key(key) == comm.me { dict.keys.search(key).ok() } else { None };
            mine.map_or(u64::MAX, |i| dict.first() + i as u64)
        })
        .collect();
    // In pieces the collectives' scratch holds, however long the list.
    for piece in v.chunks_mut(1024) {
        comm.allreduce_u64(piece, |a, b| *a = (*a).min(*b))?;
    }
    Ok(v.into_iter().map(|k| (k != u64::MAX).then_some(k as u32)).collect())
}

/// The ids of `numbers` (this process's own list; each below `dict.n`), in order.
/// Collective: a request of 4 bytes a number to the numbers' owners, a reply of
/// `4 + len` bytes a number.
pub(crate) fn keys_of(comm: &mut Comm<'_>, dict: &KeyDictionary, numbers: &[u32]) -> DistResult<ByteKeys> {
    let (p, me) = (comm.p, comm.me);
    // Group the numbers by owner; `slot[i]`: where numbers[i] goes in the request.
    let request = comm.agree((|| {
        let mut counts = vec![0usize; p];
        for (i, &k) in numbers.iter().enumerate() {
            if k as u64 >= dict.n {
                return Err(DistError::Invalid(format!(
                    "vertex number {k} (entry {i} on process {me}) is not below the vertex count {}",
                    dict.n
                )));
            }
            counts[dict.owner_of_number(k as u64)] += 1;
        }
        let mut next = vec![0usize; p];
        for q in 1..p {
            next[q] = next[q - 1] + counts[q - 1];
        }
        let mut slot = try_zeroed::<usize>(numbers.len(), me, "the order of the requested vertex numbers")?;
        let mut send = try_zeroed::<u32>(numbers.len(), me, "the requested vertex numbers")?;
        for (i, &k) in numbers.iter().enumerate() {
            let q = dict.owner_of_number(k as u64);
            slot[i] = next[q];
            send[next[q]] = k;
            next[q] += 1;
        }
        Ok((send, counts, slot))
    })())?;
    let (send, counts, slot) = request;
    let (asked, asked_counts) = comm.alltoallv(&send, &counts)?;
    drop(send);
    let first = dict.first();
    let key = |k: u32| dict.keys.get((k as u64 - first) as usize);
    let reply = comm.agree(encode(asked.iter().map(|&k| key(k)), me, "the vertex ids sent back to their requesters"))?;
    let mut reply_counts = Vec::with_capacity(p);
    let mut at = 0;
    for c in asked_counts {
        reply_counts.push(asked[at..at + c].iter().map(|&k| LEN_BYTES + key(k).len()).sum());
        at += c;
    }
    drop(asked);
    let (got, _) = comm.alltoallv(&reply, &reply_counts)?;
    drop(reply);
    let got = decode(&got, me, "the requested vertex ids")?;
    let mut out = ByteKeys::with_capacity(numbers.len(), got.byte_len(), me, "the requested vertex ids")?;
    for s in slot {
        out.push(got.get(s));
    }
    Ok(out)
}

/// The numbers of `keys` (this process's list), each with its byte `tags[i]`, delivered
/// as `number << 8 | tag` to the process `to(number)` rather than back to the asker (a
/// vertex's mark goes to the owner of its block): a key goes to its dictionary owner
/// (`4 + len + 1` bytes), who looks it up and forwards the word (8 bytes). Returns the
/// words this process received, in no particular order. A key that is no vertex is the
/// error `missing(key)` of the lowest process that meets one, on every process.
/// Collective: two irregular exchanges and an error agreement.
pub(crate) fn forward_numbers_of(
    comm: &mut Comm<'_>,
    dict: &KeyDictionary,
    keys: &ByteKeys,
    tags: &[u8],
    to: impl Fn(u32) -> usize,
    missing: impl Fn(&[u8]) -> DistError,
) -> DistResult<Vec<u64>> {
    let (p, me) = (comm.p, comm.me);
    debug_assert_eq!(keys.len(), tags.len());
    let asked = comm.agree((|| {
        let mut owners = try_zeroed::<u32>(keys.len(), me, "the owners of the looked-up vertex ids")?;
        let mut counts = vec![0usize; p];
        for (o, key) in owners.iter_mut().zip(keys.iter()) {
            let q = dict.owner_of_key(key);
            *o = q as u32;
            counts[q] += LEN_BYTES + key.len() + 1;
        }
        let mut at: Vec<usize> = counts.iter().scan(0, |s, &c| Some(std::mem::replace(s, *s + c))).collect();
        let total = at[p - 1] + counts[p - 1];
        let mut send = try_zeroed::<u8>(total, me, "the looked-up vertex ids")?;
        for ((key, &q), &tag) in keys.iter().zip(&owners).zip(tags) {
            let a = &mut at[q as usize];
            send[*a..*a + LEN_BYTES].copy_from_slice(&(key.len() as u32).to_le_bytes());
            send[*a + LEN_BYTES..*a + LEN_BYTES + key.len()].copy_from_slice(key);
            send[*a + LEN_BYTES + key.len()] = tag;
            *a += LEN_BYTES + key.len() + 1;
        }
        Ok((send, counts))
    })())?;
    let (recv, _) = comm.alltoallv(&asked.0, &asked.1)?;
    drop(asked);
    let forward = comm.agree((|| {
        // Each frame: the key and its tag, then its number's destination.
        let mut found = Vec::new();
        let mut at = 0;
        while at < recv.len() {
            let len = u32::from_le_bytes(recv[at..at + LEN_BYTES].try_into().expect("4 bytes")) as usize;
            let key = &recv[at + LEN_BYTES..at + LEN_BYTES + len];
            let tag = recv[at + LEN_BYTES + len];
            at += LEN_BYTES + len + 1;
            let k = dict.keys.search(key).map_err(|_| missing(key))? as u64 + dict.first();
            found.try_reserve(1).map_err(|_| oom(bytes::<u64>(2 * found.len() + 1), me, "the numbers of the looked-up vertex ids"))?;
            found.push(k << 8 | tag as u64);
        }
        let mut counts = vec![0usize; p];
        for w in &found {
            counts[to((w >> 8) as u32)] += 1;
        }
        let mut next: Vec<usize> = counts.iter().scan(0, |s, &c| Some(std::mem::replace(s, *s + c))).collect();
        let mut send = try_zeroed::<u64>(found.len(), me, "the numbers of the looked-up vertex ids")?;
        for &w in &found {
            let q = to((w >> 8) as u32);
            send[next[q]] = w;
            next[q] += 1;
        }
        Ok((send, counts))
    })())?;
    drop(recv);
    let (got, _) = comm.alltoallv(&forward.0, &forward.1)?;
    Ok(got)
}

/// `keys` for the wire, each as its length (`u32`, little-endian) and its bytes, in
/// one buffer sized before it is claimed. The lengths were checked to fit.
fn encode<'a>(keys: impl Iterator<Item = &'a [u8]> + Clone, me: usize, what: &str) -> DistResult<Vec<u8>> {
    let size = keys.clone().try_fold(0usize, |s, k| s.checked_add(LEN_BYTES + k.len())).ok_or_else(|| oom(usize::MAX, me, what))?;
    let mut out = Vec::new();
    out.try_reserve_exact(size).map_err(|_| oom(size, me, what))?;
    for k in keys {
        out.extend_from_slice(&u32::try_from(k.len()).expect("id lengths are checked on input").to_le_bytes());
        out.extend_from_slice(k);
    }
    Ok(out)
}

/// The keys of an [`encode`]d buffer.
fn frames(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let len = u32::from_le_bytes(buf.get(at..at + LEN_BYTES)?.try_into().expect("4 bytes")) as usize;
        let key = &buf[at + LEN_BYTES..at + LEN_BYTES + len];
        at += LEN_BYTES + len;
        Some(key)
    })
}

fn decode(buf: &[u8], me: usize, what: &str) -> DistResult<ByteKeys> {
    let count = frames(buf).count();
    let mut keys = ByteKeys::with_capacity(count, buf.len() - LEN_BYTES * count, me, what)?;
    for k in frames(buf) {
        keys.push(k);
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::on_processes;
    use crate::prng::Xoshiro256;
    use std::collections::{BTreeMap, BTreeSet};

    type Parts = Vec<Vec<Vec<u8>>>;

    fn byte_keys(keys: &[Vec<u8>]) -> ByteKeys {
        let mut k = ByteKeys::new();
        for key in keys {
            k.push(key);
        }
        k
    }

    fn owned(keys: &ByteKeys) -> Vec<Vec<u8>> {
        keys.iter().map(<[u8]>::to_vec).collect()
    }

    /// Distinct ids: the empty one, non-UTF-8 bytes, prefixes of others, a 64 KiB one and
    /// its first KiB, and short random ones over an alphabet of edge bytes.
    fn pool(rng: &mut Xoshiro256, distinct: usize) -> Vec<Vec<u8>> {
        let long: Vec<u8> = (0..64 * 1024).map(|_| rng.below(256) as u8).collect();
        let mut keys = vec![vec![], vec![0], vec![0, 0], vec![0xff], vec![0xff, 0], b"a".to_vec(), b"ab".to_vec(), b"abc".to_vec(), long[..1024].to_vec(), long];
        let alphabet = [0x00, 0x01, b'a', b'b', 0x7f, 0x80, 0xfe, 0xff];
        while keys.len() < distinct {
            let len = rng.below(10) as usize;
            keys.push((0..len).map(|_| alphabet[rng.below(8) as usize]).collect());
        }
        keys
    }

    /// `draws` ids of `pool` (so many duplicates), each on a random one of `p` processes.
    fn spread(rng: &mut Xoshiro256, pool: &[Vec<u8>], draws: usize, p: usize) -> Parts {
        let mut parts = vec![Vec::new(); p];
        for _ in 0..draws {
            let key = pool[rng.below(pool.len() as u64) as usize].clone();
            parts[rng.below(p as u64) as usize].push(key);
        }
        parts
    }

    /// Numbers `ends` and `extra` (one part per process) and checks against a sequential
    /// numbering of their union: every endpoint's number, the dictionary's parts, `keys_of`
    /// of every number (from every process, in another order each, some twice), and
    /// `number_of` of every vertex and of ids that are none. Returns the numbers of the
    /// processes' `ends` and the largest part of the dictionary.
    fn check(ends: &Parts, extra: &Parts) -> (Vec<Vec<u32>>, usize) {
        let p = ends.len();
        let union: BTreeSet<&[u8]> = ends.iter().chain(extra).flatten().map(Vec::as_slice).collect();
        let sorted: Vec<&[u8]> = union.iter().copied().collect();
        let n = sorted.len();
        let mut absent: Vec<Vec<u8>> = vec![b"no such id".to_vec(), vec![0xff; 9], vec![]];
        absent.extend(sorted.iter().step_by(7).map(|k| [*k, &[0u8][..]].concat()));
        absent.extend(sorted.iter().filter(|k| !k.is_empty()).take(5).map(|k| k[..k.len() - 1].to_vec()));
        absent.retain(|k| !union.contains(k.as_slice()));
        let probes: Vec<&[u8]> = sorted.iter().copied().chain(absent.iter().map(Vec::as_slice)).collect();
        let outs = on_processes(p, |comm| {
            let me = comm.me;
            let Numbered { dict, ends: numbers, extra: extra_numbers } = number_byte_keys(comm, &byte_keys(&ends[me]), &byte_keys(&extra[me]))?;
            let asked: Vec<u32> = (0..n + n / 2).map(|i| ((i + me * n / p) % n) as u32).collect();
            let looked_up = keys_of(comm, &dict, &asked)?;
            let mut found = Vec::with_capacity(probes.len());
            for k in &probes {
                found.push(number_of(comm, &dict, k)?);
            }
            Ok((dict.n, dict.first(), owned(&dict.keys), (numbers, extra_numbers), asked, owned(&looked_up), found))
        });
        let mut all_numbers = Vec::new();
        let mut largest = 0;
        for (me, out) in outs.into_iter().enumerate() {
            let (dn, first, keys, (numbers, extra_numbers), asked, looked_up, found) = out.unwrap_or_else(|e| panic!("process {me}: {e}"));
            assert_eq!(dn, n as u64, "process {me}: vertex count");
            let first = first as usize;
            assert!(keys.iter().map(Vec::as_slice).eq(sorted[first..first + keys.len()].iter().copied()), "process {me}: dictionary part");
            largest = largest.max(keys.len());
            let expected: Vec<u32> = ends[me].iter().map(|k| sorted.binary_search(&k.as_slice()).unwrap() as u32).collect();
            assert_eq!(numbers, expected, "process {me}: numbers of the endpoints");
            let expected: Vec<u32> = extra[me].iter().map(|k| sorted.binary_search(&k.as_slice()).unwrap() as u32).collect();
            assert_eq!(extra_numbers, expected, "process {me}: numbers of the vertex ids");
            assert_eq!(looked_up.len(), asked.len());
            for (k, key) in asked.iter().zip(&looked_up) {
                assert_eq!(key.as_slice(), sorted[*k as usize], "process {me}: keys_of({k})");
            }
            for (i, (probe, got)) in probes.iter().zip(&found).enumerate() {
                let want = (i < n).then_some(i as u32);
                assert_eq!(*got, want, "process {me}: number_of({:?})", &probe[..probe.len().min(16)]);
            }
            all_numbers.push(numbers);
        }
        (all_numbers, largest)
    }

    #[test]
    fn random_ids_are_numbered_in_byte_order() {
        for p in 1..=4 {
            let mut rng = Xoshiro256::new(0x6b65_7973 + p as u64);
            let pool = pool(&mut rng, 300);
            let ends = spread(&mut rng, &pool, 2000, p);
            let mut extra = spread(&mut rng, &pool, 40, p);
            // Vertices without edges: ids no endpoint names, one of them beyond all others.
            extra[p / 2].push(b"\xff\xff\xff only a vertex".to_vec());
            extra[p - 1].push(b"b only a vertex".to_vec());
            check(&ends, &extra);
        }
    }

    #[test]
    fn ids_all_on_one_process() {
        for p in 1..=4 {
            for holder in [0, p - 1] {
                let mut rng = Xoshiro256::new(0x006f_6e65 + (p * 10 + holder) as u64);
                let pool = pool(&mut rng, 1500);
                let mut ends = vec![Vec::new(); p];
                ends[holder] = spread(&mut rng, &pool, 4000, 1).remove(0);
                let mut extra = vec![Vec::new(); p];
                extra[holder] = spread(&mut rng, &pool, 20, 1).remove(0);
                let (_, largest) = check(&ends, &extra);
                // The splitters come from the holder's sample alone and still balance.
                let n = ends.iter().chain(&extra).flatten().collect::<BTreeSet<_>>().len();
                assert!(largest <= 3 * n / (2 * p) + 1, "p {p}: an owner holds {largest} of {n} ids");
            }
        }
    }

    #[test]
    fn ids_all_equal() {
        for p in 1..=4 {
            let ends = vec![vec![b"same".to_vec(); 100]; p];
            let (numbers, _) = check(&ends, &vec![Vec::new(); p]);
            assert!(numbers.iter().flatten().all(|&k| k == 0));
        }
    }

    #[test]
    fn no_ids_anywhere() {
        for p in 1..=4 {
            check(&vec![Vec::new(); p], &vec![Vec::new(); p]);
        }
    }

    #[test]
    fn vertices_only_in_extra() {
        for p in 1..=4 {
            let mut extra = vec![Vec::new(); p];
            extra[p - 1] = vec![b"x".to_vec(), b"".to_vec(), b"x".to_vec()];
            check(&vec![Vec::new(); p], &extra);
        }
    }

    /// The numbering of the same ids is the same however they are spread: an id's number,
    /// the vertex count and the dictionary (concatenated in process order).
    #[test]
    fn numbering_does_not_depend_on_the_partition() {
        for p in [3, 4] {
            let mut rng = Xoshiro256::new(0x7061_7274 + p as u64);
            let pool = pool(&mut rng, 200);
            let draws: Vec<Vec<u8>> = spread(&mut rng, &pool, 1500, 1).remove(0);
            let round_robin = (0..p).map(|q| draws.iter().skip(q).step_by(p).cloned().collect()).collect();
            let mut on_last = vec![Vec::new(); p];
            on_last[p - 1] = draws.clone();
            let mut random = vec![Vec::new(); p];
            for key in &draws {
                random[rng.below(p as u64) as usize].push(key.clone());
            }
            let mut seen = None;
            for ends in [round_robin, on_last, random] {
                let outs = on_processes(p, |comm| {
                    let Numbered { dict, ends: numbers, .. } = number_byte_keys(comm, &byte_keys(&ends[comm.me]), &ByteKeys::new())?;
                    Ok((dict.n, owned(&dict.keys), numbers))
                });
                let mut number = BTreeMap::new();
                let mut dictionary = Vec::new();
                let mut counts = BTreeSet::new();
                for (me, out) in outs.into_iter().enumerate() {
                    let (n, keys, numbers) = out.unwrap();
                    counts.insert(n);
                    dictionary.extend(keys);
                    for (key, k) in ends[me].iter().zip(numbers) {
                        assert_eq!(*number.entry(key.clone()).or_insert(k), k, "one id, two numbers");
                    }
                }
                let this = (counts, number, dictionary);
                assert_eq!(this.0.len(), 1, "processes disagree on the vertex count");
                match &seen {
                    None => seen = Some(this),
                    Some(first) => assert!(*first == this, "p {p}: another partition, another numbering"),
                }
            }
        }
    }

    /// Every process gets the same outcome; returns it.
    fn agreed<T: PartialEq + std::fmt::Debug>(outs: Vec<DistResult<T>>) -> DistResult<T> {
        let mut outs = outs.into_iter();
        let first = outs.next().unwrap();
        for (q, other) in outs.enumerate() {
            assert_eq!(other, first, "process {} and process 0 differ", q + 1);
        }
        first
    }

    fn number_limited(p: usize, ends: &Parts, extra: &Parts, limits: Limits) -> DistResult<u64> {
        agreed(on_processes(p, |comm| {
            number_within(comm, &byte_keys(&ends[comm.me]), &byte_keys(&extra[comm.me]), limits).map(|r| r.dict.n)
        }))
    }

    #[test]
    fn an_id_too_long_is_an_error_on_every_process() {
        let limits = Limits { key_bytes: 100, vertices: MAX_N };
        let ends = vec![vec![vec![7u8; 100]], vec![b"a".to_vec()], vec![]];
        let mut extra = vec![Vec::new(); 3];
        assert_eq!(number_limited(3, &ends, &extra, limits), Ok(2));
        extra[1] = vec![b"b".to_vec(), vec![7u8; 101]];
        let e = number_limited(3, &ends, &extra, limits).unwrap_err();
        assert_eq!(e.to_string(), "vertex id 1 of process 1 is an id of 101 bytes; ids of at most 100 bytes are supported (32-bit lengths)");
    }

    #[test]
    fn too_many_vertices_is_an_error_on_every_process() {
        let limits = Limits { key_bytes: 100, vertices: 5 };
        let ids = |r: std::ops::Range<u8>| r.map(|b| vec![b]).collect::<Vec<_>>();
        let none = vec![Vec::new(); 3];
        // Five vertices fit, spread or on one process.
        assert_eq!(number_limited(3, &vec![ids(0..2), ids(1..4), ids(4..5)], &none, limits), Ok(5));
        assert_eq!(number_limited(3, &vec![vec![], vec![], ids(0..5)], &none, limits), Ok(5));
        // Six do not: no process alone sees them all...
        // (the count is known from the owners' counts; the error is the production one,
        // naming the real limit).
        assert_eq!(number_limited(3, &vec![ids(0..2), ids(2..4), ids(4..6)], &none, limits), Err(too_many(6)));
        // ... or one holds them all (and its table stops at the limit).
        let e = number_limited(3, &none, &vec![vec![], ids(0..6), vec![]], limits).unwrap_err();
        assert_eq!(e.to_string(), "the graph has more than 5 vertices (process 1 alone holds more distinct ids); at most 5 are supported (32-bit vertex ids)");
    }

    #[test]
    fn keys_of_a_number_beyond_the_vertices_is_an_error_on_every_process() {
        let ends = [vec![b"x".to_vec(), b"y".to_vec()], vec![b"z".to_vec()]];
        let e = agreed(on_processes(2, |comm| {
            let dict = number_byte_keys(comm, &byte_keys(&ends[comm.me]), &ByteKeys::new())?.dict;
            let asked: Vec<u32> = if comm.me == 1 { vec![2, 3] } else { vec![0] };
            keys_of(comm, &dict, &asked).map(|k| owned(&k))
        }))
        .unwrap_err();
        assert_eq!(e.to_string(), "vertex number 3 (entry 1 on process 1) is not below the vertex count 3");
    }

    #[test]
    fn byte_keys_store_search_and_cross_the_wire() {
        let keys: Vec<Vec<u8>> = vec![vec![], vec![0], b"a".to_vec(), b"ab".to_vec(), vec![0xff; 3]];
        let mut k = ByteKeys::new();
        assert!(k.is_empty());
        for key in &keys[..2] {
            k.push(key);
        }
        for key in &keys[2..] {
            k.try_push(key, 0, "test keys").unwrap();
        }
        assert_eq!(k.len(), 5);
        assert_eq!(k.byte_len(), 7);
        assert_eq!(owned(&k), keys);
        assert_eq!(k.search(b"ab"), Ok(3));
        assert_eq!(k.search(b""), Ok(0));
        assert_eq!(k.search(b"aa"), Err(3));
        assert_eq!(k.search(&[0xff; 4]), Err(5));
        let wire = encode(k.iter(), 0, "test keys").unwrap();
        assert_eq!(wire.len(), 5 * LEN_BYTES + 7);
        assert_eq!(decode(&wire, 0, "test keys").unwrap(), k);
        assert_ne!(hash_bytes(b"abcdefgh"), hash_bytes(b"abcdefgh\0"));
    }
}
