#!/usr/bin/env python3
"""The summary and plot of kernels.sh's CSV: per graph and kernel, min and median over the
rounds of every contender's compute, the ratios GAP / ours and SuiteSparse / ours (ours =
the better of p1x2 and p2x1; >= 1 means we are at least as fast), PageRank per iteration
against the bandwidth floor, and the load of our converted .gcsr file against GAP's .sg
read (both as the BFS runs measure them), and the distribution's cost: p2x1 over shm and over
tcp as a ratio to p1x2.

usage: kernels_summary.py kernels.csv kernels.png
"""
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KERNELS = ["pr", "pr20", "bfs", "wcc", "sssp", "cdlp", "lcc", "tc"]
CONTENDERS = [("lpf", "p1x2"), ("lpf", "p2x1"), ("suitesparse", "2 threads"), ("gap", "2 threads")]
LABELS = {"lpf": "LPF {}", "suitesparse": "SuiteSparse 2 threads", "gap": "GAP 2 threads"}
NAN = float("nan")

rows = list(csv.DictReader(open(sys.argv[1])))
graphs = sorted({r["graph"] for r in rows}, key=lambda g: int(g[4:]))
kernels = [k for k in KERNELS if any(r["kernel"] == k and r["impl"] != "floor" for r in rows)]


def values(g, k, impl, cfg, col):
    return [float(r[col]) for r in rows if (r["graph"], r["kernel"], r["impl"], r["config"]) == (g, k, impl, cfg) and r[col]]


def med(g, k, impl, cfg, col):
    v = values(g, k, impl, cfg, col)
    return statistics.median(v) if v else NAN


def least(g, k, impl, cfg, col):
    v = values(g, k, impl, cfg, col)
    return min(v) if v else NAN


def ours_best(stat, g, k, col):
    """The better of our two configurations under `stat` (min or median over rounds)."""
    return min(stat(g, k, "lpf", c, col) for c in ("p1x2", "p2x1"))


def ratio(a, b):
    return f"{a / b:.2f}" if a == a and b == b and b > 0 else "-"


loads = [float(r["load_avg"]) for r in rows if r.get("load_avg")]
if loads:
    print(f"\nload average over the rows: min {min(loads):.2f}, median {statistics.median(loads):.2f}, max {max(loads):.2f}")
print("compute seconds, min / median over rounds; x = contender / ours (ours = better of p1x2, p2x1; >= 1: ours at least as fast)")
print(f"{'graph':7} {'kernel':6} {'lpf p1x2':>15} {'lpf p2x1':>15} {'suitesparse':>15} {'gap':>15} "
      f"{'SS x min/med':>13} {'GAP x min/med':>14}")
for g in graphs:
    for k in kernels:
        cells = []
        for impl, cfg in CONTENDERS:
            lo, mid = least(g, k, impl, cfg, "compute_s"), med(g, k, impl, cfg, "compute_s")
            cells.append(f"{lo:.4f}/{mid:.4f}" if mid == mid else "-")
        ours_min, ours_med = ours_best(least, g, k, "compute_s"), ours_best(med, g, k, "compute_s")
        ss = f"{ratio(least(g, k, 'suitesparse', '2 threads', 'compute_s'), ours_min)}/" \
             f"{ratio(med(g, k, 'suitesparse', '2 threads', 'compute_s'), ours_med)}"
        gp = f"{ratio(least(g, k, 'gap', '2 threads', 'compute_s'), ours_min)}/" \
             f"{ratio(med(g, k, 'gap', '2 threads', 'compute_s'), ours_med)}"
        print(f"{g:7} {k:6} {cells[0]:>15} {cells[1]:>15} {cells[2]:>15} {cells[3]:>15} {ss:>13} {gp:>14}")
    floor_rows = [r for r in rows if r["graph"] == g and r["impl"] == "floor"]
    if floor_rows:
        floor = float(floor_rows[0]["per_round_s"])
        for k in ("pr", "pr20"):
            if k not in kernels:
                continue
            mine = ours_best(med, g, k, "per_round_s")
            ss = med(g, k, "suitesparse", "2 threads", "per_round_s")
            line = (f"{g} {k} s/iter (median): ours {mine:.5f} ({mine / floor:.2f}x the floor {floor:.5f}), "
                    f"SuiteSparse {ss:.5f} ({ss / floor:.2f}x)")
            gp = med(g, k, "gap", "2 threads", "per_round_s")
            if gp == gp:
                line += f", GAP pr_spmv {gp:.5f} ({gp / floor:.2f}x; GAP / ours {gp / mine:.2f})"
            print(line)
    print(f"{g} distribution's cost, median compute as a ratio to p1x2 (p = 2 processes x 1 thread):")
    for k in kernels:
        one = med(g, k, "lpf", "p1x2", "compute_s")
        print(f"  {k:6} shm {ratio(med(g, k, 'lpf', 'p2x1', 'compute_s'), one)}  tcp {ratio(med(g, k, 'lpf', 'p2x1 tcp', 'compute_s'), one)}")
    if "bfs" in kernels:
        mine = ours_best(med, g, "bfs", "load_s")
        gp = med(g, "bfs", "gap", "2 threads", "load_s")
        print(f"{g} load (bfs runs, median): ours .gcsr {mine:.4f} s, GAP .sg read {gp:.4f} s (GAP / ours {ratio(gp, mine)})")

fig, axes = plt.subplots(2, len(graphs), figsize=(6 * len(graphs), 8), squeeze=False)
width = 0.8 / len(CONTENDERS)
for j, g in enumerate(graphs):
    for i, col in enumerate(("compute_s", "total_s")):
        ax = axes[i][j]
        for b, (impl, cfg) in enumerate(CONTENDERS):
            ys = [med(g, k, impl, cfg, col) for k in kernels]
            ax.bar([x + (b - 1.5) * width for x in range(len(kernels))], ys, width, label=LABELS[impl].format(cfg))
        ax.set_xticks(range(len(kernels)), [k.upper() for k in kernels])
        ax.set_yscale("log")
        ax.set_ylabel(f"{col[:-2]} seconds (median, log scale)")
        ax.set_title(f"{g}: {col[:-2]}")
        ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=90)
print(f"wrote {sys.argv[1]} and {sys.argv[2]}")
