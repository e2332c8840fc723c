/*
 * mpicomm_default: a program written for the reference that calls
 * lpf_mpi_initialize_with_mpicomm (lpf/mpi.h, which includes <mpi.h>) links
 * against the default liblpf_core, built without MPI (#17 item 8), and the
 * call returns LPF_ERR_FATAL with a message saying why, leaving *init alone.
 * (The library built with the cargo feature `mpi` implements it: tests/mpi.)
 *
 * Built with mpicc (for MPI_COMM_WORLD); MPI is never initialised, since the
 * default library never touches the communicator.
 */
#include <lpf/core.h>
#include <lpf/mpi.h>

#include "test_util.h"

int main(void)
{
    int bad = 0;
    lpf_init_t init = LPF_INIT_NONE;
    lpf_err_t rc = lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, &init);
    EXPECT(&bad, 0, rc == LPF_ERR_FATAL, "lpf_mpi_initialize_with_mpicomm returned %d", rc);
    EXPECT(&bad, 0, init == LPF_INIT_NONE, "*init was written");
    EXPECT(&bad, 0, strstr(test_error_text(), "built without MPI") != NULL, "message: %s", test_error_text());
    if (bad) {
        fprintf(stderr, "mpicomm_default: %d check(s) failed\n", bad);
        return 1;
    }
    printf("mpicomm_default: LPF_ERR_FATAL: %s\n", test_error_text());
    return 0;
}
