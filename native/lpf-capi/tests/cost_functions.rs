//! `lpf_probe`'s g and l are plain C function pointers, one pair per engine of the
//! registry: each must read its own engine's cost table. Its own test binary because it
//! sets the environment (LPF_PROBE_DIR before any table is loaded, LPF_ENGINE per case).

use lpf_core::{lpf_machine_t, lpf_probe, ConstPtr, LPF_ROOT};
use std::ffi::c_void;

/// `LPF_ROOT` as C sees it.
fn root() -> *mut c_void {
    // SAFETY: ConstPtr is a repr(transparent) pointer.
    unsafe { *(&LPF_ROOT as *const ConstPtr as *const *mut c_void) }
}

#[test]
fn each_engine_gets_the_g_and_l_of_its_own_cost_table() {
    let dir = std::env::temp_dir().join(format!("lpf-capi-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Engines a root probe reaches without a launcher (the TCP ones read the job's size
    // from the environment, connecting nowhere); a distinct g and l in each table.
    let engines = ["shm", "tcp", "hybrid"];
    for (i, e) in engines.iter().enumerate() {
        std::fs::write(dir.join(format!("{e}.txt")), format!("2 8 {}e-9 {}e-6\n", i + 1, i + 1)).unwrap();
    }
    std::env::set_var("LPF_PROBE_DIR", &dir);
    std::env::set_var("LPF_NPROCS", "1");
    for (i, e) in engines.iter().enumerate() {
        std::env::set_var("LPF_ENGINE", e);
        let mut m = lpf_machine_t { p: 0, free_p: 0, g: None, l: None };
        // SAFETY: LPF_ROOT is a context lpf_probe accepts outside any section, and `m`
        // is a live lpf_machine_t it writes.
        assert_eq!(unsafe { lpf_probe(root(), &mut m) }, 0, "{e}");
        let (g, l) = (m.g.unwrap()(2, 8, 0), m.l.unwrap()(2, 8, 0));
        let expected: (f64, f64) = (format!("{}e-9", i + 1).parse().unwrap(), format!("{}e-6", i + 1).parse().unwrap());
        assert_eq!((g, l), expected, "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
