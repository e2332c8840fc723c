#!/usr/bin/env bash
# BFS and WCC of `graph` (LPF, shm engine) beside SuiteSparse:GraphBLAS
# (python-graphblas, LAGraph's loops: gb_kernels.py) on Graph500 Kronecker graphs,
# 2 threads, in one run; every SuiteSparse result is checked equal to ours.
#
#   bash graphblas-pagerank/bench/kernels.sh                # kron18, 3 runs
#   SCALES="18 20" RUNS=5 bash graphblas-pagerank/bench/kernels.sh
#
# Writes bench/kernels.csv: graph,kernel,impl,config,run,load_s,compute_s,total_s,rounds.
# load = read the file and build what the kernel walks (ours: route, dedup, in- and
# out-blocks; SuiteSparse: A plus A' for BFS or A + A' for WCC); compute = the kernel;
# total = the whole run as the program measures it (ours: from start to summary).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
export OMP_WAIT_POLICY=PASSIVE
SCALES="${SCALES:-18}"
RUNS="${RUNS:-3}"
DATA="${BENCH_DATA:-/tmp/gbpr-bench}"
mkdir -p "$DATA"
(cd "$root" && cargo build --release -p graphblas-pagerank --bins >/dev/null)
PR="$CARGO_TARGET_DIR/release/pagerank"
GRAPH="$CARGO_TARGET_DIR/release/graph"
python3 -c "import graphblas" 2>/dev/null || python3 -m pip install --quiet python-graphblas
csv="$here/kernels.csv"
echo "graph,kernel,impl,config,run,load_s,compute_s,total_s,rounds" > "$csv"
field() { grep -o "$1=[^ ]*" | head -1 | cut -d= -f2; }

for s in $SCALES; do
  g="$DATA/kron$s.bin"
  [ -f "$g" ] || "$PR" --rmat "$s" --convert-to "$g" -p 2 --quiet
  # BFS source: the source of the file's first edge (a vertex with an out-edge).
  src=$(python3 -c "import numpy as np; print(int(np.fromfile('$g', dtype=np.uint32, offset=40, count=1)[0]))")
  for r in $(seq "$RUNS"); do
    for k in bfs wcc; do
      args=("$k" --input "$g")
      [ "$k" = bfs ] && args+=(--source "$src")
      for cfg in "1 2" "2 1"; do
        set -- $cfg
        out=$("$GRAPH" "${args[@]}" -p "$1" --threads "$2" --output "$DATA/$k$s.txt" | grep ^summary)
        echo "kron$s,$k,lpf,p${1}x$2,$r,$(echo "$out" | field load_s),$(echo "$out" | field compute_s),$(echo "$out" | field total_s),$(echo "$out" | field rounds)" >> "$csv"
      done
      gbl=$(python3 "$here/gb_kernels.py" "$g" "$k" --source "$src" --threads 2 --check "$DATA/$k$s.txt")
      echo "$gbl" | grep -q "equal=1" || { echo "SuiteSparse and LPF differ: $gbl" >&2; exit 1; }
      echo "kron$s,$k,suitesparse,2 threads,$r,$(echo "$gbl" | field load_s),$(echo "$gbl" | field compute_s),$(echo "$gbl" | field total_s),$(echo "$gbl" | field rounds)" >> "$csv"
    done
  done
done
column -s, -t < "$csv"
