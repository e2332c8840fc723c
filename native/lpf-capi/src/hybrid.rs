//! `lpf/hybrid.h`: `lpf_hybrid_initialize` builds, in the reference, an init for the
//! hybrid engine from a Pthread context and an MPI context that the program made
//! itself. Here the hybrid engine is chosen with `LPF_ENGINE=hybrid` (threads per
//! process + TCP or MPI between processes) and started by `lpf_exec`, `lpfrun` or
//! `lpf_mpi_initialize_with_mpicomm`; composing two existing contexts into one is not
//! implemented, so these calls return `LPF_ERR_FATAL` with a message saying so
//! (docs/compatibility.md).

use super::{guarded, lpf_err_t, lpf_init_t, lpf_pid_t, lpf_t};
use lpf::Error;

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lpf_hybrid_initialize(
    thread: lpf_t,
    mpi: lpf_t,
    thread_id: lpf_pid_t,
    n_threads: lpf_pid_t,
    node_id: lpf_pid_t,
    n_nodes: lpf_pid_t,
    init: *mut lpf_init_t,
) -> lpf_err_t {
    let _ = (thread, mpi, init);
    guarded("lpf_hybrid_initialize", || {
        Err(Error::fatal(format!(
            "thread {thread_id} of {n_threads} on node {node_id} of {n_nodes}: composing a Pthread and an MPI context is not supported by this implementation; run with LPF_ENGINE=hybrid (LPF_THREADS threads per process) instead"
        )))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lpf_hybrid_finalize(init: lpf_init_t) -> lpf_err_t {
    let _ = init;
    guarded("lpf_hybrid_finalize", || Err(Error::fatal("no lpf_hybrid_initialize init can exist here (see lpf_hybrid_initialize)")))
}
