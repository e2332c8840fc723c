/*
 * bsp_std: classic BSPlib (bsp/bsp.h) over LPF, written only against the
 * published header. bsp_init + an SPMD function with bsp_begin(bsp_nprocs())
 * .. bsp_end(). Checks, with exact values, at any P:
 *   buffered put (source changed after the call), unbuffered put, get and
 *   hpget, gets reading the values from before the superstep's puts,
 *   registrations of different sizes per process (size 0 and NULL included),
 *   push_reg twice on one address then pop_reg (the older one stays),
 *   bsmp messages of varying length with tags (qsize, get_tag, move, hpmove,
 *   the empty queue), set_tagsize timing, many messages (resizes), bsp_time.
 * `bsp_std abort` instead makes process P-1 call bsp_abort with a formatted
 * message: the program must die (the harness checks the message).
 * Exit status 0 when every check of this OS process passed.
 */
#include <bsp/bsp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad; /* updated atomically: processes may be threads */
static int abort_mode;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "bsp_std.c:%d: pid %d: check failed: %s: ",     \
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
        int P = bsp_nprocs(), s = bsp_pid(), k, i;
        int *a = calloc((size_t)P, sizeof(int));
        int *big = calloc((size_t)P, sizeof(int));
        int dummy = 0;
        int b = 1000 + s, g = -1, h = -1, x;
        int tagsize, status, nmsg, nbytes;
        double t0 = bsp_time();
        const char *expect = getenv("LPF_MAX_PROCS");

        if (expect != NULL)
            CHECK(P == atoi(expect), "bsp_nprocs() = %d, LPF_MAX_PROCS = %s",
                  P, expect);
        CHECK(s >= 0 && s < P, "pid %d of %d", s, P);

        if (abort_mode) {
            bsp_sync();
            if (s == P - 1)
                bsp_abort("deliberate abort: x=%d %s %.1f\n", 42, "str", 2.5);
            bsp_sync(); /* the others wait here until the program dies */
        }

        bsp_push_reg(a, P * (int)sizeof(int));
        bsp_push_reg(&b, (int)sizeof(int));
        /* pid 0 exposes P ints, the others nothing (0 bytes, or NULL). */
        if (s == 0)
            bsp_push_reg(big, P * (int)sizeof(int));
        else if (s % 2)
            bsp_push_reg(&dummy, 0);
        else
            bsp_push_reg(NULL, 0);
        bsp_sync();

        /* buffered put: the value at the call counts */
        x = s;
        for (k = 0; k < P; ++k)
            bsp_put(k, &x, a, s * (int)sizeof(int), (int)sizeof(int));
        x = -7; /* bsp_put copied the value already */
        /* into pid 0's big area, named by the local registration; a process that
         * registered it as NULL cannot name it (a NULL destination is
         * BSPLIB_ERR_NULL_POINTER, as in the reference) */
        if (s == 0 || s % 2) {
            int v = 500 + s;
            bsp_put(0, &v, s == 0 ? (void *)big : (void *)&dummy,
                    s * (int)sizeof(int), (int)sizeof(int));
            v = -1;
        }
        bsp_sync();
        for (k = 0; k < P; ++k)
            CHECK(a[k] == k, "after bsp_put a[%d] = %d", k, a[k]);
        if (s == 0)
            for (k = 0; k < P; ++k)
                CHECK(big[k] == (k == 0 || k % 2 ? 500 + k : 0), "big[%d] = %d", k, big[k]);

        /* unbuffered put */
        {
            int y = 100 + s;
            for (k = 0; k < P; ++k)
                bsp_hpput(k, &y, a, s * (int)sizeof(int), (int)sizeof(int));
            bsp_sync();
            for (k = 0; k < P; ++k)
                CHECK(a[k] == 100 + k, "after bsp_hpput a[%d] = %d", k, a[k]);
        }

        /* gets see the values from before this superstep's puts */
        {
            int nv = 2000 + s;
            int right = (s + 1) % P, left = (s + P - 1) % P;
            bsp_get(right, &b, 0, &g, (int)sizeof(int));
            bsp_hpget(right, a, right * (int)sizeof(int), &h, (int)sizeof(int));
            bsp_put(right, &nv, &b, 0, (int)sizeof(int));
            bsp_sync();
            CHECK(g == 1000 + right, "bsp_get read %d, expected the old %d", g,
                  1000 + right);
            CHECK(h == 100 + right, "bsp_hpget read %d, expected %d", h,
                  100 + right);
            CHECK(b == 2000 + left, "b = %d after the put, expected %d", b,
                  2000 + left);
        }

        /* push twice on one address, pop once: the older stays usable */
        bsp_push_reg(a, (int)sizeof(int));
        bsp_sync();
        bsp_pop_reg(a);
        bsp_sync();
        {
            int z = 300 + s;
            bsp_put((s + 1) % P, &z, a, (P - 1) * (int)sizeof(int), (int)sizeof(int));
            bsp_sync();
            CHECK(a[P - 1] == 300 + (s + P - 1) % P,
                  "a[P-1] = %d after pop_reg of the newer registration",
                  a[P - 1]);
        }

        /* bsmp: tags of one int, payloads of s+1 ints */
        tagsize = (int)sizeof(int);
        bsp_set_tagsize(&tagsize);
        CHECK(tagsize == 0, "the first bsp_set_tagsize reported %d", tagsize);
        bsp_sync();
        {
            /* odd k: bsp_send (copied at the call, so the buffer is reused);
             * even k: bsp_hpsend (read at the sync: one buffer per message) */
            int msg[64];
            for (k = 0; k < P; ++k) {
                if (k % 2) {
                    for (i = 0; i <= s; ++i)
                        msg[i] = 10000 * s + 100 * k + i;
                    bsp_send(k, &s, msg, (s + 1) * (int)sizeof(int));
                    memset(msg, 0xff, sizeof msg);
                }
            }
            {
                int (*rows)[64] = malloc((size_t)P * sizeof *rows);
                for (k = 0; k < P; ++k)
                    if (k % 2 == 0) {
                        for (i = 0; i <= s; ++i)
                            rows[k][i] = 10000 * s + 100 * k + i;
                        bsp_hpsend(k, &s, rows[k], (s + 1) * (int)sizeof(int));
                    }
                bsp_sync();
                free(rows);
            }
        }
        bsp_qsize(&nmsg, &nbytes);
        CHECK(nmsg == P, "bsp_qsize: %d messages, expected %d", nmsg, P);
        CHECK(nbytes == (int)sizeof(int) * P * (P + 1) / 2,
              "bsp_qsize: %d bytes, expected %d", nbytes,
              (int)sizeof(int) * P * (P + 1) / 2);
        {
            int seen[64] = {0}, n;
            for (n = 0; n < nmsg; ++n) {
                int tag = -1, body[64];
                if (n % 2 == 0) {
                    bsp_get_tag(&status, &tag);
                    CHECK(tag >= 0 && tag < P, "tag %d", tag);
                    if (tag < 0 || tag >= P)
                        break;
                    CHECK(status == (tag + 1) * (int)sizeof(int),
                          "status %d for tag %d", status, tag);
                    bsp_move(body, (int)sizeof body);
                } else {
                    const void *tp, *pp;
                    int len = bsp_hpmove(&tp, &pp);
                    memcpy(&tag, tp, sizeof tag);
                    CHECK(tag >= 0 && tag < P, "tag %d", tag);
                    if (tag < 0 || tag >= P)
                        break;
                    CHECK(len == (tag + 1) * (int)sizeof(int), "hpmove %d", len);
                    memcpy(body, pp, (size_t)len);
                }
                seen[tag]++;
                for (i = 0; i <= tag; ++i)
                    CHECK(body[i] == 10000 * tag + 100 * s + i,
                          "message from %d word %d = %d", tag, i, body[i]);
            }
            for (k = 0; k < P; ++k)
                CHECK(seen[k] == 1, "%d messages from %d", seen[k], k);
            bsp_get_tag(&status, &x);
            CHECK(status == -1, "bsp_get_tag on the empty queue: %d", status);
            {
                const void *tp, *pp;
                CHECK(bsp_hpmove(&tp, &pp) == -1, "bsp_hpmove on the empty queue");
            }
        }
        tagsize = 0;
        bsp_set_tagsize(&tagsize);
        CHECK(tagsize == (int)sizeof(int), "bsp_set_tagsize reported %d", tagsize);
        bsp_sync();

        /* many messages (the queue and inbox grow inside) */
        {
            int n = 0, sum = 0, v;
            for (i = 0; i < 500; ++i) {
                v = s * 1000 + i;
                bsp_send((s + 1) % P, NULL, &v, (int)sizeof v);
            }
            bsp_sync();
            bsp_qsize(&n, &nbytes);
            CHECK(n == 500 && nbytes == 500 * (int)sizeof v, "%d messages, %d bytes", n, nbytes);
            while (bsp_hpmove(NULL, NULL) != -1)
                ;
            for (i = 0; i < 500; ++i)
                bsp_put((s + 1) % P, &i, a, 0, (int)sizeof i); /* one spot */
            bsp_sync();
            CHECK(a[0] >= 0 && a[0] < 500, "a[0] = %d after 500 puts", a[0]);
            (void)sum;
        }

        CHECK(bsp_time() >= t0 && bsp_time() < 600.0, "bsp_time %f", bsp_time());
        bsp_pop_reg(a);
        bsp_pop_reg(&b);
        bsp_pop_reg(s == 0 ? (void *)big : (s % 2 ? (void *)&dummy : NULL));
        bsp_sync();
        free(a);
        free(big);
    }
    bsp_end();
}

int main(int argc, char **argv)
{
    abort_mode = argc > 1 && strcmp(argv[1], "abort") == 0;
    bsp_init(spmd, argc, argv);
    spmd();
    if (bad)
        fprintf(stderr, "bsp_std: %d check(s) failed\n", bad);
    else
        printf("bsp_std: all checks passed\n");
    return bad ? 1 : 0;
}
