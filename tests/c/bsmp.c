/*
 * bsmp: the BSMP library (lpf/bsmp.h), written only against the published
 * headers lpf/core.h and lpf/bsmp.h. One section of LPF_MAX_P processes:
 *   1. every process sends one message to every process (tags name sender and
 *      receiver, payloads of 0..9 bytes of known content); after
 *      lpf_bsmp_sync each receives exactly one message from each sender, and
 *      then LPF_INVALID_SIZE with NULL pointers;
 *   2. the limits: a message past max_messages, or past buffer_size payload
 *      bytes, is refused with LPF_ERR_BSMP_FULL; lpf_move in WRITE mode and
 *      lpf_send in READ mode with LPF_ERR_BSMP_INVAL;
 *   3. a round in which only pid 0 receives (the others get nothing: no
 *      message of round 1 is seen again), with a plain lpf_sync between the
 *      sends and lpf_bsmp_sync (the mode does not change on it);
 *   4. lpf_bsmp_syncall over two objects; lpf_bsmp_destroy sets the handle to
 *      LPF_INVALID_BSMP.
 * Failures are summed at pid 0, which returns the total through args.output.
 */
#include <lpf/core.h>
#include <lpf/bsmp.h>
#include "section_main.h"
#include "test_util.h"

#include <stdint.h>
#include <string.h>

#define CHECK(cond, ...) EXPECT(&bad, s, cond, __VA_ARGS__)
#define OK(call) CHECK((call) == LPF_SUCCESS, "%s", #call)
#define MAXP 64

static size_t payload_size(lpf_pid_t from, lpf_pid_t to) { return (from * 3 + to) % 10; }
static char payload_byte(lpf_pid_t from, lpf_pid_t to, size_t i) { return (char)(from * 31 + to * 7 + i); }

/* Takes every message of the object: counts per sender in got[], checks them
 * against what `from` sent to `s` in a round with tag base `round`. */
static int receive_all(lpf_bsmp_t q, lpf_pid_t s, lpf_pid_t p, uint64_t round, unsigned *got)
{
    int bad = 0;
    void *tag = NULL, *payload = NULL;
    size_t size = 0;
    memset(got, 0, sizeof(unsigned) * p);
    for (;;) {
        OK(lpf_move(q, &tag, &payload, &size));
        if (size == LPF_INVALID_SIZE) {
            CHECK(tag == NULL && payload == NULL, "no message left but pointers not NULL");
            break;
        }
        uint64_t t;
        memcpy(&t, tag, sizeof t);
        lpf_pid_t from = (lpf_pid_t)((t >> 16) & 0xffff), to = (lpf_pid_t)(t & 0xffff);
        CHECK(t >> 32 == round && to == s && from < p, "tag %llx in round %llu", (unsigned long long)t,
              (unsigned long long)round);
        if (from >= p)
            continue;
        got[from] += 1;
        CHECK(size == payload_size(from, s), "size %zu from %u, expected %zu", size, from, payload_size(from, s));
        for (size_t i = 0; i < size && i < payload_size(from, s); ++i)
            CHECK(((char *)payload)[i] == payload_byte(from, s, i), "byte %zu from %u", i, from);
    }
    return bad;
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    int bad = 0;
    int failures[MAXP] = {0};
    unsigned got[MAXP];
    uint64_t tags[MAXP];
    char payloads[MAXP][10];
    lpf_memslot_t fail_slot = LPF_INVALID_MEMSLOT, tag_slot = LPF_INVALID_MEMSLOT, pay_slot = LPF_INVALID_MEMSLOT;
    lpf_bsmp_t q = LPF_INVALID_BSMP, q2 = LPF_INVALID_BSMP;
    void *tag = NULL, *payload = NULL;
    size_t size = 0;

    if (p > MAXP) {
        fprintf(stderr, "bsmp: at most %d processes\n", MAXP);
        return;
    }
    for (lpf_pid_t d = 0; d < p; ++d)
        for (size_t i = 0; i < 10; ++i)
            payloads[d][i] = payload_byte(s, d, i);
    OK(lpf_resize_memory_register(ctx, 3 + 2 * 4));
    OK(lpf_resize_message_queue(ctx, 4 * p + 8));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_register_global(ctx, failures, sizeof failures, &fail_slot));
    OK(lpf_register_local(ctx, tags, sizeof tags, &tag_slot));
    OK(lpf_register_local(ctx, payloads, sizeof payloads, &pay_slot));
    /* buffer: exactly the largest payload a process sends in round 1 (the sizes
     * are the same on every process, as for any collective) */
    size_t total = 0;
    for (lpf_pid_t f = 0; f < p; ++f) {
        size_t sent = 0;
        for (lpf_pid_t d = 0; d < p; ++d)
            sent += payload_size(f, d);
        total = sent > total ? sent : total;
    }
    OK(lpf_bsmp_create(ctx, s, p, total, sizeof(uint64_t), p, &q));
    CHECK(q != LPF_INVALID_BSMP, "lpf_bsmp_create gave LPF_INVALID_BSMP");

    /* 1. all to all */
    CHECK(lpf_move(q, &tag, &payload, &size) == LPF_ERR_BSMP_INVAL, "lpf_move in WRITE mode");
    for (lpf_pid_t d = 0; d < p; ++d) {
        tags[d] = (1ull << 32) | ((uint64_t)s << 16) | d;
        OK(lpf_send(q, d, tag_slot, d * sizeof(uint64_t), pay_slot, d * 10, payload_size(s, d)));
    }
    /* 2. the limits: max_messages (p) reached; then payload bytes (only with room
     * for messages: a second object below) */
    CHECK(lpf_send(q, 0, tag_slot, 0, pay_slot, 0, 0) == LPF_ERR_BSMP_FULL, "message past max_messages");
    OK(lpf_bsmp_sync(q, LPF_SYNC_DEFAULT));
    bad += receive_all(q, s, p, 1, got);
    for (lpf_pid_t f = 0; f < p; ++f)
        CHECK(got[f] == 1, "round 1: %u messages from %u", got[f], f);
    CHECK(lpf_send(q, 0, tag_slot, 0, pay_slot, 0, 0) == LPF_ERR_BSMP_INVAL, "lpf_send in READ mode");
    OK(lpf_bsmp_sync(q, LPF_SYNC_DEFAULT));

    /* 3. only pid 0 receives; a plain sync between sends and lpf_bsmp_sync */
    tags[0] = (3ull << 32) | ((uint64_t)s << 16);
    OK(lpf_send(q, 0, tag_slot, 0, pay_slot, 0, payload_size(s, 0)));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    CHECK(lpf_move(q, &tag, &payload, &size) == LPF_ERR_BSMP_INVAL, "lpf_move in WRITE mode after lpf_sync");
    OK(lpf_bsmp_sync(q, LPF_SYNC_DEFAULT));
    bad += receive_all(q, s, p, 3, got);
    for (lpf_pid_t f = 0; f < p; ++f)
        CHECK(got[f] == (s == 0 ? 1u : 0u), "round 3: %u messages from %u", got[f], f);
    OK(lpf_bsmp_sync(q, LPF_SYNC_DEFAULT));

    /* 4. syncall over two objects; the payload limit of the second (9 bytes) */
    OK(lpf_bsmp_create(ctx, s, p, 9, sizeof(uint64_t), 4, &q2));
    lpf_pid_t next = (s + 1) % p;
    tags[next] = (4ull << 32) | ((uint64_t)s << 16) | next;
    OK(lpf_send(q, next, tag_slot, next * sizeof(uint64_t), pay_slot, next * 10, payload_size(s, next)));
    OK(lpf_send(q2, next, tag_slot, next * sizeof(uint64_t), pay_slot, next * 10, payload_size(s, next)));
    CHECK(lpf_send(q2, next, tag_slot, 0, pay_slot, 0, 10 - payload_size(s, next)) == LPF_ERR_BSMP_FULL,
          "payload past buffer_size");
    lpf_bsmp_t both[2] = {q, q2};
    OK(lpf_bsmp_syncall(both, 2, LPF_SYNC_DEFAULT));
    lpf_pid_t prev = (s + p - 1) % p;
    for (int k = 0; k < 2; ++k) {
        bad += receive_all(both[k], s, p, 4, got);
        for (lpf_pid_t f = 0; f < p; ++f)
            CHECK(got[f] == (f == prev ? 1u : 0u), "round 4, object %d: %u messages from %u", k, got[f], f);
    }
    OK(lpf_bsmp_destroy(&q2));
    OK(lpf_bsmp_destroy(&q));
    CHECK(q == LPF_INVALID_BSMP && q2 == LPF_INVALID_BSMP, "lpf_bsmp_destroy left the handle");

    /* the failures to pid 0 */
    failures[s] = bad;
    OK(lpf_put(ctx, fail_slot, s * sizeof(int), 0, fail_slot, s * sizeof(int), sizeof(int), LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (s == 0 && args.output_size == sizeof(int)) {
        int sum = 0;
        for (lpf_pid_t f = 0; f < p; ++f)
            sum += failures[f];
        *(int *)args.output = sum;
    }
}

int main(int argc, char **argv)
{
    return test_section_main("bsmp", spmd, argc, argv);
}
