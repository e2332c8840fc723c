//! `lpf_hook` (and `lpf_rehook`'s first section) of the inits over a network (TCP, MPI):
//! the engine a section runs on. With one LPF process per OS process it is the network
//! engine itself ([`NetEngine`]); with several, the hybrid engine's threads share the
//! OS process's memory over the same network. Both inits choose here, above both
//! engines, so that neither engine names the other.

use crate::context::Spmd;
use crate::error::Result;
use crate::network::{run_section_process, NetEngine, Network};
use crate::types::{Args, Pid};

/// The engine the sections of an init over a network run on: the hybrid engine, or
/// the engine `name` ([`NetEngine`]) when every OS process runs one LPF process.
pub(crate) fn engine_name(hybrid: bool, name: &'static str) -> &'static str {
    if hybrid { crate::hybrid::ENGINE_NAME } else { name }
}

/// `lpf_hook` over the section `net` (just opened) of an init: on the hybrid engine, or
/// as this OS process's one LPF process on the engine `name`. `job_p`: the init is the
/// part of a launched job of that many LPF processes that a root `lpf_exec` with fewer
/// runs on (`context::run_part_process`); None: the init's processes are the runtime.
pub(crate) fn on_network(net: Box<dyn Network>, hybrid: bool, name: &'static str, job_p: Option<Pid>, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    if hybrid {
        return crate::hybrid::hook(net, job_p, spmd, args);
    }
    run_section_process(Box::new(NetEngine::new(net, name)), job_p, spmd, args)
}
