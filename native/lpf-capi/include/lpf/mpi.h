/*
 * lpf/mpi.h -- platform initialisers for lpf_hook across separate OS
 * processes (possibly on different machines).
 *
 * As the published header, this one includes MPI's <mpi.h> unconditionally:
 * compile with the MPI compiler wrapper (mpicc) or with MPI's include path,
 * e.g. $(mpicc --showme:compile) for Open MPI. Without it, the compiler
 * stops here, at the missing <mpi.h>. (A program that needs no MPI at all
 * can use lpf/tcp.h instead, whose lpf_tcp_initialize is the same TCP
 * rendezvous as lpf_mpi_initialize_over_tcp.)
 *
 * lpf_mpi_initialize_over_tcp needs no MPI at run time: the processes find
 * each other through a TCP rendezvous at server:port. The library built
 * with the cargo feature `mpi` also implements
 * lpf_mpi_initialize_with_mpicomm; the default library exports it too, but
 * it returns LPF_ERR_FATAL saying so (docs/compatibility.md says why).
 */
#ifndef LPF_MPI_H
#define LPF_MPI_H

#include <lpf/core.h>
#include <mpi.h>

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

/**
 * Makes the processes of the MPI communicator comm into one LPF runtime, one
 * LPF process per rank (pid = rank). Collective over comm. Only in a library
 * built with MPI (cargo feature `mpi`); the default library returns
 * LPF_ERR_FATAL with a message saying so.
 */
lpf_err_t lpf_mpi_initialize_with_mpicomm(MPI_Comm comm, lpf_init_t * init);

/**
 * For programs started by a launcher (lpfrun with the tcp or hybrid engine, or
 * mpirun with an MPI engine). A program that does not define it gets 1: the
 * runtime joins the job's processes before main, only the process of pid 0
 * runs main, and the others serve its lpf_exec(LPF_ROOT, ...) calls and exit
 * when it exits. A program that defines it as 0 (`const int
 * LPF_MPI_AUTO_INITIALIZE = 0;`) runs main in every process and makes its own
 * init (MPI_Init + lpf_mpi_initialize_with_mpicomm, or
 * lpf_mpi_initialize_over_tcp) for lpf_hook. The library only refers to it
 * (weakly): a program that reads it must define it.
 */
extern const int LPF_MPI_AUTO_INITIALIZE;

/** Releases what an lpf_mpi_initialize_* call acquired for this process. */
lpf_err_t lpf_mpi_finalize(lpf_init_t init);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_MPI_H */
