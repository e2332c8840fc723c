//! Vertex marks (GraphFrames' BFS: which vertices a path may start from, which it may
//! end at) and the check that the vertex ids a caller lists are distinct.
//!
//! Both need each listed id's vertex number at the owner of its block (even blocks of
//! the numbers, [`super::build::even_owner`]): the sender of an id learns its number
//! from the numbering itself (integral ids: the labels every process holds; byte
//! strings: the numbers come back from the dictionary with the edges' ones), and sends
//! one word, `number << 8 | mark`, to the block's owner, who ORs the marks of each
//! vertex and sees an id listed twice — on one process or on two — as a number that
//! arrives twice. A look-up in a loaded graph (a kept graph's marks) goes the same way,
//! byte strings through their dictionary owner ([`super::keys::forward_numbers_of`]).
//! Only marked ids travel unless distinct ids are asked for: one exchange of 8 bytes per
//! id, no reply.

use super::build::{even_owner, even_start};
use super::comm::{try_zeroed, Comm};
use super::DistResult;

/// Mark bits: a path may start at the vertex; a path may end at it.
pub const FROM: u8 = 1;
pub const TO: u8 = 2;

/// Set on a vertex of the block once one of its ids has arrived (never a mark).
const LISTED: u8 = 0x80;

/// The marks of this process's block of vertices of a loaded graph, for one call (a
/// kept graph keeps no marks: each call brings its own).
#[derive(Clone, Debug, PartialEq)]
pub struct VertexMarks {
    /// The graph's vertex count and this block's first vertex (what the marks were made
    /// for).
    pub(crate) n: usize,
    pub(crate) lo: usize,
    /// `block[k]`: the marks of vertex `lo + k`, OR-ed over every time it was listed.
    pub(crate) block: Vec<u8>,
}

impl VertexMarks {
    /// Vertices of this block marked with `bit` ([`FROM`] or [`TO`]).
    pub fn count(&self, bit: u8) -> usize {
        self.block.iter().filter(|&&m| m & bit != 0).count()
    }
}

/// Sends each listed vertex (`numbers[i]`, with `marks[i]`) to the owner of its block:
/// only the marked ones, or all when `all` (distinct ids asked for). Returns the words
/// this process received. Collective.
pub(crate) fn send_to_owners(comm: &mut Comm<'_>, n: usize, numbers: &[u32], marks: Option<&[u8]>, all: bool) -> DistResult<Vec<u64>> {
    let (p, me) = (comm.p, comm.me);
    let mark = |i: usize| marks.map_or(0, |m| m[i]);
    let send = comm.agree((|| {
        let wanted = |i: usize| all || mark(i) != 0;
        let mut counts = vec![0usize; p];
        for (i, &k) in numbers.iter().enumerate() {
            if wanted(i) {
                counts[even_owner(k as usize, n, p)] += 1;
            }
        }
        let mut next: Vec<usize> = counts.iter().scan(0, |s, &c| Some(std::mem::replace(s, *s + c))).collect();
        let mut send = try_zeroed::<u64>(counts.iter().sum(), me, "the listed vertices sent to their owners")?;
        for (i, &k) in numbers.iter().enumerate() {
            if wanted(i) {
                let q = even_owner(k as usize, n, p);
                send[next[q]] = (k as u64) << 8 | mark(i) as u64;
                next[q] += 1;
            }
        }
        Ok((send, counts))
    })())?;
    Ok(comm.alltoallv(&send.0, &send.1)?.0)
}

/// The block's marks from the words it received, and the smallest vertex number that
/// arrived twice (an id listed more than once), if one did.
pub(crate) fn gather(comm: &Comm<'_>, n: usize, received: &[u64]) -> DistResult<(VertexMarks, Option<u32>)> {
    let (p, me) = (comm.p, comm.me);
    let lo = even_start(me, n, p);
    let mut block = try_zeroed::<u8>(even_start(me + 1, n, p) - lo, me, "the marks of the block's vertices")?;
    let mut twice: Option<u32> = None;
    for &w in received {
        let k = (w >> 8) as usize;
        let b = &mut block[k - lo];
        if *b & LISTED != 0 {
            twice = Some(twice.map_or(k as u32, |t| t.min(k as u32)));
        }
        *b |= LISTED | (w as u8 & (FROM | TO));
    }
    for b in &mut block {
        *b &= !LISTED;
    }
    Ok((VertexMarks { n, lo, block }, twice))
}
