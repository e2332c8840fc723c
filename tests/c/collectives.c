/*
 * collectives: the LPF collectives (lpf/collectives.h), written only against
 * the published headers lpf/core.h and lpf/collectives.h. One section of
 * LPF_MAX_P processes (LPF_MAX_PROCS on shm; the whole job under lpfrun);
 * every result is checked exactly:
 *   broadcast (each root), gather, scatter, allgather (with and without the
 *   own block), alltoall, reduce and allreduce (sum and a non-commutative
 *   operator: the fold order is the group order everywhere), combine and
 *   allcombine (element-wise max and sum), a strided group (even pids) with
 *   broadcast and allgather, a too-large reduce (LPF_ERR_OUT_OF_MEMORY, no
 *   effect), LPF_INVALID_COLL and lpf_collectives_get_context; a slot
 *   registered in the init's superstep used right after it; overflowing sizes.
 * Failures are summed at pid 0, which returns the total through args.output
 * (with lpf_hook each process also returns its own); the exit status is
 * non-zero when any check failed.
 */
#include <lpf/core.h>
#include <lpf/mpi.h>
#include "section_main.h"
#include "test_util.h"
#include <lpf/collectives.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4 /* elements per block */

#define CHECK(cond, ...) EXPECT(&bad, s, cond, __VA_ARGS__)
#define OK(call) CHECK((call) == LPF_SUCCESS, "%s", #call)

static void sum_u64(size_t n, const void *array, void *value)
{
    const uint64_t *a = array;
    uint64_t *v = value;
    size_t i;
    for (i = 0; i < n; ++i)
        *v += a[i];
}

/* v := v * 10 + a (mod 2^64): the result depends on the order of folding */
static void digits(size_t n, const void *array, void *value)
{
    const uint64_t *a = array;
    uint64_t *v = value;
    size_t i;
    for (i = 0; i < n; ++i)
        *v = *v * 10 + a[i];
}

static void max_u64(size_t n, const void *combine, void *into)
{
    const uint64_t *c = combine;
    uint64_t *t = into;
    size_t i;
    for (i = 0; i < n; ++i)
        if (c[i] > t[i])
            t[i] = c[i];
}

static void add_u64(size_t n, const void *combine, void *into)
{
    const uint64_t *c = combine;
    uint64_t *t = into;
    size_t i;
    for (i = 0; i < n; ++i)
        t[i] += c[i];
}

/* The section has as many processes as the run asked for (LPF_MAX_PROCS, else
 * LPF_NPROCS under lpfrun), when it asked. */
static int test_requested(lpf_pid_t p)
{
    const char *e = getenv("LPF_MAX_PROCS");
    if (e == NULL)
        e = getenv("LPF_NPROCS");
    return e == NULL || (lpf_pid_t)atoi(e) == p;
}

static uint64_t val(lpf_pid_t pid, lpf_pid_t to, size_t i)
{
    return 1000000u * (uint64_t)pid + 1000u * (uint64_t)to + i;
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    int bad = 0;
    lpf_coll_t coll = LPF_INVALID_COLL, even = LPF_INVALID_COLL;
    size_t blk = N * sizeof(uint64_t);
    uint64_t *src = calloc((size_t)p * N, sizeof(uint64_t));
    uint64_t *dst = calloc((size_t)p * N, sizeof(uint64_t));
    uint64_t elem[2], arr[N], total[64];
    lpf_memslot_t ssrc, sdst, selem, sarr, stotal;
    lpf_pid_t r, k;
    size_t i;
    const lpf_pid_t none = (lpf_pid_t)-1;
    int expect_max = test_requested(p);

    CHECK(expect_max, "section of %u processes, LPF_NPROCS = %s, LPF_MAX_PROCS = %s",
          p, getenv("LPF_NPROCS"), getenv("LPF_MAX_PROCS"));
    CHECK(LPF_INVALID_COLL.P == 0 && LPF_INVALID_COLL.ctx == LPF_NONE,
          "LPF_INVALID_COLL");
    OK(lpf_resize_memory_register(ctx, 8));
    OK(lpf_resize_message_queue(ctx, 4 * (size_t)p + 4));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_collectives_init(ctx, s, p, 1, 2 * sizeof(uint64_t), blk, &coll));
    CHECK(lpf_collectives_get_context(coll) == ctx, "get_context");
    CHECK(coll.P == p && coll.s == s, "coll.P %u coll.s %u", coll.P, coll.s);
    if (s % 2 == 0)
        OK(lpf_collectives_init_strided(ctx, s, p, 0, p, 2, 1, 0, blk, &even));
    OK(lpf_register_global(ctx, src, (size_t)p * blk, &ssrc));
    OK(lpf_register_global(ctx, dst, (size_t)p * blk, &sdst));
    OK(lpf_register_global(ctx, elem, sizeof elem, &selem));
    OK(lpf_register_global(ctx, arr, sizeof arr, &sarr));
    OK(lpf_register_global(ctx, total, sizeof total, &stotal));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    (void)none;

#define FILL()                                                               \
    do {                                                                     \
        for (k = 0; k < p; ++k)                                              \
            for (i = 0; i < N; ++i) {                                        \
                src[k * N + i] = val(s, k, i);                               \
                dst[k * N + i] = 7;                                          \
            }                                                                \
    } while (0)

    /* broadcast from every root: block 0 of root's src to block 0 of dst */
    for (r = 0; r < p; ++r) {
        FILL();
        OK(lpf_broadcast(coll, ssrc, sdst, blk, r));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        for (i = 0; i < N; ++i)
            CHECK(dst[i] == (s == r ? 7 : val(r, 0, i)), "broadcast root %u [%zu] = %llu",
                  r, i, (unsigned long long)dst[i]);
    }
    /* gather to root p-1: block 0 of everyone's src to block k of root's dst */
    r = p - 1;
    FILL();
    OK(lpf_gather(coll, ssrc, sdst, blk, r));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (k = 0; k < p; ++k)
        for (i = 0; i < N; ++i)
            CHECK(dst[k * N + i] == (s == r && k != r ? val(k, 0, i) : 7),
                  "gather block %u [%zu] = %llu", k, i,
                  (unsigned long long)dst[k * N + i]);
    /* scatter from root 0: block k of root's src to block 0 of dst at k */
    FILL();
    OK(lpf_scatter(coll, ssrc, sdst, blk, 0));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (i = 0; i < N; ++i)
        CHECK(dst[i] == (s == 0 ? 7 : val(0, s, i)), "scatter [%zu] = %llu", i,
              (unsigned long long)dst[i]);
    /* allgather, excluding and including the own block */
    for (r = 0; r < 2; ++r) {
        FILL();
        OK(lpf_allgather(coll, ssrc, sdst, blk, r == 0));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        for (k = 0; k < p; ++k)
            for (i = 0; i < N; ++i)
                CHECK(dst[k * N + i] == (k == s && r == 0 ? 7 : val(k, 0, i)),
                      "allgather(exclude=%d) block %u [%zu] = %llu", r == 0, k,
                      i, (unsigned long long)dst[k * N + i]);
    }
    /* alltoall: block j of src at k lands in block k of dst at j */
    FILL();
    OK(lpf_alltoall(coll, ssrc, sdst, blk));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (k = 0; k < p; ++k)
        for (i = 0; i < N; ++i)
            CHECK(dst[k * N + i] == (k == s ? 7 : val(k, s, i)),
                  "alltoall block %u [%zu] = %llu", k, i,
                  (unsigned long long)dst[k * N + i]);

    /* reduce (sum) to every root; allreduce (sum, then the ordered fold) */
    for (r = 0; r < p; ++r) {
        elem[0] = s + 1;
        OK(lpf_reduce(coll, elem, selem, sizeof(uint64_t), sum_u64, r));
        CHECK(elem[0] == (s == r ? (uint64_t)p * (p + 1) / 2 : s + 1),
              "reduce to %u: %llu", r, (unsigned long long)elem[0]);
    }
    elem[0] = s + 1;
    OK(lpf_allreduce(coll, elem, selem, sizeof(uint64_t), sum_u64));
    CHECK(elem[0] == (uint64_t)p * (p + 1) / 2, "allreduce sum %llu",
          (unsigned long long)elem[0]);
    {
        uint64_t want = 0;
        for (k = 0; k < p; ++k)
            want = want * 10 + (k + 1);
        elem[0] = s + 1;
        OK(lpf_allreduce(coll, elem, selem, sizeof(uint64_t), digits));
        CHECK(elem[0] == want, "allreduce in group order: %llu, expected %llu",
              (unsigned long long)elem[0], (unsigned long long)want);
    }
    /* a reduction larger than max_elem_size: refused, nothing changes */
    elem[0] = 5;
    elem[1] = 6;
    CHECK(lpf_allreduce(coll, elem, selem, 3 * sizeof(uint64_t), sum_u64) ==
          LPF_ERR_OUT_OF_MEMORY, "a reduce over max_elem_size");
    CHECK(elem[0] == 5 && elem[1] == 6, "the refused reduce changed the element");

    /* combine (max) to root 0 and allcombine (sum), element-wise */
    for (i = 0; i < N; ++i)
        arr[i] = (i % 2) ? (uint64_t)s * 3 + i : 100 - s;
    OK(lpf_combine(coll, arr, sarr, N, sizeof(uint64_t), max_u64, 0));
    if (s == 0)
        for (i = 0; i < N; ++i)
            CHECK(arr[i] == ((i % 2) ? (uint64_t)(p - 1) * 3 + i : 100),
                  "combine [%zu] = %llu", i, (unsigned long long)arr[i]);
    for (i = 0; i < N; ++i)
        arr[i] = (uint64_t)s * 10 + i;
    OK(lpf_allcombine(coll, arr, sarr, N, sizeof(uint64_t), add_u64));
    for (i = 0; i < N; ++i)
        CHECK(arr[i] == 10 * (uint64_t)p * (p - 1) / 2 + (uint64_t)p * i,
              "allcombine [%zu] = %llu", i, (unsigned long long)arr[i]);

    /* the even pids as a strided group: broadcast from its member 1 (pid 2)
     * and allgather; the odd pids only sync */
    FILL();
    if (s % 2 == 0) {
        CHECK(even.P == (p + 1) / 2 && even.s == s / 2, "strided P %u s %u",
              even.P, even.s);
        if (even.P > 1)
            OK(lpf_broadcast(even, ssrc, sdst, blk, 1));
    }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (i = 0; i < N; ++i)
        CHECK(dst[i] == ((s % 2 == 0 && s != 2 && p > 2) ? val(2, 0, i) : 7),
              "strided broadcast [%zu] = %llu", i, (unsigned long long)dst[i]);
    FILL();
    if (s % 2 == 0)
        OK(lpf_allgather(even, ssrc, sdst, blk, 0));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (k = 0; k < p; ++k)
        for (i = 0; i < N; ++i)
            CHECK(dst[k * N + i] == ((s % 2 == 0 && k < (p + 1) / 2) ? val(2 * k, 0, i) : 7),
                  "strided allgather block %u [%zu] = %llu", k, i,
                  (unsigned long long)dst[k * N + i]);

    if (s % 2 == 0)
        OK(lpf_collectives_destroy(even));
    OK(lpf_collectives_destroy(coll));

    /* A slot registered in the superstep of lpf_collectives_init is usable by the
     * collectives right after it: the init syncs (as the reference's does, and as
     * its tests and ALP assume). Before, the allgather was refused ("registered in
     * this superstep"). */
    {
        uint64_t *late = calloc(p, sizeof(uint64_t));
        lpf_memslot_t slate = LPF_INVALID_MEMSLOT;
        elem[0] = 100 + s;
        OK(lpf_register_global(ctx, late, p * sizeof(uint64_t), &slate));
        OK(lpf_collectives_init(ctx, s, p, 1, 0, p * sizeof(uint64_t), &coll));
        OK(lpf_allgather(coll, selem, slate, sizeof(uint64_t), 0));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        for (k = 0; k < p; ++k)
            CHECK(late[k] == 100 + k, "allgather into a slot of the init's superstep: [%u] = %llu",
                  k, (unsigned long long)late[k]);
        OK(lpf_collectives_destroy(coll));
        OK(lpf_deregister(ctx, slate));
        free(late);
    }
    /* Buffer sizes that overflow size_t (with the header of the allocation too)
     * are LPF_ERR_OUT_OF_MEMORY, never a tiny buffer; before, SIZE_MAX at P = 1
     * wrapped around and succeeded. */
    CHECK(lpf_collectives_init(ctx, s, p, 1 << 7, (size_t)-1, 1 << 7, &coll) == LPF_ERR_OUT_OF_MEMORY,
          "collectives_init with max_elem_size SIZE_MAX");
    if (p > 1)
        CHECK(lpf_collectives_init(ctx, s, p, 1 << 7, (size_t)-1 / p + 1, 1 << 7, &coll) ==
              LPF_ERR_OUT_OF_MEMORY, "collectives_init with P x max_elem_size overflowing");

    /* every process's failure count to pid 0 */
    memset(total, 0, sizeof total);
    total[s < 64 ? s : 63] = (uint64_t)bad;
    if (s != 0 && s < 64)
        OK(lpf_put(ctx, stotal, s * sizeof(uint64_t), 0, stotal,
                   s * sizeof(uint64_t), sizeof(uint64_t), LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (args.output_size >= sizeof(int)) {
        /* pid 0: everyone's failures; the others (lpf_hook) their own */
        int all = bad;
        if (s == 0)
            for (all = 0, k = 0; k < p && k < 64; ++k)
                all += (int)total[k];
        memcpy(args.output, &all, sizeof all);
    }
    lpf_deregister(ctx, stotal);
    lpf_deregister(ctx, sarr);
    lpf_deregister(ctx, selem);
    lpf_deregister(ctx, sdst);
    lpf_deregister(ctx, ssrc);
    free(src);
    free(dst);
    if (bad)
        fprintf(stderr, "collectives: pid %u: %d check(s) failed\n", s, bad);
}

int main(int argc, char **argv)
{
    return test_section_main("collectives", spmd, argc, argv);
}
