/*
 * lpf/hybrid.h -- the hybrid engine's platform initialiser.
 *
 * Declared as published (the two contexts are passed as plain lpf_t, the
 * handle type of every engine here). This implementation selects the hybrid
 * engine with LPF_ENGINE=hybrid instead (threads in each process, TCP or MPI
 * between processes); these two functions return LPF_ERR_FATAL with a
 * message saying so. See docs/compatibility.md.
 */
#ifndef LPF_HYBRID_H
#define LPF_HYBRID_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Would make an init from a Pthread context (pid threadId of nThreads) and
 *  an MPI context (pid nodeId of nNodes); unsupported here. */
extern _LPFLIB_API
lpf_err_t lpf_hybrid_initialize(lpf_t thread, lpf_t mpi,
    lpf_pid_t threadId, lpf_pid_t nThreads,
    lpf_pid_t nodeId, lpf_pid_t nNodes, lpf_init_t * init);

/** Releases an init of lpf_hybrid_initialize; unsupported here. */
extern _LPFLIB_API
lpf_err_t lpf_hybrid_finalize(lpf_init_t init);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_HYBRID_H */
