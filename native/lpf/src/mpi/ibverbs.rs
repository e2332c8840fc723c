//! The `ibverbs` engine's transport (feature `ibverbs`): RDMA over InfiniBand / RoCE
//! through libibverbs (`rdma-sys`). Only the verbs calls live here; slot tables, key
//! exchange, conflict resolution, batching and completion accounting are the shared
//! one-sided engine's ([`crate::mpi::onesided`], tested through `mpirma`), and MPI
//! carries the bootstrap and the control messages.
//!
//! Per section: one protection domain and completion queue, one reliable-connected
//! queue pair per peer, connected by exchanging (LID, QP number, PSN, GID) over the
//! section's MPI communicator; a memory region per exposed global slot (its address and
//! rkey travel in the activation allgather) and, on demand, per local area used as a
//! put source or get destination. Writes are `RDMA_WRITE`, reads `RDMA_READ`, every
//! work request signalled, completions polled until the count posted is reached.
//!
//! Without a device, [`probe_device`] fails at init with a message naming what is
//! missing (`LPF_IBV_DEVICE` selects a device by name, default the first).

use crate::error::{Error, Result};
use super::ffi::{self, Comm};
use super::onesided::{grown, OneSided, Op, OpKind};
use rdma_sys::*;
use std::ffi::CStr;
use std::os::raw::c_int;

const PORT: u8 = 1;
const CQ_DEPTH: c_int = 4096;
const QP_DEPTH: u32 = 512;

/// Calls `f` with the RDMA devices present.
fn with_devices<R>(f: impl FnOnce(&[*mut ibv_device]) -> R) -> R {
    let mut n: c_int = 0;
    // SAFETY: returns an owned, NULL-terminated array of n devices (or NULL), freed
    // below, once, after `f` is done with it.
    unsafe {
        let list = ibv_get_device_list(&mut n);
        if list.is_null() {
            return f(&[]);
        }
        let r = f(std::slice::from_raw_parts(list, n.max(0) as usize));
        ibv_free_device_list(list);
        r
    }
}

fn device_name(d: *mut ibv_device) -> String {
    // SAFETY: a device of the list `with_devices` holds; the name is copied.
    unsafe { CStr::from_ptr(ibv_get_device_name(d)) }.to_string_lossy().into_owned()
}

/// The device this process would use: its name, or an error naming what is missing.
pub fn probe_device() -> Result<String> {
    let mut names: Vec<String> = with_devices(|devs| devs.iter().map(|&d| device_name(d)).collect());
    if names.is_empty() {
        return Err(Error::config(
            "ibverbs engine: no RDMA device found (ibv_get_device_list lists 0 devices: no InfiniBand, RoCE or iWARP \
             adapter, or its kernel driver/rdma-core provider is missing); use LPF_ENGINE=mpimsg or mpirma instead",
        ));
    }
    match crate::config::Config::from_env()?.ibv_device {
        None => Ok(names.remove(0)),
        Some(w) if names.contains(&w) => Ok(w),
        Some(w) => Err(Error::config(format!("ibverbs engine: RDMA device {w:?} (LPF_IBV_DEVICE) not found; present: {names:?}"))),
    }
}

/// A memory region and the range it covers.
struct Region {
    mr: *mut ibv_mr,
    start: usize,
    end: usize,
}

/// The verbs resources of one section.
pub(crate) struct Verbs {
    ctx: *mut ibv_context,
    pd: *mut ibv_pd,
    cq: *mut ibv_cq,
    /// `qps[q]`: the queue pair to process q (null for this process).
    qps: Vec<*mut ibv_qp>,
    /// Exposed global slots: `exposed[index]`, and staged ones not yet published.
    exposed: Vec<Option<Region>>,
    staged: Vec<(usize, Region)>,
    /// `remote[index][q]`: (address, rkey) of slot index at process q.
    remote: Vec<Vec<(u64, u32)>>,
    /// Local areas registered on demand (put sources, get destinations).
    local: Vec<Region>,
    outstanding: usize,
}

// SAFETY: verbs objects are used only by the thread running the section.
unsafe impl Send for Verbs {}

fn err(what: &str) -> Error {
    Error::io(format!("ibverbs engine: {what} failed: {}", std::io::Error::last_os_error()))
}

/// `p` unless the call `what` that returned it failed (returned null).
fn made<T>(p: *mut T, what: &str) -> Result<*mut T> {
    (!p.is_null()).then_some(p).ok_or_else(|| err(what))
}

/// `Ok` unless the call `what` failed (returned non-zero).
fn zero(rc: c_int, what: &str) -> Result<()> {
    (rc == 0).then_some(()).ok_or_else(|| err(what))
}

/// Destroys `*p` (null, or an object of ours that nothing uses any more) with `destroy`,
/// and leaves it null.
unsafe fn release<T>(p: &mut *mut T, destroy: unsafe extern "C" fn(*mut T) -> c_int) {
    if !p.is_null() {
        destroy(*p);
    }
    *p = std::ptr::null_mut();
}

impl Verbs {
    /// Opens the device and connects a queue pair to every other process of `comm`
    /// (collective over it).
    pub(crate) fn connect(comm: Comm) -> Result<Verbs> {
        let name = probe_device()?;
        let (me, n) = ffi::rank_size(comm)?;
        let mut v = Verbs {
            ctx: std::ptr::null_mut(),
            pd: std::ptr::null_mut(),
            cq: std::ptr::null_mut(),
            qps: vec![std::ptr::null_mut(); n],
            exposed: Vec::new(),
            staged: Vec::new(),
            remote: Vec::new(),
            local: Vec::new(),
            outstanding: 0,
        };
        // SAFETY: plain verbs resource creation; each result is checked and owned by
        // `v`, whose `close` releases it (here if any step fails).
        match unsafe { v.open(&name, comm, me, n) } {
            Ok(()) => Ok(v),
            Err(e) => {
                v.close();
                Err(e)
            }
        }
    }

    /// The steps of [`Verbs::connect`] on the device `name`, for this process `me` of `n`
    /// (what they made stays in `self` when one fails).
    unsafe fn open(&mut self, name: &str, comm: Comm, me: usize, n: usize) -> Result<()> {
        let dev = with_devices(|devs| devs.iter().copied().find(|&d| device_name(d) == name));
        let ctx = dev.map_or(std::ptr::null_mut(), |d| ibv_open_device(d));
        self.ctx = made(ctx, &format!("ibv_open_device({name})"))?;
        self.pd = made(ibv_alloc_pd(self.ctx), "ibv_alloc_pd")?;
        let cq = ibv_create_cq(self.ctx, CQ_DEPTH, std::ptr::null_mut(), std::ptr::null_mut(), 0);
        self.cq = made(cq, "ibv_create_cq")?;
        let mut port: ibv_port_attr = std::mem::zeroed();
        zero(ibv_query_port(self.ctx, PORT, &mut port as *mut ibv_port_attr as *mut _), "ibv_query_port")?;
        let mut gid: ibv_gid = std::mem::zeroed();
        let _ = ibv_query_gid(self.ctx, PORT, 0, &mut gid);
        // Every QP moves to INIT; its address goes to the peer.
        let mut mine = vec![0u8; 32 * n];
        for q in (0..n).filter(|&q| q != me) {
            let mut init: ibv_qp_init_attr = std::mem::zeroed();
            init.send_cq = self.cq;
            init.recv_cq = self.cq;
            init.cap.max_send_wr = QP_DEPTH;
            init.cap.max_recv_wr = 1;
            init.cap.max_send_sge = 1;
            init.cap.max_recv_sge = 1;
            init.qp_type = ibv_qp_type::IBV_QPT_RC;
            let qp = made(ibv_create_qp(self.pd, &mut init), "ibv_create_qp")?;
            self.qps[q] = qp;
            let mut a: ibv_qp_attr = std::mem::zeroed();
            a.qp_state = ibv_qp_state::IBV_QPS_INIT;
            a.pkey_index = 0;
            a.port_num = PORT;
            a.qp_access_flags = (ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
                | ibv_access_flags::IBV_ACCESS_REMOTE_READ
                | ibv_access_flags::IBV_ACCESS_LOCAL_WRITE)
                .0;
            let mask = ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
                | ibv_qp_attr_mask::IBV_QP_PORT
                | ibv_qp_attr_mask::IBV_QP_ACCESS_FLAGS;
            zero(ibv_modify_qp(qp, &mut a, mask.0 as c_int), "ibv_modify_qp(INIT)")?;
            let e = &mut mine[32 * q..32 * q + 32];
            e[0..2].copy_from_slice(&port.lid.to_le_bytes());
            e[4..8].copy_from_slice(&(*qp).qp_num.to_le_bytes());
            e[8..12].copy_from_slice(&(((*qp).qp_num) & 0xff_ffff).to_le_bytes());
            e[16..32].copy_from_slice(&gid.raw);
        }
        let mut theirs = vec![0u8; 32 * n];
        ffi::alltoall(comm, &mine, &mut theirs, 32)?;
        for q in (0..n).filter(|&q| q != me) {
            let e = &theirs[32 * q..32 * q + 32];
            let lid = u16::from_le_bytes([e[0], e[1]]);
            let qpn = u32::from_le_bytes(e[4..8].try_into().unwrap());
            let psn = u32::from_le_bytes(e[8..12].try_into().unwrap());
            let mut a: ibv_qp_attr = std::mem::zeroed();
            a.qp_state = ibv_qp_state::IBV_QPS_RTR;
            a.path_mtu = ibv_mtu::IBV_MTU_1024;
            a.dest_qp_num = qpn;
            a.rq_psn = psn;
            a.max_dest_rd_atomic = 16;
            a.min_rnr_timer = 12;
            a.ah_attr.dlid = lid;
            a.ah_attr.port_num = PORT;
            if lid == 0 {
                // RoCE: routed by GID.
                a.ah_attr.is_global = 1;
                a.ah_attr.grh.hop_limit = 1;
                a.ah_attr.grh.dgid.raw.copy_from_slice(&e[16..32]);
            }
            let mask = ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_AV
                | ibv_qp_attr_mask::IBV_QP_PATH_MTU
                | ibv_qp_attr_mask::IBV_QP_DEST_QPN
                | ibv_qp_attr_mask::IBV_QP_RQ_PSN
                | ibv_qp_attr_mask::IBV_QP_MAX_DEST_RD_ATOMIC
                | ibv_qp_attr_mask::IBV_QP_MIN_RNR_TIMER;
            zero(ibv_modify_qp(self.qps[q], &mut a, mask.0 as c_int), "ibv_modify_qp(RTR)")?;
            let mut a: ibv_qp_attr = std::mem::zeroed();
            a.qp_state = ibv_qp_state::IBV_QPS_RTS;
            a.timeout = 14;
            a.retry_cnt = 7;
            a.rnr_retry = 7;
            a.sq_psn = (*self.qps[q]).qp_num & 0xff_ffff;
            a.max_rd_atomic = 16;
            let mask = ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_TIMEOUT
                | ibv_qp_attr_mask::IBV_QP_RETRY_CNT
                | ibv_qp_attr_mask::IBV_QP_RNR_RETRY
                | ibv_qp_attr_mask::IBV_QP_SQ_PSN
                | ibv_qp_attr_mask::IBV_QP_MAX_QP_RD_ATOMIC;
            zero(ibv_modify_qp(self.qps[q], &mut a, mask.0 as c_int), "ibv_modify_qp(RTS)")?;
        }
        Ok(())
    }

    fn register(&self, ptr: *mut u8, size: usize) -> Result<Region> {
        let access = ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
            | ibv_access_flags::IBV_ACCESS_REMOTE_READ;
        // SAFETY: registers user memory that stays valid while the region exists (the
        // slot's registration, or the current sync for on-demand regions, which are
        // released at close). A zero-length area registers one byte-less region.
        let mr = made(unsafe { ibv_reg_mr(self.pd, ptr.cast(), size.max(1), access.0 as c_int) }, "ibv_reg_mr")?;
        Ok(Region { mr, start: ptr as usize, end: ptr as usize + size })
    }

    /// The lkey of a region covering `ptr..ptr + len`, registering one if needed.
    fn lkey(&mut self, ptr: *mut u8, len: usize) -> Result<u32> {
        let (a, b) = (ptr as usize, ptr as usize + len);
        let hit = self.exposed.iter().flatten().chain(self.local.iter()).find(|r| r.start <= a && b <= r.end);
        if let Some(r) = hit {
            // SAFETY: a live region of ours.
            return Ok(unsafe { (*r.mr).lkey });
        }
        let r = self.register(ptr, len)?;
        // SAFETY: as above.
        let k = unsafe { (*r.mr).lkey };
        self.local.push(r);
        Ok(k)
    }

    fn poll(&mut self, until: usize) -> Result<()> {
        // SAFETY: an all-zero work completion is a valid out-value.
        let mut wc: [ibv_wc; 16] = unsafe { std::mem::zeroed() };
        while self.outstanding > until {
            // SAFETY: our CQ, an array of 16 entries.
            let k = unsafe { ibv_poll_cq(self.cq, 16, wc.as_mut_ptr()) };
            if k < 0 {
                return Err(err("ibv_poll_cq"));
            }
            for c in &wc[..k as usize] {
                self.outstanding -= 1;
                if c.status != ibv_wc_status::IBV_WC_SUCCESS {
                    return Err(Error::io(format!("ibverbs engine: work request failed with status {}", c.status)));
                }
            }
            if k == 0 {
                std::hint::spin_loop();
            }
        }
        Ok(())
    }
}

impl OneSided for Verbs {
    fn key_words(&self) -> usize {
        2
    }

    // One LPF process per rank (the hybrid engine does not run over verbs): `t` is 0
    // and a global pid is a rank.
    fn expose(&mut self, index: usize, _t: usize, ptr: *mut u8, size: usize) -> Result<Vec<u64>> {
        let r = self.register(ptr, size)?;
        // SAFETY: a live region of ours.
        let rkey = unsafe { (*r.mr).rkey };
        self.staged.push((index, r));
        Ok(vec![ptr as u64, rkey as u64])
    }

    fn publish(&mut self, index: usize, keys: &[u64]) -> Result<()> {
        let at = self.staged.iter().position(|s| s.0 == index).ok_or_else(|| Error::fatal("ibverbs: slot not staged"))?;
        let (_, r) = self.staged.remove(at);
        *grown(&mut self.exposed, index) = Some(r);
        *grown(&mut self.remote, index) = keys.chunks(2).map(|k| (k[0], k[1] as u32)).collect();
        Ok(())
    }

    fn withdraw(&mut self, index: usize) -> Result<()> {
        if let Some(r) = self.exposed.get_mut(index).and_then(Option::take) {
            // SAFETY: a region of ours with no work request in flight (between syncs).
            unsafe { ibv_dereg_mr(r.mr) };
        }
        Ok(())
    }

    fn post(&mut self, ops: &[Op]) -> Result<()> {
        for op in ops {
            let (base, rkey) = *self
                .remote
                .get(op.index)
                .and_then(|v| v.get(op.pid))
                .ok_or_else(|| Error::protocol(format!("ibverbs: global slot {} has no remote key", op.index)))?;
            let lkey = self.lkey(op.local, op.len)?;
            // In work requests of at most 1 GiB (one for no bytes).
            for (done, len) in ffi::chunks(op.len) {
                if self.outstanding >= QP_DEPTH as usize / 2 {
                    self.poll(QP_DEPTH as usize / 4)?;
                }
                let mut sge = ibv_sge { addr: op.local as u64 + done as u64, length: len as u32, lkey };
                // SAFETY: an all-zero work request is valid; the fields used are set.
                let mut wr: ibv_send_wr = unsafe { std::mem::zeroed() };
                wr.wr_id = self.outstanding as u64;
                wr.sg_list = &mut sge;
                wr.num_sge = 1;
                wr.opcode = match op.kind {
                    OpKind::Write => ibv_wr_opcode::IBV_WR_RDMA_WRITE,
                    OpKind::Read => ibv_wr_opcode::IBV_WR_RDMA_READ,
                };
                wr.send_flags = ibv_send_flags::IBV_SEND_SIGNALED.0;
                wr.wr.rdma.remote_addr = base + (op.off + done) as u64;
                wr.wr.rdma.rkey = rkey;
                let mut bad: *mut ibv_send_wr = std::ptr::null_mut();
                // SAFETY: a connected QP; `sge` names registered memory that stays
                // valid until the completion is polled (the sync waits for it).
                if unsafe { ibv_post_send(self.qps[op.pid], &mut wr, &mut bad) } != 0 {
                    return Err(err("ibv_post_send"));
                }
                self.outstanding += 1;
            }
        }
        Ok(())
    }

    fn complete(&mut self, _posted: usize) -> Result<()> {
        // Every posted work request (and chunk) is counted in `outstanding`.
        let r = self.poll(0);
        // On-demand regions cover memory valid only during this sync.
        for r in self.local.drain(..) {
            // SAFETY: no work request in flight any more.
            unsafe { ibv_dereg_mr(r.mr) };
        }
        r
    }

    fn arrived(&mut self, _index: usize) -> Result<()> {
        // RDMA writes are visible once the writer's completion came (the barrier
        // follows it): nothing to do.
        Ok(())
    }

    fn close(&mut self) {
        // SAFETY: releases what `connect`/`register` created, in reverse order; null
        // handles are skipped.
        unsafe {
            for r in self.exposed.drain(..).flatten().chain(self.staged.drain(..).map(|s| s.1)).chain(self.local.drain(..)) {
                ibv_dereg_mr(r.mr);
            }
            for qp in &mut self.qps {
                release(qp, ibv_destroy_qp);
            }
            release(&mut self.cq, ibv_destroy_cq);
            release(&mut self.pd, ibv_dealloc_pd);
            release(&mut self.ctx, ibv_close_device);
        }
    }
}
