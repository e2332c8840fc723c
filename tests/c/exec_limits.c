/*
 * exec_limits: lpf_exec asked for more processes than the machine can create
 * threads for ends in an error, at once, and the library keeps working.
 *
 * Usage: exec_limits EXPECTED, where EXPECTED is a piece of the error message.
 * run.sh runs it three times, each time with a 30 s time limit:
 *   - under `ulimit -v 4000000` (4 GB of address space) with
 *     LPF_MAX_PROCS=100000: on the shared-memory engine every process is a
 *     thread with its own stack, so the threads cannot fit and lpf_exec must
 *     say so ("address space") before it starts any;
 *   - as user nobody under `prlimit --nproc=20` with LPF_MAX_PROCS=100: thread
 *     creation fails part-way ("cannot create the thread");
 *   - without limits, LPF_MAX_PROCS=65535, under the default vm.max_map_count
 *     (65530): the threads' memory mappings (stacks, signal stacks, guard
 *     pages) cannot fit, and lpf_exec must say so ("memory mappings") before
 *     it starts any (issue 24 item 4: before, the Rust runtime aborted the
 *     program when a new thread could not map its signal stack).
 * In both:
 *   1. lpf_exec(LPF_ROOT, LPF_MAX_P) returns an error whose message contains
 *      EXPECTED, and no process ran the SPMD function (the section does not
 *      start half-way);
 *   2. a nested lpf_exec(ctx, LPF_MAX_P) inside a 2-process section fails the
 *      same way on both processes, while the outer section goes on (its
 *      syncs succeed);
 *   3. then lpf_exec(LPF_ROOT, 4) works.
 * Refuses to run without an address-space or process limit unless
 * vm.max_map_count is too small for 65535 threads (else it would start them).
 */
#include <lpf/core.h>

#include <sys/resource.h>

#include "test_util.h"

static int ran; /* processes that entered count_spmd (atomic) */

static void count_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                       lpf_args_t args)
{
    (void)pid;
    (void)nprocs;
    (void)args;
    __atomic_fetch_add(&ran, 1, __ATOMIC_SEQ_CST);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

/* Each of 2 processes tries a nested exec of LPF_MAX_P processes, which must
 * fail, then syncs the outer section. Failures are counted in *args.output
 * of pid 0 (the others report on stderr and through the exec's result). */
static int nested_bad; /* failed expectations inside nested_spmd (atomic) */
static const char *expected; /* a piece of the expected error message */

static void nested_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                        lpf_args_t args)
{
    int bad = 0;
    lpf_err_t rc;
    (void)args;
    EXPECT(&bad, pid, nprocs == 2, "outer section has %u processes", nprocs);
    rc = lpf_exec(ctx, LPF_MAX_P, count_spmd, LPF_NO_ARGS);
    EXPECT(&bad, pid, rc != LPF_SUCCESS, "nested exec of LPF_MAX_P succeeded");
    EXPECT(&bad, pid, strstr(test_error_text(), expected) != NULL,
           "nested exec message: %s", test_error_text());
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "outer sync after the failed nested exec: %d", rc);
    __atomic_fetch_add(&nested_bad, bad, __ATOMIC_SEQ_CST);
}

/* /proc/sys/vm/max_map_count, or -1 when it cannot be read. */
static long max_map_count(void)
{
    long n = -1;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f != NULL) {
        if (fscanf(f, "%ld", &n) != 1)
            n = -1;
        fclose(f);
    }
    return n < 0 ? 1L << 40 : n;
}

int main(int argc, char **argv)
{
    int bad = 0;
    struct rlimit as, nproc;
    lpf_err_t rc;

    if (argc != 2) {
        fprintf(stderr, "usage: exec_limits EXPECTED-MESSAGE-PIECE\n");
        return 2;
    }
    expected = argv[1];
    if (getrlimit(RLIMIT_AS, &as) != 0 || getrlimit(RLIMIT_NPROC, &nproc) != 0 ||
        (as.rlim_cur == RLIM_INFINITY && nproc.rlim_cur == RLIM_INFINITY &&
         max_map_count() >= 65535L * 5)) {
        fprintf(stderr, "exec_limits: run me under an address-space or process limit "
                        "(or a vm.max_map_count below 65535 threads' mappings)\n");
        return 2;
    }

    /* 1. Root exec of as many processes as LPF_MAX_PROCS allows. */
    rc = lpf_exec(LPF_ROOT, LPF_MAX_P, count_spmd, LPF_NO_ARGS);
    EXPECT(&bad, 0, rc != LPF_SUCCESS, "exec of LPF_MAX_P processes succeeded");
    EXPECT(&bad, 0, strstr(test_error_text(), expected) != NULL,
           "message: %s", test_error_text());
    EXPECT(&bad, 0, __atomic_load_n(&ran, __ATOMIC_SEQ_CST) == 0,
           "%d processes ran although the section could not start", ran);

    /* 2. Nested exec from inside a section. */
    ran = 0;
    rc = lpf_exec(LPF_ROOT, 2, nested_spmd, LPF_NO_ARGS);
    EXPECT(&bad, 0, rc == LPF_SUCCESS, "outer exec of the nested case: %d (%s)", rc, test_error_text());
    EXPECT(&bad, 0, nested_bad == 0, "%d failed expectations inside the section", nested_bad);
    EXPECT(&bad, 0, __atomic_load_n(&ran, __ATOMIC_SEQ_CST) == 0,
           "%d nested processes ran although their section could not start", ran);

    /* 3. The library still works. */
    ran = 0;
    rc = lpf_exec(LPF_ROOT, 4, count_spmd, LPF_NO_ARGS);
    EXPECT(&bad, 0, rc == LPF_SUCCESS, "exec of 4 processes afterwards: %d (%s)", rc, test_error_text());
    EXPECT(&bad, 0, ran == 4, "%d of 4 processes ran", ran);

    if (bad != 0) {
        fprintf(stderr, "exec_limits: FAILED (%d problem(s))\n", bad);
        return 1;
    }
    printf("exec_limits: ok\n");
    return 0;
}
