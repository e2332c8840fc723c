//! The message queue: the puts and gets a process issued in the current superstep.
//!
//! Requests are appended in call order; at the fence an engine asks for them grouped by
//! peer (a counting sort, O(h + p)), which is what both the shared-memory engine (each
//! destination reads its own group) and the network engines (one stream per peer) need.

use crate::error::{Error, Result};
use crate::types::{Memslot, Pid};

/// One put or get, its local side already resolved to a pointer.
#[derive(Clone, Copy, Debug)]
pub enum Request {
    /// Copy `size` bytes from local `src` to `dst_slot` + `dst_offset` at `dst_pid`.
    Put { src: *const u8, dst_pid: Pid, dst_slot: Memslot, dst_offset: usize, size: usize },
    /// Copy `size` bytes from `src_slot` + `src_offset` at `src_pid` to local `dst`.
    Get { src_pid: Pid, src_slot: Memslot, src_offset: usize, dst: *mut u8, size: usize },
}

impl Request {
    /// The remote process of this request.
    pub fn peer(&self) -> Pid {
        match *self {
            Request::Put { dst_pid, .. } => dst_pid,
            Request::Get { src_pid, .. } => src_pid,
        }
    }
}

#[derive(Default)]
pub struct MessageQueue {
    requests: Vec<Request>,
    by_peer: Vec<Request>,
    /// `by_peer[offsets[q]..offsets[q + 1]]` are the requests whose peer is q.
    offsets: Vec<usize>,
    /// Scratch for the counting sort, kept to avoid an allocation per sync.
    cursor: Vec<usize>,
    capacity: usize,
    requested: Option<usize>,
}

// SAFETY: the pointers are into registered user memory; the queue never dereferences
// them itself, the engine does so under the registration's guarantees.
unsafe impl Send for MessageQueue {}

impl MessageQueue {
    /// `resize_message_queue`: reserves memory now, takes effect at the next sync.
    pub fn request_capacity(&mut self, max_msgs: usize) -> Result<()> {
        let oom = || Error::out_of_memory(format!("cannot reserve a message queue of {max_msgs} messages"));
        let more = max_msgs.saturating_sub(self.requests.len());
        self.requests.try_reserve(more).map_err(|_| oom())?;
        self.by_peer.try_reserve(max_msgs.saturating_sub(self.by_peer.len())).map_err(|_| oom())?;
        self.requested = Some(max_msgs);
        Ok(())
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.requests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    pub fn push(&mut self, r: Request) -> Result<()> {
        if self.requests.len() >= self.capacity {
            return Err(Error::out_of_memory(format!(
                "message queue full: {} messages reserved (call resize_message_queue, then sync)",
                self.capacity
            )));
        }
        self.requests.push(r);
        Ok(())
    }

    /// The requests in call order.
    pub fn requests(&self) -> &[Request] {
        &self.requests
    }

    /// Groups the requests by peer (stable), for [`MessageQueue::to_peer`].
    pub fn group_by_peer(&mut self, nprocs: Pid) {
        self.by_peer.clear();
        if self.requests.is_empty() {
            // `to_peer` answers an empty queue without the offsets.
            return;
        }
        let p = nprocs as usize;
        self.offsets.clear();
        self.offsets.resize(p + 1, 0);
        let mut sorted = true;
        let mut last = 0;
        for r in &self.requests {
            let q = r.peer();
            sorted &= q >= last;
            last = q;
            self.offsets[q as usize + 1] += 1;
        }
        for q in 0..p {
            self.offsets[q + 1] += self.offsets[q];
        }
        if sorted {
            // Issued in peer order already (e.g. all to one peer): `requests` is
            // grouped as it stands; `by_peer` stays empty.
            return;
        }
        // by_peer has at least the reserved capacity, so this never reallocates.
        self.by_peer.resize(self.requests.len(), Request::Put {
            src: std::ptr::null(),
            dst_pid: 0,
            dst_slot: Memslot::INVALID,
            dst_offset: 0,
            size: 0,
        });
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.offsets[..p]);
        for r in &self.requests {
            let q = r.peer() as usize;
            self.by_peer[self.cursor[q]] = *r;
            self.cursor[q] += 1;
        }
    }

    /// The requests whose peer is `q`, in call order (after [`MessageQueue::group_by_peer`]).
    pub fn to_peer(&self, q: Pid) -> &[Request] {
        if self.requests.is_empty() {
            return &[];
        }
        let q = q as usize;
        let grouped = if self.by_peer.is_empty() { &self.requests } else { &self.by_peer };
        &grouped[self.offsets[q]..self.offsets[q + 1]]
    }

    /// Applies what the superstep that just ended decided and empties the queue.
    pub fn on_sync(&mut self) {
        self.requests.clear();
        self.by_peer.clear();
        if let Some(c) = self.requested.take() {
            self.capacity = c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put_to(q: Pid, tag: usize) -> Request {
        Request::Put { src: std::ptr::null(), dst_pid: q, dst_slot: Memslot::INVALID, dst_offset: tag, size: 0 }
    }

    fn grouped(queue: &MessageQueue, p: Pid) -> Vec<Vec<(Pid, usize)>> {
        let key = |r: &Request| match *r {
            Request::Put { dst_pid, dst_offset, .. } => (dst_pid, dst_offset),
            Request::Get { src_pid, src_offset, .. } => (src_pid, src_offset),
        };
        (0..p).map(|q| queue.to_peer(q).iter().map(key).collect()).collect()
    }

    #[test]
    fn groups_by_peer_in_call_order() {
        let mut queue = MessageQueue::default();
        queue.request_capacity(8).unwrap();
        queue.on_sync();
        // Out of peer order (the counting sort), then in order (used as it stands),
        // then empty, each after a sync with requests to other peers.
        let rounds: [&[Pid]; 4] = [&[2, 0, 2, 1, 0], &[0, 0, 1, 3], &[], &[3, 3]];
        for peers in rounds {
            for (tag, &q) in peers.iter().enumerate() {
                queue.push(put_to(q, tag)).unwrap();
            }
            queue.group_by_peer(4);
            let expected: Vec<Vec<(Pid, usize)>> = (0..4)
                .map(|q| peers.iter().enumerate().filter(|&(_, &d)| d == q).map(|(t, &d)| (d, t)).collect())
                .collect();
            assert_eq!(grouped(&queue, 4), expected, "peers {peers:?}");
            queue.on_sync();
        }
    }
}
