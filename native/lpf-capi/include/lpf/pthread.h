/*
 * lpf/pthread.h -- let the POSIX threads of an existing program form one LPF
 * section via lpf_hook.
 *
 * Usage: N threads each call lpf_pthread_initialize(pid, N, &init) with a
 * distinct pid in [0, N); then each calls lpf_hook(init, spmd, args) (any
 * number of times) and finally lpf_pthread_finalize(init).
 */
#ifndef LPF_PTHREAD_H
#define LPF_PTHREAD_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Called by each of nprocs threads, with its own pid in [0, nprocs), to join
 * them into one LPF runtime. Blocks until all nprocs threads have called it.
 * On success *init holds a handle for lpf_hook.
 *
 * Threads are grouped by nprocs (the interface names no group), so a program
 * must not fill two groups of the same size at once. If the group does not
 * form within LPF_PTHREAD_TIMEOUT_MS milliseconds (environment; default 60000)
 * every thread waiting in it gets LPF_ERR_FATAL, with the pids that never came
 * named in the message; a pid joining twice fails the group at once.
 */
lpf_err_t lpf_pthread_initialize(lpf_pid_t pid, lpf_pid_t nprocs,
                                 lpf_init_t * init);

/** Releases what lpf_pthread_initialize acquired for this thread. */
lpf_err_t lpf_pthread_finalize(lpf_init_t init);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_PTHREAD_H */
