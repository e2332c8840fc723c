/*
 * lpf/tcp.h -- extension (not part of the LPF specification): the TCP
 * platform initialiser with full control over authentication and binding.
 *
 * lpf_mpi_initialize_over_tcp (lpf/mpi.h) is the portable spelling; this one
 * adds a shared secret, a local bind address and reports the port actually
 * bound by pid 0 (useful with port "0" in tests).
 */
#ifndef LPF_TCP_H
#define LPF_TCP_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Joins nprocs processes, each passing its own pid in [0, nprocs), into one
 * LPF runtime over TCP.
 *
 * server, port  where pid 0 listens and the others connect; port is a
 *               string (service name or number).
 * timeout_ms    how long to wait for all peers before giving up.
 * secret        shared secret every peer must present, at least 16 bytes
 *               (shorter ones are refused); NULL for none.
 * bind_addr     local address to bind to; NULL for the default.
 * bound_port    if not NULL, receives the port pid 0 actually listens on
 *               (meaningful on pid 0, e.g. after asking for port "0").
 * init          receives a handle for lpf_hook on success.
 */
lpf_err_t lpf_tcp_initialize(const char * server, const char * port,
                             int timeout_ms, lpf_pid_t pid, lpf_pid_t nprocs,
                             const char * secret, const char * bind_addr,
                             unsigned * bound_port, lpf_init_t * init);

/** Releases what lpf_tcp_initialize or lpf_tcp_join acquired for this process. */
lpf_err_t lpf_tcp_finalize(lpf_init_t init);

/** A TCP init between its two steps (see lpf_tcp_listen). */
typedef void * lpf_tcp_pending_t;

/**
 * The first half of lpf_tcp_initialize: pid 0 binds its port (with port "0",
 * the one the OS chose is returned in *bound_port, to be published to the
 * other processes by whatever started them); the others only record where to
 * connect. Then lpf_tcp_join waits for the job to assemble. Arguments as for
 * lpf_tcp_initialize.
 */
lpf_err_t lpf_tcp_listen(const char * server, const char * port,
                         int timeout_ms, lpf_pid_t pid, lpf_pid_t nprocs,
                         const char * secret, const char * bind_addr,
                         unsigned * bound_port, lpf_tcp_pending_t * pending);

/** The second half: consumes pending (also on failure) and yields an init. */
lpf_err_t lpf_tcp_join(lpf_tcp_pending_t pending, lpf_init_t * init);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_TCP_H */
