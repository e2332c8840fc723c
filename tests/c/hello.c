/*
 * hello: the classic first LPF program.
 *
 * main() starts an SPMD section with lpf_exec(LPF_ROOT, LPF_MAX_P, ...).
 * Every process reserves register and queue capacity, registers a global
 * error word, says hello, and reports its own status to pid 0 by putting a
 * non-zero value into pid 0's error word if anything went wrong (concurrent
 * puts of non-zero values leave a non-zero value whatever the order). pid 0
 * writes a summary into args.output, which main() checks.
 */
#include <lpf/core.h>

#include "test_util.h"

#define HELLO_MAGIC 0x48454c4fu /* "HELO" */

struct hello_out {
    unsigned magic;
    unsigned nprocs;
    int error_word;     /* what pid 0's error word held at the end */
    int pid0_status;    /* pid 0's own local failures */
    int saw_input;      /* pid 0 received main()'s input */
};

static void hello_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                       lpf_args_t args)
{
    int status = 0;         /* this process's failure count */
    int error_word = 0;     /* global: written by the others on pid 0 */
    lpf_memslot_t err_slot = LPF_INVALID_MEMSLOT;
    lpf_memslot_t status_slot = LPF_INVALID_MEMSLOT;
    lpf_err_t rc;

    EXPECT(&status, pid, nprocs >= 1, "nprocs = %u", nprocs);
    EXPECT(&status, pid, pid < nprocs, "pid %u, nprocs %u", pid, nprocs);
    if (pid == 0) {
        EXPECT(&status, pid, args.input_size == sizeof(unsigned) &&
                   args.input != NULL &&
                   *(const unsigned *)args.input == HELLO_MAGIC,
               "pid 0 did not receive main()'s input");
        EXPECT(&status, pid, args.output_size == sizeof(struct hello_out) &&
                   args.output != NULL,
               "pid 0 did not receive main()'s output buffer");
    } else {
        EXPECT(&status, pid, args.input == NULL && args.input_size == 0 &&
                   args.output == NULL && args.output_size == 0,
               "only pid 0 may see input/output");
    }

    rc = lpf_resize_memory_register(ctx, 2);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "resize_memory_register: %d", rc);
    /* pid 0 receives one message from every process, itself included. */
    rc = lpf_resize_message_queue(ctx, 2 * (size_t)nprocs);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "resize_message_queue: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "first lpf_sync: %d", rc);
    if (rc != LPF_SUCCESS)
        goto report;

    rc = lpf_register_global(ctx, &error_word, sizeof error_word, &err_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register_global: %d", rc);
    rc = lpf_register_local(ctx, &status, sizeof status, &status_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register_local: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "second lpf_sync: %d", rc);
    if (rc != LPF_SUCCESS)
        goto report;

    printf("Hello world from %u / %u\n", pid, nprocs);
    fflush(stdout);

    /* Every process with a problem marks pid 0's error word. */
    rc = test_gather_status(ctx, &status, status_slot, err_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "status lpf_sync: %d", rc);

    rc = lpf_deregister(ctx, status_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "deregister local: %d", rc);
    rc = lpf_deregister(ctx, err_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "deregister global: %d", rc);

report:
    if (status != 0)
        fprintf(stderr, "pid %u: %d local failure(s)\n", pid, status);
    if (pid == 0 && args.output != NULL &&
        args.output_size == sizeof(struct hello_out)) {
        struct hello_out *out = (struct hello_out *)args.output;
        out->magic = HELLO_MAGIC;
        out->nprocs = nprocs;
        out->error_word = error_word;
        out->pid0_status = status;
        out->saw_input = args.input != NULL;
    }
}

int main(void)
{
    unsigned in = HELLO_MAGIC;
    struct hello_out out;
    unsigned want = test_requested_procs();
    lpf_args_t args;
    lpf_err_t rc;
    int bad = 0;

    memset(&out, 0, sizeof out);
    args.input = &in;
    args.input_size = sizeof in;
    args.output = &out;
    args.output_size = sizeof out;
    args.f_symbols = NULL;
    args.f_size = 0;

    rc = lpf_exec(LPF_ROOT, LPF_MAX_P, hello_spmd, args);
    EXPECT(&bad, 0, rc == LPF_SUCCESS, "lpf_exec returned %d", rc);
    EXPECT(&bad, 0, out.magic == HELLO_MAGIC,
           "pid 0 did not write args.output (magic %#x)", out.magic);
    if (out.magic == HELLO_MAGIC) {
        EXPECT(&bad, 0, out.nprocs >= 1, "nprocs %u", out.nprocs);
        if (want != 0)
            EXPECT(&bad, 0, out.nprocs == want,
                   "LPF_MAX_PROCS=%u but the section had %u processes",
                   want, out.nprocs);
        EXPECT(&bad, 0, out.error_word == 0,
               "some process reported a failure (error word %d)",
               out.error_word);
        EXPECT(&bad, 0, out.pid0_status == 0, "pid 0 had %d failure(s)",
               out.pid0_status);
        EXPECT(&bad, 0, out.saw_input, "pid 0 saw no input");
    }
    if (bad != 0) {
        fprintf(stderr, "hello: FAILED (%d problem(s))\n", bad);
        return 1;
    }
    printf("hello: ok (%u processes)\n", out.nprocs);
    return 0;
}
