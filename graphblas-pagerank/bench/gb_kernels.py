#!/usr/bin/env python3
"""SuiteSparse:GraphBLAS (through python-graphblas) running BFS (depths) and WCC as
LAGraph writes them, on a file in the crate's binary format, for kernels.sh.

BFS: LAGraph's level-only BFS (LAGr_BreadthFirstSearch, SuiteSparse variant):
v<q> = level; q<!v, replace> = q any.pair A (push, vxm, q kept sparse) or AT any.pair q
(pull, mxv with the transpose built at load, as LAGraph caches G->AT, q made bitmap as
LAGraph does before a pull: a sparse q made kron18's pulls 10-30x slower), switched by
the same Beamer rule (alpha 14, beta 24) as the Rust code. WCC: LAGraph's FastSV loop
(LG_CC_FastSV6 without its sampling step): mngf = min.second product of S and gf;
stochastic hooking f min= C min.second mngf with C(f(j), j) packed in O(1) from the
parents (LAGraph's Reduce_assign; GrB_assign with duplicate indices measured slower);
f min= mngf; f min= gf; gf = f(f); stop when gf is unchanged. S = A + A' (the
undirected view LAGraph requires) is built at load; since S is symmetric the product is
taken as gf min.first S (vxm), which measured 3x faster than S min.second gf here.

usage: gb_kernels.py GRAPH.bin bfs|wcc [--source S] [--threads T] [--check OURS.txt]
Prints "graphblas kernel=.. n=.. nnz=.. threads=.. rounds=.. load_s=.. compute_s=.. total_s=..",
and with --check (a `graph --output` file of the same graph and kernel) "equal=1" or
"equal=0 mismatches=k".
"""
import argparse
import time

import numpy as np
import graphblas as gb
from graphblas import binary, monoid, semiring

ALPHA, BETA = 14, 24
UNREACHABLE = 9223372036854775807


def load(path):
    head = np.fromfile(path, dtype=np.uint64, count=5)
    assert head[0].tobytes() == b"GBPRCOO\0", "not a graphblas-pagerank binary file"
    flags = int(head[1]) >> 32
    n, ncols, nnz = int(head[2]), int(head[3]), int(head[4])
    assert n == ncols and flags & 2 == 0, "expects a square file with ids 0..n"
    rec = np.fromfile(path, dtype=np.uint32, offset=40, count=2 * nnz).reshape(-1, 2)
    A = gb.Matrix.from_coo(rec[:, 0], rec[:, 1], True, nrows=n, ncols=n)
    return A, n


def degrees(A, AT):
    """Out- and in-degrees: LAGraph's cached properties, computed at load."""
    return A.reduce_rowwise(monoid.plus[gb.dtypes.INT64]).new(), AT.reduce_rowwise(monoid.plus[gb.dtypes.INT64]).new()


def bfs(A, AT, outdeg, indeg, n, src):
    v = gb.Vector(gb.dtypes.INT64, n)
    q = gb.Vector(bool, n)
    q[src] = True
    unexplored = A.nvals
    push = True
    level = 0
    while True:
        v(q.S) << level
        nq = q.nvals
        if nq == 0:
            break
        mf = outdeg.ewise_mult(q, binary.first).reduce(monoid.plus).value or 0
        explored = indeg.ewise_mult(q, binary.first).reduce(monoid.plus).value or 0
        unexplored -= explored
        if push:
            push = not (mf * ALPHA > unexplored)
        else:
            push = nq * BETA < n
        if push:
            q.ss.config["sparsity_control"] = ["sparse"]
            q(~v.S, replace=True) << semiring.any_pair(q @ A)
        else:
            q.ss.config["sparsity_control"] = ["bitmap"]
            q(~v.S, replace=True) << semiring.any_pair(AT @ q)
        level += 1
    return v.to_dense(fill_value=UNREACHABLE), level


def fastsv(S, n):
    f = gb.Vector.from_dense(np.arange(n, dtype=np.uint32))
    gf = f.dup()
    mngf = gf.dup()
    indptr = np.arange(n + 1, dtype=np.uint64)
    one = np.ones(1, dtype=bool)
    rounds = 0
    while True:
        rounds += 1
        mngf << semiring.min_first(gf @ S)
        parents = f.to_dense().astype(np.uint64)
        C = gb.Matrix.ss.import_csc(nrows=n, ncols=n, indptr=indptr, row_indices=parents, values=one, is_iso=True, sorted_rows=True)
        f(binary.min) << semiring.min_second(C @ mngf)
        f(binary.min) << mngf
        f(binary.min) << gf
        gf_new = f[f.to_dense()].new()
        if gf_new.isequal(gf):
            break
        gf = gf_new
    return f.to_dense(), rounds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("kernel", choices=["bfs", "wcc"])
    ap.add_argument("--source", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--check")
    a = ap.parse_args()
    gb.ss.config["nthreads"] = a.threads
    t0 = time.perf_counter()
    A, n = load(a.graph)
    if a.kernel == "bfs":
        AT = A.T.new()
        outdeg, indeg = degrees(A, AT)
    else:
        S = A.ewise_add(A.T, binary.any).new()
    load_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    if a.kernel == "bfs":
        values, rounds = bfs(A, AT, outdeg, indeg, n, a.source)
    else:
        values, rounds = fastsv(S, n)
    compute_s = time.perf_counter() - t1
    line = (f"graphblas kernel={a.kernel} n={n} nnz={A.nvals} threads={a.threads} rounds={rounds} "
            f"load_s={load_s:.4f} compute_s={compute_s:.4f} total_s={time.perf_counter() - t0:.4f}")
    if a.check:
        ours = np.loadtxt(a.check, dtype=np.int64, usecols=1)
        bad = int(np.count_nonzero(ours != values.astype(np.int64)))
        line += f" equal={int(bad == 0)}" + (f" mismatches={bad}" if bad else "")
    print(line, flush=True)


if __name__ == "__main__":
    main()
