//! lpf's files import only downward: each room of `src/` has a layer in [`LAYERS`]
//! (docs/design.md, "Layers", draws them), and every path a file names in code leads to
//! a room of a lower layer (the check: `layering/mod.rs`). A new file or folder must be
//! given its layer here; an import that runs up fails with the file, the line and the
//! two layers.

mod layering;

/// Every room of `src/` (a file, or a folder with all its files) with its layer,
/// lowest first; the binaries aside (they use only the public API). Rooms of one layer
/// do not name each other. Inside a folder, `mod.rs` and its files may name each other:
/// a folder is one room, as `farm-studio look` draws it.
const LAYERS: layering::Layers = &[
    // The value types, locking, the error type.
    (1, &["types.rs", "lock.rs"]),
    (2, &["error.rs"]),
    // What a process waits with, the wire's byte formats, the memory register.
    (3, &["wait.rs", "wire.rs", "register.rs"]),
    (4, &["queue.rs"]),
    // The interface every engine implements.
    (5, &["engine.rs"]),
    // The sync of every network engine, transport-independent.
    (6, &["phases/"]),
    // The settings (every LPF_* variable) and the registry of engine names.
    (7, &["config.rs"]),
    // The debug layer's checks and the cost tables of `probe`.
    (8, &["checks.rs", "machine.rs"]),
    // The twelve primitives over any engine.
    (9, &["context.rs"]),
    // The collectives over the primitives; the shared-memory engine.
    (10, &["collectives/", "shm/"]),
    // One LPF process per OS process over a network.
    (11, &["network.rs"]),
    // Threads sharing memory over a network.
    (12, &["hybrid/"]),
    // The choice between the last two for an init's sections.
    (13, &["hook.rs"]),
    // The networks, their inits and transports.
    (14, &["tcp/", "mpi/"]),
    // The root: chooses the engine a root `exec` runs on.
    (15, &["lib.rs"]),
];

#[test]
fn every_file_imports_only_lower_layers() {
    layering::assert_imports_run_downward(env!("CARGO_MANIFEST_DIR"), LAYERS, &["bin"]);
}
