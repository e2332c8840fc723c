/*
 * bsp/bsp.h -- the classic BSPlib interface (Hill et al., "BSPlib: The BSP
 * Programming Library") over LPF.
 *
 * Binary and source compatible with the published LPF BSPlib wrapper: the
 * bsp_* names are macros for the exported bsplibstd_* functions (int sizes,
 * the classic signatures) or, when LPF_USE_MCBSP_API is defined to a
 * non-zero value, for the mcbsp_* functions (unsigned pids, size_t sizes, as
 * in MulticoreBSP). Implemented in liblpf_core over lpf/bsplib.h, one
 * instance per LPF process; errors print a message and abort the program.
 *
 * Program structure: the parallel part is a function whose first statement
 * is bsp_begin(P) and whose last is bsp_end(). main() first calls
 * bsp_init(that_function, argc, argv) and then calls that function itself:
 * its bsp_begin starts P processes (lpf_exec from LPF_ROOT; the engine is
 * LPF_ENGINE, default shm threads) that all run the function, and returns
 * to the caller after bsp_end of the section. Without bsp_init this
 * implementation aborts with a message (it cannot run main() again on other
 * threads); see docs/compatibility.md.
 */
#ifndef LPF_BSP_BSP_H
#define LPF_BSP_BSP_H

#include <stddef.h>

/* Export decoration of this header's functions (nothing for static use). */
#ifndef BSPLIB_API
#  if defined(__GNUC__) && __GNUC__ >= 4
#    define BSPLIB_API __attribute__((visibility("default")))
#  else
#    define BSPLIB_API
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if LPF_USE_MCBSP_API
/** MulticoreBSP-style types: a pid, a process count, a size. */
typedef unsigned int bsp_pid_t;
typedef unsigned int bsp_nprocs_t;
typedef size_t bsp_size_t;
/** What bsp_hpmove and bsp_get_tag report for "no message". */
static const bsp_size_t bsp_size_unavailable = (bsp_size_t) -1;
/* Checkpointing does not exist here; these do nothing. */
#  define mcbsp_disable_checkpointing()
#  define mcbsp_enable_checkpointing()

#  define bsp_nprocs       mcbsp_nprocs
#  define bsp_pid          mcbsp_pid
#  define bsp_push_reg     mcbsp_push_reg
#  define bsp_put          mcbsp_put
#  define bsp_hpput        mcbsp_hpput
#  define bsp_get          mcbsp_get
#  define bsp_hpget        mcbsp_hpget
#  define bsp_set_tagsize  mcbsp_set_tagsize
#  define bsp_send         mcbsp_send
#  define bsp_hpsend       mcbsp_hpsend
#  define bsp_qsize        mcbsp_qsize
#  define bsp_get_tag      mcbsp_get_tag
#  define bsp_move         mcbsp_move
#  define bsp_hpmove       mcbsp_hpmove
#else
#  define bsp_nprocs       bsplibstd_nprocs
#  define bsp_pid          bsplibstd_pid
#  define bsp_push_reg     bsplibstd_push_reg
#  define bsp_put          bsplibstd_put
#  define bsp_hpput        bsplibstd_hpput
#  define bsp_get          bsplibstd_get
#  define bsp_hpget        bsplibstd_hpget
#  define bsp_set_tagsize  bsplibstd_set_tagsize
#  define bsp_send         bsplibstd_send
#  define bsp_hpsend       bsplibstd_hpsend
#  define bsp_qsize        bsplibstd_qsize
#  define bsp_get_tag      bsplibstd_get_tag
#  define bsp_move         bsplibstd_move
#  define bsp_hpmove       bsplibstd_hpmove
#endif
#define bsp_init   bsplibstd_init
#define bsp_abort  bsplibstd_abort
#define bsp_time   bsplibstd_time
#define bsp_sync   bsplibstd_sync
#define bsp_pop_reg bsplibstd_pop_reg

/* --- SPMD framework ------------------------------------------------------ */

/** Names the function holding bsp_begin .. bsp_end; call once, from main. */
extern BSPLIB_API
void bsplibstd_init(void (*spmd_part)(void), int argc, char * argv[]);

/** Starts (or, inside the started processes, enters) the parallel part.
 *  bsplibstd_spawn returns non-zero to the caller that started the section,
 *  once it is over: the macro then jumps to the label bsp_end() defines. */
extern BSPLIB_API int bsplibstd_spawn(unsigned int maxprocs);
#define bsp_begin(maxprocs) \
    do { if (bsplibstd_spawn((unsigned int) (maxprocs))) \
             goto __bsplibstd_end_label; } while (0)

/** Ends the parallel part (a final superstep). */
extern BSPLIB_API void bsplibstd_end(void);
#define bsp_end() bsplibstd_end(); __bsplibstd_end_label:

/** Prints the printf-style message and ends the whole program. */
extern BSPLIB_API void bsplibstd_abort(const char * format, ...);

/** Processes of the section; before bsp_begin, how many could be started. */
extern BSPLIB_API int bsplibstd_nprocs(void);
extern BSPLIB_API unsigned int mcbsp_nprocs(void);

/** This process's pid in [0, bsp_nprocs()). */
extern BSPLIB_API int bsplibstd_pid(void);
extern BSPLIB_API unsigned int mcbsp_pid(void);

/** Seconds since bsp_begin on this process. */
extern BSPLIB_API double bsplibstd_time(void);

/** Ends the superstep: all registrations, puts, gets and messages of it take
 *  effect. */
extern BSPLIB_API void bsplibstd_sync(void);

/* --- Direct remote memory access ----------------------------------------- */

/** Registers size bytes at ident from the next sync on (collective). */
extern BSPLIB_API void bsplibstd_push_reg(const void * ident, int size);
extern BSPLIB_API void mcbsp_push_reg(const void * ident, size_t size);

/** Removes the latest registration of ident at the next sync (collective). */
extern BSPLIB_API void bsplibstd_pop_reg(const void * ident);

/** Buffered put of nbytes from src to offset of the area registered as dst
 *  at process pid. */
extern BSPLIB_API void bsplibstd_put(int pid, const void * src, void * dst,
    int offset, int nbytes);
extern BSPLIB_API void mcbsp_put(unsigned int pid, const void * src,
    void * dst, size_t offset, size_t nbytes);

/** Unbuffered put: src is read at the next sync. */
extern BSPLIB_API void bsplibstd_hpput(int pid, const void * src, void * dst,
    int offset, int nbytes);
extern BSPLIB_API void mcbsp_hpput(unsigned int pid, const void * src,
    void * dst, size_t offset, size_t nbytes);

/** Get of nbytes at offset of the area registered as src at process pid
 *  into dst, at the next sync. */
extern BSPLIB_API void bsplibstd_get(int pid, const void * src, int offset,
    void * dst, int nbytes);
extern BSPLIB_API void mcbsp_get(unsigned int pid, const void * src,
    size_t offset, void * dst, size_t nbytes);

/** Unbuffered get. */
extern BSPLIB_API void bsplibstd_hpget(int pid, const void * src, int offset,
    void * dst, int nbytes);
extern BSPLIB_API void mcbsp_hpget(unsigned int pid, const void * src,
    size_t offset, void * dst, size_t nbytes);

/* --- Bulk synchronous message passing ------------------------------------ */

/** *tag_nbytes: the tag size from the next sync on; on return, the current
 *  one. */
extern BSPLIB_API void bsplibstd_set_tagsize(int * tag_nbytes);
extern BSPLIB_API void mcbsp_set_tagsize(size_t * tag_nbytes);

/** Sends a message (tag and payload copied now) to process pid. */
extern BSPLIB_API void bsplibstd_send(int pid, const void * tag,
    const void * payload, int payload_nbytes);
extern BSPLIB_API void mcbsp_send(unsigned int pid, const void * tag,
    const void * payload, size_t payload_nbytes);

/** Sends a message whose tag and payload are read at the next sync. */
extern BSPLIB_API void bsplibstd_hpsend(int pid, const void * tag,
    const void * payload, int payload_nbytes);
extern BSPLIB_API void mcbsp_hpsend(unsigned int pid, const void * tag,
    const void * payload, size_t payload_nbytes);

/** Number of queued messages and the sum of their payload sizes. */
extern BSPLIB_API void bsplibstd_qsize(int * nmessages, int * accum_nbytes);
extern BSPLIB_API void mcbsp_qsize(unsigned int * nmessages,
    size_t * accum_nbytes);

/** Payload size of the first message (-1 / (size_t)-1 if none); its tag is
 *  copied to tag. */
extern BSPLIB_API void bsplibstd_get_tag(int * status, void * tag);
extern BSPLIB_API void mcbsp_get_tag(size_t * status, void * tag);

/** Copies at most reception_bytes of the first message and dequeues it. */
extern BSPLIB_API void bsplibstd_move(void * payload, int reception_bytes);
extern BSPLIB_API void mcbsp_move(void * payload, size_t reception_bytes);

/** Dequeues the first message, pointing at its tag and payload; returns the
 *  payload size, or -1 / (size_t)-1 when the queue is empty. */
extern BSPLIB_API int bsplibstd_hpmove(const void ** tag_ptr,
    const void ** payload_ptr);
extern BSPLIB_API size_t mcbsp_hpmove(void ** tag_ptr, void ** payload_ptr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_BSP_BSP_H */
