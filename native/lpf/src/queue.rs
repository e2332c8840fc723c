//! The message queue: the puts and gets a process issued in the current superstep.
//!
//! Requests are appended in call order; at the fence an engine asks for them grouped by
//! peer (a counting sort, O(h + p)), which is what both the shared-memory engine (each
//! destination reads its own group) and the network engines (one stream per peer) need.

use crate::error::{Error, Result};
use crate::register::reserve_total;
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

pub struct MessageQueue {
    requests: Vec<Request>,
    /// Whether the requests were issued in peer order (all to one peer, or a sweep over
    /// the peers, as most BSP codes issue them): then `requests` is its own grouping.
    in_peer_order: bool,
    last_peer: Pid,
    /// The requests grouped by peer, when they were not issued in peer order.
    by_peer: Vec<Request>,
    /// Scratch for the counting sort, kept to avoid an allocation per sync.
    cursor: Vec<usize>,
    capacity: usize,
    requested: Option<usize>,
}

impl Default for MessageQueue {
    fn default() -> Self {
        MessageQueue {
            requests: Vec::new(),
            in_peer_order: true,
            last_peer: 0,
            by_peer: Vec::new(),
            cursor: Vec::new(),
            capacity: 0,
            requested: None,
        }
    }
}

// SAFETY: the pointers are into registered user memory; the queue never dereferences
// them itself, the engine does so under the registration's guarantees.
unsafe impl Send for MessageQueue {}

impl MessageQueue {
    /// `resize_message_queue`: reserves memory now, takes effect at the next sync.
    pub fn request_capacity(&mut self, max_msgs: usize) -> Result<()> {
        let oom = |_| Error::out_of_memory(format!("cannot reserve a message queue of {max_msgs} messages"));
        reserve_total(&mut self.requests, max_msgs).and_then(|()| reserve_total(&mut self.by_peer, max_msgs)).map_err(oom)?;
        self.requested = Some(max_msgs);
        Ok(())
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn push(&mut self, r: Request) -> Result<()> {
        if self.requests.len() >= self.capacity {
            return Err(Error::out_of_memory(format!(
                "message queue full: {} messages reserved (call resize_message_queue, then sync)",
                self.capacity
            )));
        }
        let q = r.peer();
        self.in_peer_order &= q >= self.last_peer;
        self.last_peer = q;
        self.requests.push(r);
        Ok(())
    }

    /// The requests in call order.
    pub fn requests(&self) -> &[Request] {
        &self.requests
    }

    /// Groups the requests by peer (stable), for [`MessageQueue::grouped`] and
    /// [`MessageQueue::to_peer`]: nothing to do when they were issued in peer order,
    /// else a counting sort, O(h + p).
    pub fn group_by_peer(&mut self, nprocs: Pid) {
        self.by_peer.clear();
        if self.in_peer_order {
            return;
        }
        let p = nprocs as usize;
        // cursor[q]: where the next request to peer q goes.
        self.cursor.clear();
        self.cursor.resize(p + 1, 0);
        for r in &self.requests {
            self.cursor[r.peer() as usize + 1] += 1;
        }
        for q in 0..p {
            self.cursor[q + 1] += self.cursor[q];
        }
        // by_peer has at least the reserved capacity, so this never reallocates.
        self.by_peer.resize(self.requests.len(), Request::Put {
            src: std::ptr::null(),
            dst_pid: 0,
            dst_slot: Memslot::INVALID,
            dst_offset: 0,
            size: 0,
        });
        for r in &self.requests {
            let q = r.peer() as usize;
            self.by_peer[self.cursor[q]] = *r;
            self.cursor[q] += 1;
        }
    }

    /// The requests in peer order, those of one peer in call order (after
    /// [`MessageQueue::group_by_peer`]).
    pub fn grouped(&self) -> &[Request] {
        if self.in_peer_order {
            &self.requests
        } else {
            debug_assert_eq!(self.by_peer.len(), self.requests.len(), "group_by_peer first");
            &self.by_peer
        }
    }

    /// The requests whose peer is `q`, in call order (after [`MessageQueue::group_by_peer`]).
    pub fn to_peer(&self, q: Pid) -> &[Request] {
        let grouped = self.grouped();
        let start = grouped.partition_point(|r| r.peer() < q);
        let len = grouped[start..].partition_point(|r| r.peer() == q);
        &grouped[start..start + len]
    }

    /// Applies what the superstep that just ended decided and empties the queue.
    pub fn on_sync(&mut self) {
        self.requests.clear();
        self.by_peer.clear();
        self.in_peer_order = true;
        self.last_peer = 0;
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
            let flat: Vec<(Pid, usize)> = expected.concat();
            let key = |r: &Request| (r.peer(), match *r { Request::Put { dst_offset, .. } => dst_offset, _ => usize::MAX });
            assert_eq!(queue.grouped().iter().map(key).collect::<Vec<_>>(), flat, "peers {peers:?}");
            queue.on_sync();
        }
    }
}
