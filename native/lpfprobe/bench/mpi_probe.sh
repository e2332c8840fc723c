#!/usr/bin/env bash
# The MPI engines against Open MPI itself: lpfprobe (--engine env, --total-mib 32,
# --samples 8) under `mpirun --oversubscribe` for mpimsg and mpirma at p = 2 and 4,
# RUNS runs each (default 3), interleaved (engine and p change every run, so a slow
# spell of the machine does not fall on one row). The probe times Open MPI's
# MPI_Alltoall between its own samples and prints the ratios to it (docs/mpi.md,
# "Measured"). Writes mpi_probe.csv beside this script:
#   engine,p,run,l_s,l_mpi_s,l_ratio,g_s_per_byte,g_mpi_s_per_byte,g_ratio,g_mpi_stream_s_per_byte,g_stream_ratio
# l: empty-superstep latency of 8-byte words; l_mpi: 1-byte alltoall; g: 1 MiB words;
# g_mpi: in-cache 1 MiB alltoall; g_mpi_stream: alltoall of the probe's n_max volume.
# Builds lpfprobe with the feature mpi into $LPF_MPI_TARGET_DIR (default
# <repo>/target/mpi-features, as tests/mpi/run.sh). Run on a quiet machine: it measures time.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
export CARGO_TARGET_DIR=${LPF_MPI_TARGET_DIR:-$root/target/mpi-features}
cargo build --release -q -j2 -p lpfprobe --features mpi
probe=$CARGO_TARGET_DIR/release/lpfprobe
mpirun_opts=(--oversubscribe)
[ "$(id -u)" = 0 ] && mpirun_opts+=(--allow-run-as-root)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
out=$here/mpi_probe.csv

echo "engine,p,run,l_s,l_mpi_s,l_ratio,g_s_per_byte,g_mpi_s_per_byte,g_ratio,g_mpi_stream_s_per_byte,g_stream_ratio" >"$out"
for run in $(seq 1 "${RUNS:-3}"); do
    for p in 2 4; do
        for engine in mpimsg mpirma; do
            log=$logs/$engine-p$p-run$run.txt
            LPF_ENGINE=$engine mpirun "${mpirun_opts[@]}" -n "$p" -x LPF_ENGINE \
                "$probe" --engine env --total-mib 32 --samples 8 >"$log" 2>&1
            python3 - "$log" "$engine" "$p" "$run" >>"$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def num(pattern):
    m = re.search(pattern, text, re.M)
    if not m:
        sys.exit(f"{sys.argv[1]}: no match for {pattern!r}")
    return float(m.group(1))
f = r"([0-9.]+(?:e[-+]?[0-9]+)?)"
l = num(r"^\s+8 \|.*\|\s+" + f + r" ± \S+\s*$")                 # l [s], last column of the 8 B row
g = num(r"^\s+1048576 \|(?:[^|]*\|){3}\s+" + f + r" ±")          # g [s/byte] of the 1 MiB row
l_mpi = num(r"reference: l_mpi = " + f + " us") * 1e-6
g_mpi = num(r"g_mpi = " + f + " s/byte")
g_stream = num(r"g_mpi_stream = " + f + " s/byte")
# The ratios as the probe computed them (from unrounded times).
l_ratio = num(r"^l \(8 B words\) / l_mpi = " + f)
g_ratio = num(r"^g \(1 MiB words\) / g_mpi = " + f)
g_stream_ratio = num(r"/ g_mpi_stream = " + f)
print(f"{sys.argv[2]},{sys.argv[3]},{sys.argv[4]},{l:.3e},{l_mpi:.3e},{l_ratio:.2f},{g:.3e},{g_mpi:.3e},{g_ratio:.2f},"
      f"{g_stream:.3e},{g_stream_ratio:.2f}")
PY
        done
    done
done
column -s, -t "$out"
