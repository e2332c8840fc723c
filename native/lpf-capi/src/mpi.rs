//! `lpf/mpi.h` with MPI (feature `mpi`): `lpf_mpi_initialize_with_mpicomm`. The init
//! it returns is released by `lpf_mpi_finalize` (the platform-independent finalize in
//! the crate root), which must come before the program's `MPI_Finalize`.

use super::{guarded, lpf_err_t, lpf_init_t, Init};
use lpf::mpi::{MpiInit, MPI_Comm};
use lpf::Error;

/// Makes the ranks of `comm` one LPF runtime, pid = rank (collective over `comm`).
/// The engine is `LPF_ENGINE` when it names an MPI engine (`mpimsg`, `mpirma`,
/// `ibverbs`), else `mpimsg`. With `LPF_ENGINE=hybrid` every rank runs `LPF_THREADS`
/// LPF processes (threads; default 1, ranks may differ) over `LPF_HYBRID_NET`
/// (`mpimsg` or `mpirma`), pids numbering the ranks' threads in rank order; then MPI
/// must be initialised with `MPI_THREAD_SERIALIZED` or better.
///
/// # Safety
/// `comm` must be a valid communicator of an initialised MPI; `init` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn lpf_mpi_initialize_with_mpicomm(comm: MPI_Comm, init: *mut lpf_init_t) -> lpf_err_t {
    guarded("lpf_mpi_initialize_with_mpicomm", || {
        if init.is_null() {
            return Err(Error::fatal("the lpf_init_t out-pointer is NULL"));
        }
        let (kind, threads) = lpf::mpi::engine_from_env()?;
        let i = MpiInit::with_comm_threads(comm, kind, threads)?;
        *init = Init::Mpi(i).into_handle();
        Ok(())
    })
}
