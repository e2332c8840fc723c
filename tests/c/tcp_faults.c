/*
 * tcp_faults: faults and misuse of the TCP platform (lpf/tcp.h) that must end
 * in an LPF error, never in a signal, an abort or a hang.
 *
 *   tcp_faults CASE
 *
 * CASE is one of
 *   sigpipe-boot   pid 1 is killed after it joined, before the job started;
 *                  pid 0 (default SIGPIPE disposition, as any C program) must
 *                  see FATAL from its join or its hook, not die of SIGPIPE
 *                  (exit status 141 in a shell).
 *   sigpipe-sync   pid 1 is killed in the middle of a run of syncs moving
 *                  data to it: pid 0's sync and hook must return FATAL.
 *   early-return   pid 1 of 3 returns from its SPMD function at once while
 *                  the others sync: every hook returns LPF_ERR_FATAL
 *                  (the spec: the unmatched syncs and the enclosing
 *                  exec/hook return FATAL), pid 1's included.
 *   huge-nprocs    nprocs = UINT_MAX (and 100000) is refused with an error
 *                  at once, without trying to allocate tables for it.
 *   short-secret   secrets shorter than 16 bytes, the empty one included, are
 *                  refused with an error naming the rule; NULL (no secret)
 *                  and a 16-byte secret are accepted.
 *
 * The processes of a job are forked by this program (a supervisor that checks
 * how each ended); everything is bounded by alarms. Exits 0 when all is as
 * expected.
 */
#define _POSIX_C_SOURCE 200809L

#include <lpf/core.h>
#include <lpf/tcp.h>

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define SECRET "tcp-faults secret of 16+ bytes"
#define BUF (8 * 1024 * 1024)

static void sleep_ms(long ms)
{
    struct timespec t;
    t.tv_sec = ms / 1000;
    t.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&t, &t) != 0) {
    }
}

/* ---- what the SPMD functions do ---------------------------------------- */

/* args.input: one of these. */
struct plan {
    int syncs;         /* syncs to run (with a put to the next pid) */
    int die_after;     /* >= 0: SIGKILL itself after this many syncs */
    int return_at_once;
    size_t size;       /* bytes of each put (at most BUF) */
    int pause_at;      /* >= 0: sleep 300 ms before this sync (a peer dies meanwhile) */
};

/* args.output: what happened. */
struct seen {
    int syncs_ok;
    lpf_err_t first_error;
};

static void spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    const struct plan *p = (const struct plan *)args.input;
    struct seen *out = (struct seen *)args.output;
    static char src[BUF], dst[BUF];
    lpf_memslot_t s = LPF_INVALID_MEMSLOT, d = LPF_INVALID_MEMSLOT;
    lpf_err_t rc;
    int i;

    out->syncs_ok = 0;
    out->first_error = LPF_SUCCESS;
    if (p->return_at_once)
        return;
    rc = lpf_resize_memory_register(ctx, 2);
    if (rc == LPF_SUCCESS)
        rc = lpf_resize_message_queue(ctx, 2);
    if (rc == LPF_SUCCESS)
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (rc == LPF_SUCCESS)
        rc = lpf_register_local(ctx, src, BUF, &s);
    if (rc == LPF_SUCCESS)
        rc = lpf_register_global(ctx, dst, BUF, &d);
    if (rc == LPF_SUCCESS)
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    for (i = 0; rc == LPF_SUCCESS && i < p->syncs; ++i) {
        if (p->die_after >= 0 && i == p->die_after)
            kill(getpid(), SIGKILL);
        if (p->pause_at >= 0 && i == p->pause_at)
            sleep_ms(300);
        rc = lpf_put(ctx, s, 0, (pid + 1) % nprocs, d, 0, p->size, LPF_MSG_DEFAULT);
        if (rc == LPF_SUCCESS)
            rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (rc == LPF_SUCCESS)
            out->syncs_ok++;
    }
    out->first_error = rc;
}

/* ---- one process of a job ---------------------------------------------- */

enum expect { EXPECT_OK, EXPECT_FATAL_SOMEWHERE, EXPECT_ANY };

/* Joins (pid 0 publishes the port on `port_fd`, the others read it from
 * `port_fd`), hooks once with `plan`, and exits 0 if what happened is what
 * `expect` says: EXPECT_FATAL_SOMEWHERE: the join or the hook returned
 * LPF_ERR_FATAL with a message. */
static void member(lpf_pid_t pid, lpf_pid_t nprocs, int port_fd, struct plan plan,
                   enum expect expect, int timeout_ms)
{
    lpf_tcp_pending_t pending = NULL;
    lpf_init_t init = LPF_INIT_NONE;
    unsigned bound = 0;
    char port[16] = "0";
    lpf_err_t rc;
    struct seen seen = { 0, LPF_SUCCESS };
    lpf_args_t args = { &plan, sizeof plan, &seen, sizeof seen, NULL, 0 };
    int bad = 0;
    lpf_pid_t q;

    alarm(60); /* a hang is a failure (the default action ends the process) */
    if (pid != 0) {
        if (read(port_fd, &bound, sizeof bound) != (ssize_t)sizeof bound) {
            fprintf(stderr, "pid %u: no port from pid 0\n", (unsigned)pid);
            _exit(3);
        }
        snprintf(port, sizeof port, "%u", bound);
    }
    rc = lpf_tcp_listen("127.0.0.1", port, timeout_ms, pid, nprocs, SECRET, NULL,
                        &bound, &pending);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "pid %u: lpf_tcp_listen returned %d: %s\n", (unsigned)pid, rc,
                test_error_text());
        _exit(4);
    }
    if (pid == 0)
        for (q = 1; q < nprocs; ++q)
            if (write(port_fd, &bound, sizeof bound) != (ssize_t)sizeof bound)
                _exit(5);
    rc = lpf_tcp_join(pending, &init);
    if (rc != LPF_SUCCESS) {
        printf("pid %u: join: %d: %s\n", (unsigned)pid, rc, test_error_text());
        EXPECT(&bad, pid, expect != EXPECT_OK, "join failed: %s", test_error_text());
        EXPECT(&bad, pid, rc == LPF_ERR_FATAL, "join returned %d, not FATAL", rc);
        _exit(bad == 0 ? 0 : 1);
    }
    rc = lpf_hook(init, spmd, args);
    printf("pid %u: hook: %d after %d syncs%s%s\n", (unsigned)pid, rc, seen.syncs_ok,
           rc == LPF_SUCCESS ? "" : ": ", rc == LPF_SUCCESS ? "" : test_error_text());
    fflush(stdout);
    if (expect == EXPECT_OK)
        EXPECT(&bad, pid, rc == LPF_SUCCESS, "hook returned %d: %s", rc, test_error_text());
    if (expect == EXPECT_FATAL_SOMEWHERE) {
        EXPECT(&bad, pid, rc == LPF_ERR_FATAL, "hook returned %d, not LPF_ERR_FATAL", rc);
        EXPECT(&bad, pid, rc == LPF_SUCCESS || strlen(test_error_text()) > 0,
               "no error message");
        /* A loss names the peer's host and port. */
        EXPECT(&bad, pid, strstr(test_error_text(), "lost process") == NULL ||
                              strstr(test_error_text(), "(127.0.0.1:") != NULL,
               "the loss message names no address: %s", test_error_text());
    }
    lpf_tcp_finalize(init);
    _exit(bad == 0 ? 0 : 1);
}

/* ---- the supervisor ---------------------------------------------------- */

static pid_t start(lpf_pid_t pid, lpf_pid_t nprocs, int fds[2], struct plan plan,
                   enum expect expect, int timeout_ms)
{
    pid_t child = fork();
    if (child < 0) {
        perror("tcp_faults: fork");
        exit(2);
    }
    if (child == 0) {
        /* The default disposition, as in any C program that never touched it. */
        signal(SIGPIPE, SIG_DFL);
        member(pid, nprocs, pid == 0 ? fds[1] : fds[0], plan, expect, timeout_ms);
    }
    return child;
}

/* Waits for `child` (pid `pid` of the job); returns 1 if it did not exit 0
 * (or, with `killed_ok`, was SIGKILLed as planned). */
static int finished(pid_t child, lpf_pid_t pid, int killed_ok)
{
    int status = 0;
    if (waitpid(child, &status, 0) != child) {
        perror("tcp_faults: waitpid");
        return 1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (killed_ok && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        return 0;
    if (WIFSIGNALED(status))
        fprintf(stderr, "pid %u: killed by signal %d%s\n", (unsigned)pid, WTERMSIG(status),
                WTERMSIG(status) == SIGPIPE ? " (SIGPIPE: a send to a dead peer raised it)"
                : WTERMSIG(status) == SIGALRM ? " (SIGALRM: hung for 60 s)"
                : "");
    else
        fprintf(stderr, "pid %u: exit status %d\n", (unsigned)pid, WEXITSTATUS(status));
    return 1;
}

static int sigpipe_boot(void)
{
    int fds[2], failed = 0;
    pid_t k0, k1, k2;
    struct plan run = { 50, -1, 0, 4096, -1 };
    if (pipe(fds) != 0)
        return 1;
    k0 = start(0, 3, fds, run, EXPECT_FATAL_SOMEWHERE, 20000);
    k1 = start(1, 3, fds, run, EXPECT_ANY, 20000);
    /* pid 1 has joined and waits for the roster (pid 2 is missing). */
    sleep_ms(700);
    kill(k1, SIGKILL);
    failed += finished(k1, 1, 1);
    /* pid 2 completes the job: pid 0 sends the roster to the dead pid 1 and to
     * pid 2, then syncs with a dead peer; pid 2 cannot link to pid 1. */
    k2 = start(2, 3, fds, run, EXPECT_FATAL_SOMEWHERE, 20000);
    failed += finished(k0, 0, 0);
    failed += finished(k2, 2, 0);
    close(fds[0]);
    close(fds[1]);
    return failed;
}

static int sigpipe_sync(void)
{
    int fds[2], failed = 0, round;
    for (round = 0; round < 3; ++round) {
        pid_t k0, k1;
        /* The victim dies between two syncs (nothing unread: its socket closes
         * with a FIN), pid 0 then sends 8 MiB to it (more than a socket buffer
         * takes at once: a second send follows the reset). */
        struct plan victim = { 40, 3 + round, 0, BUF, -1 };
        struct plan run = { 40, -1, 0, BUF, 3 + round };
        if (pipe(fds) != 0)
            return 1;
        k0 = start(0, 2, fds, run, EXPECT_FATAL_SOMEWHERE, 20000);
        k1 = start(1, 2, fds, victim, EXPECT_ANY, 20000);
        failed += finished(k1, 1, 1);
        failed += finished(k0, 0, 0);
        close(fds[0]);
        close(fds[1]);
    }
    return failed;
}

static int early_return(void)
{
    int fds[2], failed = 0;
    pid_t k0, k1, k2;
    struct plan run = { 3, -1, 0, 4096, -1 }, quitter = { 3, -1, 1, 4096, -1 };
    if (pipe(fds) != 0)
        return 1;
    k0 = start(0, 3, fds, run, EXPECT_FATAL_SOMEWHERE, 20000);
    k1 = start(1, 3, fds, quitter, EXPECT_FATAL_SOMEWHERE, 20000);
    k2 = start(2, 3, fds, run, EXPECT_FATAL_SOMEWHERE, 20000);
    failed += finished(k0, 0, 0);
    failed += finished(k1, 1, 0);
    failed += finished(k2, 2, 0);
    close(fds[0]);
    close(fds[1]);
    return failed;
}

static int huge_nprocs(void)
{
    const lpf_pid_t sizes[] = { UINT_MAX, 100000 };
    int bad = 0;
    size_t i;
    alarm(30);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        lpf_init_t init = LPF_INIT_NONE;
        lpf_err_t rc;
        /* pid 0 (would wait for the others) and a last pid (would connect). */
        rc = lpf_tcp_initialize("127.0.0.1", "0", 2000, 0, sizes[i], SECRET, NULL, NULL, &init);
        printf("nprocs %u, pid 0: %d: %s\n", sizes[i], rc, test_error_text());
        EXPECT(&bad, 0, rc != LPF_SUCCESS, "nprocs %u was accepted", sizes[i]);
        EXPECT(&bad, 0, strstr(test_error_text(), "nprocs") != NULL, "the error does not name nprocs");
        rc = lpf_tcp_initialize("127.0.0.1", "1", 2000, sizes[i] - 1, sizes[i], SECRET, NULL, NULL, &init);
        printf("nprocs %u, pid %u: %d: %s\n", sizes[i], sizes[i] - 1, rc, test_error_text());
        EXPECT(&bad, 0, rc != LPF_SUCCESS, "nprocs %u was accepted", sizes[i]);
        EXPECT(&bad, 0, strstr(test_error_text(), "nprocs") != NULL, "the error does not name nprocs");
    }
    return bad;
}

static int short_secret(void)
{
    const char *secrets[] = { "", "x", "fifteen bytes!!" };
    int bad = 0;
    size_t i;
    lpf_tcp_pending_t pending = NULL;
    lpf_err_t rc;
    alarm(30);
    for (i = 0; i < sizeof secrets / sizeof secrets[0]; ++i) {
        rc = lpf_tcp_listen("127.0.0.1", "0", 1000, 0, 2, secrets[i], NULL, NULL, &pending);
        printf("secret of %zu bytes: %d: %s\n", strlen(secrets[i]), rc, test_error_text());
        EXPECT(&bad, 0, rc != LPF_SUCCESS, "a secret of %zu bytes was accepted", strlen(secrets[i]));
        EXPECT(&bad, 0, strstr(test_error_text(), "at least 16") != NULL,
               "the error does not name the rule");
        if (rc == LPF_SUCCESS) {
            lpf_init_t init;
            lpf_tcp_join(pending, &init); /* times out after 1 s */
        }
    }
    /* No secret, and a secret of exactly 16 bytes: accepted (then the join
     * times out, nobody comes). */
    rc = lpf_tcp_listen("127.0.0.1", "0", 300, 0, 2, NULL, NULL, NULL, &pending);
    EXPECT(&bad, 0, rc == LPF_SUCCESS, "no secret refused: %s", test_error_text());
    if (rc == LPF_SUCCESS) {
        lpf_init_t init;
        EXPECT(&bad, 0, lpf_tcp_join(pending, &init) == LPF_ERR_FATAL, "nobody came, yet joined");
    }
    rc = lpf_tcp_listen("127.0.0.1", "0", 300, 0, 2, "sixteen bytes!!!", NULL, NULL, &pending);
    EXPECT(&bad, 0, rc == LPF_SUCCESS, "16-byte secret refused: %s", test_error_text());
    if (rc == LPF_SUCCESS) {
        lpf_init_t init;
        EXPECT(&bad, 0, lpf_tcp_join(pending, &init) == LPF_ERR_FATAL, "nobody came, yet joined");
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    int failed;
    setvbuf(stdout, NULL, _IONBF, 0);
    if (strcmp(c, "sigpipe-boot") == 0)
        failed = sigpipe_boot();
    else if (strcmp(c, "sigpipe-sync") == 0)
        failed = sigpipe_sync();
    else if (strcmp(c, "early-return") == 0)
        failed = early_return();
    else if (strcmp(c, "huge-nprocs") == 0)
        failed = huge_nprocs();
    else if (strcmp(c, "short-secret") == 0)
        failed = short_secret();
    else {
        fprintf(stderr, "usage: %s sigpipe-boot|sigpipe-sync|early-return|huge-nprocs|short-secret\n",
                argv[0]);
        return 2;
    }
    printf("tcp_faults %s: %s\n", c, failed == 0 ? "ok" : "FAILED");
    return failed == 0 ? 0 : 1;
}
