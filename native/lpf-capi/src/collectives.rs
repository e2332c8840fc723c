//! `lpf/collectives.h`: the collectives interface of the LPF higher-level libraries,
//! over the core primitives of this library.
//!
//! An `lpf_coll_t` is a plain C struct (its layout is part of the published ABI): the
//! context, the pid maps of a strided group, a scratch buffer of
//! `P · max(max_elem_size, max_byte_size)` bytes and its global slot, the group size
//! `P` and this process's index `s` in it.
//!
//! * `lpf_collectives_init` (over the whole context) registers the scratch buffer and
//!   syncs, as the reference's does: slots the caller registered in the same
//!   superstep are usable by the collectives right after it.
//! * broadcast, gather, scatter, allgather, alltoall only *queue* puts or gets on the
//!   caller's slots (one superstep, h = (P-1)·size at the busiest process): they are
//!   complete when the caller's next `lpf_sync` returns, as published.
//! * reduce, allreduce, combine, allcombine copy every contribution into the scratch
//!   buffer of the root (or of everyone) and combine locally, which needs the data to
//!   have arrived: they call `lpf_sync` once themselves and are complete on return
//!   (which satisfies "complete after the next sync"; requests the caller queued
//!   before the call complete in that sync too). Every process combines the P
//!   contributions in group order, so allreduce/allcombine give bit-identical results
//!   everywhere even for operators that are not associative in floating point.
//!
//! The Rust collectives (`lpf::collectives`) work on Rust buffers they register
//! themselves and choose their algorithm by the cost model; the C interface is defined
//! on the caller's memory slots and scheduled requests, so it is implemented here on
//! the primitives directly, with the same one-superstep direct algorithms.

use super::{context, guarded, lpf_err_t, lpf_pid_t, lpf_t, lpf_memslot_t};
use lpf::{Error, Memslot, SYNC_DEFAULT};
use std::ffi::c_void;

pub type lpf_reducer_t = Option<unsafe extern "C" fn(usize, *const c_void, *mut c_void)>;
pub type lpf_combiner_t = Option<unsafe extern "C" fn(usize, *const c_void, *mut c_void)>;

/// The published `lpf_coll_t` (same fields, same order).
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub struct lpf_coll_t {
    pub ctx: lpf_t,
    pub inv_translate: *mut lpf_pid_t,
    pub translate: *mut lpf_pid_t,
    pub buffer: *mut c_void,
    pub slot: lpf_memslot_t,
    pub P: lpf_pid_t,
    pub s: lpf_pid_t,
}

// SAFETY: only the immutable LPF_INVALID_COLL constant is shared.
unsafe impl Sync for lpf_coll_t {}

#[no_mangle]
pub static LPF_INVALID_COLL: lpf_coll_t = lpf_coll_t {
    ctx: std::ptr::null_mut(),
    inv_translate: std::ptr::null_mut(),
    translate: std::ptr::null_mut(),
    buffer: std::ptr::null_mut(),
    slot: usize::MAX,
    P: 0,
    s: 0,
};

/// What lives behind `buffer`: its allocation, its size and the size limits given at
/// init (the buffer pointer handed to C is the start of `data`).
struct Scratch {
    data: Vec<u8>,
    max_elem: usize,
    max_bytes: usize,
    nprocs_ctx: lpf_pid_t,
}

/// The buffer allocation starts with a header holding the address of its `Scratch`;
/// `buffer` points just past it, so the record is found from the C struct alone.
const HEADER: usize = std::mem::size_of::<*mut Scratch>();

unsafe fn scratch<'a>(coll: &lpf_coll_t) -> lpf::Result<&'a mut Scratch> {
    if coll.buffer.is_null() || coll.ctx.is_null() || coll.P == 0 {
        return Err(Error::fatal("the lpf_coll_t is not initialised (LPF_INVALID_COLL or destroyed)"));
    }
    let p = *((coll.buffer as *mut u8).sub(HEADER) as *mut *mut Scratch);
    Ok(&mut *p)
}

/// The context pid of group member `k`.
unsafe fn member(coll: &lpf_coll_t, k: lpf_pid_t) -> lpf_pid_t {
    *coll.translate.add(k as usize)
}

unsafe fn check_root(coll: &lpf_coll_t, root: lpf_pid_t) -> lpf::Result<()> {
    if root >= coll.P {
        return Err(Error::fatal(format!("root {root} is not below the group size {}", coll.P)));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
unsafe fn init(ctx: lpf_t, s: lpf_pid_t, p: lpf_pid_t, members: Vec<lpf_pid_t>, max_elem: usize, max_bytes: usize, coll: *mut lpf_coll_t, what: &'static str) -> lpf::Result<()> {
    if coll.is_null() {
        return Err(Error::fatal("the lpf_coll_t out-pointer is NULL"));
    }
    let c = context(ctx, what)?;
    if p == 0 || p > c.nprocs() || s >= p {
        return Err(Error::fatal(format!("pid {s} of {p} processes does not fit the section of {} processes", c.nprocs())));
    }
    let group = members.len();
    let index = members.iter().position(|&m| m == s);
    let index = match index {
        Some(i) => i,
        None => return Err(Error::fatal(format!("process {s} is not a member of the group {members:?}"))),
    };
    let per = max_elem.max(max_bytes);
    let overflow = || Error::out_of_memory(format!("a buffer of {group} x {per} bytes (and its header) overflows the address space"));
    let bytes = per.checked_mul(group).ok_or_else(overflow)?;
    let allocation = bytes.checked_add(HEADER).ok_or_else(overflow)?;
    let mut data = Vec::new();
    data.try_reserve_exact(allocation).map_err(|_| Error::out_of_memory(format!("cannot allocate a {bytes}-byte buffer")))?;
    data.resize(allocation, 0);
    let mut sc = Box::new(Scratch { data, max_elem, max_bytes, nprocs_ctx: p });
    let base = sc.data.as_mut_ptr().add(HEADER);
    // Global registration is collective over the whole context: a strided group
    // smaller than the context cannot register (its non-members do not call this), so
    // it gets no scratch slot and no reductions (which also sync the whole context).
    let slot = if group == c.nprocs() as usize { c.register_global_raw(base, bytes)? } else { Memslot::INVALID };
    let mut inv = vec![lpf_pid_t::MAX; p as usize];
    for (k, &m) in members.iter().enumerate() {
        inv[m as usize] = k as lpf_pid_t;
    }
    let translate = Box::into_raw(members.into_boxed_slice()) as *mut lpf_pid_t;
    let inv_translate = Box::into_raw(inv.into_boxed_slice()) as *mut lpf_pid_t;
    let raw = Box::into_raw(sc);
    *(((*raw).data.as_mut_ptr()) as *mut *mut Scratch) = raw;
    *coll = lpf_coll_t { ctx, inv_translate, translate, buffer: base.cast(), slot: slot.to_raw(), P: group as lpf_pid_t, s: index as lpf_pid_t };
    // The init is collective over the context, as the reference's: a sync activates
    // the scratch slot, and with it every slot the caller registered (and executes
    // every request the caller queued) in this superstep, so collectives may use
    // those slots right after the init (the reference's tests and ALP rely on it).
    // A group without a slot is called by its members only and must not sync.
    if slot != Memslot::INVALID {
        c.sync(SYNC_DEFAULT)?;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn lpf_collectives_init(ctx: lpf_t, s: lpf_pid_t, p: lpf_pid_t, max_calls: usize, max_elem_size: usize, max_byte_size: usize, coll: *mut lpf_coll_t) -> lpf_err_t {
    let _ = max_calls;
    guarded("lpf_collectives_init", || init(ctx, s, p, (0..p).collect(), max_elem_size, max_byte_size, coll, "lpf_collectives_init"))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lpf_collectives_init_strided(
    ctx: lpf_t,
    s: lpf_pid_t,
    p: lpf_pid_t,
    lo: lpf_pid_t,
    hi: lpf_pid_t,
    str_: lpf_pid_t,
    max_calls: usize,
    max_elem_size: usize,
    max_byte_size: usize,
    coll: *mut lpf_coll_t,
) -> lpf_err_t {
    let _ = max_calls;
    let what = "lpf_collectives_init_strided";
    guarded(what, || {
        if str_ == 0 || lo > hi || hi > p {
            return Err(Error::fatal(format!("the range [{lo}, {hi}) with stride {str_} is not within 0..{p}")));
        }
        init(ctx, s, p, (lo..hi).step_by(str_ as usize).collect(), max_elem_size, max_byte_size, coll, what)
    })
}

#[no_mangle]
pub extern "C" fn lpf_collectives_get_context(coll: lpf_coll_t) -> lpf_t {
    coll.ctx
}

#[no_mangle]
pub unsafe extern "C" fn lpf_collectives_destroy(coll: lpf_coll_t) -> lpf_err_t {
    let what = "lpf_collectives_destroy";
    guarded(what, || {
        let sc = scratch(&coll)? as *mut Scratch;
        if coll.slot != usize::MAX {
            context(coll.ctx, what)?.deregister(Memslot::from_raw(coll.slot))?;
        }
        let p = (*sc).nprocs_ctx as usize;
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(coll.translate, coll.P as usize)));
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(coll.inv_translate, p)));
        drop(Box::from_raw(sc));
        Ok(())
    })
}

/// Runs one collective: checks the struct, then `body(ctx, coll)`.
unsafe fn run(what: &'static str, coll: &lpf_coll_t, body: impl FnOnce(&mut lpf::Context, &mut Scratch) -> lpf::Result<()>) -> lpf_err_t {
    guarded(what, || {
        let sc = scratch(coll)?;
        let c = context(coll.ctx, what)?;
        body(c, sc)
    })
}

fn slot(s: lpf_memslot_t) -> Memslot {
    Memslot::from_raw(s)
}

fn span(k: lpf_pid_t, size: usize) -> lpf::Result<usize> {
    (k as usize).checked_mul(size).ok_or_else(|| Error::fatal(format!("offset {k} x {size} overflows")))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_broadcast(coll: lpf_coll_t, src: lpf_memslot_t, dst: lpf_memslot_t, size: usize, root: lpf_pid_t) -> lpf_err_t {
    let what = "lpf_broadcast";
    run(what, &coll, |c, _| {
        check_root(&coll, root)?;
        if coll.s != root && size > 0 {
            c.get(member(&coll, root), slot(src), 0, slot(dst), 0, size, 0)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_gather(coll: lpf_coll_t, src: lpf_memslot_t, dst: lpf_memslot_t, size: usize, root: lpf_pid_t) -> lpf_err_t {
    let what = "lpf_gather";
    run(what, &coll, |c, _| {
        check_root(&coll, root)?;
        if coll.s != root && size > 0 {
            c.put(slot(src), 0, member(&coll, root), slot(dst), span(coll.s, size)?, size, 0)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_scatter(coll: lpf_coll_t, src: lpf_memslot_t, dst: lpf_memslot_t, size: usize, root: lpf_pid_t) -> lpf_err_t {
    let what = "lpf_scatter";
    run(what, &coll, |c, _| {
        check_root(&coll, root)?;
        if coll.s != root && size > 0 {
            c.get(member(&coll, root), slot(src), span(coll.s, size)?, slot(dst), 0, size, 0)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_allgather(coll: lpf_coll_t, src: lpf_memslot_t, dst: lpf_memslot_t, size: usize, exclude_myself: bool) -> lpf_err_t {
    let what = "lpf_allgather";
    run(what, &coll, |c, _| {
        if size == 0 {
            return Ok(());
        }
        let off = span(coll.s, size)?;
        for k in 0..coll.P {
            if k != coll.s || !exclude_myself {
                c.put(slot(src), 0, member(&coll, k), slot(dst), off, size, 0)?;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_alltoall(coll: lpf_coll_t, src: lpf_memslot_t, dst: lpf_memslot_t, size: usize) -> lpf_err_t {
    let what = "lpf_alltoall";
    run(what, &coll, |c, _| {
        if size == 0 {
            return Ok(());
        }
        let off = span(coll.s, size)?;
        for k in 0..coll.P {
            if k != coll.s {
                c.put(slot(src), span(k, size)?, member(&coll, k), slot(dst), off, size, 0)?;
            }
        }
        Ok(())
    })
}

/// The common part of the four reductions: every process's `n` bytes at `element`
/// (slot `element_slot`) land in block `s` of the scratch buffer of every target
/// (`root`, or everyone when `None`), one sync, then each target folds the P blocks
/// in group order into `element` with `fold(block_count, blocks, into)`.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_common(
    what: &'static str,
    coll: &lpf_coll_t,
    element: *mut c_void,
    element_slot: lpf_memslot_t,
    n: usize,
    limit: impl Fn(&Scratch) -> usize,
    root: Option<lpf_pid_t>,
    fold: &dyn Fn(*const u8, *mut c_void),
) -> lpf_err_t {
    run(what, coll, |c, sc| {
        if let Some(r) = root {
            check_root(coll, r)?;
        }
        if coll.slot == usize::MAX {
            return Err(Error::fatal(format!(
                "the group of {} processes is a strided subset of the {} processes of the context: reductions need all processes of the context (they sync it and use a global slot); use an lpf_coll_t from lpf_collectives_init",
                coll.P,
                c.nprocs()
            )));
        }
        if n > limit(sc) {
            return Err(Error::out_of_memory(format!("{n} bytes exceed the {} bytes this lpf_coll_t was initialised for", limit(sc))));
        }
        if n > 0 && element.is_null() {
            return Err(Error::fatal("the element pointer is NULL"));
        }
        let off = span(coll.s, n)?;
        if n > 0 {
            for k in 0..coll.P {
                if k != coll.s && root.is_none_or(|r| r == k) {
                    c.put(slot(element_slot), 0, member(coll, k), slot(coll.slot), off, n, 0)?;
                }
            }
        }
        c.sync(SYNC_DEFAULT)?;
        if n > 0 && root.is_none_or(|r| r == coll.s) {
            let buf = coll.buffer as *mut u8;
            std::ptr::copy_nonoverlapping(element as *const u8, buf.add(off), n);
            // Block 0 is the initial value; the others are folded into it in order.
            std::ptr::copy_nonoverlapping(buf, element as *mut u8, n);
            fold(buf.add(n), element);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_reduce(coll: lpf_coll_t, element: *mut c_void, element_slot: lpf_memslot_t, size: usize, reducer: lpf_reducer_t, root: lpf_pid_t) -> lpf_err_t {
    reduction("lpf_reduce", coll, element, element_slot, size, reducer, Some(root))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_allreduce(coll: lpf_coll_t, element: *mut c_void, element_slot: lpf_memslot_t, size: usize, reducer: lpf_reducer_t) -> lpf_err_t {
    reduction("lpf_allreduce", coll, element, element_slot, size, reducer, None)
}

unsafe fn reduction(what: &'static str, coll: lpf_coll_t, element: *mut c_void, element_slot: lpf_memslot_t, size: usize, reducer: lpf_reducer_t, root: Option<lpf_pid_t>) -> lpf_err_t {
    let Some(f) = reducer else {
        return guarded(what, || Err(Error::fatal("the reducer is NULL")));
    };
    let others = coll.P.saturating_sub(1) as usize;
    reduce_common(what, &coll, element, element_slot, size, |sc| sc.max_elem, root, &|rest, into| {
        if others > 0 {
            f(others, rest.cast(), into)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_combine(coll: lpf_coll_t, array: *mut c_void, slot: lpf_memslot_t, num: usize, size: usize, combiner: lpf_combiner_t, root: lpf_pid_t) -> lpf_err_t {
    combination("lpf_combine", coll, array, slot, num, size, combiner, Some(root))
}

#[no_mangle]
pub unsafe extern "C" fn lpf_allcombine(coll: lpf_coll_t, array: *mut c_void, slot: lpf_memslot_t, num: usize, size: usize, combiner: lpf_combiner_t) -> lpf_err_t {
    combination("lpf_allcombine", coll, array, slot, num, size, combiner, None)
}

#[allow(clippy::too_many_arguments)]
unsafe fn combination(what: &'static str, coll: lpf_coll_t, array: *mut c_void, slot: lpf_memslot_t, num: usize, size: usize, combiner: lpf_combiner_t, root: Option<lpf_pid_t>) -> lpf_err_t {
    let Some(f) = combiner else {
        return guarded(what, || Err(Error::fatal("the combiner is NULL")));
    };
    let Some(n) = num.checked_mul(size) else {
        return guarded(what, || Err(Error::fatal(format!("{num} elements of {size} bytes overflow"))));
    };
    let others = coll.P.saturating_sub(1) as usize;
    reduce_common(what, &coll, array, slot, n, |sc| sc.max_bytes, root, &|rest, into| {
        for k in 0..others {
            f(num, rest.add(k * n).cast(), into)
        }
    })
}
