#!/usr/bin/env python3
"""SuiteSparse:GraphBLAS (through python-graphblas) running the same PageRank as the
Rust code: pull form (t = A^T (r ./ outdeg)), float64, dangling mass redistributed,
damping 0.85, start 1/n, stop at L1 change < tol. Reads the crate's binary format
(40-byte header, then u32 (src, dst) records) with numpy.

usage: gb_pagerank.py GRAPH.bin [--threads T] [--tol X] [--ranks RANKS.txt]
Prints one line: "graphblas n=.. nnz=.. threads=.. iterations=.. s_per_iter=.. load_s=.."
and, with --ranks (a `pagerank --output` file of the same graph), the largest per-vertex
difference from it. The header declares the vertices 0..n (isolated ones included),
as in the Rust code and in LAGraph.
"""
import argparse
import time

import numpy as np
import graphblas as gb
from graphblas import binary, monoid, semiring, unary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-7)
    ap.add_argument("--alpha", type=float, default=0.85)
    ap.add_argument("--max-iters", type=int, default=1000)
    ap.add_argument("--ranks")
    a = ap.parse_args()
    gb.ss.config["nthreads"] = a.threads

    t0 = time.perf_counter()
    head = np.fromfile(a.graph, dtype=np.uint64, count=5)
    magic = head[0].tobytes()
    assert magic == b"GBPRCOO\0", "not a graphblas-pagerank binary file"
    flags = int(head[1]) >> 32
    n, ncols, nnz = int(head[2]), int(head[3]), int(head[4])
    assert n == ncols and flags & 1 == 0, "expects a square pattern file"  # (bit 1: label table: output ids only)
    rec = np.fromfile(a.graph, dtype=np.uint32, offset=40, count=2 * nnz).reshape(-1, 2)
    assert rec.shape[0] == nnz
    # Pattern matrix, iso-valued 1.0; duplicates (none in converted files) collapse.
    A = gb.Matrix.from_coo(rec[:, 0], rec[:, 1], 1.0, nrows=n, ncols=n)
    del rec
    AT = A.T.new()
    outdeg = A.reduce_rowwise(monoid.plus).new()
    del A
    inv = gb.Vector(float, n)
    inv << outdeg.apply(unary.minv)  # 1/outdeg on vertices with out-edges
    deg = outdeg.to_dense(fill_value=0)
    idx = np.flatnonzero(deg == 0)
    dangling = gb.Vector.from_coo(idx, 1.0, size=n)  # indicator of dangling vertices
    load_s = time.perf_counter() - t0

    alpha = a.alpha
    r = gb.Vector(float, n)
    r[:] = 1.0 / n
    contrib = gb.Vector(float, n)
    t = gb.Vector(float, n)
    rnew = gb.Vector(float, n)
    diff = gb.Vector(float, n)
    iters = 0
    residual = float("inf")
    t1 = time.perf_counter()
    while iters < a.max_iters:
        dmass = r.ewise_mult(dangling, binary.times).reduce(monoid.plus).value or 0.0
        base = (alpha * dmass + (1.0 - alpha)) / n
        contrib << r.ewise_mult(inv, binary.times)
        t << AT.mxv(contrib, semiring.plus_second)
        rnew[:] = base
        rnew(binary.plus) << t.apply(binary.times, right=alpha)
        diff << rnew.ewise_add(r, binary.minus)
        residual = diff.apply(unary.abs).reduce(monoid.plus).value
        r, rnew = rnew, r
        iters += 1
        if residual < a.tol:
            break
    iter_s = time.perf_counter() - t1
    line = (f"graphblas n={n} nnz={nnz} threads={a.threads} iterations={iters} residual={residual:.3e} "
            f"s_per_iter={iter_s / max(iters, 1):.6f} load_s={load_s:.3f}")
    if a.ranks:
        ours = np.loadtxt(a.ranks, dtype=np.float64, usecols=1)
        dense = r.to_dense(fill_value=0.0)
        line += f" max_diff_vs_ours={np.max(np.abs(dense - ours)):.3e}"
    print(line, flush=True)


if __name__ == "__main__":
    main()
