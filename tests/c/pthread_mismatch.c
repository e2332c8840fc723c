/*
 * lpf_pthread_initialize when the group cannot form (hardening item 8): threads
 * that disagree on nprocs, and a thread that never calls it. Each joiner must get
 * an error within the documented timeout (LPF_PTHREAD_TIMEOUT_MS, set to 500 ms
 * here), never success followed by an lpf_hook that waits for ever.
 */
#define _POSIX_C_SOURCE 200809L
#include <lpf/core.h>
#include <lpf/pthread.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct joiner {
    lpf_pid_t pid, nprocs;
    lpf_err_t rc;
    pthread_t thread;
};

static void *join_group(void *arg)
{
    struct joiner *j = (struct joiner *)arg;
    lpf_init_t init = LPF_INIT_NONE;
    j->rc = lpf_pthread_initialize(j->pid, j->nprocs, &init);
    if (j->rc == LPF_SUCCESS)
        lpf_pthread_finalize(init);
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Starts the joiners, waits for them; returns the number of failures of the case. */
static int run_case(const char *name, struct joiner *js, int n)
{
    int i, bad = 0;
    double start = now(), took;
    for (i = 0; i < n; ++i) {
        if (pthread_create(&js[i].thread, NULL, join_group, &js[i]) != 0) {
            fprintf(stderr, "%s: cannot start a thread\n", name);
            return 1;
        }
    }
    for (i = 0; i < n; ++i)
        pthread_join(js[i].thread, NULL);
    took = now() - start;
    for (i = 0; i < n; ++i) {
        if (js[i].rc != LPF_ERR_FATAL) {
            fprintf(stderr, "%s: pid %u of %u got %d, expected LPF_ERR_FATAL\n",
                    name, js[i].pid, js[i].nprocs, js[i].rc);
            ++bad;
        }
    }
    if (took > 10.0) {
        fprintf(stderr, "%s: took %.1f s (timeout 0.5 s)\n", name, took);
        ++bad;
    }
    printf("%s: %d joiners returned in %.2f s, %d not as expected\n", name, n, took, bad);
    return bad;
}

int main(void)
{
    int bad = 0;
    if (setenv("LPF_PTHREAD_TIMEOUT_MS", "500", 1) != 0)
        return 2;
    {
        /* pid 0 thinks the group has 2 threads, pids 1 and 2 think 3. */
        struct joiner js[3] = {{0, 2, -1, 0}, {1, 3, -1, 0}, {2, 3, -1, 0}};
        bad += run_case("mismatched nprocs", js, 3);
    }
    {
        /* pid 1 of 3 never comes. */
        struct joiner js[2] = {{0, 3, -1, 0}, {2, 3, -1, 0}};
        bad += run_case("missing thread", js, 2);
    }
    return bad == 0 ? 0 : 1;
}
