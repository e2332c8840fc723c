/*
 * debug_misuse MODE: one misuse of LPF per mode (#17 item 5), run on LPF_ROOT's
 * exec with LPF_MAX_P processes (run.sh uses 2).
 *
 * In the default mode the program checks the defined result (where the
 * specification defines one) and exits 0 when it holds. In debug mode
 * (LPF_DEBUG=1, or this file built with -DTEST_DEBUG_HEADER, which includes
 * debug/lpf/core.h) the library must abort the process with a message naming
 * the call: reaching the end of main is then a failure (exit status 3); run.sh
 * checks the abort (exit status 6, as lpf_abort) and the message.
 *
 * Modes:
 *   dereg-queued     deregister the source of a put queued in this superstep,
 *                    free it, sync (default: deregister and sync FATAL, no
 *                    read of the freed memory: run under valgrind too)
 *   put-after-dereg  put from a local slot after its deregistration (FATAL)
 *   unregistered     put from a slot id that was never registered (FATAL)
 *   dereg-count      process 0 deregisters one global slot, the others two
 *   dereg-order      the same two global slots deregistered in another order
 *   conflict         a get reads the bytes a put writes in the same superstep
 *   null-input       lpf_exec with args.input NULL and input_size 8 (default:
 *                    pid 0 sees NULL and 0)
 *   sync-attr        lpf_sync with attribute 42 (default: ignored)
 *   msg-attr         lpf_put with attribute 7 (default: ignored, data arrives)
 *   queue-full       a fifth put with room for four in the queue (default:
 *                    LPF_ERR_OUT_OF_MEMORY, the four arrive)
 *   register-full    a fifth registration with room for four in the register
 *                    (default: LPF_ERR_OUT_OF_MEMORY)
 *   queue-incoming   three puts to the right neighbour each, queue of four:
 *                    every process issues 3 and receives 3, 6 messages as the
 *                    specification counts them (default: only the issued ones
 *                    are counted, the data arrives)
 *   dereg-remote     deregister (collectively) the global slot a queued put
 *                    names as its destination (default: the deregistration
 *                    succeeds, the sync is FATAL and writes nothing)
 *   small-slot       put to the slot id LPF_INVALID_MEMSLOT + 2, never handed
 *                    out (FATAL in both modes)
 *   peer-left        process 1 returns from its SPMD function, the others
 *                    sync once more: their sync and the exec return FATAL, in
 *                    debug mode too (no abort: exit 0)
 *   lpf-abort        process 1 calls lpf_abort: the program ends with exit
 *                    status 6 in both modes
 */
#ifdef TEST_DEBUG_HEADER
#  include <debug/lpf/core.h>
#endif
#include "test_util.h"

#include <stdint.h>

static int bad_total;
static const char *mode;

/* Under lpfrun every process runs main (LPF_MPI_AUTO_INITIALIZE, lpf/mpi.h), so that
 * each one reads MODE from its own argv; the root lpf_exec then joins all of them. */
const int LPF_MPI_AUTO_INITIALIZE = 0;

static void count_bad(int bad)
{
    if (bad)
        __sync_fetch_and_add(&bad_total, bad);
}

static int is(const char *m) { return strcmp(mode, m) == 0; }

static int message_has(const char *a, const char *b)
{
    const char *m = test_error_text();
    return strstr(m, a) != NULL && strstr(m, b) != NULL;
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    int bad = 0;
    uint64_t window[2] = {0, 0};
    uint64_t mine[2] = {s + 1u, s + 1u};
    lpf_memslot_t global = LPF_INVALID_MEMSLOT, global2 = LPF_INVALID_MEMSLOT, local = LPF_INVALID_MEMSLOT;
    const lpf_pid_t right = (s + 1) % p;
    lpf_err_t rc;

    if (is("null-input") && s == 0)
        EXPECT(&bad, s, args.input == NULL && args.input_size == 0, "input %p size %zu", args.input,
               args.input_size);
    EXPECT(&bad, s, lpf_resize_memory_register(ctx, 4) == LPF_SUCCESS, "resize reg");
    EXPECT(&bad, s, lpf_resize_message_queue(ctx, 4) == LPF_SUCCESS, "resize queue");
    EXPECT(&bad, s, lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS, "first sync");
    EXPECT(&bad, s, lpf_register_global(ctx, window, sizeof window, &global) == LPF_SUCCESS, "register global");
    EXPECT(&bad, s, lpf_register_global(ctx, mine, sizeof mine, &global2) == LPF_SUCCESS, "register global 2");
    EXPECT(&bad, s, lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS, "sync");

    if (is("dereg-queued")) {
        uint64_t *src = malloc(sizeof *src);
        *src = 42;
        EXPECT(&bad, s, lpf_register_local(ctx, src, sizeof *src, &local) == LPF_SUCCESS, "register local");
        EXPECT(&bad, s, lpf_put(ctx, local, 0, right, global, 0, 8, LPF_MSG_DEFAULT) == LPF_SUCCESS, "put");
        rc = lpf_deregister(ctx, local);
        EXPECT(&bad, s, rc == LPF_ERR_FATAL && message_has("lpf_deregister", "queued in this superstep"),
               "deregister of a queued put's source: %d (%s)", rc, test_error_text());
        free(src);
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        EXPECT(&bad, s, rc == LPF_ERR_FATAL, "sync after the refused deregister: %d", rc);
        EXPECT(&bad, s, window[0] == 0, "window changed to %llu", (unsigned long long)window[0]);
    } else if (is("put-after-dereg")) {
        EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &local) == LPF_SUCCESS, "register local");
        EXPECT(&bad, s, lpf_deregister(ctx, local) == LPF_SUCCESS, "deregister");
        rc = lpf_put(ctx, local, 0, right, global, 0, 8, LPF_MSG_DEFAULT);
        EXPECT(&bad, s, rc == LPF_ERR_FATAL && message_has("lpf_put", "not registered"),
               "put from a deregistered slot: %d (%s)", rc, test_error_text());
    } else if (is("unregistered")) {
        rc = lpf_put(ctx, (lpf_memslot_t)4242, 0, right, global, 0, 8, LPF_MSG_DEFAULT);
        EXPECT(&bad, s, rc == LPF_ERR_FATAL && message_has("lpf_put", "not registered"),
               "put from a never-registered slot: %d (%s)", rc, test_error_text());
    } else if (is("dereg-count") || is("dereg-order")) {
        if (is("dereg-order") && s == 1) {
            EXPECT(&bad, s, lpf_deregister(ctx, global2) == LPF_SUCCESS, "deregister 2");
            EXPECT(&bad, s, lpf_deregister(ctx, global) == LPF_SUCCESS, "deregister 1");
        } else {
            EXPECT(&bad, s, lpf_deregister(ctx, global) == LPF_SUCCESS, "deregister 1");
            if (is("dereg-order") || s != 0)
                EXPECT(&bad, s, lpf_deregister(ctx, global2) == LPF_SUCCESS, "deregister 2");
        }
        (void)lpf_sync(ctx, LPF_SYNC_DEFAULT); /* undefined in the default mode */
    } else if (is("conflict")) {
        EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &local) == LPF_SUCCESS, "register local");
        EXPECT(&bad, s, lpf_put(ctx, local, 0, right, global, 0, 8, LPF_MSG_DEFAULT) == LPF_SUCCESS, "put");
        EXPECT(&bad, s, lpf_get(ctx, right, global, 4, local, 8, 8, LPF_MSG_DEFAULT) == LPF_SUCCESS, "get");
        (void)lpf_sync(ctx, LPF_SYNC_DEFAULT); /* undefined in the default mode */
    } else if (is("sync-attr")) {
        rc = lpf_sync(ctx, 42);
        EXPECT(&bad, s, rc == LPF_SUCCESS, "sync with attribute 42: %d (%s)", rc, test_error_text());
    } else if (is("msg-attr")) {
        EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &local) == LPF_SUCCESS, "register local");
        rc = lpf_put(ctx, local, 0, right, global, 0, 8, 7);
        EXPECT(&bad, s, rc == LPF_SUCCESS, "put with attribute 7: %d (%s)", rc, test_error_text());
        EXPECT(&bad, s, lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS, "sync");
        EXPECT(&bad, s, window[0] == (s + p - 1) % p + 1u, "window[0] = %llu", (unsigned long long)window[0]);
    } else if (is("queue-full")) {
        int k;
        EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &local) == LPF_SUCCESS, "register local");
        for (k = 0; k < 4; ++k)
            EXPECT(&bad, s, lpf_put(ctx, local, 0, s, global, 0, 8, LPF_MSG_DEFAULT) == LPF_SUCCESS, "put %d", k);
        rc = lpf_put(ctx, local, 0, s, global, 0, 8, LPF_MSG_DEFAULT);
        EXPECT(&bad, s, rc == LPF_ERR_OUT_OF_MEMORY, "fifth put with room for four: %d (%s)", rc, test_error_text());
        (void)lpf_sync(ctx, LPF_SYNC_DEFAULT); /* a put to itself counts twice: 8 > 4 */
    } else if (is("register-full")) {
        lpf_memslot_t more[3];
        EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &more[0]) == LPF_SUCCESS, "register 3");
        EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &more[1]) == LPF_SUCCESS, "register 4");
        rc = lpf_register_local(ctx, mine, sizeof mine, &more[2]);
        EXPECT(&bad, s, rc == LPF_ERR_OUT_OF_MEMORY, "fifth registration with room for four: %d (%s)", rc,
               test_error_text());
    } else if (is("queue-incoming")) {
        int k;
        EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &local) == LPF_SUCCESS, "register local");
        for (k = 0; k < 3; ++k)
            EXPECT(&bad, s, lpf_put(ctx, local, 0, right, global, 8 * (k % 2), 8, LPF_MSG_DEFAULT) == LPF_SUCCESS,
                   "put %d", k);
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        EXPECT(&bad, s, rc == LPF_SUCCESS, "sync: %d (%s)", rc, test_error_text());
        EXPECT(&bad, s, window[1] == (s + p - 1) % p + 1u, "window[1] = %llu", (unsigned long long)window[1]);
    } else if (is("dereg-remote")) {
        EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &local) == LPF_SUCCESS, "register local");
        EXPECT(&bad, s, lpf_put(ctx, local, 0, right, global, 0, 8, LPF_MSG_DEFAULT) == LPF_SUCCESS, "put");
        rc = lpf_deregister(ctx, global);
        EXPECT(&bad, s, rc == LPF_SUCCESS, "deregister of a queued put's destination: %d (%s)", rc,
               test_error_text());
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        EXPECT(&bad, s, rc == LPF_ERR_FATAL, "sync after the destination's deregistration: %d", rc);
        EXPECT(&bad, s, window[0] == 0, "window changed to %llu", (unsigned long long)window[0]);
    } else if (is("small-slot")) {
        EXPECT(&bad, s, lpf_register_local(ctx, mine, sizeof mine, &local) == LPF_SUCCESS, "register local");
        rc = lpf_put(ctx, local, 0, right, LPF_INVALID_MEMSLOT + 2, 0, 8, LPF_MSG_DEFAULT);
        EXPECT(&bad, s, rc == LPF_ERR_FATAL && message_has("lpf_put", "not registered"),
               "put to the slot id LPF_INVALID_MEMSLOT + 2: %d (%s)", rc, test_error_text());
    } else if (is("peer-left")) {
        if (s != 1) {
            rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
            EXPECT(&bad, s, rc == LPF_ERR_FATAL, "sync after process 1 left: %d (%s)", rc, test_error_text());
        }
    } else if (is("lpf-abort")) {
        if (s == 1)
            lpf_abort(ctx);
        (void)lpf_sync(ctx, LPF_SYNC_DEFAULT);
    } else if (!is("null-input")) {
        fprintf(stderr, "unknown mode %s\n", mode);
        ++bad;
    }
    count_bad(bad);
}

int main(int argc, char **argv)
{
    lpf_args_t args = LPF_NO_ARGS;
    lpf_err_t rc, expected;
    int debug;
#ifdef TEST_DEBUG_HEADER
    debug = 1;
#else
    const char *env = getenv("LPF_DEBUG");
    debug = env != NULL && env[0] != '\0' && strcmp(env, "0") != 0;
#endif
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODE\n", argv[0]);
        return 2;
    }
    mode = argv[1];
    if (is("null-input"))
        args.input_size = 8;
    rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, args);
    if (is("lpf-abort")) {
        fprintf(stderr, "%s: lpf_abort returned (exec returned %d)\n", mode, rc);
        return 3;
    }
    if (is("peer-left")) {
        /* Not misuse: the same outcome in both modes. */
        if (rc != LPF_ERR_FATAL || bad_total) {
            fprintf(stderr, "%s: exec returned %d, expected %d; %d failed checks\n", mode, rc, LPF_ERR_FATAL,
                    bad_total);
            return 1;
        }
        printf("%s: ok\n", mode);
        return 0;
    }
    if (debug) {
        fprintf(stderr, "%s: not aborted in debug mode (exec returned %d)\n", mode, rc);
        return 3;
    }
    expected = is("dereg-queued") || is("put-after-dereg") || is("unregistered") || is("dereg-remote") ||
                       is("small-slot")
                   ? LPF_ERR_FATAL
                   : LPF_SUCCESS;
    if (is("dereg-count") || is("dereg-order") || is("conflict"))
        expected = rc; /* undefined: only no crash and no hang */
    if (rc != expected) {
        fprintf(stderr, "%s: exec returned %d, expected %d (%s)\n", mode, rc, expected, test_error_text());
        return 1;
    }
    if (bad_total) {
        fprintf(stderr, "%s: %d failed checks\n", mode, bad_total);
        return 1;
    }
    printf("%s: default mode ok\n", mode);
    return 0;
}
