#!/usr/bin/env python3
"""SuiteSparse:GraphBLAS (through python-graphblas) running BFS (depths), WCC, SSSP and
CDLP as LAGraph writes them, for kernels.sh: BFS, WCC and CDLP on a file in the crate's
binary format, SSSP on a weighted edge list ("src dst weight" lines, as `graph sssp` reads).

BFS: LAGraph's level-only BFS (LAGr_BreadthFirstSearch, SuiteSparse variant):
v<q> = level; q<!v, replace> = q any.pair A (push, vxm, q kept sparse) or AT any.pair q
(pull, mxv with the transpose built at load, as LAGraph caches G->AT, q made bitmap as
LAGraph does before a pull: a sparse q made kron18's pulls 10-30x slower), switched by
the same Beamer rule (alpha 14, beta 24) as the Rust code.

WCC: LAGraph's LG_CC_FastSV6 (what LAGr_ConnectedComponents runs with SuiteSparse), on
S = A + A' (the undirected view LAGraph requires, built at load), uint32 labels:
warmup parent(i) = min(i, the smallest neighbour of i) (min.secondi, O(n)); if nnz(S) >
8 n and n > 1024, the sampling phase: FastSV on T = the first 4 entries of every row of S
(S unpacked and packed back, O(1) moves as LAGraph's), the giant component's root `key`
estimated as the most frequent parent among 864 random vertices, then the main matrix
pruned: rows of vertices whose parent is `key` emptied, other rows keep the columns whose
parent is not `key` plus one entry `key` if they lost any; the main FastSV runs on that
(on kron graphs a few hundred entries are left). FastSV itself, as LAGraph's: mngp min=
A min.second gp (mxv, by row); stochastic hooking parent(Px(j)) min= mngp(j) as C
min.second mngp with C(Px(j), j) packed in O(1) from the parents (LAGraph's
Reduce_assign); parent min= mngp, gp; gp = parent(parent); stop when gp is unchanged.
The report adds the sampling phase's facts: sampled=1, sample_key, sample_giant (vertices
whose sampled parent is key), skipped_edges (entries of S not in the main loop's
matrix), key_links (rows given the entry key), pruned_nnz. LAGraph returns any member of
each component as its label; the labels are turned into the smallest member's id after
the timing (a relabelling, same partition). Note on LAGraph's pruning: it is one-sided
(the giant's rows are emptied, an outside row only points at key), so a component whose
root is below key and that reaches the giant only through edges the sample missed keeps
its own label (found on a constructed graph: 1-2-3-4 and 20 attached to 10 of a giant
rooted at 5); kron graphs give key_links=0, where the result is exact, and --check
catches any other case.

SSSP: LAGr_SingleSourceShortestPath's delta-stepping, integer weights (INT32, as
LAGraph's GAP benchmark reads kron), delta 29: what LAGraph's src/benchmark/do_gap_sssp
passes for GAP-kron (sssp_demo's default is 2; GAP-kron's weights are 1..255, ours
1..63; --delta sets another). AL / AH = the edges of weight <= / > delta; bucket `step`
= the reached vertices with t < (step+1) delta: its light edges relaxed (tReq = tmasked
min.plus AL, improvements tless = tReq < t) until the bucket stops changing, then the
heavy edges of every vertex the bucket settled, once; stop when nothing reached remains
outside the settled buckets. LAGraph's lower-bound select for negative weights is skipped
as LAGraph skips it when G->emin >= 0. The report adds delta, buckets (steps) and
light_rounds (light relaxations over all buckets).

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
       gb_kernels.py GRAPH.wel sssp --source S [--delta D] [--threads T] [--check OURS.txt]
Prints "graphblas kernel=.. n=.. nnz=.. threads=.. rounds=.. load_s=.. compute_s=.. total_s=.."
(and the kernel's facts, above),
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
FASTSV_SAMPLES = 4  # LG_CC_FastSV6: neighbours sampled per vertex (sampling if nnz > 8 n, n > 1024)
HASH_SAMPLES = 864  # LG_CC_FastSV6: random parents drawn to estimate the giant component
SSSP_DELTA = 29  # LAGraph's src/benchmark/do_gap_sssp for GAP-kron (sssp_demo's own default: 2)


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


def fastsv_loop(A, parent, gp, mngp, n):
    """LAGraph's FastSV iteration on A (rows: the edges each vertex looks at), until the
    grandparents stop changing. Updates parent, gp and mngp in place (uint32 vectors, all
    entries present); returns the rounds taken. Each round: mngp min= A min.second gp
    (mxv, by row); stochastic hooking parent(Px(j)) min= mngp(j) as C min.second mngp with
    C(Px(j), j) packed from the parents (LAGraph's Reduce_assign); parent min= mngp, gp;
    gp = parent(parent)."""
    indptr = np.arange(n + 1, dtype=np.uint64)
    one = np.ones(1, dtype=bool)
    rounds = 0
    while True:
        rounds += 1
        mngp(binary.min) << semiring.min_second(A @ gp)
        parents = parent.to_dense().astype(np.uint64)
        C = gb.Matrix.ss.import_csc(nrows=n, ncols=n, indptr=indptr, row_indices=parents, values=one,
                                    is_iso=True, sorted_rows=True)
        parent(binary.min) << semiring.min_second(C @ mngp)
        parent(binary.min) << mngp.ewise_add(gp, binary.min)
        gp_new = parent[parent.to_dense()].new()
        if gp_new.isequal(gp):
            return rounds
        gp << gp_new


def first_neighbours(indptr, cols, n, k):
    """The CSR (indptr, columns) of the first k entries of every row (LAGraph's sample T)."""
    deg = np.diff(indptr).astype(np.int64)
    take = np.minimum(deg, k)
    t_indptr = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(take, out=t_indptr[1:])
    # entry e of T is the (e - t_indptr[row])-th entry of its row in A
    row = np.repeat(np.arange(n, dtype=np.int64), take)
    offset = np.arange(len(row), dtype=np.int64) - t_indptr[:-1].astype(np.int64)[row]
    return t_indptr, cols[indptr[:-1].astype(np.int64)[row] + offset]


def without_component(indptr, cols, px, key, n):
    """LAGraph's pruned matrix for the final FastSV: the rows of vertices whose parent is
    `key` are empty; every other row keeps the columns whose parent is not `key` and, if it
    lost any, gains the single column `key` (one edge to the giant component instead of
    many). Returns (indptr, columns, edges skipped, key links added); rows not sorted."""
    deg = np.diff(indptr).astype(np.int64)
    row = np.repeat(np.arange(n, dtype=np.int64), deg)
    row_kept = px != key
    col_kept = px[cols] != key
    keep = row_kept[row] & col_kept
    lost = np.zeros(n, dtype=bool)
    lost[row[row_kept[row] & ~col_kept]] = True
    kept_rows = row[keep]
    kept_per_row = np.bincount(kept_rows, minlength=n)
    t_indptr = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(kept_per_row + lost, out=t_indptr[1:])
    t_cols = np.empty(int(t_indptr[-1]), dtype=np.uint64)
    kept_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(kept_per_row, out=kept_start[1:])
    rank = np.arange(len(kept_rows), dtype=np.int64) - kept_start[kept_rows]
    t_cols[t_indptr[:-1].astype(np.int64)[kept_rows] + rank] = cols[keep]
    t_cols[t_indptr[1:].astype(np.int64)[lost] - 1] = key
    return t_indptr, t_cols, int(len(cols) - keep.sum()), int(lost.sum())


def fastsv6(S, n):
    """LAGraph's LG_CC_FastSV6 on the symmetric S; returns (labels: any member of each
    component, the same for all of it; FastSV rounds; the sampling phase's facts)."""
    nvals = S.nvals
    # warmup: parent(i) = min(i, the smallest neighbour of i), O(n) with min.secondi
    y = gb.Vector.from_dense(np.arange(n, dtype=np.int32))
    y(binary.min) << semiring.ss.min_secondi[gb.dtypes.INT32](S @ gb.Vector.from_scalar(0, n, gb.dtypes.INT32))
    parent = y.dup(gb.dtypes.UINT32)
    gp, mngp = parent.dup(), parent.dup()
    facts = {"sampled": 0}
    rounds = 0
    A = S
    if nvals > n * FASTSV_SAMPLES * 2 and n > 1024:
        # FastSV on T = the first FASTSV_SAMPLES neighbours of every vertex
        fmt = S.ss.unpack("csr")
        indptr, cols = fmt["indptr"], fmt["col_indices"]
        t_indptr, t_cols = first_neighbours(indptr, cols, n, FASTSV_SAMPLES)
        T = gb.Matrix(bool, n, n)
        T.ss.pack_csr(indptr=t_indptr, col_indices=t_cols, values=np.ones(1, dtype=bool), is_iso=True,
                      sorted_cols=fmt["sorted_cols"], take_ownership=True)
        rounds += fastsv_loop(T, parent, gp, mngp, n)
        # the giant component's root: the most frequent parent among random samples
        px = parent.to_dense().astype(np.uint64)
        sample = px[np.random.default_rng(n).integers(0, n, HASH_SAMPLES)]
        roots, counts = np.unique(sample, return_counts=True)
        key = int(roots[np.argmax(counts)])
        t_indptr, t_cols, skipped, key_links = without_component(indptr, cols, px, key, n)
        S.ss.pack_csr(**fmt, take_ownership=True)  # S unchanged, as LAGraph packs G->A back
        A = gb.Matrix(bool, n, n)
        A.ss.pack_csr(indptr=t_indptr, col_indices=t_cols, values=np.ones(1, dtype=bool), is_iso=True,
                      sorted_cols=False, take_ownership=True)
        facts = {"sampled": 1, "sample_key": key, "sample_giant": int(np.count_nonzero(px == key)),
                 "skipped_edges": skipped, "key_links": key_links, "pruned_nnz": A.nvals}
    if A.nvals:
        rounds += fastsv_loop(A, parent, gp, mngp, n)
    return parent.to_dense(), rounds, facts


def smallest_member_labels(labels):
    """Any-member component labels turned into Graphalytics' (each vertex labelled by the
    smallest vertex id of its component): a pure relabelling, same partition."""
    classes, inverse = np.unique(labels, return_inverse=True)
    smallest = np.full(len(classes), len(labels), dtype=np.int64)
    np.minimum.at(smallest, inverse, np.arange(len(labels), dtype=np.int64))
    return smallest[inverse]


def load_weighted(path):
    """A weighted edge list: the matrix of min weights over parallel edges (as ours), INT32
    as LAGraph's GAP benchmark reads the integer-weighted kron graph."""
    e = np.loadtxt(path, dtype=np.int64, comments=("#", "%"), ndmin=2)
    src, dst = e[:, 0].astype(np.uint64), e[:, 1].astype(np.uint64)
    n = int(max(src.max(), dst.max())) + 1
    return gb.Matrix.from_coo(src, dst, e[:, 2].astype(np.int32), nrows=n, ncols=n, dup_op=binary.min), n


def sssp(A, n, src, delta):
    """LAGr_SingleSourceShortestPath's delta-stepping (weights known non-negative, as LAGraph
    knows from G->emin, so its extra lower-bound select is skipped). AL/AH = the edges of
    weight <= delta / > delta. Bucket `step` holds the reached vertices with t < (step+1)
    delta: its light edges are relaxed until no entry of the bucket improves, then the heavy
    edges of every vertex settled in the bucket once; stop when nothing is reached beyond
    the processed buckets. Returns (distances, buckets processed, light relaxations)."""
    inf = np.iinfo(np.int32).max
    int32 = gb.dtypes.INT32
    t = gb.Vector.from_scalar(inf, n, int32)
    t[src] = 0
    t.ss.config["sparsity_control"] = ["bitmap"]
    reach = gb.Vector(bool, n)
    reach.ss.config["sparsity_control"] = ["bitmap"]
    reach[src] = True
    s = gb.Vector(bool, n)
    s[src] = True
    tmasked = gb.Vector(int32, n)
    treq = gb.Vector(int32, n)
    tless = gb.Vector(bool, n)
    for v in (s, tmasked, treq, tless):
        v.ss.config["sparsity_control"] = ["sparse"]
    AL = A.select("valuele", delta).new()
    AH = A.select("valuegt", delta).new()
    min_plus = semiring.min_plus[int32]
    step = light = 0
    while True:
        upper = (step + 1) * delta
        tmasked.clear()
        tmasked(reach.V) << t
        tmasked << tmasked.select("valuelt", upper)
        while tmasked.nvals:
            treq << min_plus(tmasked @ AL)
            s(tmasked.S) << True
            light += 1
            if treq.nvals == 0:
                break
            tless << treq.ewise_mult(t, binary.lt)
            tless << tless.select("valuene", False)
            if tless.nvals == 0:
                break
            reach(tless.S) << True
            tmasked.clear()
            tmasked(tless.S) << treq.select("valuelt", upper)
            t(tless.S) << treq
        tmasked.clear()
        tmasked(s.S) << t
        treq << min_plus(tmasked @ AH)
        tless << treq.ewise_mult(t, binary.lt)
        t(tless.V) << treq
        reach(tless.V) << True
        reach(s.S) << gb.Vector(bool, n)  # drop the settled buckets' vertices
        step += 1
        if reach.nvals == 0:
            break
        s.clear()
    dist = t.to_dense().astype(np.float64)
    dist[dist == inf] = np.inf
    return dist, step, light


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
    ap.add_argument("--delta", type=int, default=SSSP_DELTA, help="SSSP delta (integer weights)")
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
    facts = {}
    if a.kernel == "bfs":
        values, rounds = bfs(A, AT, outdeg, indeg, n, a.source)
    elif a.kernel == "wcc":
        values, rounds, facts = fastsv6(S, n)
    elif a.kernel == "sssp":
        values, rounds, light = sssp(A, n, a.source, a.delta)
        facts = {"delta": a.delta, "buckets": rounds, "light_rounds": light}
    elif a.kernel == "lcc":
        values, rounds = lcc(S, P, order, n)
    else:
        values, rounds = cdlp(A, AT, n, a.iterations)
    compute_s = time.perf_counter() - t1
    line = (f"graphblas kernel={a.kernel} n={n} nnz={A.nvals} threads={a.threads} rounds={rounds} "
            f"load_s={load_s:.4f} compute_s={compute_s:.4f} total_s={time.perf_counter() - t0:.4f}")
    line += "".join(f" {k}={v}" for k, v in facts.items())
    if a.kernel == "wcc":
        values = smallest_member_labels(values)  # after the timing: LAGraph returns any member
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
