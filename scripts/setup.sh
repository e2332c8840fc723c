#!/usr/bin/env bash
# Idempotent set-up of a Debian 12 machine for building and testing this
# repository: a C/C++ toolchain (build-essential), a Rust toolchain with
# cargo, and for the Spark bridge a JDK (javac), pyspark 4.3.0 (Spark, with its Scala
# 2.13 compiler) and pyspark 3.5.9 (Scala 2.12) with pytest in the virtual environment
# /opt/lpf-pyspark-3.5. Run as root (or with sudo available).
# Anything already present is left alone; nothing else is installed.
set -euo pipefail

log() { echo "setup: $*"; }

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        log "need root to run: $*" >&2
        exit 1
    fi
}

if [ -r /etc/os-release ]; then
    # shellcheck disable=SC1091
    . /etc/os-release
    if [ "${ID:-}" != debian ] || [ "${VERSION_ID:-}" != 12 ]; then
        log "warning: written for Debian 12, this is ${PRETTY_NAME:-unknown}"
    fi
fi

# --- Debian packages --------------------------------------------------------
pkg_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

apt_updated=0
apt_install() { # apt_install PKG...: installs those of PKG that are missing
    local missing=() pkg
    for pkg in "$@"; do
        pkg_installed "$pkg" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing ${missing[*]}"
    if [ "$apt_updated" = 0 ]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
        apt_updated=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# C and C++ compilers, libc headers, binutils (nm, readelf) for tests/c.
apt_install build-essential
# valgrind: memcheck runs over the C programs (tests/c/run.sh).
apt_install valgrind
# cmake: the CMake project built against the installed package (tests/c/run.sh).
apt_install cmake
# GoogleTest: the reference LPF's functional tests (tests/reference/run.sh), which the
# test command runs only when LPF_REFERENCE_DIR names a checkout of the reference.
if [ -n "${LPF_REFERENCE_DIR:-}" ]; then
    apt_install libgtest-dev
fi
# iproute2 and bc: the multi-host tests in network namespaces (tests/netns).
apt_install iproute2 bc

# Spark bridge (jvm/, tests/spark): a JDK only if javac is missing (Spark 4 needs
# Java 17; scripts/build-jar.sh compiles with it and pyspark's Scala compiler), unzip
# for the jar checks of tests/spark/run.sh.
command -v javac >/dev/null 2>&1 || apt_install openjdk-17-jdk-headless
apt_install unzip

# MPI engines (tests/mpi/run.sh, cargo --features mpi,ibverbs): Open MPI (mpirun,
# mpicc, headers), libclang for the mpi crate's bindgen, and libibverbs/librdmacm
# headers so the ibverbs engine builds (no RDMA device is needed to build or test).
apt_install openmpi-bin libopenmpi-dev libclang-dev libibverbs-dev librdmacm-dev

# --- Python: pyspark (Spark 4.3 with spark-submit and the Scala 2.13 compiler) -
pyspark_version=4.3.0
have_pyspark=$(python3 -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null || true)
if [ "$have_pyspark" != "$pyspark_version" ]; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt_install python3-pip
    fi
    log "installing pyspark==$pyspark_version (had: ${have_pyspark:-none})"
    # Debian's own python3 refuses system-wide pip installs without this flag.
    if python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages; then
        python3 -m pip install -q --break-system-packages "pyspark==$pyspark_version"
    else
        python3 -m pip install -q "pyspark==$pyspark_version"
    fi
fi

# --- networkx: tests/spark/networkx_graphs.py writes its classic graphs (karate club,
# les miserables, florentine families, davis southern women) for GraphFrameTests, with
# the python3 that tests/spark/run.sh runs it with.
# pip_pinned MODULE PACKAGE VERSION: installs PACKAGE==VERSION into python3 unless MODULE
# already reports that version.
pip_pinned() {
    if [ "$(python3 -c "import $1; print($1.__version__)" 2>/dev/null || true)" != "$3" ]; then
        log "installing $2==$3"
        if python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages; then
            python3 -m pip install -q --break-system-packages "$2==$3"
        else
            python3 -m pip install -q "$2==$3"
        fi
    fi
}
pip_pinned networkx networkx 3.6.1

# --- python-graphblas: graphblas/tests/bench_suitesparse.rs runs graphblas/bench/gb_kernels.py
# (the SuiteSparse side of graphblas/bench/kernels.sh: LAGraph's FastSV6 and delta-stepping)
# with this python3; numpy comes with it.
pip_pinned graphblas python-graphblas 2025.2.0

# --- Spark 3.5 (Scala 2.12) in a virtual environment of its own ---------------
# The bridge is built and tested for both Spark lines (scripts/build-jar.sh,
# tests/spark/run.sh): pyspark 3.5 from PyPI ships Spark with Scala 2.12 and its
# compiler (scala-compiler-2.12.*.jar), kept apart from the system's pyspark 4.3.
pyspark35_version=3.5.9
pyspark35_venv=/opt/lpf-pyspark-3.5
have_pyspark35=$("$pyspark35_venv/bin/python" -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null || true)
if [ "$have_pyspark35" != "$pyspark35_version" ]; then
    python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
    log "installing pyspark==$pyspark35_version into $pyspark35_venv (had: ${have_pyspark35:-none})"
    [ -x "$pyspark35_venv/bin/python" ] || as_root python3 -m venv "$pyspark35_venv"
    as_root "$pyspark35_venv/bin/python" -m pip install -q "pyspark==$pyspark35_version"
fi
# pytest there too: tests/spark/run.sh runs the PySpark package's kernel cases on Spark 3.5
# with this python (the suite on Spark 4 installs pytest into a virtual environment of its own).
if ! "$pyspark35_venv/bin/python" -c 'import pytest' 2>/dev/null; then
    log "installing pytest into $pyspark35_venv"
    as_root "$pyspark35_venv/bin/python" -m pip install -q pytest
fi

# --- Rust -------------------------------------------------------------------
if [ -d "$HOME/.cargo/bin" ]; then
    case ":$PATH:" in
        *":$HOME/.cargo/bin:"*) ;;
        *) export PATH="$HOME/.cargo/bin:$PATH" ;;
    esac
fi

if ! command -v rustup >/dev/null 2>&1 && ! command -v cargo >/dev/null 2>&1; then
    apt_install curl ca-certificates
    log "installing rustup with the stable toolchain"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
        sh -s -- -y --no-modify-path --profile minimal --default-toolchain stable
    export PATH="$HOME/.cargo/bin:$PATH"
fi

if command -v rustup >/dev/null 2>&1; then
    if ! rustup show active-toolchain >/dev/null 2>&1; then
        log "installing the stable Rust toolchain"
        rustup toolchain install stable --profile minimal
        rustup default stable
    fi
    installed=$(rustup component list --installed 2>/dev/null || true)
    # clippy: the test command denies unsafe blocks without a SAFETY comment with it.
    for comp in rustc cargo rust-std clippy; do
        if ! grep -q "^$comp\(-\|$\)" <<<"$installed"; then
            log "adding rustup component $comp"
            rustup component add "$comp"
        fi
    done
fi

# cargo-nextest: the test command runs the Rust tests under it (a time bound per test).
if ! cargo nextest --version >/dev/null 2>&1; then
    log "installing cargo-nextest"
    cargo install --locked cargo-nextest
fi

command -v cc >/dev/null 2>&1 || { log "no C compiler after set-up" >&2; exit 1; }
cargo nextest --version >/dev/null 2>&1 || { log "no cargo-nextest after set-up" >&2; exit 1; }
command -v cargo >/dev/null 2>&1 || { log "no cargo after set-up" >&2; exit 1; }
cargo clippy --version >/dev/null 2>&1 || { log "no cargo clippy after set-up" >&2; exit 1; }
command -v javac >/dev/null 2>&1 || { log "no javac after set-up" >&2; exit 1; }
python3 -c 'import pyspark' 2>/dev/null || { log "no pyspark after set-up" >&2; exit 1; }
"$pyspark35_venv/bin/python" -c 'import pyspark' 2>/dev/null || { log "no pyspark 3.5 in $pyspark35_venv after set-up" >&2; exit 1; }
command -v mpirun >/dev/null 2>&1 || { log "no mpirun after set-up" >&2; exit 1; }
log "ok: $(cc --version | head -n 1); $(cargo --version); $(javac -version 2>&1); pyspark $(python3 -c 'import pyspark; print(pyspark.__version__)') and $("$pyspark35_venv/bin/python" -c 'import pyspark; print(pyspark.__version__)') ($pyspark35_venv)"
