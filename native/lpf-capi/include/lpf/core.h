/*
 * lpf/core.h -- the LPF core interface (specification version 202000).
 *
 * This header declares the types, constants and the twelve primitives of
 * Lightweight Parallel Foundations (LPF), a bulk-synchronous (BSP)
 * communication layer. It is written to be source compatible with programs
 * that were written for the published LPF core interface: such a program
 * compiles against this header and links against liblpf_core with no change.
 *
 * Summary of the programming model
 * --------------------------------
 *  - A parallel section is started with lpf_exec (spawn processes from a
 *    context), lpf_hook (let processes that already exist join one section,
 *    see lpf/pthread.h and lpf/mpi.h) or lpf_rehook (restart a fresh section
 *    over the processes of an existing one). Every process of the section
 *    runs the same SPMD function with its own pid in [0, nprocs).
 *  - Computation proceeds in supersteps that end with lpf_sync. Messages
 *    (lpf_put, lpf_get) never block; they are all complete once the next
 *    lpf_sync returns.
 *  - Nothing is pre-allocated: before the first registration or message a
 *    program reserves capacity with lpf_resize_memory_register and
 *    lpf_resize_message_queue and then calls lpf_sync.
 *  - Every primitive returns an lpf_err_t; only LPF_ERR_FATAL leaves the
 *    process in a failed state.
 */
#ifndef LPF_CORE_H
#define LPF_CORE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the LPF core specification this header implements. */
#define _LPF_VERSION 202000L

/**
 * Defined when the process with pid 0 of an lpf_exec runs in the address
 * space of the caller of lpf_exec (so it may share pointers with it).
 */
#define _LPF_INCLUSIVE_MEMORY 202000L

/*
 * Decorations of exported functions (_LPFLIB_API) and exported data objects
 * (_LPFLIB_VAR). The published higher-level headers (lpf/collectives.h,
 * lpf/bsplib.h, lpf/hybrid.h) and libraries written against them put these
 * in front of their declarations. With GCC-compatible compilers they give the
 * symbol default visibility, so a library built with -fvisibility=hidden
 * still exports its LPF entry points; elsewhere they expand to nothing. A
 * build may define either macro itself before including this header.
 */
#ifndef _LPFLIB_API
#  if defined(__GNUC__) && __GNUC__ >= 4
#    define _LPFLIB_API __attribute__((visibility("default")))
#  else
#    define _LPFLIB_API
#  endif
#endif
#ifndef _LPFLIB_VAR
#  define _LPFLIB_VAR _LPFLIB_API
#endif

/* ------------------------------------------------------------------------ */
/* Types                                                                     */
/* ------------------------------------------------------------------------ */

/** Handle to an LPF context: the state of one process in one section. */
typedef void * lpf_t;

/** What a platform initialiser (lpf_pthread_initialize, ...) hands back;
 *  pass it to lpf_hook. */
typedef void * lpf_init_t;

/** A process identifier; also used for process counts. */
typedef unsigned lpf_pid_t;

/** Result code of every LPF primitive (see LPF_SUCCESS and friends). */
typedef int lpf_err_t;

/** Handle to a registered memory area. */
typedef size_t lpf_memslot_t;

/** Attributes for lpf_sync; LPF_SYNC_DEFAULT is the only portable value. */
typedef int lpf_sync_attr_t;

/** Attributes for lpf_put / lpf_get; LPF_MSG_DEFAULT is the only portable
 *  value. */
typedef int lpf_msg_attr_t;

/** A generic function pointer, used to pass function symbols to the
 *  processes of a section. */
typedef void (*lpf_func_t)();

/**
 * The arguments of an SPMD section.
 *
 * In lpf_exec only pid 0 sees input/output (the others see NULL and 0);
 * every process sees the function symbol table. In lpf_hook and
 * lpf_rehook each process passes its own arguments.
 */
typedef struct lpf_args {
    const void * input;          /**< readable block of input_size bytes   */
    size_t input_size;           /**< size of *input in bytes              */
    void * output;               /**< writable block of output_size bytes  */
    size_t output_size;          /**< size of *output in bytes             */
    const lpf_func_t * f_symbols;/**< table of f_size function pointers    */
    size_t f_size;               /**< number of entries in f_symbols       */
} lpf_args_t;

/**
 * Machine parameters as reported by lpf_probe.
 *
 * g(p, n, attr) is the cost in seconds per byte of communicating messages of
 * at least n bytes in an h-relation among p processes; l(p, n, attr) is the
 * latency (fixed cost) in seconds of one lpf_sync. Both return the same value
 * on every process and are strictly positive.
 */
typedef struct lpf_machine {
    lpf_pid_t p;        /**< processors allocated to the whole runtime     */
    lpf_pid_t free_p;   /**< processors available to a nested lpf_exec; >=1 */
    double (*g)(lpf_pid_t p, size_t min_msg_size, lpf_sync_attr_t attr);
    double (*l)(lpf_pid_t p, size_t min_msg_size, lpf_sync_attr_t attr);
} lpf_machine_t;

/** The function every process of a section runs. */
typedef void (*lpf_spmd_t)(const lpf_t ctx, const lpf_pid_t pid,
                           const lpf_pid_t nprocs, const lpf_args_t args);

/* ------------------------------------------------------------------------ */
/* Constants (exported data objects, not macros)                             */
/* ------------------------------------------------------------------------ */

/** The call succeeded (value 0). */
extern const lpf_err_t LPF_SUCCESS;

/** The call could not obtain the memory it needed and had no effect
 *  (value 1). */
extern const lpf_err_t LPF_ERR_OUT_OF_MEMORY;

/** An unrecoverable error; the process is now in a failed state (value 2).
 *  Error codes are ordered by severity. */
extern const lpf_err_t LPF_ERR_FATAL;

/** Empty arguments: every pointer NULL, every size 0. */
extern const lpf_args_t LPF_NO_ARGS;

/** Default attribute for lpf_sync (value 0). */
extern const lpf_sync_attr_t LPF_SYNC_DEFAULT;

/** Default attribute for lpf_put and lpf_get (value 0). */
extern const lpf_msg_attr_t LPF_MSG_DEFAULT;

/** Ask lpf_exec for as many processes as are available (UINT_MAX). */
extern const lpf_pid_t LPF_MAX_P;

/** A memory slot value that never denotes a registered area (SIZE_MAX). */
extern const lpf_memslot_t LPF_INVALID_MEMSLOT;

/** The null context (NULL). */
extern const lpf_t LPF_NONE;

/** The null platform initialisation (NULL). */
extern const lpf_init_t LPF_INIT_NONE;

/** The context of the program outside any SPMD section; use it with
 *  lpf_exec from main(). Never NULL. It is also a context of one process
 *  (pid 0 of 1) for the other primitives: sequential code and library
 *  initialisers may resize, register, put and get to themselves, sync,
 *  deregister and rehook on it. Each thread has its own (a context is used
 *  by one thread); after an LPF_ERR_FATAL on it, lpf_exec(LPF_ROOT) fails
 *  too. */
extern const lpf_t LPF_ROOT;

/** Machine parameters that describe no machine: {0, 0, NULL, NULL}. */
extern const lpf_machine_t LPF_INVALID_MACHINE;

/* ------------------------------------------------------------------------ */
/* Starting SPMD sections                                                    */
/* ------------------------------------------------------------------------ */

/**
 * Runs spmd on min(P, free processors) new processes and waits for them.
 * From main() pass LPF_ROOT as ctx; from inside a section pass the current
 * context (nested exec). With P == LPF_MAX_P the engine may take the count
 * from the environment variable LPF_MAX_PROCS.
 *
 * Returns LPF_SUCCESS, or LPF_ERR_FATAL if any process of the section failed
 * (e.g. unmatched lpf_sync calls). Output that pid 0 wrote to args.output is
 * delivered to the caller in either case.
 */
lpf_err_t lpf_exec(lpf_t ctx, lpf_pid_t P, lpf_spmd_t spmd, lpf_args_t args);

/**
 * Lets the processes that created init (see the platform headers) run spmd
 * together, one LPF process per creator. Each calls lpf_hook with its own
 * args. The same init may be used for any number of hooks.
 */
lpf_err_t lpf_hook(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args);

/**
 * Collectively starts a fresh section over the processes of ctx, with empty
 * registers and queues. ctx is on hold until the new section ends.
 */
lpf_err_t lpf_rehook(lpf_t ctx, lpf_spmd_t spmd, lpf_args_t args);

/* ------------------------------------------------------------------------ */
/* Memory registration                                                       */
/* ------------------------------------------------------------------------ */

/**
 * Collectively registers size bytes at pointer for remote access. All
 * processes register their global areas in the same superstep and order.
 * Uses a register slot immediately; usable for communication after the next
 * lpf_sync. A NULL pointer with size 0 is legal.
 */
lpf_err_t lpf_register_global(lpf_t ctx, void * pointer, size_t size,
                              lpf_memslot_t * memslot);

/**
 * Registers size bytes at pointer for local use only (as the source of a
 * put or the destination of a get). Usable at once.
 */
lpf_err_t lpf_register_local(lpf_t ctx, void * pointer, size_t size,
                             lpf_memslot_t * memslot);

/**
 * Releases a slot immediately. For global slots this is collective and
 * happens in the same order on every process.
 */
lpf_err_t lpf_deregister(lpf_t ctx, lpf_memslot_t memslot);

/* ------------------------------------------------------------------------ */
/* Communication                                                             */
/* ------------------------------------------------------------------------ */

/**
 * Schedules a copy of size bytes from (src_slot, src_offset) on this process
 * to (dst_slot, dst_offset) on process dst_pid; dst_slot must be global.
 * Does not block; the copy is complete after the next lpf_sync. A put of 0
 * bytes does nothing and succeeds, whatever slots, offsets and pid it names
 * (e.g. LPF_INVALID_MEMSLOT for an empty block), and takes no queue room.
 */
lpf_err_t lpf_put(lpf_t ctx,
                  lpf_memslot_t src_slot, size_t src_offset,
                  lpf_pid_t dst_pid, lpf_memslot_t dst_slot, size_t dst_offset,
                  size_t size, lpf_msg_attr_t attr);

/**
 * Schedules a copy of size bytes from (src_slot, src_offset) on process
 * src_pid to (dst_slot, dst_offset) on this process; src_slot must be
 * global. Does not block; the copy is complete after the next lpf_sync.
 * A get of 0 bytes does nothing and succeeds, as a put of 0 bytes.
 */
lpf_err_t lpf_get(lpf_t ctx,
                  lpf_pid_t src_pid, lpf_memslot_t src_slot, size_t src_offset,
                  lpf_memslot_t dst_slot, size_t dst_offset,
                  size_t size, lpf_msg_attr_t attr);

/**
 * Ends the current superstep: waits until all processes reach it and all
 * messages scheduled in the superstep are complete; applies pending resizes
 * and global registrations.
 */
lpf_err_t lpf_sync(lpf_t ctx, lpf_sync_attr_t attr);

/* ------------------------------------------------------------------------ */
/* Introspection and capacity                                                */
/* ------------------------------------------------------------------------ */

/**
 * Fills *params with the machine parameters of this runtime. p is all
 * processors of the runtime, the same on LPF_ROOT, in a section and at any
 * nesting depth: on LPF_ROOT that of the engine LPF_ENGINE selects (shm:
 * LPF_MAX_PROCS or the hardware threads; under lpfrun or mpirun the job's
 * LPF processes), in a hooked section that of the processes of its init.
 * g and l are those of the engine running the context (the root's: the
 * engine of its lpf_exec; a nested section: shm).
 */
lpf_err_t lpf_probe(lpf_t ctx, lpf_machine_t * params);

/**
 * Requests room for max_regs registered memory slots (local and global).
 * Local call; takes effect after the next lpf_sync, the last request before
 * that sync wins. Returns LPF_ERR_OUT_OF_MEMORY, with no effect, when the
 * request cannot be met.
 */
lpf_err_t lpf_resize_memory_register(lpf_t ctx, size_t max_regs);

/**
 * Requests room for max_msgs messages per superstep. A put or get counts one
 * message at its origin and one at its target. Same timing and failure rules
 * as lpf_resize_memory_register.
 */
lpf_err_t lpf_resize_message_queue(lpf_t ctx, size_t max_msgs);

/** Ends the whole program at once (see lpf/abort.h, which also declares it;
 *  newer published versions of this header declare it here too). */
lpf_err_t lpf_abort(lpf_t ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_CORE_H */
