//! graphblas's files import only downward: each room of `src/` (a file, or a folder
//! with all its files) has a layer below, and every path a file names in code leads to
//! a room of a lower layer (the check is lpf's, shared: native/lpf/tests/layering). A
//! new file or folder must be given its layer here.

#[path = "../../native/lpf/tests/layering/mod.rs"]
mod layering;

/// The rooms of graphblas's `src/` and their layers, lowest first; the binary aside (it
/// uses only the public API).
const LAYERS: layering::Layers = &[
    // Scalars and semirings, errors, the environment settings, the random numbers.
    (1, &["algebra.rs", "error.rs", "settings.rs", "prng.rs"]),
    // Threads within a process; the containers.
    (2, &["parallel.rs", "vector.rs"]),
    (3, &["matrix.rs"]),
    // The GraphBLAS operations, the inputs, the generators, the bandwidth floor.
    (4, &["ops/", "io/", "kron.rs", "bandwidth.rs"]),
    // The kernels of one process, and the plain ones they are checked against.
    (5, &["algorithms/", "reference.rs"]),
    // The kernels distributed over lpf.
    (6, &["dist/"]),
    (7, &["cli.rs"]),
    (8, &["lib.rs"]),
];

#[test]
fn every_file_imports_only_lower_layers() {
    layering::assert_imports_run_downward(env!("CARGO_MANIFEST_DIR"), LAYERS, &["bin"]);
}
