//! lpf-jni's files import only downward: each file of `src/` has a layer below, and
//! every path a file names in code leads to a file of a lower layer (the check is lpf's,
//! shared: native/lpf/tests/layering). A new file must be given its layer here.

#[path = "../../lpf/tests/layering/mod.rs"]
mod layering;

/// The files of lpf-jni's `src/` and their layers, lowest first.
const LAYERS: layering::Layers = &[
    // The byte layouts of the requests, progress reports, user libraries, verdicts,
    // graphs kept between calls.
    (1, &["layout.rs", "progress.rs", "userlib.rs", "verdict.rs", "resident.rs"]),
    (2, &["request.rs"]),
    (3, &["pagerank.rs"]),
    (4, &["graph_call.rs"]),
    (5, &["algorithms.rs"]),
    (6, &["session.rs"]),
    // The JNI entry points.
    (7, &["lib.rs"]),
    // The graph generator's entry point, which uses lib.rs's helpers.
    (8, &["generate.rs"]),
];

#[test]
fn every_file_imports_only_lower_layers() {
    layering::assert_imports_run_downward(env!("CARGO_MANIFEST_DIR"), LAYERS, &[]);
}
