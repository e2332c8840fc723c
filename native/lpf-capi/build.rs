//! Gives the shared library its soname: `$LPF_SONAME` when set (scripts/install.sh sets
//! `liblpf_core_F.so` for the build with the cargo feature F, the name it installs it
//! under), else cargo's file name, `liblpf_core.so` (so a program linked against the
//! library in the cargo target directory, as tests/mpi/run.sh links the feature build,
//! finds it there). Distinct sonames let a program link the library of one engine
//! family only, by name, with no clash with the default one in the same directory
//! (issue 28: `target_link_lpf(... HL ENGINE mpimsg)` once linked two files both called
//! liblpf_core.so, and either could load).
//!
//! Also compiles src/spmd_boundary.cpp, the C++ calls of SPMD functions (lib.rs,
//! CSpmd::call), into a static library linked into this one, with every symbol it
//! references made weak: C programs link liblpf_core without a C++ library.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    spmd_boundary();
    println!("cargo:rerun-if-env-changed=LPF_SONAME");
    let soname = std::env::var("LPF_SONAME").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "liblpf_core.so".into());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
}

/// src/spmd_boundary.cpp as the static library lpf_spmd_boundary, its references weak.
fn spmd_boundary() {
    println!("cargo:rerun-if-changed=src/spmd_boundary.cpp");
    println!("cargo:rerun-if-changed=include/lpf/core.h");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let objects = cc::Build::new()
        .cpp(true)
        // No C++ library is linked: the program's provides what the calls need.
        .cpp_link_stdlib(None)
        .include("include")
        .file("src/spmd_boundary.cpp")
        .compile_intermediates();
    let run = |cmd: &mut Command| {
        let status = cmd.status().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        assert!(status.success(), "{cmd:?} failed: {status}");
    };
    for o in &objects {
        run(Command::new("objcopy").arg("--weaken").arg(o));
    }
    let archive = out.join("liblpf_spmd_boundary.a");
    let _ = std::fs::remove_file(&archive);
    run(Command::new("ar").arg("crs").arg(&archive).args(&objects));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=lpf_spmd_boundary");
}
