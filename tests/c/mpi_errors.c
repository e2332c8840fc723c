/*
 * mpi_errors: an MPI failure inside LPF is an LPF error, not the end of the
 * job (#17 item 6). Run under mpirun with LPF_ENGINE=mpirma and an MPI whose
 * window creation fails (Open MPI: OMPI_MCA_osc=monitoring leaves no usable
 * one-sided component). Each rank: MPI_Init, lpf_mpi_initialize_with_mpicomm
 * (MPI_COMM_WORLD), lpf_hook of a function that registers a global slot and
 * syncs. Expected: that sync, and lpf_hook, return LPF_ERR_FATAL with a
 * message naming MPI_Win_create; the program's own communicator keeps its
 * error handler (MPI_ERRORS_ARE_FATAL); MPI_Finalize is reached. Prints
 * "mpi_errors ok <rank>: <message>" and exits 0 when all of that holds.
 *
 * `mpi_errors works` instead expects success (a window can be created, or
 * none is needed as on one rank): the sync and the hook return LPF_SUCCESS
 * and a put to the right neighbour arrives.
 */
#include <lpf/core.h>
#include <lpf/mpi.h>
#include <lpf/error.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int expect_failure = 1;
static int bad = 0;
static char message[512];

static void spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t p, lpf_args_t args)
{
    long v = 100 + (long)pid, got = -1;
    lpf_memslot_t src, dst;
    lpf_err_t rc;
    (void)args;
    if (lpf_resize_memory_register(ctx, 2) != LPF_SUCCESS ||
        lpf_resize_message_queue(ctx, 2) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) {
        fprintf(stderr, "FAIL pid %u: resize/sync: %s\n", pid, lpf_error_message());
        bad = 1;
        return;
    }
    if (lpf_register_local(ctx, &v, sizeof v, &src) != LPF_SUCCESS ||
        lpf_register_global(ctx, &got, sizeof got, &dst) != LPF_SUCCESS) {
        fprintf(stderr, "FAIL pid %u: register: %s\n", pid, lpf_error_message());
        bad = 1;
        return;
    }
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT); /* activates dst: MPI_Win_create */
    if (expect_failure) {
        if (rc != LPF_ERR_FATAL || strstr(lpf_error_message(), "MPI_Win_create") == NULL) {
            fprintf(stderr, "FAIL pid %u: sync returned %d (%s), expected LPF_ERR_FATAL naming MPI_Win_create\n",
                    pid, rc, lpf_error_message());
            bad = 1;
        }
        snprintf(message, sizeof message, "%s", lpf_error_message());
        return;
    }
    if (rc != LPF_SUCCESS ||
        lpf_put(ctx, src, 0, (pid + 1) % p, dst, 0, sizeof v, LPF_MSG_DEFAULT) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) {
        fprintf(stderr, "FAIL pid %u: %s\n", pid, lpf_error_message());
        bad = 1;
        return;
    }
    if (got != 100 + (long)((pid + p - 1) % p)) {
        fprintf(stderr, "FAIL pid %u: got %ld\n", pid, got);
        bad = 1;
    }
    lpf_deregister(ctx, dst);
    lpf_deregister(ctx, src);
}

/* This program initialises MPI itself and makes its LPF init with
 * lpf_mpi_initialize_with_mpicomm: the runtime must not join the ranks before
 * main (lpf/mpi.h; without it only rank 0 would run main). */
const int LPF_MPI_AUTO_INITIALIZE = 0;

int main(int argc, char **argv)
{
    int rank = 0;
    lpf_init_t init = LPF_INIT_NONE;
    lpf_err_t rc;
    MPI_Errhandler h;

    expect_failure = !(argc > 1 && strcmp(argv[1], "works") == 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, &init) != LPF_SUCCESS) {
        fprintf(stderr, "FAIL rank %d: init: %s\n", rank, lpf_error_message());
        MPI_Finalize();
        return 1;
    }
    rc = lpf_hook(init, spmd, LPF_NO_ARGS);
    if (rc != (expect_failure ? LPF_ERR_FATAL : LPF_SUCCESS)) {
        fprintf(stderr, "FAIL rank %d: lpf_hook returned %d: %s\n", rank, rc, lpf_error_message());
        bad = 1;
    }
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h);
    if (h != MPI_ERRORS_ARE_FATAL) {
        fprintf(stderr, "FAIL rank %d: MPI_COMM_WORLD's error handler was changed\n", rank);
        bad = 1;
    }
    MPI_Errhandler_free(&h);
    lpf_mpi_finalize(init);
    MPI_Finalize();
    if (!bad)
        printf("mpi_errors ok %d: %s\n", rank, expect_failure ? message : "works");
    return bad;
}
