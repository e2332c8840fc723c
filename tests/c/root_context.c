/*
 * root_context: LPF_ROOT is a valid context of one process (pid 0 of 1) for
 * the primitives, as the published core.h says (#17 item 1): sequential code
 * and library initialisers resize, register, put and get to themselves,
 * sync, probe and deregister on it without any lpf_exec.
 *
 *  - before main(), in a constructor (a library initialiser): a put and a
 *    get to itself on LPF_ROOT;
 *  - in main(): probe; puts and gets to itself with offsets over two slots;
 *    a registration beyond the capacity refused with LPF_ERR_OUT_OF_MEMORY;
 *    deregistration; lpf_rehook(LPF_ROOT) running a section of one process;
 *    and then an lpf_exec(LPF_ROOT, LPF_MAX_P) that still works.
 *  - `root_context fatal`: a put to pid 1 on LPF_ROOT is LPF_ERR_FATAL (a
 *    context of one process), and afterwards every primitive on LPF_ROOT,
 *    lpf_exec(LPF_ROOT) included, returns LPF_ERR_FATAL.
 *
 * Exit status 0 when every check passed. Under lpfrun every process runs
 * main() and checks the same.
 */
#include "test_util.h"

#include <stdint.h>

static int bad;
#define CHECK(cond, ...) EXPECT(&bad, 0, cond, __VA_ARGS__)
#define OK(call) CHECK((call) == LPF_SUCCESS, "%s: %s", #call, test_error_text())

/* What the constructor saw: 0 = not run, 1 = ok, -1 = failed. */
static int ctor_result;
static uint64_t ctor_word[2];

#if defined(__GNUC__)
__attribute__((constructor)) static void library_initialiser(void)
{
    lpf_memslot_t g = LPF_INVALID_MEMSLOT, l = LPF_INVALID_MEMSLOT;
    uint64_t v = 41;
    int ok = 1;
    ok &= lpf_resize_memory_register(LPF_ROOT, 2) == LPF_SUCCESS;
    ok &= lpf_resize_message_queue(LPF_ROOT, 2) == LPF_SUCCESS;
    ok &= lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT) == LPF_SUCCESS;
    ok &= lpf_register_global(LPF_ROOT, ctor_word, sizeof ctor_word, &g) == LPF_SUCCESS;
    ok &= lpf_register_local(LPF_ROOT, &v, sizeof v, &l) == LPF_SUCCESS;
    ok &= lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT) == LPF_SUCCESS;
    ok &= lpf_put(LPF_ROOT, l, 0, 0, g, 8, 8, LPF_MSG_DEFAULT) == LPF_SUCCESS;
    ok &= lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT) == LPF_SUCCESS;
    ok &= ctor_word[1] == 41;
    ok &= lpf_deregister(LPF_ROOT, l) == LPF_SUCCESS;
    ok &= lpf_deregister(LPF_ROOT, g) == LPF_SUCCESS;
    ctor_result = ok ? 1 : -1;
}
#endif

static void one_process(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    uint64_t x = 5, y = 0;
    lpf_memslot_t gx = LPF_INVALID_MEMSLOT, gy = LPF_INVALID_MEMSLOT;
    int *seen = args.output;
    CHECK(s == 0 && p == 1, "rehook(LPF_ROOT): pid %u of %u", s, p);
    OK(lpf_resize_memory_register(ctx, 2));
    OK(lpf_resize_message_queue(ctx, 2));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_register_global(ctx, &x, sizeof x, &gx));
    OK(lpf_register_global(ctx, &y, sizeof y, &gy));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_get(ctx, 0, gx, 0, gy, 0, sizeof x, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    CHECK(y == 5, "get to itself in rehook(LPF_ROOT): %llu", (unsigned long long)y);
    if (seen != NULL && args.output_size == sizeof *seen)
        *seen = 1;
}

/* Set by every process of the exec that runs in this OS process (under
 * lpfrun or mpirun each runs one; on shm pid 0 runs on main's thread). */
static volatile int section_ran;

/* pid 0 checks its input, the word main() passes. */
static void section(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)ctx;
    (void)p;
    if (s == 0)
        CHECK(args.input_size == sizeof(uint64_t) && *(const uint64_t *)args.input == 77,
              "exec after LPF_ROOT use: pid 0's input");
    section_ran = 1;
}

static int run_main(void)
{
    uint64_t buf[4] = {0, 0, 0, 0}, src[3] = {10, 11, 12}, word = 77;
    lpf_memslot_t gbuf = LPF_INVALID_MEMSLOT, lsrc = LPF_INVALID_MEMSLOT, extra = LPF_INVALID_MEMSLOT;
    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_args_t args = LPF_NO_ARGS;
    int rehooked = 0;
    lpf_err_t rc;

#if defined(__GNUC__)
    CHECK(ctor_result == 1, "the constructor's put to itself on LPF_ROOT: %d (word %llu)", ctor_result,
          (unsigned long long)ctor_word[1]);
#endif
    OK(lpf_probe(LPF_ROOT, &m));
    CHECK(m.p >= 1 && m.free_p >= 1 && m.g != NULL && m.l != NULL, "probe(LPF_ROOT): p %u free_p %u", m.p,
          m.free_p);

    /* Capacity for 2 slots: a third registration is LPF_ERR_OUT_OF_MEMORY. */
    OK(lpf_resize_memory_register(LPF_ROOT, 2));
    OK(lpf_resize_message_queue(LPF_ROOT, 4));
    OK(lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    OK(lpf_register_global(LPF_ROOT, buf, sizeof buf, &gbuf));
    OK(lpf_register_local(LPF_ROOT, src, sizeof src, &lsrc));
    rc = lpf_register_local(LPF_ROOT, &word, sizeof word, &extra);
    CHECK(rc == LPF_ERR_OUT_OF_MEMORY, "third registration with room for 2: %d", rc);
    OK(lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));

    /* put src[1..2] to buf[2..3]; get buf[0] (never written) to src[0] */
    buf[0] = 99;
    OK(lpf_put(LPF_ROOT, lsrc, 8, 0, gbuf, 16, 16, LPF_MSG_DEFAULT));
    OK(lpf_get(LPF_ROOT, 0, gbuf, 0, lsrc, 0, 8, LPF_MSG_DEFAULT));
    OK(lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    CHECK(buf[0] == 99 && buf[1] == 0 && buf[2] == 11 && buf[3] == 12, "put to itself: %llu %llu %llu %llu",
          (unsigned long long)buf[0], (unsigned long long)buf[1], (unsigned long long)buf[2],
          (unsigned long long)buf[3]);
    CHECK(src[0] == 99, "get from itself: %llu", (unsigned long long)src[0]);

    /* a second superstep: two puts of the word read above */
    OK(lpf_put(LPF_ROOT, lsrc, 0, 0, gbuf, 0, 8, LPF_MSG_DEFAULT));
    OK(lpf_put(LPF_ROOT, lsrc, 0, 0, gbuf, 8, 8, LPF_MSG_DEFAULT));
    OK(lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    CHECK(buf[0] == 99 && buf[1] == 99, "two puts to itself: %llu %llu", (unsigned long long)buf[0],
          (unsigned long long)buf[1]);

    OK(lpf_deregister(LPF_ROOT, lsrc));
    OK(lpf_deregister(LPF_ROOT, gbuf));
    OK(lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));

    /* rehook(LPF_ROOT): a fresh section of one process */
    args.output = &rehooked;
    args.output_size = sizeof rehooked;
    OK(lpf_rehook(LPF_ROOT, one_process, args));
    CHECK(rehooked == 1, "rehook(LPF_ROOT) did not run its function");

    /* an exec from the root still works after all that */
    args = LPF_NO_ARGS;
    args.input = &word;
    args.input_size = sizeof word;
    OK(lpf_exec(LPF_ROOT, LPF_MAX_P, section, args));
    CHECK(section_ran == 1, "exec after LPF_ROOT use: the section did not run here");
    return bad;
}

static int run_fatal(void)
{
    uint64_t w = 1;
    lpf_memslot_t g = LPF_INVALID_MEMSLOT;
    lpf_err_t rc;
    OK(lpf_resize_memory_register(LPF_ROOT, 1));
    OK(lpf_resize_message_queue(LPF_ROOT, 2));
    OK(lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    OK(lpf_register_global(LPF_ROOT, &w, sizeof w, &g));
    OK(lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    rc = lpf_put(LPF_ROOT, g, 0, 1, g, 0, 8, LPF_MSG_DEFAULT);
    CHECK(rc == LPF_ERR_FATAL, "put to pid 1 on LPF_ROOT (one process): %d", rc);
    CHECK(strstr(test_error_text(), "pid 1") != NULL, "the message names the pid: %s", test_error_text());
    rc = lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT);
    CHECK(rc == LPF_ERR_FATAL, "sync on a failed LPF_ROOT: %d", rc);
    rc = lpf_exec(LPF_ROOT, LPF_MAX_P, section, LPF_NO_ARGS);
    CHECK(rc == LPF_ERR_FATAL && section_ran == 0, "exec from a failed LPF_ROOT: %d (ran %d)", rc, section_ran);
    return bad;
}

int main(int argc, char **argv)
{
    int failures = argc > 1 && strcmp(argv[1], "fatal") == 0 ? run_fatal() : run_main();
    if (failures != 0) {
        fprintf(stderr, "root_context: %d check(s) failed\n", failures);
        return 1;
    }
    printf("root_context: all checks passed\n");
    return 0;
}
