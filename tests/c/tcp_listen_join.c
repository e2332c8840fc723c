/*
 * tcp_listen_join: the two-step TCP initialiser of lpf/tcp.h.
 *
 *   tcp_listen_join [NPROCS]
 *
 * 1. pid 0 calls lpf_tcp_listen on port "0" and learns the port the OS chose;
 *    only then are the other processes told it (through a pipe; they are
 *    forked before pid 0 listens, so no process forks with the library's
 *    threads running). Everyone calls lpf_tcp_join and runs the ring of
 *    ring_common.h through lpf_hook.
 * 2. The same with process 1 presenting a wrong secret: its lpf_tcp_join, and
 *    pid 0's, fail with LPF_ERR_FATAL within their timeouts; nothing hangs.
 * 3. Bad arguments: lpf_tcp_listen refuses a pid outside [0, nprocs) and
 *    writes no pending handle.
 *
 * Exits 0 when every process saw what it should.
 */
#define _POSIX_C_SOURCE 200809L

#include <lpf/core.h>
#include <lpf/tcp.h>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ring_common.h"

#define SECRET "listen-join-secret"

/* One process of a job: listen, join, run the ring (when `expect_ok`), else
 * expect the join to fail. Returns the number of problems. */
static int member(lpf_pid_t pid, lpf_pid_t nprocs, const char *port,
                  const char *secret, int timeout_ms, int expect_ok,
                  int port_fd)
{
    lpf_tcp_pending_t pending = NULL;
    lpf_init_t init = LPF_INIT_NONE;
    unsigned bound = 0;
    lpf_err_t rc;
    int bad = 0;

    rc = lpf_tcp_listen("127.0.0.1", port, timeout_ms, pid, nprocs, secret,
                        NULL, &bound, &pending);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "lpf_tcp_listen returned %d: %s", rc,
           test_error_text());
    if (rc != LPF_SUCCESS)
        return bad;
    if (pid == 0) {
        lpf_pid_t q;
        EXPECT(&bad, pid, bound != 0, "no port bound (asked for port %s)", port);
        /* Tell the others where to connect, once per process. */
        for (q = 1; q < nprocs; ++q) {
            if (write(port_fd, &bound, sizeof bound) != (ssize_t)sizeof bound)
                EXPECT(&bad, pid, 0, "cannot publish the port");
        }
    }

    rc = lpf_tcp_join(pending, &init);
    if (!expect_ok) {
        EXPECT(&bad, pid, rc == LPF_ERR_FATAL,
               "lpf_tcp_join should fail with LPF_ERR_FATAL, returned %d", rc);
        if (rc == LPF_SUCCESS)
            lpf_tcp_finalize(init);
        return bad;
    }
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "lpf_tcp_join returned %d: %s", rc,
           test_error_text());
    if (rc != LPF_SUCCESS)
        return bad;

    bad += ring_hook_and_verify(init, pid, nprocs);
    rc = lpf_tcp_finalize(init);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "lpf_tcp_finalize returned %d", rc);
    return bad;
}

/* Runs one job of `nprocs` processes; process `odd` (if < nprocs) presents a
 * wrong secret, and then every join is expected to fail. Returns the number
 * of processes that saw something else than expected. */
static int job(lpf_pid_t nprocs, lpf_pid_t odd, int timeout_ms)
{
    const int ok = odd >= nprocs;
    int fds[2], failed = 0, bad;
    lpf_pid_t q;
    pid_t *kids = calloc(nprocs, sizeof *kids);

    if (kids == NULL || pipe(fds) != 0) {
        perror("tcp_listen_join: pipe");
        free(kids);
        return 1;
    }
    for (q = 1; q < nprocs; ++q) {
        pid_t child = fork();
        if (child < 0) {
            perror("tcp_listen_join: fork");
            return 1;
        }
        if (child == 0) {
            unsigned port = 0;
            char text[16];
            close(fds[1]);
            if (read(fds[0], &port, sizeof port) != (ssize_t)sizeof port) {
                fprintf(stderr, "pid %u: no port from pid 0\n", (unsigned)q);
                _exit(1);
            }
            snprintf(text, sizeof text, "%u", port);
            bad = member(q, nprocs, text, q == odd ? "a wrong secret, 16+ bytes" : SECRET,
                         timeout_ms, ok, -1);
            _exit(bad == 0 ? 0 : 1);
        }
        kids[q] = child;
    }
    close(fds[0]);
    bad = member(0, nprocs, "0", SECRET, timeout_ms, ok, fds[1]);
    close(fds[1]);
    failed += bad != 0;
    for (q = 1; q < nprocs; ++q) {
        int status = 0;
        if (waitpid(kids[q], &status, 0) != kids[q] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "pid %u: failed (status %d)\n", (unsigned)q, status);
            ++failed;
        }
    }
    free(kids);
    return failed;
}

int main(int argc, char **argv)
{
    unsigned long nprocs = argc > 1 ? strtoul(argv[1], NULL, 10) : 3;
    lpf_tcp_pending_t pending = (lpf_tcp_pending_t)&nprocs; /* a sentinel */
    int failed = 0, bad = 0;
    lpf_err_t rc;

    if (nprocs < 2 || nprocs > 64) {
        fprintf(stderr, "usage: %s [NPROCS in 2..64]\n", argv[0]);
        return 2;
    }

    /* 1. a job that assembles and runs */
    failed += job((lpf_pid_t)nprocs, (lpf_pid_t)nprocs, 30000);
    printf("listen + join + ring over %lu processes: %s\n", nprocs,
           failed == 0 ? "ok" : "FAILED");

    /* 2. one process with a wrong secret: every join fails, nobody hangs */
    bad = job((lpf_pid_t)nprocs, 1, 3000);
    printf("wrong secret on pid 1: %s\n", bad == 0 ? "every join failed (ok)"
                                                   : "FAILED");
    failed += bad;

    /* 3. a pid outside [0, nprocs) */
    rc = lpf_tcp_listen("127.0.0.1", "0", 1000, 5, 2, NULL, NULL, NULL,
                        &pending);
    bad = 0;
    EXPECT(&bad, 5, rc != LPF_SUCCESS, "pid 5 of 2 was accepted");
    EXPECT(&bad, 5, pending == (lpf_tcp_pending_t)&nprocs,
           "a refused listen wrote the pending handle");
    printf("pid outside [0, nprocs): %s\n", bad == 0 ? "refused (ok)" : "FAILED");
    failed += bad;

    if (failed != 0) {
        fprintf(stderr, "tcp_listen_join: FAILED\n");
        return 1;
    }
    printf("tcp_listen_join: ok\n");
    return 0;
}
