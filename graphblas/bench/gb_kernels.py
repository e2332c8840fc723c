#!/usr/bin/env python3
"""SuiteSparse:GraphBLAS (through python-graphblas) running BFS (depths), WCC, SSSP and
CDLP as LAGraph writes them, for kernels.sh: BFS, WCC and CDLP on a file in the crate's
binary format, SSSP on a weighted edge list ("src dst weight" lines, as `graph sssp` reads).

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
LAGraph's FastSV6 first samples 4 neighbours per vertex to find the giant component and
skips its edges; that step is not written here (a gap: this FastSV does all edges each
round).

SSSP: frontier Bellman-Ford over min.plus, the Bellman-Ford form of LAGraph's SSSP
(LAGraph's default, delta-stepping, buckets this same relaxation by distance; not written
here): distances dense with infinity, a sparse frontier of the vertices improved in the
last round; reach = frontier min.plus A (vxm); better = reach < dist; the frontier
becomes reach masked by better, dist takes it; stop when the frontier is empty.

LCC: LAGraph's LCC with its sort by degree, for directed graphs as ours (Graphalytics:
neighbours N(v) = in ∪ out without v, directed edges among them over |N(v)|(|N(v)| - 1)):
S = offdiag(A + A'), the vertices permuted by (|N(v)|, v) ascending (LAGraph's presort;
done at load), then each neighbour pair counted once from its earlier end u as
[w in out+(u)] + [w in in+(u)], with out+ = triu(P A P') and in+ = triu(P A' P') (strictly
upper: the later vertices): t = rowsum(C<S> = S plus.pair out+) + rowsum(C<S> = S plus.pair
in+), SuiteSparse choosing dot or saxpy for the masked products. Checked against ours
within 1e-12.

CDLP: LAGraph_cdlp's loop: each round the labels of every vertex's out- and in-neighbours,
with multiplicity, as the values of [A | AT] times diag([L; L]) (any.second), each row
sorted by GxB_Matrix_sort (parallel), then per row the longest run of equal labels, the
smallest label on ties (numpy, as LAGraph's own C loop over the sorted rows); a vertex
without neighbours keeps its label. Fixed iteration count (default 10).

usage: gb_kernels.py GRAPH.bin bfs|wcc|cdlp|lcc [--source S] [--iterations N] [--threads T] [--check OURS.txt]
       gb_kernels.py GRAPH.edges sssp --source S [--threads T] [--check OURS.txt]
Prints "graphblas kernel=.. n=.. nnz=.. threads=.. rounds=.. load_s=.. compute_s=.. total_s=..",
and with --check (a `graph --output` file of the same graph and kernel) "equal=1" or
"equal=0 mismatches=k".
"""
import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import graphblas as gb  # noqa: E402
from graphblas import binary, monoid, semiring  # noqa: E402

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


def load_weighted(path):
    """A weighted edge list: the matrix of min weights over parallel edges (as ours)."""
    e = np.loadtxt(path, dtype=np.float64, comments=("#", "%"), ndmin=2)
    src, dst = e[:, 0].astype(np.uint64), e[:, 1].astype(np.uint64)
    n = int(max(src.max(), dst.max())) + 1
    return gb.Matrix.from_coo(src, dst, e[:, 2], nrows=n, ncols=n, dup_op=binary.min), n


def sssp(A, n, src):
    dist = gb.Vector(float, n)
    dist[:] = np.inf
    dist[src] = 0.0
    frontier = gb.Vector(float, n)
    frontier[src] = 0.0
    reach = gb.Vector(float, n)
    better = gb.Vector(bool, n)
    rounds = 0
    while frontier.nvals:
        reach << semiring.min_plus(frontier @ A)
        better << reach.ewise_mult(dist, binary.lt)
        frontier(better.V, replace=True) << reach
        dist(frontier.S) << frontier
        rounds += 1
    return dist.to_dense(), rounds


def cdlp(A, AT, n, iterations):
    """Labels after `iterations` rounds; A and AT iso, n x n."""
    both = gb.ss.concat([[A, AT]])  # n x 2n: out-neighbours, then in-neighbours
    counts = both.reduce_rowwise(gb.agg.count).new().to_dense(fill_value=0)
    row_of = np.repeat(np.arange(n, dtype=np.int64), counts)  # the row of each entry, in row order
    row_starts = np.zeros(len(row_of), dtype=bool)  # an entry that opens its row
    row_starts[np.cumsum(counts)[counts > 0] - counts[counts > 0]] = True
    labels = np.arange(n, dtype=np.int64)
    for _ in range(iterations):
        diag = gb.Vector.from_dense(np.concatenate((labels, labels))).diag()
        srt = both.mxm(diag, semiring.any_second[gb.dtypes.INT64]).new().ss.sort(binary.lt, order="rowwise", perm=False)[0]
        vals = srt.to_coo(rows=False, columns=False)[2]
        # Runs of equal labels within a row and their lengths; a row's first longest
        # run is its smallest most frequent label (rows are ascending). Every pass is
        # linear: runs and the rows' runs come out in order.
        start = row_starts.copy()
        start[1:] |= vals[1:] != vals[:-1]
        run_at = np.flatnonzero(start)
        run_len = np.diff(np.append(run_at, len(vals)))
        run_row = row_of[run_at]
        row_first_run = np.flatnonzero(row_starts[run_at])
        longest = np.zeros(n, dtype=np.int64)
        longest[run_row[row_first_run]] = np.maximum.reduceat(run_len, row_first_run)
        win = np.flatnonzero(run_len == longest[run_row])
        win_row = run_row[win]
        first = np.ones(len(win), dtype=bool)
        first[1:] = win_row[1:] != win_row[:-1]
        labels = labels.copy()
        labels[win_row[first]] = vals[run_at[win[first]]]
    return labels, iterations


def presort(A, n):
    """LCC's load: S = offdiag(A + A') and A without self-loops, both relabelled so that
    the vertices come by (|N(v)|, v) ascending; `order[k]` is the vertex labelled k."""
    S = A.ewise_add(A.T, binary.any).new()
    S = S.select("offdiag").new()
    deg = S.reduce_rowwise(gb.agg.count).new().to_dense(fill_value=0)
    order = np.lexsort((np.arange(n), deg))
    label = np.empty(n, dtype=np.int64)
    label[order] = np.arange(n)
    r, c, _ = S.to_coo()
    S = gb.Matrix.from_coo(label[r], label[c], True, nrows=n, ncols=n)
    r, c, _ = A.to_coo()
    P = gb.Matrix.from_coo(label[r], label[c], True, nrows=n, ncols=n)
    return S, P, order


def lcc(S, P, order, n):
    out_later = P.select("triu", 1).new()
    in_later = P.T.new().select("triu", 1).new()
    t = gb.Vector(gb.dtypes.INT64, n)
    for later in (out_later, in_later):
        C = gb.Matrix(gb.dtypes.INT64, n, n)
        C(S.S) << semiring.plus_pair[gb.dtypes.INT64](S @ later)
        t(binary.plus) << C.reduce_rowwise(monoid.plus)
    d = S.reduce_rowwise(gb.agg.count).new().to_dense(fill_value=0).astype(np.float64)
    t = t.to_dense(fill_value=0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        by_label = np.where(d < 2, 0.0, t / (d * (d - 1)))
    values = np.empty(n)
    values[order] = by_label
    return values, 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("kernel", choices=["bfs", "wcc", "sssp", "cdlp", "lcc"])
    ap.add_argument("--source", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=10, help="CDLP rounds")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--check")
    a = ap.parse_args()
    gb.ss.config["nthreads"] = a.threads
    t0 = time.perf_counter()
    if a.kernel == "sssp":
        A, n = load_weighted(a.graph)
    else:
        A, n = load(a.graph)
    if a.kernel in ("bfs", "cdlp"):
        AT = A.T.new()
    if a.kernel == "bfs":
        outdeg, indeg = degrees(A, AT)
    elif a.kernel == "wcc":
        S = A.ewise_add(A.T, binary.any).new()
    elif a.kernel == "lcc":
        S, P, order = presort(A, n)
    load_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    if a.kernel == "bfs":
        values, rounds = bfs(A, AT, outdeg, indeg, n, a.source)
    elif a.kernel == "wcc":
        values, rounds = fastsv(S, n)
    elif a.kernel == "sssp":
        values, rounds = sssp(A, n, a.source)
    elif a.kernel == "lcc":
        values, rounds = lcc(S, P, order, n)
    else:
        values, rounds = cdlp(A, AT, n, a.iterations)
    compute_s = time.perf_counter() - t1
    line = (f"graphblas kernel={a.kernel} n={n} nnz={A.nvals} threads={a.threads} rounds={rounds} "
            f"load_s={load_s:.4f} compute_s={compute_s:.4f} total_s={time.perf_counter() - t0:.4f}")
    if a.check:
        # Our output names only the vertices it has (an edge list's are those some edge
        # names), so compare at its ids.
        ids = np.loadtxt(a.check, dtype=np.int64, usecols=0)
        if a.kernel in ("sssp", "lcc"):
            ours = np.loadtxt(a.check, dtype=np.float64, usecols=1)
        else:
            ours = np.loadtxt(a.check, dtype=np.int64, usecols=1)
        if a.kernel == "lcc":
            bad = int(np.count_nonzero(np.abs(ours - values[ids]) > 1e-12))
        else:
            bad = int(np.count_nonzero(ours != values[ids].astype(ours.dtype)))
        line += f" equal={int(bad == 0)}" + (f" mismatches={bad}" if bad else "")
    print(line, flush=True)


if __name__ == "__main__":
    main()
