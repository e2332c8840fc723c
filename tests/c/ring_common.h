/*
 * The ring exchange shared by ring.c (started with lpf_exec) and tcp_ring.c
 * (started with lpf_hook over TCP).
 *
 * Phase 1, put ring: for several supersteps, every process puts its pid and
 * a block of RING_N ints (in two pieces, at a round-dependent offset) into
 * the next process's buffer and checks what the previous one sent. The two
 * receive buffers alternate between rounds, so a buffer is never read in a
 * superstep in which it is written.
 *
 * Phase 2, get ring: every process publishes a block in a global buffer,
 * and after a barrier fetches the previous process's block with gets.
 *
 * At the end every process reports its failures to pid 0 through a shared
 * error word, and (if given an output buffer) writes a struct ring_out.
 */
#ifndef LPF_TEST_RING_COMMON_H
#define LPF_TEST_RING_COMMON_H

#include <lpf/core.h>

#include "test_util.h"

#define RING_N      1000   /* ints per block */
#define RING_SPLIT  400    /* the block travels as [0,SPLIT) and [SPLIT,N) */
#define RING_SHIFT  2      /* up to this many ints of offset in the buffer */
#define RING_ROUNDS 5      /* supersteps per phase */
#define RING_WORDS  (1 + RING_N + RING_SHIFT) /* pid word, shift, block */
#define RING_SENTINEL (-1)
#define RING_MAGIC  0x52494e47u /* "RING" */

struct ring_out {
    unsigned magic;
    unsigned pid;
    unsigned nprocs;
    int status;      /* this process's own failure count */
    int error_word;  /* on pid 0: non-zero iff some process failed */
    int rounds;      /* rounds completed (both phases) */
};

/* The value of word i of the block that process `pid` sends in `round`. */
static inline int ring_value(unsigned round, unsigned pid, unsigned i)
{
    return (int)((round * 1000003u + pid * 7919u + i * 31u) & 0x3fffffffu);
}

static inline void ring_fill(int *buf, int n, int value)
{
    int i;
    for (i = 0; i < n; ++i)
        buf[i] = value;
}

/* Checks one received buffer: pid word, sentinels around the block at
 * word offset 1 + shift, and the block contents. Returns failures. */
static inline int ring_check(const int *buf, unsigned round, unsigned from,
                             unsigned shift, unsigned me, const char *what)
{
    int bad = 0;
    unsigned i;
    EXPECT(&bad, me, buf[0] == (int)from,
           "%s round %u: pid word is %d, expected %u", what, round, buf[0],
           from);
    for (i = 0; i < RING_WORDS - 1; ++i) {
        int got = buf[1 + i];
        int want;
        if (i < shift || i >= shift + RING_N)
            want = RING_SENTINEL;
        else
            want = ring_value(round, from, i - shift);
        if (got != want) {
            EXPECT(&bad, me, got == want,
                   "%s round %u: word %u is %d, expected %d", what, round,
                   1 + i, got, want);
            break; /* one message per buffer is enough */
        }
    }
    return bad;
}

static void ring_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                      lpf_args_t args)
{
    static const size_t I = sizeof(int);
    int status = 0;
    int error_word = 0;
    int rounds = 0;
    const lpf_pid_t next = (pid + 1) % nprocs;
    const lpf_pid_t prev = (pid + nprocs - 1) % nprocs;
    int *out = NULL, *in0 = NULL, *in1 = NULL, *gsrc = NULL, *gdst = NULL;
    int *in[2];
    lpf_memslot_t out_slot = LPF_INVALID_MEMSLOT, in_slot[2];
    lpf_memslot_t gsrc_slot = LPF_INVALID_MEMSLOT;
    lpf_memslot_t gdst_slot = LPF_INVALID_MEMSLOT;
    lpf_memslot_t err_slot = LPF_INVALID_MEMSLOT;
    lpf_memslot_t status_slot = LPF_INVALID_MEMSLOT;
    lpf_err_t rc;
    unsigned r, i;

    in_slot[0] = in_slot[1] = LPF_INVALID_MEMSLOT;
    out = (int *)malloc(RING_WORDS * I);
    in0 = (int *)malloc(RING_WORDS * I);
    in1 = (int *)malloc(RING_WORDS * I);
    gsrc = (int *)malloc(RING_WORDS * I);
    gdst = (int *)malloc(RING_WORDS * I);
    if (!out || !in0 || !in1 || !gsrc || !gdst) {
        fprintf(stderr, "pid %u: out of memory\n", pid);
        exit(2);
    }
    in[0] = in0;
    in[1] = in1;
    ring_fill(out, RING_WORDS, RING_SENTINEL);
    ring_fill(in0, RING_WORDS, RING_SENTINEL);
    ring_fill(in1, RING_WORDS, RING_SENTINEL);
    ring_fill(gsrc, RING_WORDS, RING_SENTINEL);
    ring_fill(gdst, RING_WORDS, RING_SENTINEL);

    /* 7 slots; per superstep a process sends 3 and receives 3 messages,
     * and pid 0 receives one status message from everybody at the end. */
    rc = lpf_resize_memory_register(ctx, 7);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "resize_memory_register: %d", rc);
    rc = lpf_resize_message_queue(ctx, 8 + 2 * (size_t)nprocs);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "resize_message_queue: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "lpf_sync after resize: %d", rc);
    if (rc != LPF_SUCCESS)
        goto done;

    rc = lpf_register_local(ctx, out, RING_WORDS * I, &out_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register_local out: %d", rc);
    rc = lpf_register_global(ctx, in0, RING_WORDS * I, &in_slot[0]);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register_global in0: %d", rc);
    rc = lpf_register_global(ctx, in1, RING_WORDS * I, &in_slot[1]);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register_global in1: %d", rc);
    rc = lpf_register_global(ctx, gsrc, RING_WORDS * I, &gsrc_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register_global gsrc: %d", rc);
    rc = lpf_register_local(ctx, gdst, RING_WORDS * I, &gdst_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register_local gdst: %d", rc);
    rc = lpf_register_global(ctx, &error_word, I, &err_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register_global err: %d", rc);
    rc = lpf_register_local(ctx, &status, I, &status_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register_local status: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "lpf_sync after register: %d",
           rc);
    if (rc != LPF_SUCCESS || status != 0)
        goto done;

    /* Phase 1: put ring. */
    for (r = 0; r < RING_ROUNDS; ++r) {
        const unsigned b = r % 2, shift = r % (RING_SHIFT + 1);
        out[0] = (int)pid;
        for (i = 0; i < RING_N; ++i)
            out[1 + i] = ring_value(r, pid, i);
        rc = lpf_put(ctx, out_slot, 0, next, in_slot[b], 0, I,
                     LPF_MSG_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "put pid word: %d", rc);
        rc = lpf_put(ctx, out_slot, I, next, in_slot[b], (1 + shift) * I,
                     RING_SPLIT * I, LPF_MSG_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "put block head: %d", rc);
        rc = lpf_put(ctx, out_slot, (1 + RING_SPLIT) * I, next, in_slot[b],
                     (1 + shift + RING_SPLIT) * I,
                     (RING_N - RING_SPLIT) * I, LPF_MSG_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "put block tail: %d", rc);
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "put round %u sync: %d", r,
               rc);
        if (rc != LPF_SUCCESS)
            goto done;
        status += ring_check(in[b], r, prev, shift, pid, "put ring");
        /* Nobody writes buffer b in the next superstep: safe to reset. */
        ring_fill(in[b], RING_WORDS, RING_SENTINEL);
        ++rounds;
    }

    /* Phase 2: get ring. */
    for (r = 0; r < RING_ROUNDS; ++r) {
        const unsigned shift = (r + 1) % (RING_SHIFT + 1);
        const unsigned round = 100 + r;
        gsrc[0] = (int)pid;
        for (i = 0; i < RING_N; ++i)
            gsrc[1 + i] = ring_value(round, pid, i);
        /* Barrier: the block is complete everywhere before anyone reads. */
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "get round %u barrier: %d", r,
               rc);
        if (rc != LPF_SUCCESS)
            goto done;
        rc = lpf_get(ctx, prev, gsrc_slot, 0, gdst_slot, 0, I,
                     LPF_MSG_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "get pid word: %d", rc);
        rc = lpf_get(ctx, prev, gsrc_slot, I, gdst_slot, (1 + shift) * I,
                     RING_SPLIT * I, LPF_MSG_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "get block head: %d", rc);
        rc = lpf_get(ctx, prev, gsrc_slot, (1 + RING_SPLIT) * I, gdst_slot,
                     (1 + shift + RING_SPLIT) * I,
                     (RING_N - RING_SPLIT) * I, LPF_MSG_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "get block tail: %d", rc);
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "get round %u sync: %d", r,
               rc);
        if (rc != LPF_SUCCESS)
            goto done;
        status += ring_check(gdst, round, prev, shift, pid, "get ring");
        ring_fill(gdst, RING_WORDS, RING_SENTINEL);
        ++rounds;
    }

    /* Report to pid 0 (error_word was 0 since before registration). */
    rc = test_gather_status(ctx, &status, status_slot, err_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "status sync: %d", rc);

    rc = lpf_deregister(ctx, status_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "deregister: %d", rc);
    rc = lpf_deregister(ctx, err_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "deregister: %d", rc);
    rc = lpf_deregister(ctx, gdst_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "deregister: %d", rc);
    rc = lpf_deregister(ctx, gsrc_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "deregister: %d", rc);
    rc = lpf_deregister(ctx, in_slot[1]);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "deregister: %d", rc);
    rc = lpf_deregister(ctx, in_slot[0]);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "deregister: %d", rc);
    rc = lpf_deregister(ctx, out_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "deregister: %d", rc);

done:
    if (status != 0)
        fprintf(stderr, "pid %u: %d failure(s) in the ring\n", pid, status);
    if (args.output != NULL && args.output_size == sizeof(struct ring_out)) {
        struct ring_out *o = (struct ring_out *)args.output;
        o->magic = RING_MAGIC;
        o->pid = pid;
        o->nprocs = nprocs;
        o->status = status;
        o->error_word = error_word;
        o->rounds = rounds;
    }
    free(out);
    free(in0);
    free(in1);
    free(gsrc);
    free(gdst);
}

/* Checks a ring_out as seen by the caller; `global` when it is pid 0's
 * (which also carries everyone's verdict). Returns failures. */
static inline int ring_verify_out(const struct ring_out *o, int global)
{
    int bad = 0;
    EXPECT(&bad, o->pid, o->magic == RING_MAGIC,
           "no output from the SPMD section (magic %#x)", o->magic);
    if (o->magic != RING_MAGIC)
        return bad;
    EXPECT(&bad, o->pid, o->status == 0, "%d local failure(s)", o->status);
    EXPECT(&bad, o->pid, o->rounds == 2 * RING_ROUNDS,
           "only %d of %d rounds completed", o->rounds, 2 * RING_ROUNDS);
    if (global)
        EXPECT(&bad, o->pid, o->error_word == 0,
               "some process reported a failure (error word %d)",
               o->error_word);
    return bad;
}

/* Arguments whose output, zeroed, is `out`: where the ring reports. */
static inline lpf_args_t ring_args(struct ring_out *out)
{
    lpf_args_t args = LPF_NO_ARGS;
    memset(out, 0, sizeof *out);
    args.output = out;
    args.output_size = sizeof *out;
    return args;
}

/* Runs the ring through lpf_hook on `init` as process `pid` of `nprocs` and
 * checks what it reports; returns the number of problems. */
static inline int ring_hook_and_verify(lpf_init_t init, lpf_pid_t pid,
                                       lpf_pid_t nprocs)
{
    struct ring_out out;
    lpf_err_t rc;
    int bad = 0;

    rc = lpf_hook(init, ring_spmd, ring_args(&out));
    EXPECT(&bad, pid, rc == LPF_SUCCESS, "lpf_hook returned %d", rc);
    bad += ring_verify_out(&out, pid == 0);
    if (out.magic == RING_MAGIC) {
        EXPECT(&bad, pid, out.pid == pid, "hooked as pid %u", out.pid);
        EXPECT(&bad, pid, out.nprocs == nprocs, "hooked with %u processes",
               out.nprocs);
    }
    return bad;
}

#endif /* LPF_TEST_RING_COMMON_H */
