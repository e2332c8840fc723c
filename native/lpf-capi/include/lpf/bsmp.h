/*
 * lpf/bsmp.h -- bulk synchronous message passing over an LPF context.
 *
 * Source compatible with the published LPF BSMP interface (version 201500):
 * same type names, constants and function signatures. Implemented in
 * liblpf_core (native/lpf-capi/src/bsmp.rs) over the core primitives; the
 * differences from the reference are listed in docs/compatibility.md (the
 * object behind lpf_bsmp_t is opaque here).
 *
 * A BSMP object is a message queue shared by the processes of a section.
 * Every process creates one with the same sizes (collective: it registers
 * four memory slots, so reserve them with lpf_resize_memory_register, and
 * calls lpf_sync once). It starts in WRITE mode:
 *
 *  - in WRITE mode, lpf_send queues messages: a tag of tag_size bytes and a
 *    payload of any size, both read from registered memory slots when the
 *    next sync runs (so leave them unchanged until then). A process sends at
 *    most max_messages messages and buffer_size payload bytes per superstep
 *    (LPF_ERR_BSMP_FULL past that). Each message takes three entries of the
 *    message queue at the sender, each lpf_bsmp_sync one more per process.
 *  - lpf_bsmp_sync (collective) delivers them and switches to READ mode;
 *  - in READ mode, lpf_move takes the received messages one by one (in no
 *    particular order), pointing into the object's buffer: valid until the
 *    next lpf_bsmp_sync, which switches back to WRITE mode.
 *
 * A plain lpf_sync in between does not change the mode.
 */
#ifndef LPF_BSMP_H
#define LPF_BSMP_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the BSMP interface this header implements. */
#define _LPF_BMSP_VERSION 201500L

/** The mode of a BSMP object in a superstep. */
enum lpf_bsmp_mode {
    READ,   /**< received messages can be taken with lpf_move  */
    WRITE   /**< messages can be queued with lpf_send          */
};

/** A BSMP object (opaque: its fields are this library's). */
typedef struct lpf_bsmp_buffer * lpf_bsmp_t;

/** A value that is no BSMP object (NULL). */
extern _LPFLIB_VAR const lpf_bsmp_t LPF_INVALID_BSMP;

/** lpf_send: the object's limit of messages or payload bytes for this
 *  superstep is reached; the message was not queued. */
extern _LPFLIB_VAR const lpf_err_t LPF_ERR_BSMP_FULL;

/** The object is not usable for the call (e.g. lpf_send in READ mode, or a
 *  failed lpf_bsmp_sync); the call had no effect. */
extern _LPFLIB_VAR const lpf_err_t LPF_ERR_BSMP_INVAL;

/** The size lpf_move gives when no message is left (SIZE_MAX). */
extern _LPFLIB_VAR const size_t LPF_INVALID_SIZE;

/**
 * Creates a BSMP object in WRITE mode over the context ctx, in which this
 * process is s of p (collective). buffer_size bounds the payload bytes a
 * process sends per superstep, max_messages the number of messages; every
 * message carries a tag of tag_size bytes. Registers four memory slots and
 * calls lpf_sync once. Returns LPF_SUCCESS, or LPF_ERR_OUT_OF_MEMORY (sizes
 * too large, no room in the memory register; *bsmp is LPF_INVALID_BSMP) or
 * LPF_ERR_FATAL (a failed sync).
 */
extern _LPFLIB_API
lpf_err_t lpf_bsmp_create(
    const lpf_t ctx,
    const lpf_pid_t s,
    const lpf_pid_t p,
    const size_t buffer_size,
    const size_t tag_size,
    const size_t max_messages,
    lpf_bsmp_t * const bsmp
);

/** Deregisters the object's four slots (no sync), frees it and sets *bsmp
 *  to LPF_INVALID_BSMP. Returns LPF_SUCCESS. */
extern _LPFLIB_API
lpf_err_t lpf_bsmp_destroy( lpf_bsmp_t * const bsmp );

/**
 * Queues a message to process pid: its tag is the object's tag_size bytes at
 * tag_offset in the slot tag, its payload the payload_size bytes at
 * payload_offset in the slot payload. Returns LPF_SUCCESS,
 * LPF_ERR_BSMP_FULL (limit reached; nothing queued), LPF_ERR_BSMP_INVAL (not
 * in WRITE mode) or the error of the underlying lpf_put.
 */
extern _LPFLIB_API
lpf_err_t lpf_send(
    const lpf_bsmp_t bsmp,
    const lpf_pid_t pid,
    const lpf_memslot_t tag,
    const size_t tag_offset,
    const lpf_memslot_t payload,
    const size_t payload_offset,
    const size_t payload_size
);

/** lpf_sync(ctx, hint) that also switches the object's mode: WRITE -> READ
 *  delivers the queued messages, READ -> WRITE drops the received ones.
 *  Returns LPF_SUCCESS or the error of lpf_sync. */
extern _LPFLIB_API
lpf_err_t lpf_bsmp_sync( lpf_bsmp_t bsmp, lpf_sync_attr_t hint );

/** lpf_bsmp_sync on each of the num_objects objects (all of one context)
 *  with a single lpf_sync. */
extern _LPFLIB_API
lpf_err_t lpf_bsmp_syncall( lpf_bsmp_t * const bsmp, const size_t num_objects, lpf_sync_attr_t hint );

/** In READ mode: takes the next received message (*tag_p, *payload_p point
 *  into the object's buffer, *size is the payload's size), or, when none is
 *  left, sets *size to LPF_INVALID_SIZE and both pointers to NULL. Returns
 *  LPF_SUCCESS (LPF_ERR_BSMP_INVAL when not in READ mode). */
extern _LPFLIB_API
lpf_err_t lpf_move( lpf_bsmp_t bsmp, void ** const tag_p, void ** const payload_p, size_t * const size );

#ifdef __cplusplus
}
#endif

#endif /* LPF_BSMP_H */
