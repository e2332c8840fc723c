#!/usr/bin/env bash
# The BSP cost model checked (docs/design.md, "Cost model"): for shm and tcp at p = 2,
# lpfprobe measures g and l and stores them (in a temporary LPF_PROBE_DIR), then the
# cost_model example times supersteps of 5 traffic patterns x 4 volumes x 3 word sizes
# and prints each beside the h·g + l that probe predicts. Writes cost_model.csv beside
# this script and a summary of measured / predicted per engine.
# Run on a quiet machine: it measures time. Took 2.3 and 4.6 minutes on a loaded 2-core VM.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
cargo build --release -q -p lpf --bin lpfrun -p lpfprobe --bins --example cost_model
bin=$root/target/release
probes=$(mktemp -d)
trap 'rm -rf "$probes"' EXIT
export LPF_PROBE_DIR=$probes
out=$here/cost_model.csv

"$bin/lpfprobe" -p 2 --save --samples 10 >"$probes/shm.log"
"$bin/examples/cost_model" 2 >"$out"

"$bin/lpfrun" -n 2 --engine tcp -- "$bin/lpfprobe" --engine env -p 2 --save --samples 10 >"$probes/tcp.log"
"$bin/lpfrun" -n 2 --engine tcp -- "$bin/examples/cost_model" 2 | tail -n +2 >>"$out"

# Summary: ratio quantiles per engine, over the points whose prediction is above 50 us
# (below that, timer and scheduling noise dominate), and over all points.
python3 - "$out" <<'PY'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
for engine in sorted({r["engine"] for r in rows}):
    for label, keep in (("all points", lambda r: True), ("predicted >= 50 us", lambda r: float(r["predicted_s"]) >= 5e-5)):
        rs = sorted(float(r["ratio"]) for r in rows if r["engine"] == engine and keep(r))
        if rs:
            q = statistics.quantiles(rs, n=10) if len(rs) >= 2 else [rs[0]] * 9
            print(f"{engine} ({label}, {len(rs)} points): measured / (h g + l) median {statistics.median(rs):.2f}, "
                  f"10%-90% {q[0]:.2f}-{q[-1]:.2f}, max {rs[-1]:.2f}")
PY
