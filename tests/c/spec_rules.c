/*
 * spec_rules: checks rules of the LPF core specification, each in its own
 * lpf_exec section so that a failure (or a fatal error) in one does not
 * spill into the next.
 *
 *  prealloc   nothing is pre-allocated: registering or communicating before
 *             any resize is refused (and does not crash).
 *  resize     impossible resizes (SIZE_MAX, SIZE_MAX/10) return
 *             LPF_ERR_OUT_OF_MEMORY without side effect; shrinking succeeds
 *             and the old capacity stays usable until the next sync.
 *  probe      p >= 1, free_p >= 1, g and l positive and identical on every
 *             process.
 *  bad-*      put/get/deregister with bad arguments are refused, leave a
 *             message in lpf_error_message() (when available) and write
 *             nothing.
 *  unmatched  pid 1 leaves early: the remaining sync returns LPF_ERR_FATAL,
 *             lpf_exec returns LPF_ERR_FATAL, and pid 0's output arrives.
 */
#include <lpf/core.h>

#include <stdint.h>

#include "test_util.h"

#define OUT_MAGIC 0x53504543u /* "SPEC" */

/* What pid 0 of every section reports to main(). */
struct spec_out {
    unsigned magic;
    unsigned nprocs;
    int failures;      /* pid 0's own failures */
    int error_word;    /* non-zero iff another process reported failures */
    int went_fatal;    /* pid 0 saw LPF_ERR_FATAL from a refused call */
    int sync_rc;       /* used by "unmatched" */
};

static void out_write(lpf_args_t args, lpf_pid_t nprocs, int failures,
                      int error_word, int went_fatal, int sync_rc)
{
    struct spec_out *o;
    if (args.output == NULL || args.output_size != sizeof(struct spec_out))
        return;
    o = (struct spec_out *)args.output;
    o->magic = OUT_MAGIC;
    o->nprocs = nprocs;
    o->failures = failures;
    o->error_word = error_word;
    o->went_fatal = went_fatal;
    o->sync_rc = sync_rc;
}

/*
 * Bookkeeping for calls that must be refused. Once a call has returned
 * LPF_ERR_FATAL the process is in a failed state in which only sync, exec
 * and rehook have specified results, so later refusals are not checked.
 */
struct refusals {
    lpf_pid_t pid;
    int failures;
    int fatal;
};

static void expect_refused(struct refusals *r, lpf_err_t rc, const char *what)
{
    if (r->fatal)
        return;
    if (rc == LPF_SUCCESS) {
        fprintf(stderr, "pid %u: %s: accepted, but must be refused\n",
                r->pid, what);
        ++r->failures;
        return;
    }
    if (!test_error_message_ok()) {
        fprintf(stderr, "pid %u: %s: refused with %d but "
                "lpf_error_message() is empty\n", r->pid, what, rc);
        ++r->failures;
    }
    if (rc == LPF_ERR_FATAL)
        r->fatal = 1;
}

/* The sync after refused calls: FATAL once the process failed, else OK. */
static void expect_sync_after(struct refusals *r, lpf_t ctx)
{
    lpf_err_t rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (r->fatal && rc != LPF_ERR_FATAL) {
        fprintf(stderr, "pid %u: lpf_sync after a fatal error returned %d, "
                "expected LPF_ERR_FATAL\n", r->pid, rc);
        ++r->failures;
    } else if (!r->fatal && rc != LPF_SUCCESS) {
        fprintf(stderr, "pid %u: lpf_sync after refused (non-fatal) calls "
                "returned %d, expected LPF_SUCCESS\n", r->pid, rc);
        ++r->failures;
    }
}

/* ---------------------------------------------------------------------- */
/* prealloc                                                                */
/* ---------------------------------------------------------------------- */

static void prealloc_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                          lpf_args_t args)
{
    struct refusals r;
    int x[4] = {11, 22, 33, 44};
    lpf_memslot_t s = LPF_INVALID_MEMSLOT;

    r.pid = pid;
    r.failures = 0;
    r.fatal = 0;

    /* No resize and no sync yet: zero slots and zero message capacity. */
    expect_refused(&r, lpf_register_local(ctx, x, sizeof x, &s),
                   "register_local before any resize");
    expect_refused(&r, lpf_register_global(ctx, x, sizeof x, &s),
                   "register_global before any resize");
    /* A put/get naming slot 0 or LPF_INVALID_MEMSLOT: nothing exists. */
    expect_refused(&r, lpf_put(ctx, 0, 0, 0, 0, 0, sizeof(int),
                               LPF_MSG_DEFAULT),
                   "put before any resize");
    expect_refused(&r, lpf_put(ctx, LPF_INVALID_MEMSLOT, 0, 0,
                               LPF_INVALID_MEMSLOT, 0, sizeof(int),
                               LPF_MSG_DEFAULT),
                   "put of LPF_INVALID_MEMSLOT before any resize");
    expect_refused(&r, lpf_get(ctx, 0, 0, 0, 0, 0, sizeof(int),
                               LPF_MSG_DEFAULT),
                   "get before any resize");
    expect_sync_after(&r, ctx);
    EXPECT(&r.failures, pid, x[0] == 11 && x[1] == 22 && x[2] == 33 &&
               x[3] == 44, "memory changed by refused calls");
    if (pid == 0)
        out_write(args, nprocs, r.failures, 0, r.fatal, 0);
    else if (r.failures != 0)
        fprintf(stderr, "pid %u: prealloc: %d failure(s)\n", pid,
                r.failures);
}

/* ---------------------------------------------------------------------- */
/* resize and probe                                                        */
/* ---------------------------------------------------------------------- */

static void resize_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                        lpf_args_t args)
{
    int failures = 0, error_word = 0;
    int tmp = 0;
    lpf_memslot_t err_slot, status_slot, extra_slot, tmp_slot;
    lpf_err_t rc;

    rc = lpf_resize_memory_register(ctx, SIZE_MAX);
    EXPECT(&failures, pid, rc == LPF_ERR_OUT_OF_MEMORY,
           "resize_memory_register(SIZE_MAX) returned %d", rc);
    EXPECT(&failures, pid, rc == LPF_SUCCESS || test_error_message_ok(),
           "no error message after a failed resize");
    rc = lpf_resize_memory_register(ctx, SIZE_MAX / 10);
    EXPECT(&failures, pid, rc == LPF_ERR_OUT_OF_MEMORY,
           "resize_memory_register(SIZE_MAX/10) returned %d", rc);
    rc = lpf_resize_message_queue(ctx, SIZE_MAX);
    EXPECT(&failures, pid, rc == LPF_ERR_OUT_OF_MEMORY,
           "resize_message_queue(SIZE_MAX) returned %d", rc);
    rc = lpf_resize_message_queue(ctx, SIZE_MAX / 10);
    EXPECT(&failures, pid, rc == LPF_ERR_OUT_OF_MEMORY,
           "resize_message_queue(SIZE_MAX/10) returned %d", rc);

    /* Valid requests, then impossible ones that must not undo them. */
    rc = lpf_resize_memory_register(ctx, 3);
    EXPECT(&failures, pid, rc == LPF_SUCCESS,
           "resize_memory_register(3) returned %d", rc);
    rc = lpf_resize_memory_register(ctx, SIZE_MAX);
    EXPECT(&failures, pid, rc == LPF_ERR_OUT_OF_MEMORY,
           "second resize_memory_register(SIZE_MAX) returned %d", rc);
    rc = lpf_resize_message_queue(ctx, 2 * (size_t)nprocs + 2);
    EXPECT(&failures, pid, rc == LPF_SUCCESS,
           "resize_message_queue(2p+2) returned %d", rc);
    rc = lpf_resize_message_queue(ctx, SIZE_MAX / 10);
    EXPECT(&failures, pid, rc == LPF_ERR_OUT_OF_MEMORY,
           "second resize_message_queue(SIZE_MAX/10) returned %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "lpf_sync: %d", rc);
    if (rc != LPF_SUCCESS)
        goto done;

    /* All three requested slots are there. */
    rc = lpf_register_global(ctx, &error_word, sizeof error_word, &err_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "register 1 of 3: %d", rc);
    rc = lpf_register_local(ctx, &failures, sizeof failures, &status_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "register 2 of 3: %d", rc);
    rc = lpf_register_global(ctx, NULL, 0, &extra_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS,
           "register 3 of 3 (NULL, 0): %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "lpf_sync: %d", rc);
    if (failures != 0 || rc != LPF_SUCCESS)
        goto done;

    /* Shrink: succeeds, but the old capacity (3) stays until the sync. */
    rc = lpf_deregister(ctx, extra_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "deregister: %d", rc);
    rc = lpf_resize_memory_register(ctx, 2);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "shrink register: %d", rc);
    rc = lpf_register_local(ctx, &tmp, sizeof tmp, &tmp_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS,
           "register under the old capacity after shrinking: %d", rc);
    if (rc == LPF_SUCCESS) {
        rc = lpf_deregister(ctx, tmp_slot);
        EXPECT(&failures, pid, rc == LPF_SUCCESS, "deregister: %d", rc);
    }
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "lpf_sync after shrink: %d",
           rc);
    if (rc != LPF_SUCCESS)
        goto done;

    rc = test_gather_status(ctx, &failures, status_slot, err_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "status sync: %d", rc);

    /* Shrinking the queue to nothing always succeeds. */
    rc = lpf_resize_message_queue(ctx, 0);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "shrink queue to 0: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "final lpf_sync: %d", rc);

done:
    if (pid == 0)
        out_write(args, nprocs, failures, error_word, 0, 0);
    else if (failures != 0)
        fprintf(stderr, "pid %u: resize: %d failure(s)\n", pid, failures);
}

static void probe_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                       lpf_args_t args)
{
    int failures = 0, error_word = 0;
    lpf_machine_t m = LPF_INVALID_MACHINE;
    double mine[2] = {0.0, 0.0};
    double *table = NULL;
    lpf_memslot_t err_slot, status_slot, mine_slot, table_slot;
    lpf_err_t rc;
    lpf_pid_t k;

    rc = lpf_probe(ctx, &m);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "lpf_probe: %d", rc);
    EXPECT(&failures, pid, m.p >= 1, "p = %u", m.p);
    EXPECT(&failures, pid, m.free_p >= 1, "free_p = %u", m.free_p);
    EXPECT(&failures, pid, m.g != NULL && m.l != NULL,
           "g or l is a NULL function");
    if (m.g != NULL && m.l != NULL) {
        mine[0] = m.g(nprocs, 8, LPF_SYNC_DEFAULT);
        mine[1] = m.l(nprocs, 8, LPF_SYNC_DEFAULT);
        EXPECT(&failures, pid, mine[0] > 0.0, "g(p, 8) = %g", mine[0]);
        EXPECT(&failures, pid, mine[1] > 0.0, "l(p, 8) = %g", mine[1]);
        EXPECT(&failures, pid, m.g(1, 0, LPF_SYNC_DEFAULT) > 0.0,
               "g(1, 0) = %g", m.g(1, 0, LPF_SYNC_DEFAULT));
        EXPECT(&failures, pid, m.l(1, 0, LPF_SYNC_DEFAULT) > 0.0,
               "l(1, 0) = %g", m.l(1, 0, LPF_SYNC_DEFAULT));
    }

    /* Gather everybody's g and l on pid 0: they must be identical. */
    table = (double *)calloc(2 * (size_t)nprocs, sizeof(double));
    if (table == NULL) {
        fprintf(stderr, "pid %u: out of memory\n", pid);
        exit(2);
    }
    rc = lpf_resize_memory_register(ctx, 4);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "resize register: %d", rc);
    rc = lpf_resize_message_queue(ctx, 2 * (size_t)nprocs + 2);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "resize queue: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "lpf_sync: %d", rc);
    if (rc != LPF_SUCCESS)
        goto done;
    rc = lpf_register_global(ctx, &error_word, sizeof error_word, &err_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_register_local(ctx, &failures, sizeof failures, &status_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_register_local(ctx, mine, sizeof mine, &mine_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_register_global(ctx, table, 2 * (size_t)nprocs * sizeof(double),
                             &table_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "lpf_sync: %d", rc);
    if (failures != 0 || rc != LPF_SUCCESS)
        goto done;

    rc = lpf_put(ctx, mine_slot, 0, 0, table_slot,
                 2 * (size_t)pid * sizeof(double), sizeof mine,
                 LPF_MSG_DEFAULT);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "put g, l: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "lpf_sync: %d", rc);
    if (pid == 0 && rc == LPF_SUCCESS)
        for (k = 0; k < nprocs; ++k)
            EXPECT(&failures, pid, table[2 * k] == mine[0] &&
                       table[2 * k + 1] == mine[1],
                   "pid %u has g = %g, l = %g; pid 0 has g = %g, l = %g", k,
                   table[2 * k], table[2 * k + 1], mine[0], mine[1]);

    rc = test_gather_status(ctx, &failures, status_slot, err_slot);
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "status sync: %d", rc);

done:
    if (pid == 0) {
        out_write(args, nprocs, failures, error_word, 0, 0);
        printf("probe: p = %u, free_p = %u, g = %g s/byte, l = %g s\n", m.p,
               m.free_p, mine[0], mine[1]);
    } else if (failures != 0) {
        fprintf(stderr, "pid %u: probe: %d failure(s)\n", pid, failures);
    }
    free(table);
}

/* ---------------------------------------------------------------------- */
/* bad arguments                                                           */
/* ---------------------------------------------------------------------- */

#define BAD_WORDS 8
#define BAD_BYTES (BAD_WORDS * sizeof(int))

/* What a bad call may use. */
struct bad_env {
    lpf_t ctx;
    lpf_pid_t pid, nprocs;
    lpf_memslot_t global;  /* BAD_BYTES, global */
    lpf_memslot_t local;   /* BAD_BYTES, local */
    lpf_memslot_t dead;    /* was registered, then deregistered */
};

typedef lpf_err_t (*bad_call_t)(const struct bad_env *e);

static const size_t W = sizeof(int);

static lpf_err_t put_dead_dst(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, 0, 0, e->dead, 0, W, LPF_MSG_DEFAULT); }
static lpf_err_t put_dead_src(const struct bad_env *e)
{ return lpf_put(e->ctx, e->dead, 0, 0, e->global, 0, W, LPF_MSG_DEFAULT); }
static lpf_err_t put_invalid_dst(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, 0, 0, LPF_INVALID_MEMSLOT, 0, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t put_invalid_src(const struct bad_env *e)
{ return lpf_put(e->ctx, LPF_INVALID_MEMSLOT, 0, 0, e->global, 0, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t put_pid_p(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, 0, e->nprocs, e->global, 0, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t put_pid_max(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, 0, LPF_MAX_P, e->global, 0, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t put_dst_past_end(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, 0, 0, e->global, BAD_BYTES - W / 2, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t put_dst_offset_wraps(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, 0, 0, e->global, SIZE_MAX - 1, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t put_src_past_end(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, BAD_BYTES - W / 2, 0, e->global, 0, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t put_size_too_big(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, 0, 0, e->global, 0, BAD_BYTES + W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t put_size_wraps(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, W, 0, e->global, W, SIZE_MAX,
                 LPF_MSG_DEFAULT); }
static lpf_err_t put_into_local(const struct bad_env *e)
{ return lpf_put(e->ctx, e->local, 0, 0, e->local, W, W, LPF_MSG_DEFAULT); }
static lpf_err_t get_dead_src(const struct bad_env *e)
{ return lpf_get(e->ctx, 0, e->dead, 0, e->local, 0, W, LPF_MSG_DEFAULT); }
static lpf_err_t get_dead_dst(const struct bad_env *e)
{ return lpf_get(e->ctx, 0, e->global, 0, e->dead, 0, W, LPF_MSG_DEFAULT); }
static lpf_err_t get_invalid_src(const struct bad_env *e)
{ return lpf_get(e->ctx, 0, LPF_INVALID_MEMSLOT, 0, e->local, 0, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t get_from_local(const struct bad_env *e)
{ return lpf_get(e->ctx, 0, e->local, 0, e->local, W, W, LPF_MSG_DEFAULT); }
static lpf_err_t get_pid_p(const struct bad_env *e)
{ return lpf_get(e->ctx, e->nprocs, e->global, 0, e->local, 0, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t get_src_past_end(const struct bad_env *e)
{ return lpf_get(e->ctx, 0, e->global, BAD_BYTES - W / 2, e->local, 0, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t get_dst_past_end(const struct bad_env *e)
{ return lpf_get(e->ctx, 0, e->global, 0, e->local, BAD_BYTES - W / 2, W,
                 LPF_MSG_DEFAULT); }
static lpf_err_t deregister_dead(const struct bad_env *e)
{ return lpf_deregister(e->ctx, e->dead); }
static lpf_err_t deregister_invalid(const struct bad_env *e)
{ return lpf_deregister(e->ctx, LPF_INVALID_MEMSLOT); }

/* Distinct patterns, so that a wrongly performed copy always shows. */
static int global_pattern(unsigned i) { return 1000 + (int)i; }
static int local_pattern(unsigned i) { return -2000 - (int)i; }

/*
 * The bad call to make arrives as f_symbols[0], which every process of an
 * lpf_exec receives. Every process makes it, so refusals are symmetric.
 */
static void bad_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                     lpf_args_t args)
{
    struct refusals r;
    struct bad_env e;
    int gbuf[BAD_WORDS], lbuf[BAD_WORDS], tmp = 0;
    int error_word = 0;
    lpf_memslot_t err_slot, status_slot, tmp_slot;
    bad_call_t call;
    lpf_err_t rc;
    unsigned i;

    r.pid = pid;
    r.failures = 0;
    r.fatal = 0;
    for (i = 0; i < BAD_WORDS; ++i) {
        gbuf[i] = global_pattern(i);
        lbuf[i] = local_pattern(i);
    }
    if (args.f_symbols == NULL || args.f_size != 1 ||
        args.f_symbols[0] == NULL) {
        fprintf(stderr, "pid %u: f_symbols did not arrive (f_size %lu)\n",
                pid, (unsigned long)args.f_size);
        ++r.failures;
        goto done;
    }
    /* Via void (*)(void), the portable way to convert function pointers. */
    call = (bad_call_t)(void (*)(void))args.f_symbols[0];

    rc = lpf_resize_memory_register(ctx, 5);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "resize register: %d", rc);
    rc = lpf_resize_message_queue(ctx, 2 * (size_t)nprocs + 4);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "resize queue: %d", rc);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "lpf_sync: %d", rc);
    if (rc != LPF_SUCCESS)
        goto done;
    e.ctx = ctx;
    e.pid = pid;
    e.nprocs = nprocs;
    rc = lpf_register_global(ctx, gbuf, sizeof gbuf, &e.global);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_register_local(ctx, lbuf, sizeof lbuf, &e.local);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_register_global(ctx, &error_word, sizeof error_word, &err_slot);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_register_local(ctx, &r.failures, sizeof r.failures,
                            &status_slot);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "register: %d", rc);
    /* Last registration, so that the dead slot cannot be handed out again. */
    rc = lpf_register_local(ctx, &tmp, sizeof tmp, &tmp_slot);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "register: %d", rc);
    rc = lpf_deregister(ctx, tmp_slot);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "deregister: %d", rc);
    e.dead = tmp_slot;
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "lpf_sync: %d", rc);
    if (r.failures != 0 || rc != LPF_SUCCESS)
        goto done;

    rc = call(&e);
    expect_refused(&r, rc, "the bad call");
    expect_sync_after(&r, ctx);

    for (i = 0; i < BAD_WORDS; ++i) {
        EXPECT(&r.failures, pid, gbuf[i] == global_pattern(i),
               "global area word %u changed to %d by a refused call", i,
               gbuf[i]);
        EXPECT(&r.failures, pid, lbuf[i] == local_pattern(i),
               "local area word %u changed to %d by a refused call", i,
               lbuf[i]);
    }
    EXPECT(&r.failures, pid, tmp == 0, "deregistered area changed");

    if (!r.fatal) {
        rc = test_gather_status(ctx, &r.failures, status_slot, err_slot);
        EXPECT(&r.failures, pid, rc == LPF_SUCCESS, "status sync: %d", rc);
    }

done:
    if (pid == 0)
        out_write(args, nprocs, r.failures, error_word, r.fatal, 0);
    else if (r.failures != 0)
        fprintf(stderr, "pid %u: %d failure(s)\n", pid, r.failures);
}

/* ---------------------------------------------------------------------- */
/* unmatched syncs                                                         */
/* ---------------------------------------------------------------------- */

#define UNMATCHED_VALUE 4242

static void unmatched_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs,
                           lpf_args_t args)
{
    lpf_err_t rc;
    int failures = 0;

    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT); /* matched by everyone */
    EXPECT(&failures, pid, rc == LPF_SUCCESS, "first lpf_sync: %d", rc);
    if (pid == 1)
        return; /* leaves early: the others' next sync has no partner */
    if (pid == 0 && args.output != NULL &&
        args.output_size == sizeof(struct spec_out)) {
        /* Written before the failing sync: must reach main() anyway. */
        out_write(args, nprocs, failures, UNMATCHED_VALUE, 0, -1);
    }
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (nprocs >= 2)
        EXPECT(&failures, pid, rc == LPF_ERR_FATAL,
               "unmatched lpf_sync returned %d, expected LPF_ERR_FATAL", rc);
    else
        EXPECT(&failures, pid, rc == LPF_SUCCESS, "lpf_sync returned %d",
               rc);
    if (nprocs >= 2) {
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        EXPECT(&failures, pid, rc == LPF_ERR_FATAL,
               "lpf_sync after the failure returned %d, expected "
               "LPF_ERR_FATAL", rc);
    }
    if (pid == 0)
        out_write(args, nprocs, failures, UNMATCHED_VALUE, 0, rc);
    else if (failures != 0)
        fprintf(stderr, "pid %u: unmatched: %d failure(s)\n", pid, failures);
}

/* ---------------------------------------------------------------------- */
/* main                                                                    */
/* ---------------------------------------------------------------------- */

static int total_failed = 0;
static unsigned want_procs = 0;

static void report(const char *name, int bad)
{
    printf("  [%s] %s\n", bad ? "FAIL" : "ok", name);
    fflush(stdout);
    if (bad)
        ++total_failed;
}

/* Runs spmd from LPF_ROOT; returns lpf_exec's result and fills *out. */
static lpf_err_t run(lpf_spmd_t spmd, const lpf_func_t *fs, size_t nfs,
                     struct spec_out *out)
{
    lpf_args_t args = LPF_NO_ARGS;
    memset(out, 0, sizeof *out);
    args.output = out;
    args.output_size = sizeof *out;
    args.f_symbols = fs;
    args.f_size = nfs;
    return lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, args);
}

/* Common checks of a section that should end normally. */
static int check_plain(lpf_err_t rc, const struct spec_out *o)
{
    int bad = 0;
    EXPECT(&bad, 0, o->magic == OUT_MAGIC, "pid 0 wrote no output");
    EXPECT(&bad, 0, o->failures == 0, "pid 0 had %d failure(s)",
           o->failures);
    EXPECT(&bad, 0, o->error_word == 0, "another process failed");
    if (o->went_fatal)
        EXPECT(&bad, 0, rc == LPF_ERR_FATAL,
               "a call failed fatally, yet lpf_exec returned %d", rc);
    else
        EXPECT(&bad, 0, rc == LPF_SUCCESS, "lpf_exec returned %d", rc);
    if (want_procs != 0 && o->magic == OUT_MAGIC)
        EXPECT(&bad, 0, o->nprocs == want_procs,
               "LPF_MAX_PROCS=%u but the section had %u processes",
               want_procs, o->nprocs);
    return bad;
}

struct bad_case {
    const char *name;
    bad_call_t call;
};

int main(void)
{
    static const struct bad_case bad_cases[] = {
        {"bad-put-deregistered-dst", put_dead_dst},
        {"bad-put-deregistered-src", put_dead_src},
        {"bad-put-invalid-memslot-dst", put_invalid_dst},
        {"bad-put-invalid-memslot-src", put_invalid_src},
        {"bad-put-pid-equals-p", put_pid_p},
        {"bad-put-pid-max", put_pid_max},
        {"bad-put-dst-past-end", put_dst_past_end},
        {"bad-put-dst-offset-wraps", put_dst_offset_wraps},
        {"bad-put-src-past-end", put_src_past_end},
        {"bad-put-size-too-big", put_size_too_big},
        {"bad-put-size-wraps", put_size_wraps},
        {"bad-put-into-local-slot", put_into_local},
        {"bad-get-deregistered-src", get_dead_src},
        {"bad-get-deregistered-dst", get_dead_dst},
        {"bad-get-invalid-memslot-src", get_invalid_src},
        {"bad-get-from-local-slot", get_from_local},
        {"bad-get-pid-equals-p", get_pid_p},
        {"bad-get-src-past-end", get_src_past_end},
        {"bad-get-dst-past-end", get_dst_past_end},
        {"bad-deregister-deregistered", deregister_dead},
        {"bad-deregister-invalid-memslot", deregister_invalid},
    };
    struct spec_out o;
    lpf_err_t rc;
    size_t i;
    int bad;

    want_procs = test_requested_procs();
    printf("spec_rules: LPF_MAX_PROCS=%u%s\n", want_procs,
           TEST_HAVE_ERROR_MESSAGE ? "" : " (no lpf/error.h)");

    rc = run(prealloc_spmd, NULL, 0, &o);
    report("prealloc", check_plain(rc, &o));

    rc = run(resize_spmd, NULL, 0, &o);
    report("resize", check_plain(rc, &o));

    rc = run(probe_spmd, NULL, 0, &o);
    report("probe", check_plain(rc, &o));

    for (i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; ++i) {
        lpf_func_t f = (lpf_func_t)(void (*)(void))bad_cases[i].call;
        rc = run(bad_spmd, &f, 1, &o);
        report(bad_cases[i].name, check_plain(rc, &o));
    }

    rc = run(unmatched_spmd, NULL, 0, &o);
    bad = 0;
    EXPECT(&bad, 0, o.magic == OUT_MAGIC && o.error_word == UNMATCHED_VALUE,
           "pid 0's output did not reach main() (magic %#x)", o.magic);
    EXPECT(&bad, 0, o.failures == 0, "pid 0 had %d failure(s)", o.failures);
    if (o.magic == OUT_MAGIC && o.nprocs >= 2) {
        EXPECT(&bad, 0, rc == LPF_ERR_FATAL,
               "lpf_exec returned %d after unmatched syncs, expected "
               "LPF_ERR_FATAL", rc);
        EXPECT(&bad, 0, o.sync_rc == LPF_ERR_FATAL,
               "pid 0's last lpf_sync returned %d", o.sync_rc);
    } else if (o.magic == OUT_MAGIC) {
        EXPECT(&bad, 0, rc == LPF_SUCCESS,
               "lpf_exec with one process returned %d", rc);
    }
    report(o.nprocs >= 2 ? "unmatched" : "unmatched (1 process: no partner)",
           bad);

    if (total_failed != 0) {
        fprintf(stderr, "spec_rules: FAILED (%d case(s))\n", total_failed);
        return 1;
    }
    printf("spec_rules: ok\n");
    return 0;
}
