/*
 * zero_bytes: a put or get of 0 bytes is skipped, whatever slots, offsets and
 * pid it names (#17 item 7): libraries send such requests for empty blocks,
 * e.g. an allgather of vectors some of which are empty, with
 * LPF_INVALID_MEMSLOT for the empty side. Every zero-byte request must
 * return LPF_SUCCESS and leave the process healthy (its next sync succeeds),
 * must not take a slot of the message queue (the queue here has room for
 * exactly the real messages), and must not write anything. Real messages in
 * the same superstep still arrive.
 *
 * Runs on LPF_ROOT's exec with LPF_MAX_P processes (LPF_MAX_PROCS on shm; the
 * whole job under lpfrun). pid 0 returns the number of failed checks of all
 * processes through args.output; the exit status is non-zero if any failed
 * (under lpfrun, where only pid 0 receives the output, the others exit 0 when
 * the exec succeeded: their failures are in pid 0's total).
 */
#include "test_util.h"

#include <stdint.h>

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    int bad = 0, total = 0;
    uint64_t mine[4], window[4];
    lpf_memslot_t local = LPF_INVALID_MEMSLOT, global = LPF_INVALID_MEMSLOT;
    lpf_memslot_t err_slot = LPF_INVALID_MEMSLOT, my_bad = LPF_INVALID_MEMSLOT;
    const lpf_memslot_t inv = LPF_INVALID_MEMSLOT;
    const lpf_pid_t right = (s + 1) % p;
    lpf_err_t rc;
    size_t i;

    for (i = 0; i < 4; ++i) {
        mine[i] = 100u * s + i;
        window[i] = i == 0 ? 1000u + s : 7;
    }
    /* Room for 4 slots and, per process, exactly one real put and one real
     * get in each direction (2 messages at the origin, 2 at the target). */
    EXPECT(&bad, s, lpf_resize_memory_register(ctx, 4) == LPF_SUCCESS, "resize reg");
    EXPECT(&bad, s, lpf_resize_message_queue(ctx, 4) == LPF_SUCCESS, "resize queue");
    EXPECT(&bad, s, lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS, "first sync");

    /* Zero-byte requests before anything is registered, and with any pid. */
    rc = lpf_put(ctx, inv, 0, right, inv, 0, 0, LPF_MSG_DEFAULT);
    EXPECT(&bad, s, rc == LPF_SUCCESS, "0-byte put INVALID -> INVALID: %d (%s)", rc, test_error_text());
    rc = lpf_get(ctx, right, inv, 0, inv, 0, 0, LPF_MSG_DEFAULT);
    EXPECT(&bad, s, rc == LPF_SUCCESS, "0-byte get INVALID <- INVALID: %d (%s)", rc, test_error_text());
    rc = lpf_put(ctx, inv, SIZE_MAX, p + 5, inv, SIZE_MAX, 0, LPF_MSG_DEFAULT);
    EXPECT(&bad, s, rc == LPF_SUCCESS, "0-byte put to pid %u: %d (%s)", p + 5, rc, test_error_text());
    rc = lpf_get(ctx, p + 5, 12345, 0, 6789, 0, 0, LPF_MSG_DEFAULT);
    EXPECT(&bad, s, rc == LPF_SUCCESS, "0-byte get, never-registered slots: %d (%s)", rc, test_error_text());
    EXPECT(&bad, s, lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS, "sync after 0-byte requests: %s",
           test_error_text());

    EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &local) == LPF_SUCCESS, "register local");
    EXPECT(&bad, s, lpf_register_global(ctx, window, sizeof window, &global) == LPF_SUCCESS, "register global");
    EXPECT(&bad, s, lpf_register_global(ctx, &total, sizeof total, &err_slot) == LPF_SUCCESS, "register err");
    EXPECT(&bad, s, lpf_register_local(ctx, &bad, sizeof bad, &my_bad) == LPF_SUCCESS, "register bad");

    /* A global slot before its sync, a local slot as the remote side, offsets
     * past the end, the empty side INVALID: all 0 bytes, all skipped. */
    rc = lpf_put(ctx, local, 0, right, global, 0, 0, LPF_MSG_DEFAULT);
    EXPECT(&bad, s, rc == LPF_SUCCESS, "0-byte put to a global slot before its sync: %d (%s)", rc,
           test_error_text());
    EXPECT(&bad, s, lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS, "activation sync: %s", test_error_text());

    /* One superstep: a real put right and a real get from the right, mixed
     * with many zero-byte requests (more than the queue holds). */
    EXPECT(&bad, s, lpf_put(ctx, local, 8, right, global, 8, 16, LPF_MSG_DEFAULT) == LPF_SUCCESS, "real put: %s",
           test_error_text());
    for (i = 0; i < 64 && bad == 0; ++i) {
        rc = lpf_put(ctx, i % 2 ? local : inv, 1000, right, i % 3 ? global : inv, 1000, 0, LPF_MSG_DEFAULT);
        EXPECT(&bad, s, rc == LPF_SUCCESS, "0-byte put #%zu: %d (%s)", i, rc, test_error_text());
        rc = lpf_get(ctx, right, i % 2 ? local : inv, 1000, i % 3 ? global : inv, 1000, 0, LPF_MSG_DEFAULT);
        EXPECT(&bad, s, rc == LPF_SUCCESS, "0-byte get #%zu: %d (%s)", i, rc, test_error_text());
    }
    rc = lpf_get(ctx, right, global, 0, local, 0, 8, LPF_MSG_DEFAULT);
    EXPECT(&bad, s, rc == LPF_SUCCESS, "real get: %s", test_error_text());
    EXPECT(&bad, s, lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS, "sync of the mixed superstep: %s",
           test_error_text());
    {
        const lpf_pid_t left = (s + p - 1) % p;
        /* window[1..2] came from the left's mine[1..2]; window[0], [3] untouched */
        EXPECT(&bad, s, window[0] == 1000u + s && window[3] == 7, "bytes written outside the put: %llu %llu",
               (unsigned long long)window[0], (unsigned long long)window[3]);
        EXPECT(&bad, s, window[1] == 100u * left + 1 && window[2] == 100u * left + 2,
               "put from %u: %llu %llu", left, (unsigned long long)window[1], (unsigned long long)window[2]);
        /* mine[0] is the right's window[0], which nobody writes */
        EXPECT(&bad, s, mine[0] == 1000u + right && mine[1] == 100u * s + 1, "get from %u: %llu %llu", right,
               (unsigned long long)mine[0], (unsigned long long)mine[1]);
    }

    /* Everyone's failures to pid 0 (a write conflict: some non-zero count). */
    if (s == 0)
        total = 0;
    EXPECT(&bad, s, lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS, "sync");
    if (test_gather_status(ctx, &bad, my_bad, err_slot) != LPF_SUCCESS)
        ++bad;
    if (s == 0 && args.output_size >= sizeof(int))
        *(int *)args.output = bad + total;
}

int main(void)
{
    int failures = -1;
    lpf_args_t args = LPF_NO_ARGS;
    lpf_err_t rc;
    args.output = &failures;
    args.output_size = sizeof failures;
    rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, args);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "zero_bytes: lpf_exec returned %d (%s)\n", rc, test_error_text());
        return 1;
    }
    if (failures == -1) {
        /* not pid 0 of a launched job (lpfrun): its checks are in pid 0's total */
        return 0;
    }
    if (failures != 0) {
        fprintf(stderr, "zero_bytes: %d checks failed\n", failures);
        return 1;
    }
    printf("zero_bytes: ok\n");
    return 0;
}
