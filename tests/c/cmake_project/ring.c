/*
 * ring: every process puts its pid to its right neighbour and checks what its left
 * one put; pid 0 reports P through args.output. main() prints "ring ok P" and exits
 * 0 only if every process saw the right value.
 */
#include <lpf/core.h>

#include <stdio.h>

struct result {
    unsigned nprocs;
    int bad;
};

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    lpf_pid_t mine = s, from_left = p;
    int bad = 0, bad_total = 0;
    lpf_memslot_t src = LPF_INVALID_MEMSLOT, dst = LPF_INVALID_MEMSLOT, bad_slot = LPF_INVALID_MEMSLOT;
    if (lpf_resize_memory_register(ctx, 3) != LPF_SUCCESS || lpf_resize_message_queue(ctx, 2) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS ||
        lpf_register_local(ctx, &mine, sizeof mine, &src) != LPF_SUCCESS ||
        lpf_register_global(ctx, &from_left, sizeof from_left, &dst) != LPF_SUCCESS ||
        lpf_register_global(ctx, &bad_total, sizeof bad_total, &bad_slot) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS ||
        lpf_put(ctx, src, 0, (s + 1) % p, dst, 0, sizeof mine, LPF_MSG_DEFAULT) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) {
        bad = 1;
    } else if (from_left != (s + p - 1) % p) {
        fprintf(stderr, "pid %u: got %u from the left, expected %u\n", (unsigned)s, (unsigned)from_left,
                (unsigned)((s + p - 1) % p));
        bad = 1;
    }
    /* Any failure reaches pid 0's bad_total (concurrent puts of 1 leave 1). */
    if (bad && s != 0) {
        lpf_memslot_t one = LPF_INVALID_MEMSLOT;
        if (lpf_register_local(ctx, &bad, sizeof bad, &one) == LPF_SUCCESS)
            lpf_put(ctx, one, 0, 0, bad_slot, 0, sizeof bad, LPF_MSG_DEFAULT);
    }
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        bad = 1;
    if (s == 0 && args.output_size == sizeof(struct result)) {
        struct result *r = (struct result *)args.output;
        r->nprocs = (unsigned)p;
        r->bad = bad || bad_total;
    }
}

int main(void)
{
    struct result r = {0, 1};
    lpf_args_t args = {NULL, 0, &r, sizeof r, NULL, 0};
    if (lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, args) != LPF_SUCCESS || r.bad || r.nprocs == 0) {
        fprintf(stderr, "ring failed (nprocs %u)\n", r.nprocs);
        return 1;
    }
    printf("ring ok %u\n", r.nprocs);
    return 0;
}
