/*
 * bsp_mcbsp: bsp/bsp.h with LPF_USE_MCBSP_API (the MulticoreBSP flavour:
 * unsigned pids, size_t sizes, bsp_size_unavailable), written only against
 * the published header. At any P: a put ring, a get, messages with a tag of
 * a size_t (qsize, get_tag, move, hpmove, the empty queue), set_tagsize.
 * Exit status 0 when every check passed.
 */
#define LPF_USE_MCBSP_API 1
#include <bsp/bsp.h>

#include <stdio.h>
#include <stdlib.h>

static int bad;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "bsp_mcbsp.c:%d: pid %u: check failed: %s: ",   \
                    __LINE__, bsp_pid(), #cond);                             \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            __sync_fetch_and_add(&bad, 1);                                   \
        }                                                                    \
    } while (0)

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    {
        bsp_pid_t s = bsp_pid();
        bsp_nprocs_t P = bsp_nprocs();
        size_t left = 0, got = 0, mine = 1000 + s, tagsize = sizeof(size_t);
        size_t status = 0, bytes = 0, tag = 0;
        unsigned n = 0;
        void *tp, *pp;

        bsp_push_reg(&left, sizeof left);
        bsp_push_reg(&mine, sizeof mine);
        bsp_set_tagsize(&tagsize);
        CHECK(tagsize == 0, "previous tag size %zu", tagsize);
        bsp_sync();
        bsp_put((s + 1) % P, &mine, &left, 0, sizeof mine);
        bsp_get((s + P - 1) % P, &mine, 0, &got, sizeof got);
        tag = 7 * (size_t)s;
        bsp_send((s + 1) % P, &tag, &mine, sizeof mine);
        bsp_sync();
        CHECK(left == 1000 + (s + P - 1) % P, "put: %zu", left);
        CHECK(got == 1000 + (s + P - 1) % P, "get: %zu", got);
        bsp_qsize(&n, &bytes);
        CHECK(n == 1 && bytes == sizeof(size_t), "qsize %u %zu", n, bytes);
        bsp_get_tag(&status, &tag);
        CHECK(status == sizeof(size_t) && tag == 7 * (size_t)((s + P - 1) % P),
              "get_tag %zu %zu", status, tag);
        CHECK(bsp_hpmove(&tp, &pp) == sizeof(size_t), "hpmove");
        CHECK(*(size_t *)pp == 1000 + (s + P - 1) % P, "payload %zu", *(size_t *)pp);
        CHECK(bsp_hpmove(&tp, &pp) == bsp_size_unavailable, "hpmove on empty");
        bsp_get_tag(&status, &tag);
        CHECK(status == bsp_size_unavailable, "get_tag on empty: %zu", status);
        bsp_pop_reg(&left);
        bsp_pop_reg(&mine);
    }
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(spmd, argc, argv);
    spmd();
    if (bad)
        fprintf(stderr, "bsp_mcbsp: %d check(s) failed\n", bad);
    else
        printf("bsp_mcbsp: all checks passed\n");
    return bad ? 1 : 0;
}
