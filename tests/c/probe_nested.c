/*
 * probe_nested: lpf_probe's p is the number of processors the runtime can
 * use, the same from LPF_ROOT and from any nesting depth, and on LPF_ROOT it
 * reflects the engine in use (#17 item 2): under `lpfrun -n 3 --engine tcp`
 * p = 3 with the TCP cost table, not the hardware threads and the shm table.
 *
 * Usage: probe_nested P G_ENGINE G_SHM
 *   P         the p every probe must report;
 *   G_ENGINE  g(1, 8) of the engine of the root and of the top-level section
 *             (as stored in $LPF_PROBE_DIR/<engine>.txt by the harness);
 *   G_SHM     g(1, 8) of the shm table: nested sections are threads of their
 *             process, on the shm engine.
 * Checks the root, the section lpf_exec(LPF_ROOT, LPF_MAX_P) starts, a
 * lpf_rehook of it, and nested lpf_exec sections two levels deep. Then a root
 * exec on P / 2 processes (#28, the reference's func_lpf_probe_parallel_nested):
 * its p is still P, and its processes share the P out as their free_p, P / n
 * each and one more for the first P % n (free_p adds up to P); over TCP and
 * MPI the section's own size was given as p. Every
 * failure is counted in this OS process (threads of one process add to one
 * counter); the exit status is non-zero when any check failed.
 */
#include "test_util.h"

static unsigned expect_p;
static double expect_g_engine, expect_g_shm;
static int failures;

static void check_probe(lpf_t ctx, lpf_pid_t s, const char *where, double expect_g)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_err_t rc = lpf_probe(ctx, &m);
    int bad = 0;
    EXPECT(&bad, s, rc == LPF_SUCCESS, "%s: lpf_probe: %d (%s)", where, rc, test_error_text());
    if (rc == LPF_SUCCESS) {
        EXPECT(&bad, s, m.p == expect_p, "%s: p = %u, expected %u", where, m.p, expect_p);
        EXPECT(&bad, s, m.free_p >= 1, "%s: free_p = %u", where, m.free_p);
        EXPECT(&bad, s, m.g != NULL && m.l != NULL, "%s: g or l is NULL", where);
        if (m.g != NULL)
            EXPECT(&bad, s, m.g(1, 8, LPF_SYNC_DEFAULT) == expect_g, "%s: g(1, 8) = %g, expected %g (the wrong cost table)",
                   where, m.g(1, 8, LPF_SYNC_DEFAULT), expect_g);
    }
    if (bad)
        __atomic_fetch_add(&failures, bad, __ATOMIC_RELAXED);
}

static void depth2(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)p;
    (void)args;
    check_probe(ctx, s, "nested exec, depth 2", expect_g_shm);
}

static void depth1(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    lpf_err_t rc;
    (void)p;
    (void)args;
    check_probe(ctx, s, "nested exec, depth 1", expect_g_shm);
    rc = lpf_exec(ctx, 2, depth2, LPF_NO_ARGS);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "pid %u: nested lpf_exec (depth 2): %d (%s)\n", s, rc, test_error_text());
        __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
    }
}

static void rehooked(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)p;
    (void)args;
    check_probe(ctx, s, "rehook", expect_g_engine);
}

static void top(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    lpf_err_t rc;
    (void)p;
    (void)args;
    check_probe(ctx, s, "section", expect_g_engine);
    rc = lpf_exec(ctx, 2, depth1, LPF_NO_ARGS);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "pid %u: nested lpf_exec: %d (%s)\n", s, rc, test_error_text());
        __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
    }
    rc = lpf_rehook(ctx, rehooked, LPF_NO_ARGS);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "pid %u: lpf_rehook: %d (%s)\n", s, rc, test_error_text());
        __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
    }
}

static void half(lpf_t ctx, lpf_pid_t s, lpf_pid_t n, lpf_args_t args)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    unsigned want_free = expect_p / n + (s < expect_p % n);
    int bad = 0;
    (void)args;
    check_probe(ctx, s, "root exec on P / 2", expect_g_engine);
    if (lpf_probe(ctx, &m) == LPF_SUCCESS)
        EXPECT(&bad, s, m.free_p == want_free, "root exec on P / 2 = %u: free_p = %u, expected %u", n, m.free_p, want_free);
    if (bad)
        __atomic_fetch_add(&failures, bad, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
    lpf_err_t rc;
    if (argc != 4) {
        fprintf(stderr, "usage: probe_nested P G_ENGINE G_SHM\n");
        return 2;
    }
    expect_p = (unsigned)strtoul(argv[1], NULL, 10);
    expect_g_engine = strtod(argv[2], NULL);
    expect_g_shm = strtod(argv[3], NULL);
    check_probe(LPF_ROOT, 0, "LPF_ROOT", expect_g_engine);
    rc = lpf_exec(LPF_ROOT, LPF_MAX_P, top, LPF_NO_ARGS);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "probe_nested: lpf_exec: %d (%s)\n", rc, test_error_text());
        return 1;
    }
    check_probe(LPF_ROOT, 0, "LPF_ROOT after the exec", expect_g_engine);
    if (expect_p >= 2) {
        rc = lpf_exec(LPF_ROOT, expect_p / 2, half, LPF_NO_ARGS);
        if (rc != LPF_SUCCESS) {
            fprintf(stderr, "probe_nested: lpf_exec(LPF_ROOT, %u): %d (%s)\n", expect_p / 2, rc, test_error_text());
            return 1;
        }
    }
    if (failures != 0) {
        fprintf(stderr, "probe_nested: %d check(s) failed\n", failures);
        return 1;
    }
    printf("probe_nested: all checks passed\n");
    return 0;
}
