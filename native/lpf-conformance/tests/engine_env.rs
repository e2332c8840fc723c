//! `LPF_ENGINE` selects the engine of a root `exec`; its own test binary because it
//! changes the process environment.

use lpf::{Args, Context, Root};

#[test]
fn unknown_engine_is_a_fatal_error_naming_it() {
    std::env::set_var("LPF_ENGINE", "no-such-engine");
    let r = Root::new().exec(1, &|_: &mut Context, _| {}, Args::none());
    let e = r.unwrap_err();
    assert!(e.is_fatal() && e.message().contains("no-such-engine"), "{e}");
    std::env::set_var("LPF_ENGINE", "shm");
    Root::new().exec(1, &|_: &mut Context, _| {}, Args::none()).unwrap();
    std::env::set_var("LPF_MAX_PROCS", "zero");
    assert!(Root::new().exec(1, &|_: &mut Context, _| {}, Args::none()).unwrap_err().message().contains("LPF_MAX_PROCS"));
    std::env::set_var("LPF_MAX_PROCS", "3");
    assert_eq!(Root::new().probe().unwrap().p, 3);
}
