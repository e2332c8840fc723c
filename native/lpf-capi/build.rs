//! Gives the shared library the soname it is installed under (scripts/install.sh):
//! `liblpf_core.so` without a cargo feature, `liblpf_core_F.so` for the build with the
//! cargo feature F (the most specific one: ibverbs implies mpi). Distinct sonames let a
//! program link the library of one engine family only, by name, with no clash with the
//! default one in the same directory (issue 28: `target_link_lpf(... HL ENGINE mpimsg)`
//! once linked two files both called liblpf_core.so, and either could load).
//! In the cargo target directory the file keeps cargo's name, liblpf_core.so.
//!
//! Also compiles src/spmd_boundary.cpp, the C++ calls of SPMD functions (lib.rs,
//! CSpmd::call), into a static library linked into this one, with every symbol it
//! references made weak: C programs link liblpf_core without a C++ library.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    spmd_boundary();
    let feature = ["ibverbs", "mpi"]
        .into_iter()
        .find(|f| std::env::var_os(format!("CARGO_FEATURE_{}", f.to_uppercase())).is_some());
    let soname = match feature {
        Some(f) => format!("liblpf_core_{f}.so"),
        None => "liblpf_core.so".to_string(),
    };
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
