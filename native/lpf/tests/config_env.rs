//! The configuration read from the environment by a root `exec`: its own test binary
//! because it changes the process environment (one test, so nothing runs beside it).

use lpf::{Args, Context, EngineKind, Root};

fn exec_error() -> String {
    match Root::with_max_procs(2).exec(2, &|_: &mut Context, _| {}, Args::none()) {
        Ok(()) => String::new(),
        Err(e) => e.message().to_string(),
    }
}

#[test]
fn an_invalid_value_fails_the_root_exec_naming_the_variable_whatever_the_engine() {
    std::env::set_var("LPF_ENGINE", "no-such-engine");
    let e = exec_error();
    assert!(e.contains("LPF_ENGINE") && e.contains("no-such-engine"), "{e}");
    for kind in EngineKind::ALL {
        assert!(e.contains(kind.name()), "{e} does not list {kind}");
    }
    std::env::set_var("LPF_ENGINE", "pthread");
    assert_eq!(exec_error(), "");
    // Variables of other engines are checked too, each as strictly (a bad LPF_MPI_META
    // used to fall back silently, a bad spin too); a retired variable is refused.
    for (var, bad, allowed) in [
        ("LPF_MPI_META", "ring", "direct or bruck"),
        ("LPF_SPIN_US", "fast", "non-negative"),
        ("LPF_TCP_META", "ring", "direct or bruck"),
        ("LPF_TCP_SPIN_US", "0", "LPF_SPIN_US"),
    ] {
        std::env::set_var(var, bad);
        let e = exec_error();
        assert!(e.contains(var) && e.contains(bad) && e.contains(allowed), "{var}={bad}: {e:?}");
        std::env::remove_var(var);
    }
    assert_eq!(exec_error(), "");
}
