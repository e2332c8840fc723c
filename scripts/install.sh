#!/usr/bin/env bash
# Installs LPF in the reference LPF's layout:
#
#   scripts/install.sh --prefix DIR [--mpi]
#
#   DIR/bin/             lpfrun, lpfprobe, lpfcc, lpfcxx
#   DIR/include/lpf/     the published headers (+ lpf/error.h, lpf/tcp.h of this project)
#   DIR/include/bsp/     bsp/bsp.h
#   DIR/include/debug/   the debug layer's headers, when the tree has them
#   DIR/lib/             liblpf_core.so, liblpf_core.a (every engine but the MPI ones)
#   DIR/lib/mpi/         with --mpi: liblpf_core.so and .a built with the cargo feature
#                        mpi (engines mpimsg, mpirma; needs Open MPI), for lpfcc -engine
#                        mpimsg|mpirma and the CMake package's MPI targets
#   DIR/lib/cmake/lpf/   the CMake package: find_package(LPF CONFIG) (or lpf), with
#                        target_link_lpf() and the imported targets (docs/compatibility.md)
#
# Builds what it installs with cargo (release; CARGO_TARGET_DIR is honoured, the MPI
# build goes to <target>/mpi-features as in tests/mpi/run.sh). Exits non-zero, naming
# the step, when anything fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

log() { echo "install: $*"; }
usage() {
    echo "install: $*" >&2
    echo "usage: scripts/install.sh --prefix DIR [--mpi]" >&2
    exit 2
}

prefix=
mpi=0
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) [ $# -ge 2 ] || usage "--prefix needs a directory"; prefix=$2; shift ;;
        --prefix=*) prefix=${1#--prefix=} ;;
        --mpi) mpi=1 ;;
        -h | --help) usage "help" ;;
        *) usage "unknown option $1" ;;
    esac
    shift
done
[ -n "$prefix" ] || usage "--prefix DIR is required"
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

target=${CARGO_TARGET_DIR:-$root/target}
case $target in /*) ;; *) target=$root/$target ;; esac

log "building liblpf_core, lpfrun and lpfprobe (release)"
CARGO_TARGET_DIR=$target cargo build --release -p lpf-capi -p lpf --bin lpfrun -p lpfprobe
if [ "$mpi" = 1 ]; then
    log "building the MPI-enabled liblpf_core (cargo feature mpi)"
    CARGO_TARGET_DIR=$target/mpi-features cargo build --release -p lpf-capi --features mpi
fi

rel=$target/release
inc=$root/native/lpf-capi/include
mkdir -p "$prefix/bin" "$prefix/include" "$prefix/lib/cmake/lpf"
install -m 0755 "$rel/lpfrun" "$rel/lpfprobe" "$root/native/lpf-capi/bin/lpfcc" "$prefix/bin/"
install -m 0755 "$root/native/lpf-capi/bin/lpfcc" "$prefix/bin/lpfcxx"
for dir in lpf bsp debug; do
    if [ -d "$inc/$dir" ]; then
        rm -rf "${prefix:?}/include/$dir"
        cp -R "$inc/$dir" "$prefix/include/$dir"
    fi
done
install -m 0755 "$rel/liblpf_core.so" "$prefix/lib/"
install -m 0644 "$rel/liblpf_core.a" "$prefix/lib/"
engines="pthread tcp hybrid"
if [ "$mpi" = 1 ]; then
    mkdir -p "$prefix/lib/mpi"
    install -m 0755 "$target/mpi-features/release/liblpf_core.so" "$prefix/lib/mpi/"
    install -m 0644 "$target/mpi-features/release/liblpf_core.a" "$prefix/lib/mpi/"
    engines="$engines mpimsg mpirma"
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
sed -e "s/@LPF_ENGINES@/$engines/" "$root/native/lpf-capi/cmake/lpf-config.cmake.in" \
    >"$prefix/lib/cmake/lpf/lpf-config.cmake"
sed -e "s/@LPF_VERSION@/$version/" "$root/native/lpf-capi/cmake/lpf-config-version.cmake.in" \
    >"$prefix/lib/cmake/lpf/lpf-config-version.cmake"
log "installed LPF $version in $prefix (engines: $engines)"
