/*
 * fatal_exec: an LPF_ERR_FATAL from any call puts the process in the failed
 * state, and the lpf_exec of its section returns LPF_ERR_FATAL even when
 * every process returned from the SPMD function normally after its error and
 * no sync was left to notice (issue 24 item 10: lpf_register_global of a NULL
 * pointer with 400 MB, e.g. a malloc that failed under `ulimit -v`, made
 * every process return and lpf_exec returned LPF_SUCCESS). Each case is its
 * own lpf_exec of LPF_MAX_P processes (run.sh: LPF_MAX_PROCS = 1..4):
 *
 *  null-global-all    every process registers NULL with 400 MB globally
 *                     (FATAL, with a message) and returns: lpf_exec returns
 *                     LPF_ERR_FATAL, pid 0's output arrives;
 *  null-local-all     the same with lpf_register_local;
 *  null-memslot-all   lpf_register_global with a NULL memslot out-pointer;
 *  failed-state       after the FATAL register, the process's lpf_sync and a
 *                     nested lpf_exec return LPF_ERR_FATAL (the failed state);
 *  one-null           only the last pid registers NULL and returns; the
 *                     others' sync returns LPF_ERR_FATAL;
 *  oom-is-not-fatal   a register beyond the reserved slots is
 *                     LPF_ERR_OUT_OF_MEMORY, not fatal: the sync that follows
 *                     and lpf_exec succeed.
 */
#include <lpf/core.h>

#include "test_util.h"

#define OUT_MAGIC 0x46415441u /* "FATA" */
#define BIG ((size_t)400 << 20)

struct fatal_out {
    unsigned magic;
    int bad; /* failed expectations of pid 0 */
};

static int others_bad; /* failed expectations of the other pids (atomic) */

/* Ends a process's part of a case: pid 0 reports through args.output, the
 * others through the counter. */
static void finish(lpf_pid_t pid, lpf_args_t args, int bad)
{
    if (pid == 0 && args.output_size == sizeof(struct fatal_out)) {
        struct fatal_out *o = (struct fatal_out *)args.output;
        o->magic = OUT_MAGIC;
        o->bad = bad;
    } else if (bad != 0) {
        __atomic_fetch_add(&others_bad, bad, __ATOMIC_SEQ_CST);
    }
}

/* Reserves one slot (a sync makes it usable) and checks both calls. */
static void reserve_one_slot(lpf_t ctx, lpf_pid_t pid, int *bad)
{
    lpf_err_t rc = lpf_resize_memory_register(ctx, 1);
    EXPECT(bad, pid, rc == LPF_SUCCESS, "resize_memory_register: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(bad, pid, rc == LPF_SUCCESS, "first sync: %d", rc);
}

/* A register that must fail fatally, with a message naming it. */
static void expect_fatal_register(lpf_err_t rc, lpf_pid_t pid, int *bad, const char *what)
{
    EXPECT(bad, pid, rc == LPF_ERR_FATAL, "%s returned %d, expected LPF_ERR_FATAL", what, rc);
    EXPECT(bad, pid, test_error_message_ok(), "%s left no message", what);
}

static void null_global_all(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int bad = 0;
    lpf_memslot_t slot = LPF_INVALID_MEMSLOT;
    (void)nprocs;
    reserve_one_slot(ctx, pid, &bad);
    expect_fatal_register(lpf_register_global(ctx, NULL, BIG, &slot), pid, &bad, "register_global(NULL, 400 MB)");
    finish(pid, args, bad);
}

static void null_local_all(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int bad = 0;
    lpf_memslot_t slot = LPF_INVALID_MEMSLOT;
    (void)nprocs;
    reserve_one_slot(ctx, pid, &bad);
    expect_fatal_register(lpf_register_local(ctx, NULL, BIG, &slot), pid, &bad, "register_local(NULL, 400 MB)");
    finish(pid, args, bad);
}

static void null_memslot_all(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int bad = 0;
    static char buf[64];
    (void)nprocs;
    reserve_one_slot(ctx, pid, &bad);
    expect_fatal_register(lpf_register_global(ctx, buf, sizeof buf, NULL), pid, &bad,
                          "register_global with a NULL memslot pointer");
    finish(pid, args, bad);
}

static void count_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    (void)ctx;
    (void)pid;
    (void)nprocs;
    (void)args;
}

static void failed_state(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int bad = 0;
    lpf_err_t rc;
    lpf_memslot_t slot = LPF_INVALID_MEMSLOT;
    (void)nprocs;
    reserve_one_slot(ctx, pid, &bad);
    expect_fatal_register(lpf_register_global(ctx, NULL, BIG, &slot), pid, &bad, "register_global(NULL, 400 MB)");
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&bad, pid, rc == LPF_ERR_FATAL, "sync after a fatal error returned %d", rc);
    rc = lpf_exec(ctx, 1, count_spmd, LPF_NO_ARGS);
    EXPECT(&bad, pid, rc == LPF_ERR_FATAL, "nested exec after a fatal error returned %d", rc);
    finish(pid, args, bad);
}

static void one_null(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int bad = 0;
    lpf_err_t rc;
    lpf_memslot_t slot = LPF_INVALID_MEMSLOT;
    reserve_one_slot(ctx, pid, &bad);
    if (pid == nprocs - 1) {
        expect_fatal_register(lpf_register_global(ctx, NULL, BIG, &slot), pid, &bad, "register_global(NULL, 400 MB)");
    } else {
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        EXPECT(&bad, pid, rc == LPF_ERR_FATAL, "sync with a failed peer returned %d", rc);
    }
    finish(pid, args, bad);
}

static void oom_is_not_fatal(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int bad = 0;
    lpf_err_t rc;
    static char a[8], b[8];
    lpf_memslot_t s1 = LPF_INVALID_MEMSLOT, s2 = LPF_INVALID_MEMSLOT;
    (void)nprocs;
    reserve_one_slot(ctx, pid, &bad);
    rc = lpf_register_local(ctx, a, sizeof a, &s1);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "register_local into the reserved slot: %d", rc);
    rc = lpf_register_local(ctx, b, sizeof b, &s2);
    EXPECT(&bad, pid, rc == LPF_ERR_OUT_OF_MEMORY, "register_local beyond the reserved slot: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "sync after LPF_ERR_OUT_OF_MEMORY: %d", rc);
    finish(pid, args, bad);
}

struct fatal_case {
    const char *name;
    lpf_spmd_t spmd;
    int fatal; /* whether lpf_exec must return LPF_ERR_FATAL */
};

int main(void)
{
    static const struct fatal_case cases[] = {
        {"null-global-all", null_global_all, 1},
        {"null-local-all", null_local_all, 1},
        {"null-memslot-all", null_memslot_all, 1},
        {"failed-state", failed_state, 1},
        {"one-null", one_null, 1},
        {"oom-is-not-fatal", oom_is_not_fatal, 0},
    };
    int failed = 0;
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        struct fatal_out o = {0, 0};
        lpf_args_t args = {NULL, 0, &o, sizeof o, NULL, 0};
        int bad = 0;
        lpf_err_t rc;
        others_bad = 0;
        rc = lpf_exec(LPF_ROOT, LPF_MAX_P, cases[i].spmd, args);
        EXPECT(&bad, 0, rc == (cases[i].fatal ? LPF_ERR_FATAL : LPF_SUCCESS), "%s: lpf_exec returned %d (%s)",
               cases[i].name, rc, test_error_text());
        EXPECT(&bad, 0, o.magic == OUT_MAGIC, "%s: pid 0's output did not arrive", cases[i].name);
        EXPECT(&bad, 0, o.bad == 0 && others_bad == 0, "%s: %d failed expectation(s) inside the section",
               cases[i].name, o.bad + others_bad);
        printf("%s %s\n", bad == 0 ? "ok" : "FAIL", cases[i].name);
        failed += bad != 0;
    }
    if (failed != 0) {
        fprintf(stderr, "fatal_exec: %d case(s) failed\n", failed);
        return 1;
    }
    printf("fatal_exec: ok\n");
    return 0;
}
