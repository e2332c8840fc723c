/*
 * tcp_ring: the ring of ring_common.h between separate OS processes that
 * meet over TCP, with no MPI launcher.
 *
 *   tcp_ring SERVER PORT PID NPROCS [TIMEOUT_MS]
 *
 * Start NPROCS copies, with PID 0..NPROCS-1; the copy with PID 0 must run on
 * SERVER and listens on PORT. Each copy exits 0 when its own part of the
 * ring worked; the copy with PID 0 also fails when any other copy reported a
 * failure.
 */
#include <lpf/core.h>
#include <lpf/mpi.h>

#include "ring_common.h"

static int parse_unsigned(const char *s, unsigned long max,
                          unsigned long *v)
{
    char *end = NULL;
    if (s == NULL || *s == '\0' || *s == '-')
        return 0;
    *v = strtoul(s, &end, 10);
    return *end == '\0' && *v <= max;
}

int main(int argc, char **argv)
{
    unsigned long pid, nprocs, timeout = 30000;
    lpf_init_t init = LPF_INIT_NONE;
    lpf_err_t rc;
    int bad = 0;

    if (argc < 5 || argc > 6 ||
        !parse_unsigned(argv[3], 1000000UL, &pid) ||
        !parse_unsigned(argv[4], 1000000UL, &nprocs) || nprocs == 0 ||
        pid >= nprocs ||
        (argc == 6 && !parse_unsigned(argv[5], 0x7fffffffUL, &timeout))) {
        fprintf(stderr,
                "usage: %s SERVER PORT PID NPROCS [TIMEOUT_MS]\n"
                "  (0 <= PID < NPROCS; PID 0 runs on SERVER)\n",
                argc > 0 ? argv[0] : "tcp_ring");
        return 2;
    }

    rc = lpf_mpi_initialize_over_tcp(argv[1], argv[2], (int)timeout,
                                     (lpf_pid_t)pid, (lpf_pid_t)nprocs,
                                     &init);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "tcp_ring pid %lu: lpf_mpi_initialize_over_tcp(%s, "
                "%s) failed: %d %s\n", pid, argv[1], argv[2], rc,
                test_error_text());
        return 1;
    }

    bad += ring_hook_and_verify(init, (lpf_pid_t)pid, (lpf_pid_t)nprocs);

    rc = lpf_mpi_finalize(init);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "lpf_mpi_finalize returned %d", rc);

    if (bad != 0) {
        fprintf(stderr, "tcp_ring pid %lu: FAILED (%d problem(s))\n", pid,
                bad);
        return 1;
    }
    printf("tcp_ring pid %lu/%lu: ok\n", pid, nprocs);
    return 0;
}
