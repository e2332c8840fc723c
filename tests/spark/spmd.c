/*
 * SPMD functions a Spark user would ship: compiled by tests/spark/run.sh with
 *   cc -shared -fPIC -I native/lpf-capi/include spmd.c -o libspmd_test.so
 * (not linked to liblpf_core: the bridge provides the lpf_* symbols) and run through
 * LpfHook with LpfProgram.library(path, symbol).
 */
#include <lpf/core.h>
#include <stdint.h>
#include <string.h>

/*
 * Input: this process's int64 values. Output (24 bytes): nprocs, pid, and the sum of
 * every process's values, computed by putting each local sum into slot `pid` of every
 * process's array.
 */
void spmd_sum(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int64_t local = 0, sums[64];
    lpf_memslot_t src = LPF_INVALID_MEMSLOT, dst = LPF_INVALID_MEMSLOT;
    const int64_t *in = (const int64_t *) args.input;
    size_t i, n = args.input_size / sizeof(int64_t);

    if (nprocs > 64 || args.output_size < 3 * sizeof(int64_t))
        return;
    for (i = 0; i < n; ++i)
        local += in[i];
    memset(sums, 0, sizeof sums);
    if (lpf_resize_memory_register(ctx, 2) != LPF_SUCCESS) return;
    if (lpf_resize_message_queue(ctx, 2 * nprocs) != LPF_SUCCESS) return;
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    if (lpf_register_local(ctx, &local, sizeof local, &src) != LPF_SUCCESS) return;
    if (lpf_register_global(ctx, sums, nprocs * sizeof(int64_t), &dst) != LPF_SUCCESS) return;
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    for (i = 0; i < nprocs; ++i)
        if (lpf_put(ctx, src, 0, (lpf_pid_t) i, dst, pid * sizeof(int64_t), sizeof(int64_t),
                    LPF_MSG_DEFAULT) != LPF_SUCCESS)
            return;
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    {
        int64_t out[3] = { (int64_t) nprocs, (int64_t) pid, 0 };
        for (i = 0; i < nprocs; ++i)
            out[2] += sums[i];
        memcpy(args.output, out, sizeof out);
    }
    lpf_deregister(ctx, src);
    lpf_deregister(ctx, dst);
}

/* A put to a process that does not exist: a fatal LPF error on every process. */
void spmd_bad_put(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    int64_t x = (int64_t) pid;
    lpf_memslot_t s = LPF_INVALID_MEMSLOT;
    (void) args;
    if (lpf_resize_memory_register(ctx, 1) != LPF_SUCCESS) return;
    if (lpf_resize_message_queue(ctx, 2) != LPF_SUCCESS) return;
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    if (lpf_register_global(ctx, &x, sizeof x, &s) != LPF_SUCCESS) return;
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    lpf_put(ctx, s, 0, nprocs + 7, s, 0, sizeof x, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
}
