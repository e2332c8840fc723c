#!/usr/bin/env bash
# The graph kernels of `graph` and `pagerank` (LPF, shm engine) beside
# SuiteSparse:GraphBLAS (python-graphblas, the loops LAGraph writes: gb_pagerank.py,
# gb_kernels.py) on Graph500 Kronecker graphs, 2 threads, in one run, with the
# PageRank memory-bandwidth floor measured in the same run. Every SuiteSparse result is
# checked against ours (equal; PageRank ranks within 1e-12), the script stops otherwise.
# A benchmark, not a test: scripts/test.sh does not run it.
#
#   bash graphblas/bench/kernels.sh                    # kron18 and kron20, 1 run
#   SCALES=18 RUNS=3 bash graphblas/bench/kernels.sh
#
# Per graph and run: PR (tolerance 1e-7, the CLI's default), PR20 (PageRank's
# fixed-iteration, Graphalytics mode: `graph pr --iterations 20` beside
# `gb_pagerank.py --iterations 20`, ranks within 1e-12), BFS, WCC, SSSP, CDLP (10
# iterations), LCC (coefficients within 1e-12), each as LPF 1 process x 2 threads
# (p1x2), 2 x 1 (p2x1) and SuiteSparse with 2 threads. KERNELS="lcc bfs" picks some. Inputs: the binary file of `pagerank --rmat S --convert-to`; SSSP reads
# the same edges as a text edge list with integer weights 1..63 (numpy, seed 1; neither
# side reads weights from the binary format), so its load is a text parse on both sides.
# BFS and SSSP start at the source of the file's first edge.
#
# Writes bench/kernels.csv (graph,kernel,impl,config,run,load_s,compute_s,total_s,rounds,
# per_round_s) and bench/kernels.png (median compute and total per kernel), and prints a
# summary: SuiteSparse compute / our best compute per kernel, PageRank s/iter against the
# floor. load = read the file and build what the kernel walks; compute = the kernel;
# total = the program's own measure of its whole run. The floor row: impl=floor,
# per_round_s = (12 bytes per edge + 32 per vertex) / read bandwidth (2 threads).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
export OMP_WAIT_POLICY=PASSIVE
SCALES="${SCALES:-18 20}"
RUNS="${RUNS:-1}"
KERNELS="${KERNELS:-pr pr20 bfs wcc sssp cdlp lcc}"
DATA="${BENCH_DATA:-/tmp/gbpr-bench}"
mkdir -p "$DATA"
(cd "$root" && cargo build --release -p graphblas -p graphblas-pagerank --bins >/dev/null)
PR="$CARGO_TARGET_DIR/release/pagerank"
GRAPH="$CARGO_TARGET_DIR/release/graph"
python3 -c "import graphblas" 2>/dev/null || python3 -m pip install --quiet python-graphblas
python3 -c "import matplotlib" 2>/dev/null || python3 -m pip install --quiet matplotlib
csv="$here/kernels.csv"
echo "graph,kernel,impl,config,run,load_s,compute_s,total_s,rounds,per_round_s" > "$csv"
field() { grep -o "$1=[^ ]*" | head -1 | cut -d= -f2; }
row() { echo "$1,$2,$3,$4,$5,$6,$7,$8,$9,${10}" >> "$csv"; }
check() { echo "$2" | grep -q "$3" || { echo "SuiteSparse and LPF differ ($1): $2" >&2; exit 1; }; }

for s in $SCALES; do
  g="$DATA/kron$s.bin"
  w="$DATA/kron${s}w.edges"
  [ -f "$g" ] || "$PR" --rmat "$s" --convert-to "$g" -p 2 --quiet
  [ -f "$w" ] || python3 - "$g" "$w" <<'PY'
import sys, numpy as np
g, w = sys.argv[1], sys.argv[2]
nnz = int(np.fromfile(g, dtype=np.uint64, count=5)[4])
rec = np.fromfile(g, dtype=np.uint32, offset=40, count=2 * nnz).reshape(-1, 2).astype(np.int64)
weights = np.random.default_rng(1).integers(1, 64, nnz)
np.savetxt(w + ".part", np.column_stack([rec, weights]), fmt="%d")
PY
  if [ -f "$w.part" ]; then mv "$w.part" "$w"; fi
  src=$(python3 -c "import numpy as np; print(int(np.fromfile('$g', dtype=np.uint32, offset=40, count=1)[0]))")
  bw=$("$PR" --input "$g" -p 1 --threads 2 --quiet --bandwidth --output "$DATA/pr$s.txt" | grep ^bandwidth)
  row "kron$s" pr floor "read $(echo "$bw" | field read_gbs) GB/s" 0 "" "" "" "" "$(echo "$bw" | field floor_s_per_iter)"
  echo "kron$s: $bw"
  for r in $(seq "$RUNS"); do
    for k in $KERNELS; do
      for cfg in "1 2" "2 1"; do
        set -- $cfg
        if [ "$k" = pr ]; then
          out=$("$PR" --input "$g" -p "$1" --threads "$2" --quiet | grep ^summary)
          it=$(echo "$out" | field iterations); per=$(echo "$out" | field s_per_iter)
          row "kron$s" pr lpf "p${1}x$2" "$r" "$(echo "$out" | field load_s)" "$(python3 -c "print(f'{$it * $per:.4f}')")" \
            "$(echo "$out" | field total_s)" "$it" "$per"
        else
          args=("$k" --input "$g" --output "$DATA/$k$s.txt")
          case $k in
            bfs) args+=(--source "$src") ;;
            sssp) args=(sssp --input "$w" --source "$src" --output "$DATA/$k$s.txt") ;;
            pr20) args=(pr --iterations 20 --input "$g" --output "$DATA/$k$s.txt") ;;
          esac
          out=$("$GRAPH" "${args[@]}" -p "$1" --threads "$2" | grep ^summary)
          rounds=$(echo "$out" | field rounds); comp=$(echo "$out" | field compute_s)
          row "kron$s" "$k" lpf "p${1}x$2" "$r" "$(echo "$out" | field load_s)" "$comp" "$(echo "$out" | field total_s)" \
            "$rounds" "$(python3 -c "print(f'{$comp / max($rounds, 1):.5f}')")"
        fi
        echo "kron$s $k p${1}x$2 run $r: $out"
      done
      if [ "$k" = pr ] || [ "$k" = pr20 ]; then
        iters=(); [ "$k" = pr20 ] && iters=(--iterations 20)
        gbl=$(python3 "$root/graphblas-pagerank/bench/gb_pagerank.py" "$g" "${iters[@]}" --threads 2 --ranks "$DATA/$k$s.txt")
        python3 -c "import sys; sys.exit(0 if float('$(echo "$gbl" | field max_diff_vs_ours)') <= 1e-12 else 1)" ||
          { echo "SuiteSparse and LPF PageRank ranks differ by more than 1e-12: $gbl" >&2; exit 1; }
        row "kron$s" "$k" suitesparse "2 threads" "$r" "$(echo "$gbl" | field load_s)" "$(echo "$gbl" | field compute_s)" \
          "$(echo "$gbl" | field total_s)" "$(echo "$gbl" | field iterations)" "$(echo "$gbl" | field s_per_iter)"
      else
        input="$g"; [ "$k" = sssp ] && input="$w"
        gbl=$(python3 "$here/gb_kernels.py" "$input" "$k" --source "$src" --threads 2 --check "$DATA/$k$s.txt")
        check "$k" "$gbl" "equal=1"
        rounds=$(echo "$gbl" | field rounds); comp=$(echo "$gbl" | field compute_s)
        row "kron$s" "$k" suitesparse "2 threads" "$r" "$(echo "$gbl" | field load_s)" "$comp" "$(echo "$gbl" | field total_s)" \
          "$rounds" "$(python3 -c "print(f'{$comp / max($rounds, 1):.5f}')")"
      fi
      echo "kron$s $k suitesparse run $r: $gbl"
    done
  done
done

python3 - "$csv" "$here/kernels.png" <<'PY'
import csv, statistics, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
graphs = sorted({r["graph"] for r in rows}, key=lambda g: int(g[4:]))
kernels = [k for k in ["pr", "pr20", "bfs", "wcc", "sssp", "cdlp", "lcc"] if any(r["kernel"] == k and r["impl"] != "floor" for r in rows)]
impls = [("lpf", "p1x2"), ("lpf", "p2x1"), ("suitesparse", "2 threads")]
def med(g, k, impl, cfg, col):
    v = [float(r[col]) for r in rows if (r["graph"], r["kernel"], r["impl"], r["config"]) == (g, k, impl, cfg) and r[col]]
    return statistics.median(v) if v else float("nan")
print("\nmedians over runs; speedup = SuiteSparse / our best of p1x2, p2x1")
print(f"{'graph':7} {'kernel':6} {'lpf p1x2 load/compute/total':>30} {'lpf p2x1 load/compute/total':>30} {'suitesparse load/compute/total':>32} {'compute x':>9} {'total x':>8}")
for g in graphs:
    for k in kernels:
        cells, best = [], {}
        for impl, cfg in impls:
            l, c, t = (med(g, k, impl, cfg, col) for col in ("load_s", "compute_s", "total_s"))
            cells.append(f"{l:.3f}/{c:.3f}/{t:.3f}")
            best.setdefault(impl, []).append((c, t))
        ours_c = min(c for c, _ in best["lpf"]); ours_t = min(t for _, t in best["lpf"])
        ss_c, ss_t = best["suitesparse"][0]
        print(f"{g:7} {k:6} {cells[0]:>30} {cells[1]:>30} {cells[2]:>32} {ss_c / ours_c:9.2f} {ss_t / ours_t:8.2f}")
    if "pr" not in kernels:
        continue
    floor = med(g, "pr", "floor", next(r["config"] for r in rows if r["graph"] == g and r["impl"] == "floor"), "per_round_s")
    per = min(med(g, "pr", "lpf", c, "per_round_s") for c in ("p1x2", "p2x1"))
    ss = med(g, "pr", "suitesparse", "2 threads", "per_round_s")
    print(f"{g} pagerank s/iter: ours {per:.4f} ({per / floor:.2f}x the floor {floor:.4f}), SuiteSparse {ss:.4f} ({ss / floor:.2f}x)")
fig, axes = plt.subplots(2, len(graphs), figsize=(6 * len(graphs), 8), squeeze=False)
for j, g in enumerate(graphs):
    for i, col in enumerate(("compute_s", "total_s")):
        ax = axes[i][j]
        for b, (impl, cfg) in enumerate(impls):
            ys = [med(g, k, impl, cfg, col) for k in kernels]
            ax.bar([x + (b - 1) * 0.27 for x in range(len(kernels))], ys, 0.27,
                   label=f"LPF {cfg}" if impl == "lpf" else "SuiteSparse 2 threads")
        ax.set_xticks(range(len(kernels)), [k.upper() for k in kernels])
        ax.set_yscale("log")
        ax.set_ylabel(f"{col[:-2]} seconds (median, log scale)")
        ax.set_title(f"{g}: {col[:-2]}")
        ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=90)
print(f"wrote {sys.argv[1]} and {sys.argv[2]}")
PY
