#!/usr/bin/env bash
# Installs LPF in the reference LPF's layout:
#
#   scripts/install.sh --prefix DIR [--feature F]... [--mpi]
#
#   DIR/bin/             lpfrun, lpfprobe, lpfcc, lpfcxx
#   DIR/include/lpf/     the published headers (+ lpf/error.h, lpf/tcp.h of this project)
#   DIR/include/bsp/     bsp/bsp.h
#   DIR/include/debug/   the debug layer's headers, when the tree has them
#   DIR/lib/             liblpf_core.so, liblpf_core.a: every engine that needs no cargo
#                        feature (the engine registry, `lpfrun --list-engines`);
#                        with --feature F: liblpf_core_F.so and liblpf_core_F.a built
#                        with the cargo feature F, for the registry's engines that need F
#                        (mpi: mpimsg and mpirma; ibverbs: ibverbs; both need Open MPI);
#                        lpfcc -engine E and the CMake package's engine targets link an
#                        engine's library by that name. Each shared library has its
#                        file name as soname, so a program loads exactly the one it was
#                        linked with. --mpi is --feature mpi.
#   DIR/lib/cmake/lpf/   the CMake package: find_package(LPF CONFIG) (or lpf), with
#   DIR/lib/lpf/cmake/   target_link_lpf() and the imported targets (docs/compatibility.md);
#                        the second is where the reference installs it, which
#                        find_package(LPF CONFIG PATHS DIR/lib) reaches (ALP's FindLPF)
#
# The engines come from the registry alone (lpf::config::ENGINES, printed by the
# installed lpfrun --list-engines): the features --feature accepts are its feature
# column, and the CMake package gets the registry substituted, so an engine added there
# is installed, offered by lpfcc and by CMake with no edit here.
#
# Builds what it installs with cargo (release; CARGO_TARGET_DIR is honoured, the feature
# builds go to <target>/mpi-features as in tests/mpi/run.sh). Exits non-zero, naming
# the step, when anything fails.
set -euo pipefail
trap 'echo "install: failed (status $?) at ${BASH_SOURCE[0]}:$LINENO: $BASH_COMMAND" >&2' ERR

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

log() { echo "install: $*"; }
usage() {
    echo "install: $*" >&2
    echo "usage: scripts/install.sh --prefix DIR [--feature F]... [--mpi]" >&2
    exit 2
}

prefix=
features=()
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) [ $# -ge 2 ] || usage "--prefix needs a directory"; prefix=$2; shift ;;
        --prefix=*) prefix=${1#--prefix=} ;;
        --feature) [ $# -ge 2 ] || usage "--feature needs a cargo feature"; features+=("$2"); shift ;;
        --feature=*) features+=("${1#--feature=}") ;;
        --mpi) features+=(mpi) ;;
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
# One cargo call per package: a target filter such as --bin applies to every package
# of a call, so "-p lpf-capi -p lpf --bin lpfrun -p lpfprobe" built lpfrun alone.
CARGO_TARGET_DIR=$target cargo build --release -p lpf-capi
CARGO_TARGET_DIR=$target cargo build --release -p lpf --bin lpfrun
CARGO_TARGET_DIR=$target cargo build --release -p lpfprobe
rel=$target/release

# The registry, one engine a line: name, cargo feature (-: none), launcher, aliases.
registry=$("$rel/lpfrun" --list-engines) || {
    echo "install: '$rel/lpfrun --list-engines' failed: cannot read the engine registry" >&2
    exit 1
}
known_features=$(awk '$2 != "-" { print $2 }' <<<"$registry" | sort -u | tr '\n' ' ')
installed=()
for f in "${features[@]}"; do
    [[ " $known_features" == *" $f "* ]] ||
        usage "--feature $f: no engine of the registry needs it (features: ${known_features% })"
    [[ " ${installed[*]} " == *" $f "* ]] && continue
    log "building liblpf_core with the cargo feature $f"
    # The soname is the installed file's name (native/lpf-capi/build.rs).
    LPF_SONAME=liblpf_core_$f.so CARGO_TARGET_DIR=$target/mpi-features cargo build --release -p lpf-capi --features "$f"
    mkdir -p "$prefix/lib"
    install -m 0755 "$target/mpi-features/release/liblpf_core.so" "$prefix/lib/liblpf_core_$f.so"
    install -m 0644 "$target/mpi-features/release/liblpf_core.a" "$prefix/lib/liblpf_core_$f.a"
    installed+=("$f")
done

inc=$root/native/lpf-capi/include
mkdir -p "$prefix/bin" "$prefix/include"
install -m 0755 "$rel/lpfrun" "$rel/lpfprobe" "$root/native/lpf-capi/bin/lpfcc" "$prefix/bin/"
install -m 0755 "$root/native/lpf-capi/bin/lpfcc" "$prefix/bin/lpfcxx"
for dir in lpf bsp debug; do
    if [ -d "$inc/$dir" ]; then
        rm -rf "${prefix:?}/include/$dir"
        # -p: an unchanged header keeps its time, so a reinstall rebuilds no client.
        cp -R -p "$inc/$dir" "$prefix/include/$dir"
    fi
done
install -m 0755 "$rel/liblpf_core.so" "$prefix/lib/"
install -m 0644 "$rel/liblpf_core.a" "$prefix/lib/"

# The registry as a CMake list, an entry per engine with its fields joined by ':'.
cmake_registry=$(awk '{ $1 = $1; gsub(/ /, ":"); printf "%s\"%s\"", sep, $0; sep = " " }' <<<"$registry")
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
for cmake_dir in lib/cmake/lpf lib/lpf/cmake; do
    mkdir -p "$prefix/$cmake_dir"
    sed -e "s/@LPF_REGISTRY@/$cmake_registry/" "$root/native/lpf-capi/cmake/lpf-config.cmake.in" \
        >"$prefix/$cmake_dir/lpf-config.cmake"
    sed -e "s/@LPF_VERSION@/$version/" "$root/native/lpf-capi/cmake/lpf-config-version.cmake.in" \
        >"$prefix/$cmake_dir/lpf-config-version.cmake"
done
engines=
while read -r name feature _; do
    if [ "$feature" = - ] || [ -e "$prefix/lib/liblpf_core_$feature.so" ]; then
        engines+="${engines:+ }$name"
    fi
done <<<"$registry"
log "installed LPF $version in $prefix (engines: $engines)"
