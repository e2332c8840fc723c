/*
 * An MPI program that uses LPF through lpf/core.h and lpf/mpi.h only:
 * MPI_Init, lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD), two lpf_hook
 * calls on the same init (a ring of small puts, large puts and gets, and a
 * sum by all-to-all puts), lpf_mpi_finalize, MPI_Finalize. Run under mpirun
 * with LPF_ENGINE=mpimsg or mpirma, or LPF_ENGINE=hybrid LPF_HYBRID_NET=mpimsg|mpirma
 * LPF_THREADS=k (k LPF processes per rank: MPI is initialised with
 * MPI_THREAD_SERIALIZED; built with -DRING_THREAD_SINGLE it uses plain MPI_Init, which
 * the hybrid engine must refuse). Exits non-zero and prints FAIL on any mismatch
 * (threads other than a rank's first report on stderr only); rank 0 prints
 * "mpi_ring ok P" (P ranks) on success.
 */
#include <lpf/core.h>
#include <lpf/mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG 20000 /* words: 160 KB, above the inline limit */

static int check(int cond, const char *what, lpf_pid_t pid)
{
    if (!cond)
        fprintf(stderr, "FAIL pid %u: %s\n", pid, what);
    return cond ? 0 : 1;
}

static void ring(lpf_t ctx, lpf_pid_t pid, lpf_pid_t p, lpf_args_t args)
{
    int bad = 0;
    lpf_memslot_t s_small, d_small, s_big, d_big, g_big;
    unsigned long long mine = 1000 + pid, left = 0;
    unsigned long long *big = malloc(sizeof *big * BIG);
    unsigned long long *got = calloc(BIG, sizeof *got);
    unsigned long long *fromleft = calloc(BIG, sizeof *fromleft);
    lpf_pid_t right = (pid + 1) % p, lft = (pid + p - 1) % p;
    for (size_t i = 0; i < BIG; ++i)
        big[i] = (unsigned long long)pid << 32 | i;

    bad |= lpf_resize_memory_register(ctx, 5) != LPF_SUCCESS;
    bad |= lpf_resize_message_queue(ctx, 6) != LPF_SUCCESS;
    bad |= lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_register_local(ctx, &mine, sizeof mine, &s_small) != LPF_SUCCESS;
    bad |= lpf_register_global(ctx, &left, sizeof left, &d_small) != LPF_SUCCESS;
    bad |= lpf_register_global(ctx, big, sizeof *big * BIG, &s_big) != LPF_SUCCESS;
    bad |= lpf_register_global(ctx, fromleft, sizeof *fromleft * BIG, &d_big) != LPF_SUCCESS;
    bad |= lpf_register_local(ctx, got, sizeof *got * BIG, &g_big) != LPF_SUCCESS;
    bad |= lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_put(ctx, s_small, 0, right, d_small, 0, sizeof mine, LPF_MSG_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_put(ctx, s_big, 0, right, d_big, 0, sizeof *big * BIG, LPF_MSG_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_get(ctx, right, s_big, 0, g_big, 0, sizeof *big * BIG, LPF_MSG_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS;
    bad |= check(left == 1000 + lft, "small put from the left", pid);
    for (size_t i = 0; i < BIG && !bad; ++i) {
        bad |= check(fromleft[i] == ((unsigned long long)lft << 32 | i), "large put from the left", pid);
        bad |= check(got[i] == ((unsigned long long)right << 32 | i), "large get from the right", pid);
    }
    bad |= lpf_deregister(ctx, g_big) != LPF_SUCCESS;
    bad |= lpf_deregister(ctx, d_big) != LPF_SUCCESS;
    bad |= lpf_deregister(ctx, s_big) != LPF_SUCCESS;
    free(big);
    free(got);
    free(fromleft);
    if (args.output_size >= sizeof bad)
        memcpy(args.output, &bad, sizeof bad);
}

static void sum(lpf_t ctx, lpf_pid_t pid, lpf_pid_t p, lpf_args_t args)
{
    int bad = 0;
    lpf_memslot_t src, dst;
    long long mine = (long long)pid * pid;
    long long *all = calloc(p, sizeof *all);
    lpf_machine_t m = LPF_INVALID_MACHINE;
    bad |= lpf_probe(ctx, &m) != LPF_SUCCESS;
    bad |= check(m.p == p && m.free_p >= 1 && m.g != NULL && m.l != NULL, "probe", pid);
    bad |= lpf_resize_memory_register(ctx, 2) != LPF_SUCCESS;
    bad |= lpf_resize_message_queue(ctx, 2 * p) != LPF_SUCCESS;
    bad |= lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_register_local(ctx, &mine, sizeof mine, &src) != LPF_SUCCESS;
    bad |= lpf_register_global(ctx, all, p * sizeof *all, &dst) != LPF_SUCCESS;
    bad |= lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS;
    for (lpf_pid_t q = 0; q < p; ++q)
        bad |= lpf_put(ctx, src, 0, q, dst, pid * sizeof mine, sizeof mine, LPF_MSG_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS;
    long long total = 0, want = 0;
    for (lpf_pid_t q = 0; q < p; ++q) {
        total += all[q];
        want += (long long)q * q;
    }
    bad |= check(total == want, "sum of squares", pid);
    free(all);
    if (args.output_size >= sizeof bad)
        memcpy(args.output, &bad, sizeof bad);
}

/* This program initialises MPI itself and makes its LPF init with
 * lpf_mpi_initialize_with_mpicomm: the runtime must not join the ranks before
 * main (lpf/mpi.h; without it only rank 0 would run main). */
const int LPF_MPI_AUTO_INITIALIZE = 0;

int main(int argc, char **argv)
{
    int rank, size, bad = 0, bad1 = 1, bad2 = 1, anybad = 0;
    lpf_init_t init = LPF_INIT_NONE;
#ifdef RING_THREAD_SINGLE
    MPI_Init(&argc, &argv);
#else
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
#endif
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, &init) != LPF_SUCCESS) {
        fprintf(stderr, "FAIL rank %d: lpf_mpi_initialize_with_mpicomm\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    lpf_args_t a1 = {NULL, 0, &bad1, sizeof bad1, NULL, 0};
    lpf_args_t a2 = {NULL, 0, &bad2, sizeof bad2, NULL, 0};
    bad |= lpf_hook(init, ring, a1) != LPF_SUCCESS;
    bad |= lpf_hook(init, sum, a2) != LPF_SUCCESS;
    bad |= bad1 | bad2;
    bad |= lpf_mpi_finalize(init) != LPF_SUCCESS;
    /* The user's own MPI traffic still works after LPF is done with the comm. */
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf(anybad ? "mpi_ring FAIL %d\n" : "mpi_ring ok %d\n", size);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
