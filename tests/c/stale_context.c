/*
 * stale_context: a context used where it is not alive is refused with
 * LPF_ERR_FATAL and a message, never dereferenced (issue #13 item 9).
 *
 * Section 1 (LPF_MAX_P processes) keeps every process's lpf_t in a global
 * array. Inside it, after a sync, pid 1 calls lpf_probe on pid 0's context
 * (a context belongs to the thread that runs its SPMD function). After
 * lpf_exec has returned, main() calls every primitive on the kept handles:
 * each must return LPF_ERR_FATAL with a message saying the context is not
 * alive. Section 2 then runs (its contexts may sit at the very addresses
 * section 1's had): using section 1's handles inside it fails the same way,
 * while its own context works. Under valgrind (run.sh) no read of a dead
 * thread's stack may happen.
 */
#include <lpf/core.h>

#include "test_util.h"

#define MAX_KEPT 64

static lpf_t kept[MAX_KEPT];
static unsigned kept_n;
static int in_section_bad; /* failed expectations inside the sections (atomic) */

static void noop_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    (void)ctx;
    (void)pid;
    (void)nprocs;
    (void)args;
}

static int refused(lpf_err_t rc)
{
    return rc == LPF_ERR_FATAL && strstr(test_error_text(), "not alive") != NULL;
}

static void keep_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int bad = 0;
    lpf_err_t rc;
    lpf_machine_t m;
    (void)args;
    if (pid < MAX_KEPT)
        kept[pid] = ctx;
    if (pid == 0)
        kept_n = nprocs < MAX_KEPT ? nprocs : MAX_KEPT;
    rc = lpf_resize_memory_register(ctx, 1);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "resize_memory_register: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "sync: %d", rc);
    if (pid == 1) {
        /* pid 0's context, from pid 1's thread. */
        rc = lpf_probe(kept[0], &m);
        EXPECT(&bad, pid, refused(rc), "probe on pid 0's context from pid 1: %d (%s)", rc, test_error_text());
    }
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "sync: %d", rc);
    __atomic_fetch_add(&in_section_bad, bad, __ATOMIC_SEQ_CST);
}

/* Section 2: section 1's handles are refused, this one's work. */
static void second_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int bad = 0;
    unsigned i;
    lpf_err_t rc;
    (void)nprocs;
    (void)args;
    for (i = 0; i < kept_n; ++i) {
        rc = lpf_sync(kept[i], LPF_SYNC_DEFAULT);
        EXPECT(&bad, pid, refused(rc), "sync on section 1's context %u in section 2: %d (%s)", i, rc,
               test_error_text());
    }
    rc = lpf_resize_message_queue(ctx, 1);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "resize_message_queue on the live context: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "sync on the live context: %d (%s)", rc, test_error_text());
    __atomic_fetch_add(&in_section_bad, bad, __ATOMIC_SEQ_CST);
}

int main(void)
{
    int bad = 0;
    unsigned i;
    lpf_err_t rc;
    lpf_machine_t m;
    lpf_memslot_t slot = LPF_INVALID_MEMSLOT;
    char buf[8];

    rc = lpf_exec(LPF_ROOT, LPF_MAX_P, keep_spmd, LPF_NO_ARGS);
    EXPECT(&bad, 0, rc == LPF_SUCCESS, "section 1: %d (%s)", rc, test_error_text());
    EXPECT(&bad, 0, kept_n >= 1, "section 1 kept no context");

    for (i = 0; i < kept_n; ++i) {
        lpf_t c = kept[i];
        EXPECT(&bad, i, refused(lpf_sync(c, LPF_SYNC_DEFAULT)), "stale sync: %s", test_error_text());
        EXPECT(&bad, i, refused(lpf_resize_memory_register(c, 4)), "stale resize_memory_register: %s",
               test_error_text());
        EXPECT(&bad, i, refused(lpf_resize_message_queue(c, 4)), "stale resize_message_queue: %s",
               test_error_text());
        EXPECT(&bad, i, refused(lpf_register_global(c, buf, sizeof buf, &slot)), "stale register_global: %s",
               test_error_text());
        EXPECT(&bad, i, refused(lpf_register_local(c, buf, sizeof buf, &slot)), "stale register_local: %s",
               test_error_text());
        EXPECT(&bad, i, refused(lpf_deregister(c, 0)), "stale deregister: %s", test_error_text());
        EXPECT(&bad, i, refused(lpf_put(c, 0, 0, 0, 0, 0, 1, LPF_MSG_DEFAULT)), "stale put: %s",
               test_error_text());
        EXPECT(&bad, i, refused(lpf_get(c, 0, 0, 0, 0, 0, 1, LPF_MSG_DEFAULT)), "stale get: %s",
               test_error_text());
        EXPECT(&bad, i, refused(lpf_probe(c, &m)), "stale probe: %s", test_error_text());
        EXPECT(&bad, i, refused(lpf_exec(c, 1, noop_spmd, LPF_NO_ARGS)), "stale exec: %s", test_error_text());
        EXPECT(&bad, i, refused(lpf_rehook(c, noop_spmd, LPF_NO_ARGS)), "stale rehook: %s", test_error_text());
    }

    rc = lpf_exec(LPF_ROOT, LPF_MAX_P, second_spmd, LPF_NO_ARGS);
    EXPECT(&bad, 0, rc == LPF_SUCCESS, "section 2: %d (%s)", rc, test_error_text());
    EXPECT(&bad, 0, in_section_bad == 0, "%d failed expectations inside the sections", in_section_bad);

    if (bad != 0) {
        fprintf(stderr, "stale_context: FAILED (%d problem(s))\n", bad);
        return 1;
    }
    printf("stale_context: ok (%u stale contexts refused)\n", kept_n);
    return 0;
}
