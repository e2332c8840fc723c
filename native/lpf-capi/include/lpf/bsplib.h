/*
 * lpf/bsplib.h -- BSPlib on top of an LPF context, as an explicit object.
 *
 * Binary and source compatible with the published LPF BSPlib interface.
 * Create one bsplib_t per process inside an SPMD section (collective; it
 * syncs), use it like BSPlib (registrations with push_reg/pop_reg take effect
 * at the next bsplib_sync; put/get/send complete at the next bsplib_sync),
 * and destroy it (collective) before the section ends. The resources LPF
 * needs (register and queue capacity) are managed inside; one bsplib_sync
 * costs two to four lpf_syncs (see native/lpf-capi/src/bsplib/mod.rs).
 * Implemented in liblpf_core; see docs/compatibility.md.
 */
#ifndef LPF_BSPLIB_H
#define LPF_BSPLIB_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Handle to a BSPlib instance. */
typedef struct BSPlib * bsplib_t;

/** Result codes of the bsplib_ functions (in this order, from 0). */
typedef enum bsplib_err {
    BSPLIB_SUCCESS,                        /* 0 */
    BSPLIB_ERR_OUT_OF_MEMORY,              /* 1 */
    BSPLIB_ERR_MEMORY_NOT_REGISTERED,      /* 2 */
    BSPLIB_ERR_PUSHREG_MISMATCH,           /* 3 */
    BSPLIB_ERR_POPREG_MISMATCH,            /* 4 */
    BSPLIB_ERR_TAGSIZE_MISMATCH,           /* 5 */
    BSPLIB_ERR_NULL_POINTER,               /* 6 */
    BSPLIB_ERR_PID_OUT_OF_RANGE,           /* 7 */
    BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE, /* 8 */
    BSPLIB_ERR_EMPTY_MESSAGE_QUEUE,        /* 9 */
    BSPLIB_ERR_FATAL                       /* 10 */
} bsplib_err_t;

/** Collectively creates an instance for process pid of nprocs of ctx.
 *  safemode and max_hp_regs are accepted and not needed here. */
extern _LPFLIB_API
bsplib_err_t bsplib_create(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
    int safemode, size_t max_hp_regs, bsplib_t * bsplib);

/** Collectively releases the instance and all its registrations. */
extern _LPFLIB_API
bsplib_err_t bsplib_destroy(bsplib_t bsplib);

/** Seconds since bsplib_create on this process. */
extern _LPFLIB_API double bsplib_time(bsplib_t bsplib);
extern _LPFLIB_API lpf_pid_t bsplib_nprocs(bsplib_t bsplib);
extern _LPFLIB_API lpf_pid_t bsplib_pid(bsplib_t bsplib);

/** Ends the superstep (collective). */
extern _LPFLIB_API bsplib_err_t bsplib_sync(bsplib_t bsplib);

/** Registers size bytes at ident from the next sync on (collective, same
 *  count per superstep everywhere; sizes may differ). */
extern _LPFLIB_API
bsplib_err_t bsplib_push_reg(bsplib_t bsplib, const void * ident, size_t size);

/** Removes the latest registration of ident after the next sync. */
extern _LPFLIB_API
bsplib_err_t bsplib_pop_reg(bsplib_t bsplib, const void * ident);

/** Buffered put: src is copied now, written at dst_pid at the next sync. */
extern _LPFLIB_API
bsplib_err_t bsplib_put(bsplib_t bsplib, lpf_pid_t dst_pid, const void * src,
    void * dst, size_t offset, size_t nbytes);

/** Unbuffered put: src is read at the next sync (do not change it before). */
extern _LPFLIB_API
bsplib_err_t bsplib_hpput(bsplib_t bsplib, lpf_pid_t dst_pid, const void * src,
    void * dst, size_t offset, size_t nbytes);

/** Get: reads the remote area at the next sync, before the superstep's
 *  puts are applied, and writes dst. */
extern _LPFLIB_API
bsplib_err_t bsplib_get(bsplib_t bsplib, lpf_pid_t src_pid, const void * src,
    size_t offset, void * dst, size_t nbytes);

/** Unbuffered get (here: the same as bsplib_get). */
extern _LPFLIB_API
bsplib_err_t bsplib_hpget(bsplib_t bsplib, lpf_pid_t src_pid, const void * src,
    size_t offset, void * dst, size_t nbytes);

/** Sets the tag size of messages sent after the next sync; returns the one
 *  in force now. */
extern _LPFLIB_API
size_t bsplib_set_tagsize(bsplib_t bsplib, size_t tagsize);

/** Buffered message: tag and payload copied now, delivered at the next sync. */
extern _LPFLIB_API
bsplib_err_t bsplib_send(bsplib_t bsplib, lpf_pid_t dst_pid, const void * tag,
    const void * payload, size_t nbytes);

/** Unbuffered message: tag and payload read at the next sync. */
extern _LPFLIB_API
bsplib_err_t bsplib_hpsend(bsplib_t bsplib, lpf_pid_t dst_pid, const void * tag,
    const void * payload, size_t nbytes);

/** Messages still queued and the sum of their payload sizes. */
extern _LPFLIB_API
bsplib_err_t bsplib_qsize(bsplib_t bsplib, size_t * nmessages,
    size_t * accum_bytes);

/** *status = payload size of the first queued message ((size_t)-1 if none);
 *  its tag is copied to tag. */
extern _LPFLIB_API
bsplib_err_t bsplib_get_tag(bsplib_t bsplib, size_t * status, void * tag);

/** Copies at most reception_bytes of the first message's payload and
 *  dequeues it (BSPLIB_ERR_EMPTY_MESSAGE_QUEUE if there is none). */
extern _LPFLIB_API
bsplib_err_t bsplib_move(bsplib_t bsplib, void * payload,
    size_t reception_bytes);

/** Dequeues the first message, pointing at its tag and payload (valid until
 *  the next sync); returns its payload size, (size_t)-1 if none. */
extern _LPFLIB_API
size_t bsplib_hpmove(bsplib_t bsplib, const void ** tag_ptr,
    const void ** payload_ptr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_BSPLIB_H */
