/*
 * pthread_hook: threads of an ordinary program join one LPF section.
 *
 * main() starts N POSIX threads (N from LPF_MAX_PROCS, default 4). Each
 * calls lpf_pthread_initialize(pid, N, &init), then uses the same init for
 * two hooks with its own arguments, then lpf_pthread_finalize(init):
 *   hook 1: an all-gather of every thread's input value with puts; each
 *           thread writes the sum it computed to its own output;
 *   hook 2: the same all-gather inside lpf_rehook, which starts a fresh
 *           context over the same processes; afterwards the outer context
 *           must still work.
 * main() joins the threads and checks every output.
 */
#include <lpf/core.h>
#include <lpf/pthread.h>

#include <pthread.h>

#include "test_util.h"

#define HOOK_MAGIC 0x484f4f4bu /* "HOOK" */
#define DEFAULT_THREADS 4u

struct hook_in {
    unsigned pid;     /* the pid this thread initialised with */
    unsigned nprocs;
    long value;       /* what this thread contributes */
};

struct hook_out {
    unsigned magic;
    unsigned pid;
    unsigned nprocs;
    long sum;
    int status;       /* own failures */
    int error_word;   /* on pid 0: non-zero iff some process failed */
    int outer_sync;   /* hook 2: lpf_sync of the outer context afterwards */
};

struct thread_job {
    pthread_t thread;
    struct hook_in in;
    struct hook_out out1, out2;
    lpf_err_t init_rc, hook1_rc, hook2_rc, fini_rc;
};

static long value_of(unsigned pid) { return 1000L + 7L * (long)pid * pid; }

/* All-gather of the input values; writes a hook_out to args.output. */
static void gather_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                        lpf_args_t args)
{
    const struct hook_in *in = (const struct hook_in *)args.input;
    int status = 0, error_word = 0;
    long mine = 0, sum = 0, *table;
    lpf_memslot_t mine_slot, table_slot, err_slot, status_slot;
    lpf_err_t rc;
    lpf_pid_t k;

    table = (long *)calloc(nprocs, sizeof(long));
    if (table == NULL) {
        fprintf(stderr, "pid %u: out of memory\n", pid);
        exit(2);
    }
    EXPECT(&status, pid, in != NULL && args.input_size == sizeof *in,
           "this thread's own input did not arrive");
    if (in != NULL) {
        EXPECT(&status, pid, in->pid == pid,
               "thread initialised as pid %u runs as pid %u", in->pid, pid);
        EXPECT(&status, pid, in->nprocs == nprocs,
               "%u threads initialised, section has %u processes",
               in->nprocs, nprocs);
        mine = in->value;
    }

    rc = lpf_resize_memory_register(ctx, 4);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "resize register: %d", rc);
    rc = lpf_resize_message_queue(ctx, 2 * (size_t)nprocs + 2);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "resize queue: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "lpf_sync: %d", rc);
    if (rc != LPF_SUCCESS)
        goto done;
    rc = lpf_register_local(ctx, &mine, sizeof mine, &mine_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_register_global(ctx, table, nprocs * sizeof(long), &table_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_register_global(ctx, &error_word, sizeof error_word, &err_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_register_local(ctx, &status, sizeof status, &status_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "lpf_sync: %d", rc);
    if (status != 0 || rc != LPF_SUCCESS)
        goto done;

    for (k = 0; k < nprocs; ++k) {
        rc = lpf_put(ctx, mine_slot, 0, k, table_slot, pid * sizeof(long),
                     sizeof(long), LPF_MSG_DEFAULT);
        EXPECT(&status, pid, rc == LPF_SUCCESS, "put to %u: %d", k, rc);
    }
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "all-gather sync: %d", rc);
    for (k = 0; k < nprocs; ++k) {
        EXPECT(&status, pid, table[k] == value_of(k),
               "value from pid %u is %ld, expected %ld", k, table[k],
               value_of(k));
        sum += table[k];
    }

    rc = test_gather_status(ctx, &status, status_slot, err_slot);
    EXPECT(&status, pid, rc == LPF_SUCCESS, "status sync: %d", rc);

done:
    if (status != 0)
        fprintf(stderr, "pid %u: %d failure(s)\n", pid, status);
    if (args.output != NULL && args.output_size == sizeof(struct hook_out)) {
        struct hook_out *o = (struct hook_out *)args.output;
        o->magic = HOOK_MAGIC;
        o->pid = pid;
        o->nprocs = nprocs;
        o->sum = sum;
        o->status = status;
        o->error_word = error_word;
    }
    free(table);
}

/* Runs gather_spmd in a fresh context via lpf_rehook, then checks that the
 * outer context still synchronises. */
static void rehook_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                        lpf_args_t args)
{
    lpf_err_t rc, outer;
    struct hook_out *o = (struct hook_out *)args.output;
    (void)nprocs;

    rc = lpf_rehook(ctx, gather_spmd, args);
    if (rc != LPF_SUCCESS)
        fprintf(stderr, "pid %u: lpf_rehook returned %d\n", pid, rc);
    outer = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (o != NULL && args.output_size == sizeof *o) {
        if (rc != LPF_SUCCESS)
            ++o->status;
        o->outer_sync = outer;
    }
}

static void *thread_main(void *arg)
{
    struct thread_job *job = (struct thread_job *)arg;
    lpf_init_t init = LPF_INIT_NONE;
    lpf_args_t args = LPF_NO_ARGS;

    job->init_rc = lpf_pthread_initialize(job->in.pid, job->in.nprocs, &init);
    if (job->init_rc != LPF_SUCCESS) {
        fprintf(stderr, "thread %u: lpf_pthread_initialize returned %d: %s\n",
                job->in.pid, job->init_rc, test_error_text());
        return NULL;
    }
    args.input = &job->in;
    args.input_size = sizeof job->in;

    args.output = &job->out1;
    args.output_size = sizeof job->out1;
    job->hook1_rc = lpf_hook(init, gather_spmd, args);

    args.output = &job->out2;
    args.output_size = sizeof job->out2;
    job->hook2_rc = lpf_hook(init, rehook_spmd, args);

    job->fini_rc = lpf_pthread_finalize(init);
    return NULL;
}

static int check_out(const struct hook_out *o, unsigned pid, unsigned n,
                     long want_sum, int hook)
{
    int bad = 0;
    EXPECT(&bad, pid, o->magic == HOOK_MAGIC, "hook %d wrote no output",
           hook);
    if (o->magic != HOOK_MAGIC)
        return bad;
    EXPECT(&bad, pid, o->pid == pid && o->nprocs == n,
           "hook %d ran as pid %u of %u", hook, o->pid, o->nprocs);
    EXPECT(&bad, pid, o->sum == want_sum, "hook %d: sum %ld, expected %ld",
           hook, o->sum, want_sum);
    EXPECT(&bad, pid, o->status == 0, "hook %d: %d failure(s)", hook,
           o->status);
    if (pid == 0)
        EXPECT(&bad, pid, o->error_word == 0,
               "hook %d: another process failed", hook);
    return bad;
}

int main(void)
{
    unsigned n = test_requested_procs(), t;
    struct thread_job *jobs;
    long want_sum = 0;
    int bad = 0;

    if (n == 0)
        n = DEFAULT_THREADS;
    jobs = (struct thread_job *)calloc(n, sizeof *jobs);
    if (jobs == NULL) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    for (t = 0; t < n; ++t) {
        jobs[t].in.pid = t;
        jobs[t].in.nprocs = n;
        jobs[t].in.value = value_of(t);
        jobs[t].init_rc = jobs[t].hook1_rc = jobs[t].hook2_rc =
            jobs[t].fini_rc = -1;
        want_sum += value_of(t);
    }
    for (t = 0; t < n; ++t)
        if (pthread_create(&jobs[t].thread, NULL, thread_main, &jobs[t])) {
            fprintf(stderr, "pthread_create failed\n");
            return 2;
        }
    for (t = 0; t < n; ++t)
        pthread_join(jobs[t].thread, NULL);

    for (t = 0; t < n; ++t) {
        const struct thread_job *j = &jobs[t];
        EXPECT(&bad, t, j->init_rc == LPF_SUCCESS,
               "lpf_pthread_initialize returned %d", j->init_rc);
        if (j->init_rc != LPF_SUCCESS)
            continue;
        EXPECT(&bad, t, j->hook1_rc == LPF_SUCCESS,
               "lpf_hook 1 returned %d", j->hook1_rc);
        EXPECT(&bad, t, j->hook2_rc == LPF_SUCCESS,
               "lpf_hook 2 returned %d", j->hook2_rc);
        EXPECT(&bad, t, j->fini_rc == LPF_SUCCESS,
               "lpf_pthread_finalize returned %d", j->fini_rc);
        bad += check_out(&j->out1, t, n, want_sum, 1);
        bad += check_out(&j->out2, t, n, want_sum, 2);
        EXPECT(&bad, t, j->out2.outer_sync == LPF_SUCCESS,
               "outer context's lpf_sync after lpf_rehook returned %d",
               j->out2.outer_sync);
    }
    free(jobs);
    if (bad != 0) {
        fprintf(stderr, "pthread_hook: FAILED (%d problem(s))\n", bad);
        return 1;
    }
    printf("pthread_hook: ok (%u threads, 2 hooks each)\n", n);
    return 0;
}
