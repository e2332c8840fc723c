/*
 * lpf/mpi.h -- platform initialisers for lpf_hook across separate OS
 * processes (possibly on different machines).
 *
 * lpf_mpi_initialize_over_tcp needs no MPI at all: the processes find each
 * other through a TCP rendezvous at server:port. It is always declared.
 *
 * lpf_mpi_initialize_with_mpicomm takes an MPI communicator and is declared
 * only when MPI's own <mpi.h> is available:
 *   - if LPF_HAVE_MPI is defined, this header includes <mpi.h>;
 *   - otherwise, if <mpi.h> was already included (MPI_VERSION is defined),
 *     it is used;
 *   - otherwise, unless LPF_NO_MPI is defined, <mpi.h> is included when the
 *     compiler can see it (__has_include), e.g. when compiling with mpicc.
 * Without MPI this header still compiles; the MPI-communicator initialiser
 * is simply not declared.
 */
#ifndef LPF_MPI_H
#define LPF_MPI_H

#include <lpf/core.h>

/* Pull in MPI (outside any extern "C" block) when asked or available. */
#if !defined(MPI_VERSION)
#  if defined(LPF_HAVE_MPI)
#    include <mpi.h>
#  elif !defined(LPF_NO_MPI) && defined(__has_include)
#    if __has_include(<mpi.h>)
#      include <mpi.h>
#    endif
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Called by each of nprocs processes, with its own pid in [0, nprocs), to
 * join them into one LPF runtime. The process with pid 0 must run on host
 * `server` and listens on `port` (a service name or decimal number, as a
 * string); the others connect to it. Gives up after timeout_ms milliseconds.
 * On success *init holds a handle for lpf_hook.
 */
lpf_err_t lpf_mpi_initialize_over_tcp(const char * server, const char * port,
                                      int timeout_ms, lpf_pid_t pid,
                                      lpf_pid_t nprocs, lpf_init_t * init);

#if defined(MPI_VERSION)
/**
 * Makes the processes of the MPI communicator comm into one LPF runtime, one
 * LPF process per rank (pid = rank). Collective over comm.
 */
lpf_err_t lpf_mpi_initialize_with_mpicomm(MPI_Comm comm, lpf_init_t * init);
#endif

/** Releases what an lpf_mpi_initialize_* call acquired for this process. */
lpf_err_t lpf_mpi_finalize(lpf_init_t init);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_MPI_H */
