//! `lpf/bsplib.h`: the C functions of a BSPlib instance (a `bsplib_t`).

use super::{bsplib_t, code_name, err, BSPlib, BspErr, R};
use super::{bsplib_err_t, BSPLIB_ERR_EMPTY_MESSAGE_QUEUE, BSPLIB_ERR_FATAL, BSPLIB_ERR_NULL_POINTER, BSPLIB_ERR_OUT_OF_MEMORY, BSPLIB_SUCCESS};
use crate::{lpf_pid_t, lpf_t};
use lpf::Error;
use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};


/// Runs a BSPlib call: panics become BSPLIB_ERR_FATAL; errors are printed (unless
/// `LPF_LOG=quiet`) and recorded for `lpf_error_message`.
fn call(what: &str, f: impl FnOnce() -> R<()>) -> bsplib_err_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => BSPLIB_SUCCESS,
        Ok(Err(BspErr(code, msg))) => {
            let msg = if msg.starts_with(what) { msg } else { format!("{what}: {msg}") };
            let e = Error::fatal(format!("{}: {msg}", code_name(code)));
            let _ = crate::record(&if code == BSPLIB_ERR_OUT_OF_MEMORY { Error::out_of_memory(e.message()) } else { e });
            code
        }
        Err(_) => {
            let _ = crate::record(&Error::fatal(format!("{what}: internal panic")));
            BSPLIB_ERR_FATAL
        }
    }
}

unsafe fn inst<'a>(b: bsplib_t, what: &str) -> R<&'a mut BSPlib> {
    if b.is_null() {
        return err(BSPLIB_ERR_NULL_POINTER, format!("{what}: the bsplib_t is NULL"));
    }
    Ok(&mut *b)
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_create(ctx: lpf_t, pid: lpf_pid_t, nprocs: lpf_pid_t, safemode: c_int, max_hp_regs: usize, bsplib: *mut bsplib_t) -> bsplib_err_t {
    let _ = (safemode, max_hp_regs);
    call("bsplib_create", || {
        if bsplib.is_null() {
            return err(BSPLIB_ERR_NULL_POINTER, "the bsplib_t out-pointer is NULL");
        }
        *bsplib = Box::into_raw(BSPlib::create(ctx, pid, nprocs)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_destroy(bsplib: bsplib_t) -> bsplib_err_t {
    call("bsplib_destroy", || {
        inst(bsplib, "bsplib_destroy")?.destroy()?;
        // Freed only once released everywhere; a failed destroy leaks the instance,
        // whose registrations may still be written to by a peer.
        drop(Box::from_raw(bsplib));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_time(bsplib: bsplib_t) -> f64 {
    if bsplib.is_null() {
        return 0.0;
    }
    (*bsplib).start.elapsed().as_secs_f64()
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_nprocs(bsplib: bsplib_t) -> lpf_pid_t {
    if bsplib.is_null() { 0 } else { (*bsplib).p }
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_pid(bsplib: bsplib_t) -> lpf_pid_t {
    if bsplib.is_null() { 0 } else { (*bsplib).pid }
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_sync(bsplib: bsplib_t) -> bsplib_err_t {
    call("bsp_sync", || inst(bsplib, "bsp_sync")?.sync())
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_push_reg(bsplib: bsplib_t, ident: *const c_void, size: usize) -> bsplib_err_t {
    call("bsp_push_reg", || inst(bsplib, "bsp_push_reg")?.push_reg(ident, size))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_pop_reg(bsplib: bsplib_t, ident: *const c_void) -> bsplib_err_t {
    call("bsp_pop_reg", || inst(bsplib, "bsp_pop_reg")?.pop_reg(ident))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_put(b: bsplib_t, pid: lpf_pid_t, src: *const c_void, dst: *mut c_void, offset: usize, n: usize) -> bsplib_err_t {
    call("bsp_put", || inst(b, "bsp_put")?.put(pid, src, dst, offset, n, true, "bsp_put"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_hpput(b: bsplib_t, pid: lpf_pid_t, src: *const c_void, dst: *mut c_void, offset: usize, n: usize) -> bsplib_err_t {
    call("bsp_hpput", || inst(b, "bsp_hpput")?.put(pid, src, dst, offset, n, false, "bsp_hpput"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_get(b: bsplib_t, pid: lpf_pid_t, src: *const c_void, offset: usize, dst: *mut c_void, n: usize) -> bsplib_err_t {
    call("bsp_get", || inst(b, "bsp_get")?.get(pid, src, offset, dst, n, "bsp_get"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_hpget(b: bsplib_t, pid: lpf_pid_t, src: *const c_void, offset: usize, dst: *mut c_void, n: usize) -> bsplib_err_t {
    call("bsp_hpget", || inst(b, "bsp_hpget")?.get(pid, src, offset, dst, n, "bsp_hpget"))
}

/// Sets the tag size for messages sent after the next sync; returns the current one.
#[no_mangle]
pub unsafe extern "C" fn bsplib_set_tagsize(b: bsplib_t, tagsize: usize) -> usize {
    if b.is_null() {
        return 0;
    }
    (*b).next_tagsize = tagsize;
    (*b).tagsize
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_send(b: bsplib_t, pid: lpf_pid_t, tag: *const c_void, payload: *const c_void, n: usize) -> bsplib_err_t {
    call("bsp_send", || inst(b, "bsp_send")?.send(pid, tag, payload, n, true, "bsp_send"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_hpsend(b: bsplib_t, pid: lpf_pid_t, tag: *const c_void, payload: *const c_void, n: usize) -> bsplib_err_t {
    call("bsp_hpsend", || inst(b, "bsp_hpsend")?.send(pid, tag, payload, n, false, "bsp_hpsend"))
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_qsize(b: bsplib_t, nmessages: *mut usize, accum_bytes: *mut usize) -> bsplib_err_t {
    call("bsp_qsize", || {
        let (n, bytes) = inst(b, "bsp_qsize")?.qsize();
        if !nmessages.is_null() {
            *nmessages = n;
        }
        if !accum_bytes.is_null() {
            *accum_bytes = bytes;
        }
        Ok(())
    })
}

/// `status` = payload size of the first message, or `(size_t)-1` if there is none.
#[no_mangle]
pub unsafe extern "C" fn bsplib_get_tag(b: bsplib_t, status: *mut usize, tag: *mut c_void) -> bsplib_err_t {
    call("bsp_get_tag", || {
        let s = inst(b, "bsp_get_tag")?;
        if status.is_null() {
            return err(BSPLIB_ERR_NULL_POINTER, "the status out-pointer is NULL");
        }
        match s.first() {
            None => *status = usize::MAX,
            Some((n, t, _)) => {
                *status = n;
                let ts = s.tagsize_received();
                if ts > 0 {
                    if tag.is_null() {
                        return err(BSPLIB_ERR_NULL_POINTER, "the tag out-pointer is NULL");
                    }
                    std::ptr::copy_nonoverlapping(t, tag as *mut u8, ts);
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn bsplib_move(b: bsplib_t, payload: *mut c_void, reception_bytes: usize) -> bsplib_err_t {
    call("bsp_move", || {
        let s = inst(b, "bsp_move")?;
        let Some((n, _, data)) = s.first() else {
            return err(BSPLIB_ERR_EMPTY_MESSAGE_QUEUE, "bsp_move: the message queue is empty");
        };
        let k = n.min(reception_bytes);
        if k > 0 {
            if payload.is_null() {
                return err(BSPLIB_ERR_NULL_POINTER, "bsp_move: the payload pointer is NULL");
            }
            std::ptr::copy_nonoverlapping(data, payload as *mut u8, k);
        }
        s.queue.pop_front();
        Ok(())
    })
}

/// Dequeues the first message and points at its tag and payload (valid until the next
/// sync); returns the payload size, or `(size_t)-1` if the queue is empty.
#[no_mangle]
pub unsafe extern "C" fn bsplib_hpmove(b: bsplib_t, tag_ptr: *mut *const c_void, payload_ptr: *mut *const c_void) -> usize {
    if b.is_null() {
        return usize::MAX;
    }
    let s = &mut *b;
    match s.first() {
        None => usize::MAX,
        Some((n, t, d)) => {
            if !tag_ptr.is_null() {
                *tag_ptr = t.cast();
            }
            if !payload_ptr.is_null() {
                *payload_ptr = d.cast();
            }
            s.queue.pop_front();
            n
        }
    }
}
