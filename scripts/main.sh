#!/usr/bin/env bash
# The main job: set-up, release build, then LPF at work on this machine: the probe of
# the shared-memory engine (g and l, as in the LPF paper's Table 3) and example
# programs in Rust and in C (the C one through the C ABI, unchanged LPF code).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/setup.sh
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

echo "=== build (release)"
cargo build --release --workspace --bins --examples

echo "=== Rust example: sync latency on the shared-memory engine"
for p in 1 2; do ./target/release/examples/sync_latency "$p"; done

if [ -x target/release/lpfprobe ]; then
    echo "=== lpfprobe (shared-memory engine, p = 2, quick)"
    ./target/release/lpfprobe --engine shm -p 2 --quick
fi

echo "=== C example: hello world through liblpf_core"
inc=native/lpf-capi/include
mkdir -p target/c-examples
cc -std=c99 -O2 -I"$inc" -Itests/c tests/c/hello.c -o target/c-examples/hello \
    -Ltarget/release -llpf_core -Wl,-rpath,"$root/target/release" -lpthread
LPF_MAX_PROCS=2 ./target/c-examples/hello
