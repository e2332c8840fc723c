//! The few MPI calls the engines make, over the raw bindings of the `mpi` crate
//! (`mpi::ffi`, i.e. mpi-sys), each checked: a failing call becomes a fatal LPF error
//! naming it. The unsafe blocks here only pass handles and buffers through; the
//! callers state the buffer invariants.

use crate::config::MpiThreadLevel;
use crate::error::{Error, Result};
use crate::types::Pid;
use ::mpi::ffi as sys;
use std::os::raw::c_int;

pub use sys::MPI_Comm;

/// A communicator handle that may move between threads (MPI handles are plain values;
/// every use is behind a Mutex, and MPI is initialised for serialized use whenever
/// several threads of a rank call it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Comm(pub MPI_Comm);
// SAFETY: an MPI handle is a plain value, valid on any thread; every use is behind a
// Mutex, with MPI initialised for serialized use whenever several threads call it.
unsafe impl Send for Comm {}
// SAFETY: as for Send: shared uses are serialized by the Mutex around every MPI call.
unsafe impl Sync for Comm {}

pub(crate) type Request = sys::MPI_Request;
pub(crate) type Win = sys::MPI_Win;

/// Largest count of bytes in one MPI call (counts are C ints).
pub(crate) const CHUNK: usize = 1 << 30;

/// The (offset, length) of the pieces `len` bytes travel in: chunks of at most
/// [`CHUNK`] bytes, and one piece for no bytes.
pub(crate) fn chunks(len: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..len.div_ceil(CHUNK).max(1)).map(move |i| (i * CHUNK, (len - i * CHUNK).min(CHUNK)))
}

/// `Ok` for `MPI_SUCCESS`, else the fatal error naming the call (the error path stays
/// out of line: `check` wraps every call of a sync's hot path).
#[inline]
pub(crate) fn check(rc: c_int, what: &str) -> Result<()> {
    if rc == sys::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(failure(rc, what))
    }
}

#[cold]
#[inline(never)]
fn failure(rc: c_int, what: &str) -> Error {
    let mut buf = vec![0u8; 512];
    let mut len: c_int = 0;
    // SAFETY: the buffer is longer than MPI_MAX_ERROR_STRING (256 in Open MPI).
    let text = if unsafe { sys::MPI_Error_string(rc, buf.as_mut_ptr().cast(), &mut len) } == 0 {
        String::from_utf8_lossy(&buf[..len.max(0) as usize]).into_owned()
    } else {
        format!("error code {rc}")
    };
    Error::io(format!("{what} failed: {text}"))
}

pub(crate) fn world() -> Comm {
    // SAFETY: reads an exported constant of the MPI library.
    Comm(unsafe { sys::RSMPI_COMM_WORLD })
}

pub(crate) fn comm_null() -> MPI_Comm {
    // SAFETY: as above.
    unsafe { sys::RSMPI_COMM_NULL }
}

pub(crate) fn request_null() -> Request {
    // SAFETY: as above.
    unsafe { sys::RSMPI_REQUEST_NULL }
}

fn byte() -> sys::MPI_Datatype {
    // SAFETY: as above.
    unsafe { sys::RSMPI_UINT8_T }
}

/// Whether MPI is (initialised, finalised).
fn state() -> (bool, bool) {
    let (mut init, mut fin) = (0, 0);
    // SAFETY: both may be called at any time, even before MPI_Init.
    unsafe {
        sys::MPI_Initialized(&mut init);
        sys::MPI_Finalized(&mut fin);
    }
    (init != 0, fin != 0)
}

/// Whether MPI is initialised and not yet finalised.
pub(crate) fn is_active() -> bool {
    state() == (true, false)
}

/// `MPI_Abort(MPI_COMM_WORLD, code)` when MPI is active (ends every rank; does not
/// return); nothing otherwise.
pub(crate) fn abort_world(code: c_int) {
    if is_active() {
        // SAFETY: MPI is initialised and not finalised; MPI_Abort may be called from
        // any thread at any time then.
        unsafe { sys::MPI_Abort(world().0, code) };
    }
}

extern "C" fn finalize_at_exit() {
    if is_active() {
        // SAFETY: called once at process exit, when no LPF call runs any more.
        unsafe { sys::MPI_Finalize() };
    }
}

/// The thread support LPF asks of an MPI it initialises itself, for a rank that runs
/// `threads` LPF processes, unless `setting` (`LPF_MPI_THREAD_LEVEL`) says: `Single`
/// (one thread of the process calls MPI: the plain engines, and the hybrid engine with
/// one LPF process per rank), or `Serialized` (several threads call MPI, one at a time:
/// the hybrid engine with more than one LPF process per rank).
fn thread_level(setting: Option<MpiThreadLevel>, threads: Option<Pid>) -> MpiThreadLevel {
    let several = threads.unwrap_or(1) > 1;
    setting.unwrap_or(if several { MpiThreadLevel::Serialized } else { MpiThreadLevel::Single })
}

/// Initialises MPI unless the program did (then MPI is finalised at process exit),
/// asking for the thread level a rank running `threads` LPF processes needs (see
/// `thread_level`).
///
/// Why not always `MPI_THREAD_SERIALIZED`: Open MPI 4.1 takes its internal locks in
/// every call once the level is above `MPI_THREAD_SINGLE` (measured here: an 8-byte
/// `MPI_Alltoall` of 2 ranks takes 0.19-0.23 us at SINGLE, 0.32-0.37 us at FUNNELED or
/// SERIALIZED), which is most of a BSP sync's latency. LPF itself calls MPI from one
/// thread when each rank runs one LPF process; a program that also calls MPI from
/// other threads initialises MPI itself (or sets `LPF_MPI_THREAD_LEVEL=serialized`).
pub(crate) fn ensure_initialized(threads: Option<Pid>) -> Result<()> {
    let level = thread_level(crate::config::Config::from_env()?.mpi_thread_level, threads);
    let (init, fin) = state();
    if fin {
        return Err(Error::config("MPI has already been finalised in this process"));
    }
    if init {
        return Ok(());
    }
    let mut provided: c_int = 0;
    // SAFETY: MPI is not initialised yet; null argc/argv are allowed.
    let rc = unsafe {
        let required = match level {
            MpiThreadLevel::Single => sys::RSMPI_THREAD_SINGLE,
            MpiThreadLevel::Serialized => sys::RSMPI_THREAD_SERIALIZED,
        };
        sys::MPI_Init_thread(std::ptr::null_mut(), std::ptr::null_mut(), required, &mut provided)
    };
    check(rc, "MPI_Init_thread")?;
    // SAFETY: registers a plain extern "C" function.
    unsafe { libc::atexit(finalize_at_exit) };
    Ok(())
}

/// Whether MPI's own progress yields the core when a poll finds nothing to do: Open
/// MPI's control variable `mpi_yield_when_idle`, which it turns on by itself when the
/// node is oversubscribed (read through the MPI tool interface; false for an MPI
/// without that variable).
pub(crate) fn progress_yields_when_idle() -> bool {
    let (mut level, mut provided): (c_int, c_int) = (0, 0);
    // SAFETY: MPI is initialised; MPI_T may be initialised any number of times (each
    // paired with a finalize below); the name is a NUL-terminated string; the value
    // buffer (16 zeroed bytes) is larger than the variable (a C bool or int, count 1).
    unsafe {
        // MPI_T_init_thread asks for the level MPI already provides: Open MPI 4.1 lets
        // it overwrite the level MPI_Init_thread settled on.
        if sys::MPI_Query_thread(&mut level) != sys::MPI_SUCCESS as c_int
            || sys::MPI_T_init_thread(level, &mut provided) != sys::MPI_SUCCESS as c_int
        {
            return false;
        }
        let mut yields = false;
        let mut index: c_int = 0;
        if sys::MPI_T_cvar_get_index(c"mpi_yield_when_idle".as_ptr(), &mut index) == sys::MPI_SUCCESS as c_int {
            let mut handle: sys::MPI_T_cvar_handle = std::mem::zeroed();
            let mut count: c_int = 0;
            if sys::MPI_T_cvar_handle_alloc(index, std::ptr::null_mut(), &mut handle, &mut count) == sys::MPI_SUCCESS as c_int {
                let mut value = [0u8; 16];
                if count == 1 && sys::MPI_T_cvar_read(handle, value.as_mut_ptr().cast()) == sys::MPI_SUCCESS as c_int {
                    yields = value.iter().any(|&b| b != 0);
                }
                sys::MPI_T_cvar_handle_free(&mut handle);
            }
        }
        sys::MPI_T_finalize();
        yields
    }
}

/// Whether MPI was initialised with `MPI_THREAD_SERIALIZED` or better (several
/// threads may call it, one at a time).
pub(crate) fn thread_serialized() -> Result<bool> {
    let mut provided: c_int = 0;
    // SAFETY: out-pointer to a local; MPI is initialised.
    check(unsafe { sys::MPI_Query_thread(&mut provided) }, "MPI_Query_thread")?;
    // SAFETY: reads an exported constant of the MPI library.
    Ok(provided >= unsafe { sys::RSMPI_THREAD_SERIALIZED })
}

pub(crate) fn rank_size(c: Comm) -> Result<(usize, usize)> {
    let (mut r, mut s) = (0, 0);
    // SAFETY: valid communicator, out-pointer to a local.
    check(unsafe { sys::MPI_Comm_rank(c.0, &mut r) }, "MPI_Comm_rank")?;
    // SAFETY: as above.
    check(unsafe { sys::MPI_Comm_size(c.0, &mut s) }, "MPI_Comm_size")?;
    Ok((r as usize, s as usize))
}

/// Makes MPI errors on `c` return their code instead of ending the job (the default
/// handler, `MPI_ERRORS_ARE_FATAL`, would abort the process before LPF could report
/// anything). Set on every communicator LPF creates (never on the program's own), so
/// every MPI failure on them becomes an LPF fatal error naming the call. Takes
/// ownership of `c`: freed if this fails.
fn errors_return(c: MPI_Comm) -> Result<Comm> {
    // SAFETY: a valid communicator this library created; reads an exported constant.
    let rc = unsafe { sys::MPI_Comm_set_errhandler(c, sys::RSMPI_ERRORS_RETURN) };
    check(rc, "MPI_Comm_set_errhandler").map(|_| Comm(c)).inspect_err(|_| free(&mut Comm(c)))
}

/// `MPI_Comm_dup` (collective); the copy returns its errors (see `errors_return`).
pub(crate) fn dup(c: Comm) -> Result<Comm> {
    let mut out = comm_null();
    // SAFETY: valid communicator, out-pointer to a local.
    check(unsafe { sys::MPI_Comm_dup(c.0, &mut out) }, "MPI_Comm_dup")?;
    errors_return(out)
}

/// `MPI_Comm_split` (collective): `None` for ranks that pass no colour.
pub(crate) fn split(c: Comm, color: Option<i32>, key: i32) -> Result<Option<Comm>> {
    let mut out = comm_null();
    // SAFETY: reads the constant MPI_UNDEFINED the MPI binding exports.
    let col = color.unwrap_or(unsafe { sys::RSMPI_UNDEFINED });
    // SAFETY: valid communicator, out-pointer to a local.
    check(unsafe { sys::MPI_Comm_split(c.0, col, key, &mut out) }, "MPI_Comm_split")?;
    color.map(|_| errors_return(out)).transpose()
}

/// Frees a communicator we created (nothing once MPI is finalised: it went with it).
pub(crate) fn free(c: &mut Comm) {
    if c.0 != comm_null() && is_active() {
        // SAFETY: a communicator we created and no longer use.
        unsafe { sys::MPI_Comm_free(&mut c.0) };
    }
}

/// The tag of an MPI message: control frames and their long bodies have named tags
/// ([`MpiTag::CONTROL`], [`MpiTag::BODY`]), data messages a tag from their sequence number
/// (`msg::DataTag`); a tag is never a rank or a length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MpiTag(pub(crate) c_int);

impl MpiTag {
    /// A control frame (the TCP engine's 32-byte header and inline body).
    pub(crate) const CONTROL: MpiTag = MpiTag(1);
    /// The body of a control frame too long to go inline.
    pub(crate) const BODY: MpiTag = MpiTag(2);
}

/// `MPI_Isend` of `len` (< 2^31) bytes.
///
/// # Safety
/// `ptr..ptr + len` must stay valid and unchanged until the request completes.
pub(crate) unsafe fn isend(ptr: *const u8, len: usize, to: usize, tag: MpiTag, c: Comm) -> Result<Request> {
    debug_assert!(len <= CHUNK);
    let mut r = request_null();
    check(sys::MPI_Isend(ptr.cast(), len as c_int, byte(), to as c_int, tag.0, c.0, &mut r), "MPI_Isend")?;
    Ok(r)
}

/// `MPI_Irecv` of `len` (< 2^31) bytes.
///
/// # Safety
/// `ptr..ptr + len` must stay valid, and untouched by anyone else, until the request
/// completes.
pub(crate) unsafe fn irecv(ptr: *mut u8, len: usize, from: usize, tag: MpiTag, c: Comm) -> Result<Request> {
    debug_assert!(len <= CHUNK);
    let mut r = request_null();
    check(sys::MPI_Irecv(ptr.cast(), len as c_int, byte(), from as c_int, tag.0, c.0, &mut r), "MPI_Irecv")?;
    Ok(r)
}

/// `MPI_Recv_init` of `len` (< 2^31) bytes: a persistent receive, started by [`start`].
///
/// # Safety
/// `ptr..ptr + len` must stay valid until the request is freed, and untouched by
/// anyone else while it is active.
pub(crate) unsafe fn recv_init(ptr: *mut u8, len: usize, from: usize, tag: MpiTag, c: Comm) -> Result<Request> {
    debug_assert!(len <= CHUNK);
    let mut r = request_null();
    check(sys::MPI_Recv_init(ptr.cast(), len as c_int, byte(), from as c_int, tag.0, c.0, &mut r), "MPI_Recv_init")?;
    Ok(r)
}

/// `MPI_Start` of an inactive persistent request.
pub(crate) fn start(r: &mut Request) -> Result<()> {
    // SAFETY: a persistent request MPI gave us; the caller keeps its buffer's invariant.
    check(unsafe { sys::MPI_Start(r) }, "MPI_Start")
}

pub(crate) fn test(r: &mut Request) -> Result<bool> {
    let mut flag = 0;
    // SAFETY: a request MPI gave us (MPI_Test sets it to MPI_REQUEST_NULL when done).
    check(unsafe { sys::MPI_Test(r, &mut flag, sys::RSMPI_STATUS_IGNORE) }, "MPI_Test")?;
    Ok(flag != 0)
}

/// `MPI_Test` of a receive: its received byte count if it completed. (Unlike
/// `MPI_Testsome`, Open MPI's `MPI_Test` looks at the request again after driving
/// progress, so a message that progress just brought in is seen by the same call.)
pub(crate) fn test_received(r: &mut Request) -> Result<Option<usize>> {
    let mut flag = 0;
    // SAFETY: an all-zero MPI_Status is a valid value to overwrite.
    let mut status: sys::MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: a request MPI gave us, and a status to fill.
    check(unsafe { sys::MPI_Test(r, &mut flag, &mut status) }, "MPI_Test")?;
    if flag == 0 {
        return Ok(None);
    }
    received(&status).map(Some)
}

/// The byte count of a completed receive, from the status MPI filled for it.
fn received(status: &sys::MPI_Status) -> Result<usize> {
    let mut count: c_int = 0;
    // SAFETY: a status MPI filled for a completed request.
    check(unsafe { sys::MPI_Get_count(status, byte(), &mut count) }, "MPI_Get_count")?;
    Ok(count.max(0) as usize)
}

/// Whether all of `rs` have completed (completed ones become MPI_REQUEST_NULL).
pub(crate) fn test_all(rs: &mut [Request]) -> Result<bool> {
    if rs.is_empty() {
        return Ok(true);
    }
    let mut flag = 0;
    // SAFETY: requests MPI gave us.
    check(unsafe { sys::MPI_Testall(rs.len() as c_int, rs.as_mut_ptr(), &mut flag, sys::RSMPI_STATUSES_IGNORE) }, "MPI_Testall")?;
    Ok(flag != 0)
}

/// `MPI_Testsome` over `rs` (null requests are skipped): pushes `(index, received
/// byte count)` of every request that completed (it becomes MPI_REQUEST_NULL) onto
/// `done`. `statuses` and `indices` are scratch space, reused between calls.
pub(crate) fn test_some(rs: &mut [Request], done: &mut Vec<(usize, usize)>, indices: &mut Vec<c_int>, statuses: &mut Vec<sys::MPI_Status>) -> Result<()> {
    if indices.len() != rs.len() || statuses.len() != rs.len() {
        indices.resize(rs.len(), 0);
        // SAFETY: an all-zero MPI_Status is a valid value to overwrite.
        statuses.resize(rs.len(), unsafe { std::mem::zeroed() });
    }
    let mut outcount: c_int = 0;
    // SAFETY: `indices` and `statuses` hold `rs.len()` entries, as MPI_Testsome may write.
    let rc = unsafe { sys::MPI_Testsome(rs.len() as c_int, rs.as_mut_ptr(), &mut outcount, indices.as_mut_ptr(), statuses.as_mut_ptr()) };
    check(rc, "MPI_Testsome")?;
    // MPI_UNDEFINED (no active request) is negative: nothing completed.
    for k in 0..outcount.max(0) as usize {
        done.push((indices[k] as usize, received(&statuses[k])?));
    }
    Ok(())
}

/// Cancels a pending receive and waits until it is cancelled (or completed), so that
/// its buffer may be released.
pub(crate) fn cancel(r: &mut Request) {
    // SAFETY: a request MPI gave us; after MPI_Cancel, MPI_Wait returns promptly for a
    // receive (it is either cancelled or already complete).
    unsafe {
        if *r != request_null() {
            sys::MPI_Cancel(r);
            sys::MPI_Wait(r, sys::RSMPI_STATUS_IGNORE);
        }
    }
}

/// The number of ranks of `c` that share this rank's node (`MPI_Comm_split_type` with
/// `MPI_COMM_TYPE_SHARED`; collective).
pub(crate) fn node_size(c: Comm) -> Result<usize> {
    let mut out = comm_null();
    // SAFETY: valid communicator, out-pointer to a local.
    let rc = unsafe { sys::MPI_Comm_split_type(c.0, sys::RSMPI_COMM_TYPE_SHARED, 0, sys::RSMPI_INFO_NULL, &mut out) };
    check(rc, "MPI_Comm_split_type")?;
    let mut local = errors_return(out)?;
    let n = rank_size(local).map(|(_, s)| s);
    free(&mut local);
    n
}

/// Abandons a request (its operation may still complete in the background).
pub(crate) fn request_free(r: &mut Request) {
    // SAFETY: requests MPI gave us; freeing a null request is not allowed, so skip it.
    unsafe {
        if *r != request_null() {
            sys::MPI_Request_free(r);
        }
    }
}

/// Largest usable tag on `c`.
pub(crate) fn tag_ub(c: Comm) -> i32 {
    let mut flag = 0;
    let mut val: *mut c_int = std::ptr::null_mut();
    // SAFETY: MPI_TAG_UB is a predefined attribute whose value is a pointer to int.
    let rc = unsafe { sys::MPI_Comm_get_attr(c.0, sys::MPI_TAG_UB as c_int, (&mut val as *mut *mut c_int).cast(), &mut flag) };
    if rc != 0 || flag == 0 || val.is_null() {
        32767
    } else {
        // SAFETY: MPI returned a valid pointer to the attribute value.
        unsafe { *val }
    }
}

/// `MPI_Bcast` of bytes from rank `root` (collective; for the launcher helpers).
pub(crate) fn bcast(c: Comm, buf: &mut [u8], root: usize) -> Result<()> {
    for chunk in buf.chunks_mut(CHUNK) {
        // SAFETY: `chunk` is valid for its length.
        let rc = unsafe { sys::MPI_Bcast(chunk.as_mut_ptr().cast(), chunk.len() as c_int, byte(), root as c_int, c.0) };
        check(rc, "MPI_Bcast")?;
    }
    Ok(())
}

/// Every process's bytes, everywhere (collective).
pub(crate) fn allgather_bytes(c: Comm, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
    let (_, n) = rank_size(c)?;
    let len = mine.len() as u64;
    let mut lens = vec![0u64; n];
    // SAFETY: one u64 from each process into `lens`.
    let rc = unsafe {
        sys::MPI_Allgather((&len as *const u64).cast(), 8, byte(), lens.as_mut_ptr().cast(), 8, byte(), c.0)
    };
    check(rc, "MPI_Allgather")?;
    let total: u64 = lens.iter().sum();
    if total > i32::MAX as u64 {
        return Err(Error::exhausted("allgather_bytes: more than 2 GiB in total"));
    }
    if total == 0 {
        // Every rank sees the same lengths, so all skip the call alike: Open MPI refuses
        // an MPI_Allgatherv whose send and receive buffers are both empty (MPI_ERR_ARG).
        return Ok(vec![Vec::new(); n]);
    }
    let counts: Vec<c_int> = lens.iter().map(|&l| l as c_int).collect();
    let displs: Vec<c_int> = counts.iter().scan(0, |at, &c| Some(std::mem::replace(at, *at + c))).collect();
    let mut all = vec![0u8; total as usize];
    // SAFETY: `all` holds the sum of all counts, at the displacements computed above.
    let rc = unsafe {
        sys::MPI_Allgatherv(mine.as_ptr().cast(), mine.len() as c_int, byte(), all.as_mut_ptr().cast(), counts.as_ptr(), displs.as_ptr(), byte(), c.0)
    };
    check(rc, "MPI_Allgatherv")?;
    Ok((0..n).map(|i| all[displs[i] as usize..(displs[i] + counts[i]) as usize].to_vec()).collect())
}

pub(crate) fn barrier(c: Comm) -> Result<()> {
    // SAFETY: valid communicator.
    check(unsafe { sys::MPI_Barrier(c.0) }, "MPI_Barrier")
}

pub(crate) fn wtime() -> f64 {
    // SAFETY: no preconditions once MPI is initialised.
    unsafe { sys::MPI_Wtime() }
}

/// `MPI_Alltoall` of `block` bytes per process (for the benchmark's reference).
pub(crate) fn alltoall(c: Comm, send: &[u8], recv: &mut [u8], block: usize) -> Result<()> {
    // SAFETY: both buffers hold `block` bytes per process of `c` (checked by caller).
    let rc = unsafe {
        sys::MPI_Alltoall(send.as_ptr().cast(), block as c_int, byte(), recv.as_mut_ptr().cast(), block as c_int, byte(), c.0)
    };
    check(rc, "MPI_Alltoall")
}

// ---- One-sided (windows) ----

pub(crate) fn win_create(base: *mut u8, size: usize, c: Comm) -> Result<Win> {
    // SAFETY: reads the null window handle the MPI binding exports (a constant).
    let mut w: Win = unsafe { sys::RSMPI_WIN_NULL };
    // SAFETY: `base..base + size` is registered user memory that stays valid until the
    // window is freed (the engine frees it before the slot's memory may go away, or the
    // slot is dead and nobody accesses it through LPF). Size 0 is allowed.
    let rc = unsafe {
        sys::MPI_Win_create(base.cast(), size as sys::MPI_Aint, 1, sys::RSMPI_INFO_NULL, c.0, &mut w)
    };
    // (A failure here is raised on `c`, which returns errors: see `errors_return`.)
    check(rc, "MPI_Win_create")?;
    // SAFETY: the window just created.
    if let Err(e) = check(unsafe { sys::MPI_Win_set_errhandler(w, sys::RSMPI_ERRORS_RETURN) }, "MPI_Win_set_errhandler") {
        // SAFETY: as above; not locked yet.
        unsafe { sys::MPI_Win_free(&mut w) };
        return Err(e);
    }
    // Passive target for the window's whole life: every sync completes its own
    // operations with flushes, and the LPF barrier tells the targets. SAFETY: the
    // window was just created.
    check(unsafe { sys::MPI_Win_lock_all(sys::MPI_MODE_NOCHECK as c_int, w) }, "MPI_Win_lock_all")?;
    Ok(w)
}

pub(crate) fn win_free(w: &mut Win) -> Result<()> {
    // SAFETY: a window we created, locked with lock_all.
    check(unsafe { sys::MPI_Win_unlock_all(*w) }, "MPI_Win_unlock_all")?;
    // SAFETY: the same window, now unlocked; `w` is ours to reset to the null handle.
    check(unsafe { sys::MPI_Win_free(w) }, "MPI_Win_free")
}

/// `MPI_Put` of `len` bytes (chunked) to `disp` in `w` at rank `to`.
///
/// # Safety
/// `src..src + len` must stay valid and unchanged until the next flush of `w`.
pub(crate) unsafe fn put(src: *const u8, len: usize, to: usize, disp: usize, w: Win) -> Result<()> {
    for (at, k) in chunks(len).filter(|&(_, k)| k > 0) {
        let (k, disp) = (k as c_int, (disp + at) as sys::MPI_Aint);
        check(sys::MPI_Put(src.add(at).cast(), k, byte(), to as c_int, disp, k, byte(), w), "MPI_Put")?;
    }
    Ok(())
}

/// `MPI_Get` of `len` bytes (chunked) from `disp` in `w` at rank `from`.
///
/// # Safety
/// `dst..dst + len` must stay valid, and untouched by others, until the next flush.
pub(crate) unsafe fn get(dst: *mut u8, len: usize, from: usize, disp: usize, w: Win) -> Result<()> {
    for (at, k) in chunks(len).filter(|&(_, k)| k > 0) {
        let (k, disp) = (k as c_int, (disp + at) as sys::MPI_Aint);
        check(sys::MPI_Get(dst.add(at).cast(), k, byte(), from as c_int, disp, k, byte(), w), "MPI_Get")?;
    }
    Ok(())
}

pub(crate) fn win_flush_all(w: Win) -> Result<()> {
    // SAFETY: a window in a lock_all epoch.
    check(unsafe { sys::MPI_Win_flush_all(w) }, "MPI_Win_flush_all")
}

pub(crate) fn win_sync(w: Win) -> Result<()> {
    // SAFETY: a window in a lock_all epoch.
    check(unsafe { sys::MPI_Win_sync(w) }, "MPI_Win_sync")
}

#[cfg(test)]
mod tests {
    use super::{chunks, thread_level, CHUNK};
    use crate::config::MpiThreadLevel;

    #[test]
    fn chunks_cover_the_payload_in_order_one_message_even_for_no_bytes() {
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 5] {
            let v: Vec<(usize, usize)> = chunks(len).collect();
            assert!(v.iter().all(|&(_, c)| c <= CHUNK) && v.len() == len.div_ceil(CHUNK).max(1), "len {len}");
            assert!(v.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0) && v[0].0 == 0, "len {len}");
            assert_eq!(v.iter().map(|c| c.1).sum::<usize>(), len);
        }
    }

    #[test]
    fn thread_level_follows_the_threads_per_rank_unless_set() {
        assert_eq!(thread_level(None, None), MpiThreadLevel::Single);
        assert_eq!(thread_level(None, Some(1)), MpiThreadLevel::Single);
        assert_eq!(thread_level(None, Some(2)), MpiThreadLevel::Serialized);
        assert_eq!(thread_level(Some(MpiThreadLevel::Serialized), None), MpiThreadLevel::Serialized);
        assert_eq!(thread_level(Some(MpiThreadLevel::Single), Some(4)), MpiThreadLevel::Single);
    }
}
