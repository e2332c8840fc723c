#!/usr/bin/env bash
# The graph kernels of `graph` and `pagerank` (LPF, shm engine) beside
# SuiteSparse:GraphBLAS (python-graphblas, the loops LAGraph writes: gb_pagerank.py,
# gb_kernels.py) and the GAP Benchmark Suite (github.com/sbeamer/gapbs, built here from
# its source) on Graph500 Kronecker graphs, 2 threads each, in one run, with the PageRank
# memory-bandwidth floor measured in the same run. Every SuiteSparse and GAP result is
# checked against ours where the semantics agree (gap_compare.py), the script stops
# otherwise. A benchmark, not a test: scripts/test.sh does not run it.
#
#   bash graphblas/bench/kernels.sh                    # kron18 and kron20, 1 round
#   SCALES=18 RUNS=3 bash graphblas/bench/kernels.sh
#   GAPBS_DIR=/work/gapbs KERNELS="bfs wcc" SCALES=10 bash graphblas/bench/kernels.sh
#
# GAP: GAPBS_DIR names a checkout of github.com/sbeamer/gapbs; unset, the script clones
# it into $BENCH_DATA/gapbs (once; needs the network). Either way it runs GAP's own
# Makefile there (`make`: bfs cc sssp tc pr_spmv converter ...) and compiles our
# gap_results.cc against GAPBS_DIR/src (GAP's kernel functions, to write their results).
# GAP reads the same edges as ours, converted by its converter: kron$s.sg (directed) from
# kron$s.el, kron$s.wsg from kron$s.wel (the weighted list our SSSP reads), kron${s}U.sg
# (symmetrized, -s) for tc. GAP's settings for kron graphs (its benchmark/bench.mk):
# OMP_NUM_THREADS=2; bfs and sssp from our source (-r); sssp -d 2; pr_spmv -i 20 -t 0 (20
# iterations, reported per iteration); cc (Afforest, its default); tc on the U.sg. One
# trial per GAP process (-n 1), so each round's figure is one measurement, as ours;
# load = GAP's "Read Time" of the .sg, compute = its "Trial Time".
#
# Kernels (KERNELS="lcc bfs" picks some): PR (tolerance 1e-7, the CLI's default), PR20
# (20 iterations, Graphalytics' fixed-iteration mode; GAP's pr_spmv), BFS, WCC, SSSP,
# CDLP (10 iterations), LCC, TC (triangle counting: ours `graph triangles`, GAP's tc; our
# LCC's summary gives one compute_s for counting and coefficients together, so
# `graph triangles` is our counting figure). Ours as 1 process x 2 threads (p1x2) and 2 x
# 1 (p2x1; and p2x1 over the tcp engine, "p2x1 tcp", for the distribution's cost, not
# counted as "ours" in the ratios), SuiteSparse with 2 threads (no TC: its LCC is the triangle count), GAP where
# it has the kernel (PR20, BFS, WCC, SSSP, TC). Rounds are interleaved: each round runs
# every contender of a kernel one after another (ours p1x2, ours p2x1, SuiteSparse, GAP),
# then the next kernel; RUNS rounds. Results are checked in the first round.
# Inputs: the binary file of `pagerank --rmat S --convert-to` (SuiteSparse's input), and
# for ours that graph converted once by `graph convert` into kron$s.gcsr (kron${s}w.gcsr,
# --weighted, from the .wel for SSSP), as GAP reads its converted .sg; kron$s.el / kron$s.wel
# are the same edges as text ("u v", "u v w" with w in 1..63 from numpy, seed 1; our SSSP
# and SuiteSparse's read the .wel: neither side reads weights from the binary format).
# BFS and SSSP start at the source of the file's first edge.
#
# Writes bench/kernels.csv (graph,kernel,impl,config,run,load_s,compute_s,total_s,rounds,
# per_round_s,load_avg) and bench/kernels.png (median compute and total per kernel), and
# prints a summary: per kernel and graph, min and median over rounds of every contender,
# GAP / ours and SuiteSparse / ours on compute (ours = the better of p1x2 and p2x1; >= 1
# means we are at least as fast), PageRank s/iter against the floor, and the load of our
# converted .gcsr file against GAP's .sg read. load = read the file and build what the
# kernel walks; compute = the kernel; total = the program's own measure of its whole run
# (GAP: read + trial). load_avg = the first field of /proc/loadavg when the row is
# written. The floor row: impl=floor, per_round_s = (12 bytes per edge + 32 per vertex)
# / read bandwidth (2 threads).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
export OMP_WAIT_POLICY=PASSIVE
SCALES="${SCALES:-18 20}"
RUNS="${RUNS:-1}"
KERNELS="${KERNELS:-pr pr20 bfs wcc sssp cdlp lcc tc}"
DATA="${BENCH_DATA:-/tmp/gbpr-bench}"
GAP_SSSP_DELTA=2  # GAP's benchmark/bench.mk for kron
mkdir -p "$DATA"
(cd "$root" && cargo build --release -p graphblas -p graphblas-pagerank --bins >/dev/null &&
  cargo build --release -p lpf --bin lpfrun >/dev/null)
LPFRUN="$CARGO_TARGET_DIR/release/lpfrun"
PR="$CARGO_TARGET_DIR/release/pagerank"
GRAPH="$CARGO_TARGET_DIR/release/graph"
python3 -c "import graphblas" 2>/dev/null || python3 -m pip install --quiet python-graphblas
python3 -c "import matplotlib" 2>/dev/null || python3 -m pip install --quiet matplotlib

if [ -z "${GAPBS_DIR:-}" ]; then
  GAPBS_DIR="$DATA/gapbs"
  if [ ! -f "$GAPBS_DIR/Makefile" ]; then
    git clone --quiet https://github.com/sbeamer/gapbs "$GAPBS_DIR" || {
      echo "GAP: cloning github.com/sbeamer/gapbs failed; set GAPBS_DIR to a checkout" >&2; exit 1; }
  fi
fi
make -C "$GAPBS_DIR" -j 2 >/dev/null
GAP_RESULTS="$DATA/gap_results"
g++ -std=c++11 -O3 -Wall -fopenmp -I"$GAPBS_DIR/src" "$here/gap_results.cc" -o "$GAP_RESULTS"

csv="$here/kernels.csv"
echo "graph,kernel,impl,config,run,load_s,compute_s,total_s,rounds,per_round_s,load_avg" > "$csv"
field() { grep -o "$1=[^ ]*" | head -1 | cut -d= -f2; }
gap_time() { grep "^$1:" | head -1 | awk '{print $NF}'; }
row() { echo "$1,$2,$3,$4,$5,$6,$7,$8,$9,${10},$(cut -d' ' -f1 /proc/loadavg)" >> "$csv"; }
per() { python3 -c "print(f'{$1 / max($2, 1):.5f}')"; }
same() { echo "$2" | grep -q "equal=1" || { echo "results differ ($1): $2" >&2; exit 1; }; }

# ours KERNEL P T [tcp]: one run of ours, its row (config pPxT), prints its summary line;
# with tcp, P OS processes started by lpfrun over the tcp engine (config "pPxT tcp").
ours() {
  local k=$1 p=$2 t=$3 out it per_it rounds comp args cfg launch=()
  cfg="p${p}x$t"
  if [ "${4:-}" = tcp ]; then cfg+=" tcp"; launch=("$LPFRUN" -n "$p" --engine tcp); fi
  if [ "$k" = pr ]; then
    out=$("${launch[@]}" "$PR" --input "$gc" -p "$p" --threads "$t" --quiet | grep ^summary)
    it=$(echo "$out" | field iterations); per_it=$(echo "$out" | field s_per_iter)
    row "kron$s" pr lpf "$cfg" "$r" "$(echo "$out" | field load_s)" "$(python3 -c "print(f'{$it * $per_it:.4f}')")" \
      "$(echo "$out" | field total_s)" "$it" "$per_it"
  else
    args=("$k" --input "$gc" --output "$DATA/$k$s.txt")
    case $k in
      bfs) args+=(--source "$src") ;;
      sssp) args=(sssp --input "$wgc" --source "$src" --output "$DATA/$k$s.txt") ;;
      pr20) args=(pr --iterations 20 --input "$gc" --output "$DATA/$k$s.txt") ;;
      tc) args=(triangles --input "$gc" --output "$DATA/$k$s.txt") ;;
    esac
    out=$("${launch[@]}" "$GRAPH" "${args[@]}" -p "$p" --threads "$t" | grep ^summary)
    rounds=$(echo "$out" | field rounds); comp=$(echo "$out" | field compute_s)
    row "kron$s" "$k" lpf "$cfg" "$r" "$(echo "$out" | field load_s)" "$comp" "$(echo "$out" | field total_s)" \
      "$rounds" "$(per "$comp" "$rounds")"
  fi
  echo "kron$s $k $cfg round $r: $out"
}

# suitesparse KERNEL: one run of the SuiteSparse side, checked against ours in round 1.
suitesparse() {
  local k=$1 out iters=() check=() input rounds comp
  if [ "$k" = pr ] || [ "$k" = pr20 ]; then
    [ "$k" = pr20 ] && iters=(--iterations 20)
    out=$(python3 "$root/graphblas-pagerank/bench/gb_pagerank.py" "$g" "${iters[@]}" --threads 2 --ranks "$DATA/$k$s.txt")
    python3 -c "import sys; sys.exit(0 if float('$(echo "$out" | field max_diff_vs_ours)') <= 1e-12 else 1)" ||
      { echo "SuiteSparse and LPF PageRank ranks differ by more than 1e-12: $out" >&2; exit 1; }
    row "kron$s" "$k" suitesparse "2 threads" "$r" "$(echo "$out" | field load_s)" "$(echo "$out" | field compute_s)" \
      "$(echo "$out" | field total_s)" "$(echo "$out" | field iterations)" "$(echo "$out" | field s_per_iter)"
  else
    input="$g"; [ "$k" = sssp ] && input="$wel"
    [ "$r" = 1 ] && check=(--check "$DATA/$k$s.txt")
    out=$(python3 "$here/gb_kernels.py" "$input" "$k" --source "$src" --threads 2 "${check[@]}")
    [ "$r" = 1 ] && same "SuiteSparse $k" "$out"
    rounds=$(echo "$out" | field rounds); comp=$(echo "$out" | field compute_s)
    row "kron$s" "$k" suitesparse "2 threads" "$r" "$(echo "$out" | field load_s)" "$comp" "$(echo "$out" | field total_s)" \
      "$rounds" "$(per "$comp" "$rounds")"
  fi
  echo "kron$s $k suitesparse round $r: $out"
}

# gap KERNEL: one timed run of GAP's binary (one trial); in round 1 its results
# (gap_results) are compared with ours.
gap() {
  local k=$1 out load comp rounds="" per_it="" cmp
  case $k in
    pr20) out=$(OMP_NUM_THREADS=2 "$GAPBS_DIR/pr_spmv" -f "$sg" -i 20 -t 0 -n 1) ;;
    bfs) out=$(OMP_NUM_THREADS=2 "$GAPBS_DIR/bfs" -f "$sg" -r "$src" -n 1) ;;
    wcc) out=$(OMP_NUM_THREADS=2 "$GAPBS_DIR/cc" -f "$sg" -n 1) ;;
    sssp) out=$(OMP_NUM_THREADS=2 "$GAPBS_DIR/sssp" -f "$wsg" -r "$src" -d "$GAP_SSSP_DELTA" -n 1) ;;
    tc) out=$(OMP_NUM_THREADS=2 "$GAPBS_DIR/tc" -f "$usg" -n 1 -a) ;;
  esac
  load=$(echo "$out" | gap_time "Read Time"); comp=$(echo "$out" | gap_time "Trial Time")
  if [ "$k" = pr20 ]; then rounds=20; per_it=$(per "$comp" 20); fi
  row "kron$s" "$k" gap "2 threads" "$r" "$load" "$comp" "$(python3 -c "print(f'{$load + $comp:.5f}')")" "$rounds" "$per_it"
  echo "kron$s $k gap round $r: read $load s, trial $comp s"
  [ "$r" = 1 ] || return 0
  case $k in
    pr20) OMP_NUM_THREADS=2 "$GAP_RESULTS" pr "$sg" "$DATA/gap-$k$s.txt" 20 >/dev/null
          cmp=$(python3 "$here/gap_compare.py" pr "$DATA/gap-$k$s.txt" "$DATA/$k$s.txt" --graph "$g" --iterations 20) ;;
    bfs) OMP_NUM_THREADS=2 "$GAP_RESULTS" bfs "$sg" "$DATA/gap-$k$s.txt" "$src" >/dev/null
         cmp=$(python3 "$here/gap_compare.py" bfs "$DATA/gap-$k$s.txt" "$DATA/$k$s.txt") ;;
    wcc) OMP_NUM_THREADS=2 "$GAP_RESULTS" cc "$sg" "$DATA/gap-$k$s.txt" >/dev/null
         cmp=$(python3 "$here/gap_compare.py" wcc "$DATA/gap-$k$s.txt" "$DATA/$k$s.txt") ;;
    sssp) OMP_NUM_THREADS=2 "$GAP_RESULTS" sssp "$wsg" "$DATA/gap-$k$s.txt" "$src" "$GAP_SSSP_DELTA" >/dev/null
          cmp=$(python3 "$here/gap_compare.py" sssp "$DATA/gap-$k$s.txt" "$DATA/$k$s.txt") ;;
    tc) cmp=$(python3 "$here/gap_compare.py" tc "$(echo "$out" | grep -o '^[0-9]* triangles' | cut -d' ' -f1)" "$DATA/$k$s.txt") ;;
  esac
  same "GAP $k" "$cmp"
  echo "kron$s $k gap check: $cmp"
}

for s in $SCALES; do
  g="$DATA/kron$s.bin"; el="$DATA/kron$s.el"; wel="$DATA/kron$s.wel"
  sg="$DATA/kron$s.sg"; wsg="$DATA/kron$s.wsg"; usg="$DATA/kron${s}U.sg"
  gc="$DATA/kron$s.gcsr"; wgc="$DATA/kron${s}w.gcsr"
  [ -f "$g" ] || "$PR" --rmat "$s" --convert-to "$g" -p 2 --quiet
  [ -f "$el" ] && [ -f "$wel" ] || python3 - "$g" "$el" "$wel" <<'PY'
import os, sys, numpy as np
g, el, wel = sys.argv[1:4]
nnz = int(np.fromfile(g, dtype=np.uint64, count=5)[4])
rec = np.fromfile(g, dtype=np.uint32, offset=40, count=2 * nnz).reshape(-1, 2).astype(np.int64)
weights = np.random.default_rng(1).integers(1, 64, nnz)
for path, cols in ((el, rec), (wel, np.column_stack([rec, weights]))):
    np.savetxt(path + ".part", cols, fmt="%d")
    os.replace(path + ".part", path)
PY
  # Ours converted once, as GAP's .sg: `graph convert` (CSR, loaded without routing).
  [ -f "$gc" ] || "$GRAPH" convert --input "$g" --to "$gc" -p 1 --threads 2 >/dev/null
  [ -f "$wgc" ] || "$GRAPH" convert --input "$wel" --format edges --weighted --to "$wgc" -p 1 --threads 2 >/dev/null
  [ -f "$sg" ] || "$GAPBS_DIR/converter" -f "$el" -b "$sg" >/dev/null
  [ -f "$wsg" ] || "$GAPBS_DIR/converter" -f "$wel" -w -b "$wsg" >/dev/null
  [ -f "$usg" ] || "$GAPBS_DIR/converter" -f "$el" -s -b "$usg" >/dev/null
  src=$(python3 -c "import numpy as np; print(int(np.fromfile('$g', dtype=np.uint32, offset=40, count=1)[0]))")
  bw=$("$PR" --input "$g" -p 1 --threads 2 --quiet --bandwidth --output "$DATA/pr$s.txt" | grep ^bandwidth)
  r=0
  row "kron$s" pr floor "read $(echo "$bw" | field read_gbs) GB/s" 0 "" "" "" "" "$(echo "$bw" | field floor_s_per_iter)"
  echo "kron$s: $bw"
  for r in $(seq "$RUNS"); do
    for k in $KERNELS; do
      ours "$k" 1 2
      ours "$k" 2 1
      ours "$k" 2 1 tcp
      case $k in tc) ;; *) suitesparse "$k" ;; esac
      case $k in pr20|bfs|wcc|sssp|tc) gap "$k" ;; esac
    done
  done
done

python3 "$here/kernels_summary.py" "$csv" "$here/kernels.png"
