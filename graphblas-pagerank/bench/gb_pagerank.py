#!/usr/bin/env python3
"""SuiteSparse:GraphBLAS (through python-graphblas) running PageRank the way LAGraph's
LAGr_PageRank does, on a file in the crate's binary format, for run.sh and kernels.sh.

The iteration is LAGraph's: out-degrees cached at load (a GraphBLAS reduction), the
scaling vector d = outdeg / alpha made dense once (vertices without out-edges get
1 / alpha, which no edge reads), and each iteration on dense vectors only:

    t, r = r, t                                  (t = previous ranks)
    w = t / d                                    (contributions, dense)
    teleport = (1 - alpha) / n + alpha * sum(t[sinks]) / n
    r[:] = teleport
    r += AT plus.second w                        (one mxv, AT cached at load)
    t -= r;  t = |t|;  residual = sum(t)         (in place, no new vectors)

stopping when the L1 change falls below tol (tolerance mode, as the Rust code) or after
exactly --iterations N (Graphalytics' fixed-iteration mode). Differences from LAGraph,
both on purpose: float64 instead of LAGraph's float32, so that the ranks compare with
ours to rounding; AT is built straight from the records as (dst, src) rather than from A
then transposed, since only AT is walked. OMP_WAIT_POLICY defaults to PASSIVE (set
before the library loads), so idle OpenMP threads do not spin on the shared cores.

usage: gb_pagerank.py GRAPH.bin [--threads T] [--tol X] [--iterations N] [--ranks RANKS.txt]
Prints one line: "graphblas n=.. nnz=.. threads=.. iterations=.. residual=.. s_per_iter=..
load_s=.. compute_s=.. total_s=.." and, with --ranks (a `pagerank --output` file of the same
graph), the largest per-vertex difference from it. The header declares the vertices 0..n
(isolated ones included), as in the Rust code and in LAGraph.
"""
import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import graphblas as gb  # noqa: E402
from graphblas import agg, binary, monoid, semiring, unary  # noqa: E402


def load(path):
    """Reads the binary file: AT (iso, pattern), the dense scaling vector d and the sinks."""
    head = np.fromfile(path, dtype=np.uint64, count=5)
    assert head[0].tobytes() == b"GBPRCOO\0", "not a graphblas-pagerank binary file"
    flags = int(head[1]) >> 32
    n, ncols, nnz = int(head[2]), int(head[3]), int(head[4])
    assert n == ncols and flags & 1 == 0, "expects a square pattern file"  # (bit 1: label table: output ids only)
    rec = np.fromfile(path, dtype=np.uint32, offset=40, count=2 * nnz).reshape(-1, 2)
    assert rec.shape[0] == nnz
    AT = gb.Matrix.from_coo(rec[:, 1], rec[:, 0], 1.0, nrows=n, ncols=n)
    del rec
    outdeg = AT.reduce_columnwise(agg.count).new()
    return AT, outdeg, n, nnz


def pagerank(AT, outdeg, n, alpha, tol, iterations, max_iters):
    d = gb.Vector(float, n)
    d[:] = 1.0 / alpha
    d(outdeg.S) << outdeg.apply(binary.truediv, right=alpha)
    sinks = np.setdiff1d(np.arange(n, dtype=np.uint64), outdeg.to_coo(values=False)[0], assume_unique=True)
    t = gb.Vector(float, n)
    r = gb.Vector(float, n)
    r[:] = 1.0 / n
    w = gb.Vector(float, n)
    tsink = gb.Vector(float, len(sinks))
    limit = iterations if iterations is not None else max_iters
    iters = 0
    residual = float("inf")
    while iters < limit:
        t, r = r, t
        w << t.ewise_mult(d, binary.truediv)
        tsink << t[sinks]
        teleport = (1.0 - alpha) / n + alpha * (tsink.reduce(monoid.plus).value or 0.0) / n
        r[:] = teleport
        r(binary.plus) << semiring.plus_second(AT @ w)
        t(binary.minus) << r
        t << unary.abs(t)
        residual = t.reduce(monoid.plus).value
        iters += 1
        if iterations is None and residual < tol:
            break
    return r, iters, residual


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-7)
    ap.add_argument("--alpha", type=float, default=0.85)
    ap.add_argument("--max-iters", type=int, default=1000)
    ap.add_argument("--iterations", type=int, help="run exactly N iterations (Graphalytics), ignoring --tol")
    ap.add_argument("--ranks")
    a = ap.parse_args()
    gb.ss.config["nthreads"] = a.threads

    t0 = time.perf_counter()
    AT, outdeg, n, nnz = load(a.graph)
    load_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    r, iters, residual = pagerank(AT, outdeg, n, a.alpha, a.tol, a.iterations, a.max_iters)
    compute_s = time.perf_counter() - t1
    line = (f"graphblas n={n} nnz={nnz} threads={a.threads} iterations={iters} residual={residual:.3e} "
            f"s_per_iter={compute_s / max(iters, 1):.6f} load_s={load_s:.4f} compute_s={compute_s:.4f} "
            f"total_s={time.perf_counter() - t0:.4f}")
    if a.ranks:
        ours = np.loadtxt(a.ranks, dtype=np.float64, usecols=1)
        line += f" max_diff_vs_ours={np.max(np.abs(r.to_dense(fill_value=0.0) - ours)):.3e}"
    print(line, flush=True)


if __name__ == "__main__":
    main()
