/*
 * launched: a program started by a launcher (lpfrun -n N, or mpirun with an MPI
 * engine) as the reference's launcher runs it (#17 item 3): only the process of
 * pid 0 runs main; the others serve its lpf_exec calls and exit with it.
 *
 * main calls lpf_exec(LPF_ROOT, P, ...) three times: P = N - 1 (all but one
 * process when N > 1), P = LPF_MAX_P (all N), and P = N - 1 again (the part made
 * by the first exec, kept). Each section checks that it runs on
 * min(P, N) processes with pid 0 in this process, that only pid 0 sees
 * args.input, that a function passed in args.f_symbols calls the same function
 * in every process, and sums 1000 + pid of every process into pid 0's
 * args.output. main checks the output, then prints
 *   "launched: main after lpf_exec (N processes)"
 * which the harness expects exactly once in the job's output, and
 *   "launched: section of P on pid X"
 * comes once per process of each section.
 *
 * N comes from lpf_probe(LPF_ROOT). Exits non-zero on any failed check.
 */
#include <lpf/core.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct result {
    uint64_t sum;      /* sum of 1000 + pid over the section */
    uint32_t nprocs;   /* the section's size */
    uint32_t bad;      /* failed checks, summed over the section */
    uint64_t main_pid; /* getpid() of pid 0: the caller's process */
};

static uint64_t input_word = 0xfeedULL;

/* Passed through args.f_symbols: must be callable in every process. */
static void mark(uint64_t *word) { *word = 0x5eedULL; }

static void section(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    uint64_t mine[2] = {1000 + pid, 0}; /* contribution, failed checks */
    uint64_t *all = calloc(2 * (size_t)nprocs, sizeof *all);
    lpf_memslot_t src = LPF_INVALID_MEMSLOT, dst = LPF_INVALID_MEMSLOT;
    uint64_t marked = 0;

    if (pid == 0) {
        mine[1] += args.input_size != sizeof input_word || *(const uint64_t *)args.input != input_word;
        mine[1] += args.output_size != sizeof(struct result);
    } else {
        mine[1] += args.input != NULL || args.input_size != 0 || args.output != NULL || args.output_size != 0;
    }
    if (args.f_size == 1 && args.f_symbols[0] != NULL) {
        ((void (*)(uint64_t *))args.f_symbols[0])(&marked);
        mine[1] += marked != 0x5eedULL;
    } else {
        mine[1] += 1;
    }
    printf("launched: section of %u on pid %u\n", nprocs, pid);
    fflush(stdout);

    if (lpf_resize_memory_register(ctx, 2) != LPF_SUCCESS || lpf_resize_message_queue(ctx, nprocs + 1) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS || all == NULL)
        goto out;
    if (lpf_register_local(ctx, mine, sizeof mine, &src) != LPF_SUCCESS ||
        lpf_register_global(ctx, all, 2 * sizeof *all * nprocs, &dst) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        goto out;
    if (lpf_put(ctx, src, 0, 0, dst, 2 * sizeof *all * pid, sizeof mine, LPF_MSG_DEFAULT) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        goto out;
    if (pid == 0 && args.output_size == sizeof(struct result)) {
        struct result *r = args.output;
        r->sum = 0;
        r->bad = 0;
        for (lpf_pid_t q = 0; q < nprocs; ++q) {
            r->sum += all[2 * q];
            r->bad += (uint32_t)all[2 * q + 1];
        }
        r->nprocs = nprocs;
        r->main_pid = (uint64_t)getpid();
    }
out:
    free(all);
}

static int run(lpf_pid_t p, lpf_pid_t expect)
{
    struct result r = {0, 0, 0, 0};
    lpf_func_t symbols[1] = {(lpf_func_t)mark};
    lpf_args_t args = LPF_NO_ARGS;
    uint64_t want = 0;
    lpf_err_t rc;
    args.input = &input_word;
    args.input_size = sizeof input_word;
    args.output = &r;
    args.output_size = sizeof r;
    args.f_symbols = symbols;
    args.f_size = 1;
    rc = lpf_exec(LPF_ROOT, p, section, args);
    for (lpf_pid_t q = 0; q < expect; ++q)
        want += 1000 + q;
    if (rc != LPF_SUCCESS || r.nprocs != expect || r.sum != want || r.bad != 0 || r.main_pid != (uint64_t)getpid()) {
        fprintf(stderr,
                "launched: lpf_exec(LPF_ROOT, %u): rc %d, section of %u (expected %u), sum %llu (expected %llu), "
                "%u failed check(s) in the section, pid 0 in process %llu (main in %llu)\n",
                p, rc, r.nprocs, expect, (unsigned long long)r.sum, (unsigned long long)want, r.bad,
                (unsigned long long)r.main_pid, (unsigned long long)getpid());
        return 1;
    }
    return 0;
}

int main(void)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_pid_t n, fewer;
    int bad = 0;
    if (lpf_probe(LPF_ROOT, &m) != LPF_SUCCESS || m.p == 0) {
        fprintf(stderr, "launched: lpf_probe(LPF_ROOT) failed\n");
        return 1;
    }
    n = m.p;
    fewer = n > 1 ? n - 1 : 1;
    bad |= run(fewer, fewer);
    bad |= run(LPF_MAX_P, n);
    bad |= run(fewer, fewer);
    if (bad)
        return 1;
    printf("launched: main after lpf_exec (%u processes)\n", n);
    return 0;
}
