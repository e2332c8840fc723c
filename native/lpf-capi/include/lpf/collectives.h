/*
 * lpf/collectives.h -- collective communication over an LPF context.
 *
 * Binary and source compatible with the published LPF collectives interface
 * (version 201500): same type names and layouts, same function signatures.
 * Implemented in liblpf_core (native/lpf-capi/src/collectives.rs); the
 * differences from the reference are listed in docs/compatibility.md.
 *
 * Usage: every process of a section (or of a strided group) creates one
 * lpf_coll_t with lpf_collectives_init, which registers one global memory
 * slot (reserve it with lpf_resize_memory_register first) and is usable
 * after the next lpf_sync. All calls on it are collective: every member
 * makes the same calls in the same order with matching arguments.
 *
 *  - lpf_broadcast, lpf_gather, lpf_scatter, lpf_allgather, lpf_alltoall
 *    queue puts or gets on the caller's slots; the result is in place when
 *    the caller's next lpf_sync returns. Per call a process originates or
 *    receives at most P messages (2P for allgather): reserve them with
 *    lpf_resize_message_queue.
 *  - lpf_reduce, lpf_allreduce, lpf_combine, lpf_allcombine call lpf_sync
 *    once themselves (on the whole context) and are complete on return.
 *    Their element/array slot must be global. Every process folds the
 *    contributions in group order (pid 0 first), so allreduce/allcombine
 *    yield identical bytes on every process.
 */
#ifndef LPF_COLLECTIVES_H
#define LPF_COLLECTIVES_H

#include <lpf/core.h>
#include <stdbool.h>

#ifdef __cplusplus
#  define restrict __restrict__
extern "C" {
#endif

/** Version of the collectives interface this header implements. */
#define _LPF_COLLECTIVES_VERSION 201500L

/** State of one collectives instance (the field layout is part of the ABI). */
typedef struct lpf_coll {
    lpf_t ctx;                  /**< the context it was created in          */
    lpf_pid_t * inv_translate;  /**< context pid -> group index             */
    lpf_pid_t * translate;      /**< group index -> context pid             */
    void * buffer;              /**< scratch space of the reductions        */
    lpf_memslot_t slot;         /**< the global slot of buffer              */
    lpf_pid_t P;                /**< number of members of the group         */
    lpf_pid_t s;                /**< this process's index in the group      */
} lpf_coll_t;

/** Reduces n elements of array into *value (which holds a valid element on
 *  entry); used by lpf_reduce and lpf_allreduce. */
typedef void (*lpf_reducer_t)(size_t n, const void * array, void * value);

/** Folds the n elements of combine into the n elements of into, element by
 *  element; used by lpf_combine and lpf_allcombine. */
typedef void (*lpf_combiner_t)(size_t n, const void * combine, void * into);

/** A value that is no collectives instance (for static initialisation). */
extern _LPFLIB_VAR const lpf_coll_t LPF_INVALID_COLL;

/**
 * Creates an instance over all p processes of ctx; s is this process's pid.
 * max_calls: collective calls per superstep (accepted, not needed here);
 * max_elem_size: largest element of lpf_reduce/lpf_allreduce in bytes;
 * max_byte_size: largest num*size of lpf_combine/lpf_allcombine. Registers
 * one global slot; usable after the next lpf_sync.
 */
extern _LPFLIB_API
lpf_err_t lpf_collectives_init(lpf_t ctx, lpf_pid_t s, lpf_pid_t p,
    size_t max_calls, size_t max_elem_size, size_t max_byte_size,
    lpf_coll_t * coll);

/** As lpf_collectives_init, over the pids lo, lo+str, ... below hi only;
 *  only those processes call it (and the collectives on it). */
extern _LPFLIB_API
lpf_err_t lpf_collectives_init_strided(lpf_t ctx, lpf_pid_t s, lpf_pid_t p,
    lpf_pid_t lo, lpf_pid_t hi, lpf_pid_t str,
    size_t max_calls, size_t max_elem_size, size_t max_byte_size,
    lpf_coll_t * coll);

/** The context coll was created in. */
extern _LPFLIB_API
lpf_t lpf_collectives_get_context(lpf_coll_t coll);

/** Collectively releases coll and its slot. */
extern _LPFLIB_API
lpf_err_t lpf_collectives_destroy(lpf_coll_t coll);

/** size bytes of src at root (global slot) to dst at every other member. */
extern _LPFLIB_API
lpf_err_t lpf_broadcast(lpf_coll_t coll, lpf_memslot_t src,
    lpf_memslot_t dst, size_t size, lpf_pid_t root);

/** size bytes of src at member k to offset k*size of dst (global) at root;
 *  root's own block is not touched. */
extern _LPFLIB_API
lpf_err_t lpf_gather(lpf_coll_t coll, lpf_memslot_t src,
    lpf_memslot_t dst, size_t size, lpf_pid_t root);

/** Block k (size bytes at offset k*size) of src (global) at root to dst at
 *  member k != root. */
extern _LPFLIB_API
lpf_err_t lpf_scatter(lpf_coll_t coll, lpf_memslot_t src,
    lpf_memslot_t dst, size_t size, lpf_pid_t root);

/** size bytes of src at member k to offset k*size of dst (global) at every
 *  member (at k itself too unless exclude_myself). */
extern _LPFLIB_API
lpf_err_t lpf_allgather(lpf_coll_t coll, lpf_memslot_t src,
    lpf_memslot_t dst, size_t size, bool exclude_myself);

/** Block j of src at member k to block k of dst at member j, for j != k
 *  (both slots global, not overlapping). */
extern _LPFLIB_API
lpf_err_t lpf_alltoall(lpf_coll_t coll, lpf_memslot_t src,
    lpf_memslot_t dst, size_t size);

/** *element at root becomes the reduction of every member's element
 *  (size bytes, global slot element_slot). */
extern _LPFLIB_API
lpf_err_t lpf_reduce(lpf_coll_t coll, void * restrict element,
    lpf_memslot_t element_slot, size_t size, lpf_reducer_t reducer,
    lpf_pid_t root);

/** As lpf_reduce, with the result at every member. */
extern _LPFLIB_API
lpf_err_t lpf_allreduce(lpf_coll_t coll, void * restrict element,
    lpf_memslot_t element_slot, size_t size, lpf_reducer_t reducer);

/** array (num elements of size bytes, global slot) at root becomes the
 *  element-wise combination of every member's array. */
extern _LPFLIB_API
lpf_err_t lpf_combine(lpf_coll_t coll, void * restrict array,
    lpf_memslot_t slot, size_t num, size_t size, lpf_combiner_t combiner,
    lpf_pid_t root);

/** As lpf_combine, with the result at every member. */
extern _LPFLIB_API
lpf_err_t lpf_allcombine(lpf_coll_t coll, void * restrict array,
    lpf_memslot_t slot, size_t num, size_t size, lpf_combiner_t combiner);

#ifdef __cplusplus
} /* extern "C" */
#  undef restrict
#endif

#endif /* LPF_COLLECTIVES_H */
