// mpi_cxx: a C++ program including Open MPI's <mpi.h> (as the reference's MPI hook
// tests do), built by tests/c/run.sh with `lpfcxx -engine ibverbs` (an engine under
// mpirun). In C++ that header declares Open MPI's C++ bindings, whose inline code needs
// libmpi_cxx: the build links only if lpfcxx adds it (mpicxx's link flags).
#include <mpi.h>
#include <lpf/core.h>
#include <lpf/mpi.h>

int main(int argc, char **argv)
{
    // Never run (the test links it only); the calls make the link need MPI and LPF.
    if (argc > 100) {
        MPI_Init(&argc, &argv);
        lpf_init_t init = LPF_INIT_NONE;
        (void)lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, &init);
        MPI_Finalize();
    }
    return 0;
}
