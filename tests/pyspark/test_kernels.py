"""LpfGraph's graph kernels from PySpark on string ids, each equal (exactly) to a plain
Python reference written here from the Graphalytics semantics, and their errors."""
import heapq
import random
import re
import subprocess
import sys
from collections import Counter, deque
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from lpf_spark import LpfError, LpfGraph

Edge = Tuple[str, str, int]
UNREACHABLE = 9223372036854775807


def make_graph(n: int = 200, m: int = 600, seed: int = 31) -> Tuple[List[str], List[Edge]]:
    """String ids; two halves without edges between them, the last tenth without edges;
    integer weights 0..3 (zero included), a self-loop, a duplicate of another weight."""
    rnd = random.Random(seed)
    name = [f"v{(i * 7919) % 1000:03d}-{i}" for i in range(n)]
    k = n - n // 10
    half = k // 2
    edges = []
    for _ in range(m):
        lo, size = (0, half) if rnd.random() < 0.5 else (half, k - half)
        edges.append((name[lo + rnd.randrange(size)], name[lo + rnd.randrange(size)], rnd.randrange(4)))
    edges += [(name[0], name[0], 1), (name[1], name[2], 3), (name[1], name[2], 1)]
    return name, edges


def bfs_ref(vertices: Sequence[str], edges: Sequence[Edge], s: str) -> Dict[str, int]:
    out: Dict[str, List[str]] = {}
    for u, v, _ in edges:
        out.setdefault(u, []).append(v)
    depth = {s: 0}
    queue = deque([s])
    while queue:
        u = queue.popleft()
        for v in out.get(u, []):
            if v not in depth:
                depth[v] = depth[u] + 1
                queue.append(v)
    return {v: depth.get(v, UNREACHABLE) for v in vertices}


def wcc_ref(vertices: Sequence[str], edges: Sequence[Edge]) -> Dict[str, str]:
    parent = {v: v for v in vertices}

    def find(v: str) -> str:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for u, v, _ in edges:
        a, b = find(u), find(v)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return {v: find(v) for v in vertices}


def sssp_ref(vertices: Sequence[str], edges: Sequence[Edge], s: str) -> Dict[str, float]:
    out: Dict[str, List[Tuple[str, float]]] = {}
    for u, v, w in edges:
        out.setdefault(u, []).append((v, float(w)))
    dist = {s: 0.0}
    heap = [(0.0, s)]
    done = set()
    while heap:
        d, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for v, w in out.get(u, []):
            if d + w < dist.get(v, float("inf")):
                dist[v] = d + w
                heapq.heappush(heap, (d + w, v))
    return {v: dist.get(v, float("inf")) for v in vertices}


def cdlp_ref(vertices: Sequence[str], edges: Sequence[Edge], iterations: int) -> Dict[str, str]:
    """Synchronous label propagation over the distinct edges, in- and out-neighbours,
    the most frequent label, ties to the smallest."""
    links = {(u, v) for u, v, _ in edges}
    label = {v: v for v in vertices}
    for _ in range(iterations):
        seen: Dict[str, Counter] = {}
        for u, v in links:
            seen.setdefault(v, Counter())[label[u]] += 1
            seen.setdefault(u, Counter())[label[v]] += 1
        label = {v: (min(c.items(), key=lambda x: (-x[1], x[0]))[0] if (c := seen.get(v)) else l)
                 for v, l in label.items()}
    return label


def lcc_ref(vertices: Sequence[str], edges: Sequence[Edge]) -> Dict[str, float]:
    """N(v) = in- and out-neighbours but v; directed edges between distinct members of
    N(v) over |N(v)|(|N(v)| - 1), 0 when |N(v)| < 2."""
    arcs = {(u, v) for u, v, _ in edges if u != v}
    nbrs: Dict[str, set] = {v: set() for v in vertices}
    for u, v in arcs:
        nbrs[u].add(v)
        nbrs[v].add(u)
    out = {}
    for v in vertices:
        n, d = nbrs[v], len(nbrs[v])
        out[v] = 0.0 if d < 2 else sum(1 for a, b in arcs if a in n and b in n) / (d * (d - 1))
    return out


@pytest.fixture(scope="module")
def graph(spark: SparkSession) -> Tuple[LpfGraph, List[str], List[Edge], DataFrame]:
    name, edges = make_graph()
    schema = StructType([StructField("src", StringType()), StructField("dst", StringType()),
                         StructField("w", IntegerType())])
    edf = spark.createDataFrame(edges, schema).repartition(3)
    vdf = spark.createDataFrame([(v,) for v in name], ["id"])
    return LpfGraph(edf, vdf), name, edges, edf


def collected(df: DataFrame, column: str) -> Dict[object, object]:
    assert df.columns == ["id", column]
    rows = df.collect()
    df.unpersist()
    got = {r[0]: r[1] for r in rows}
    assert len(got) == len(rows), "an id appears twice"
    return got


def test_bfs_equals_a_queue_bfs(graph) -> None:
    g, name, edges, _ = graph
    df = g.bfs(name[1], nprocs=2)
    assert dict(df.dtypes) == {"id": "string", "depth": "bigint"}
    got = collected(df, "depth")
    assert got == bfs_ref(name, edges, name[1])
    assert UNREACHABLE in got.values()


def test_wcc_equals_union_find(graph) -> None:
    g, name, edges, _ = graph
    got = collected(g.wcc(nprocs=2), "component")
    assert got == wcc_ref(name, edges)
    assert len(set(got.values())) > 2


def test_cdlp_equals_label_propagation(graph) -> None:
    g, name, edges, _ = graph
    for iterations in (1, 4):
        assert collected(g.cdlp(iterations, nprocs=2), "label") == cdlp_ref(name, edges, iterations)


def test_sssp_equals_dijkstra(graph) -> None:
    g, name, edges, _ = graph
    df = g.sssp(name[1], "w", nprocs=2)
    assert dict(df.dtypes)["distance"] == "double"
    got = collected(df, "distance")
    assert got == sssp_ref(name, edges, name[1])
    assert float("inf") in got.values()


def test_lcc_equals_the_definition(graph) -> None:
    g, name, edges, _ = graph
    df = g.lcc(nprocs=2)
    assert dict(df.dtypes)["lcc"] == "double"
    got = collected(df, "lcc")
    want = lcc_ref(name, edges)
    assert got.keys() == want.keys()
    bad = {v: (got[v], want[v]) for v in want if abs(got[v] - want[v]) > 1e-12}
    assert not bad, f"{len(bad)} LCC values differ, e.g. {list(bad.items())[:3]}"
    assert sum(1 for c in got.values() if c > 0) > 10


def test_a_cached_graph_gives_the_references_and_releases_its_memory(spark: SparkSession, graph) -> None:
    """Issue 25: cache/load/unpersist from Python; calls on the kept graph equal the
    references, last_run reports each call, unpersist releases the executors' parts."""
    _, name, edges, edf = graph
    vdf = spark.createDataFrame([(v,) for v in name], ["id"])
    g = LpfGraph(edf, vdf).cache()
    assert g.cache() is g and not g.is_resident
    assert g.load("w", nprocs=2) is g and g.is_resident
    assert len(g.resident_bytes) == 2 and all(b > 0 for b in g.resident_bytes.values()), g.resident_bytes
    assert collected(g.bfs(name[1], nprocs=2), "depth") == bfs_ref(name, edges, name[1])
    run = g.last_run
    assert run is not None and run.kernel == "BFS" and run.vertices == len(name) and run.call_seconds > 0, run
    assert collected(g.sssp(name[1], "w", nprocs=2), "distance") == sssp_ref(name, edges, name[1])
    assert collected(g.wcc(nprocs=2), "component") == wcc_ref(name, edges)
    assert g.unpersist() is g and not g.is_resident and g.resident_bytes == {}
    assert collected(g.wcc(nprocs=2), "component") == wcc_ref(name, edges)  # from the DataFrames again


def test_errors_are_lpf_errors_naming_the_problem(graph) -> None:
    g, name, edges, edf = graph
    with pytest.raises(LpfError, match="BFS source 'nobody' is not a vertex") as e:
        g.bfs("nobody")
    assert e.value.phase == "argument" and e.value.permanent
    with pytest.raises(LpfError, match="no column 'weight'"):
        g.sssp(name[1], "weight")
    with pytest.raises(LpfError, match="iterations must be >= 0, got -1"):
        g.cdlp(-1)
    negative = edf.selectExpr("src", "dst", "w - 5 as w")
    with pytest.raises(LpfError, match="SSSP needs weights >= 0"):
        LpfGraph(negative).sssp(name[1], "w")
    with pytest.raises(LpfError, match=r"^LPF on driver failed in phase argument: alpha must be in \[0, 1\], got 1.5$"):
        g.pageRank(alpha=1.5)


@pytest.fixture(params=["true", "false"], ids=["ansi_on", "ansi_off"])
def ansi(spark: SparkSession, request: pytest.FixtureRequest):
    """spark.sql.ansi.enabled as given, restored afterwards (Spark 3.5's default is false, 4's true)."""
    saved = spark.conf.get("spark.sql.ansi.enabled", None)
    spark.conf.set("spark.sql.ansi.enabled", request.param)
    yield request.param
    if saved is None:
        spark.conf.unset("spark.sql.ansi.enabled")
    else:
        spark.conf.set("spark.sql.ansi.enabled", saved)


def cycle(spark: SparkSession, type_name: str, ids: Sequence[object]) -> LpfGraph:
    """The cycle ids[0] -> ids[1] -> ... -> ids[0], ids of the SQL type ``type_name``, weights 1."""
    rows = [(u, v, 1) for u, v in zip(ids, list(ids[1:]) + [ids[0]])]
    return LpfGraph(spark.createDataFrame(rows, f"src {type_name}, dst {type_name}, w int"))


def refused(call, *want: str) -> LpfError:
    """The LpfError of ``call()``: a bad argument found on the driver, its message holding each of ``want``."""
    with pytest.raises(LpfError) as e:
        call()
    err = e.value
    assert (err.phase, err.host, err.pid, err.permanent) == ("argument", "driver", -1, True), str(err)
    for w in want:
        assert w in err.message, f"{w!r} not in {err.message!r}"
    return err


def test_a_source_not_exactly_an_id_is_refused(spark: SparkSession, ansi: str) -> None:
    # Issue 24 item 2: Spark's cast ran 1.5, True and 2.99 from 1, 1 and 2; with ANSI off
    # 300 from 44 (tinyint) and 2**32 + 1 from 1 (int).
    bigints = cycle(spark, "bigint", [1, 2, 3, 44])
    tinyints = cycle(spark, "tinyint", [1, 2, 3, 44])
    ints = cycle(spark, "int", [1, 2, 3, 44])
    strings = cycle(spark, "string", ["1", "2", "5"])
    float_hint = "ids of an integral type are given as int; a float is refused even when whole"
    refused(lambda: bigints.bfs(1.5), "the BFS source 1.5 is a float, not an id of type bigint", float_hint)
    refused(lambda: bigints.bfs(True), "the BFS source True is a bool, not an id of type bigint")
    refused(lambda: bigints.sssp(2.99, "w"), "the SSSP source 2.99 is a float, not an id of type bigint")
    refused(lambda: bigints.bfs(2.0), "the BFS source 2.0 is a float", "refused even when whole")
    refused(lambda: bigints.bfs(None), "the BFS source is None; give an id of type bigint")
    refused(lambda: bigints.bfs("1"), "the BFS source '1' is a string, but the ids are of type bigint")
    refused(lambda: bigints.bfs(2**64 + 1), "the BFS source 18446744073709551617 is outside the range of the ids' type bigint")
    refused(lambda: bigints.bfs(-2**63 - 1), "the BFS source -9223372036854775809 is outside the range")
    refused(lambda: tinyints.bfs(300), "the BFS source 300 is outside the range of the ids' type tinyint (-128 to 127)")
    refused(lambda: ints.bfs(2**32 + 1), "the BFS source 4294967297 is outside the range of the ids' type int")
    refused(lambda: strings.bfs(5), "the BFS source 5 is a number, but the ids are strings")
    refused(lambda: strings.sssp(1.0, "w"), "the SSSP source 1.0 is a float, not an id of type string: give a str")
    # What is exactly an id runs from it.
    assert collected(tinyints.bfs(44, nprocs=2), "depth") == {44: 0, 1: 1, 2: 2, 3: 3}
    assert collected(bigints.sssp(3, "w", nprocs=2), "distance")[3] == 0.0
    assert collected(strings.bfs("5", nprocs=2), "depth")["5"] == 0


def test_negative_counts_are_refused_naming_the_parameter(graph) -> None:
    # Issue 24 item 9: nprocs=-3 and threads=-1 meant "the default".
    g, name, _, _ = graph
    nprocs = "nprocs must be >= 0 (0 lets the bridge choose), got -3"
    threads = "threads must be >= 0 (0: spark.task.cpus), got -1"
    refused(lambda: g.bfs(name[1], nprocs=-3), nprocs)
    refused(lambda: g.bfs(name[1], threads=-1), threads)
    refused(lambda: g.wcc(nprocs=-3), nprocs)
    refused(lambda: g.cdlp(2, threads=-1), threads)
    refused(lambda: g.sssp(name[1], "w", nprocs=-3), nprocs)
    refused(lambda: g.lcc(threads=-1), threads)
    refused(lambda: g.pageRankRun(nprocs=-3), nprocs)
    refused(lambda: g.pageRankRun(threads=-1), threads)
    # Python's int() would have made 2.5 a 2 and True a 1.
    refused(lambda: g.wcc(nprocs=2.5), "nprocs must be an int, got 2.5 (a float)")
    refused(lambda: g.cdlp(True), "iterations must be an int, got True (a bool)")
    refused(lambda: g.pageRank(maxIter=10.5), "maxIter must be an int, got 10.5 (a float)")


def test_messages_name_python_parameters(spark: SparkSession, graph) -> None:
    # Issue 24 item 12: the weightCol, not LpfGraph(...)'s columns; no "id ids"; maxIter,
    # not max_iters; no Scala "src = ..."; the host "driver" for every driver-side check.
    g, name, _, edf = graph
    w = refused(lambda: g.sssp(name[1], "weight"),
                "the edge DataFrame has no column 'weight' for the edge weights", "sssp's weightCol names that column")
    assert "weight ids" not in w.message and "LpfGraph(" not in w.message
    vdf = spark.createDataFrame([("a",)], ["name"])
    v = refused(lambda: LpfGraph(edf, vdf), "the vertex DataFrame has no column 'id' for the vertex ids",
                "LpfGraph's id names that column")
    assert "id ids" not in v.message
    s = refused(lambda: LpfGraph(edf, src="from"), "no column 'from' for the source ids", "LpfGraph's src names that column")
    assert " = " not in s.message
    m = refused(lambda: g.pageRank(maxIter=0), "maxIter must be at least 1, got 0")
    assert "max_iters" not in m.message
    t = refused(lambda: g.pageRank(tol=-1.0), "tol must be a finite number >= 0, got -1", "exactly maxIter iterations")
    assert "max_iters" not in t.message
    with pytest.raises(LpfError) as e:
        g.bfs(name[1], nprocs=64)  # more than the test cluster's task slots
    assert e.value.phase == "check" and e.value.host == "driver" and "task slots" in e.value.message, str(e.value)


def test_docs_progress_snippet_shows_every_kernels_rounds(tmp_path: Path) -> None:
    """docs/spark.md's PySpark progress snippet run as it is, in a Python process of its
    own (its own JVM, Spark's default logging, no log4j file), then the other kernels and
    PageRank: each one's rounds come on the console, numbered from the start."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "spark.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Progress\n"):]
    start = section.index("```python\n") + len("```python\n")
    snippet = section[start:section.index("```", start)]
    more = ("g = LpfGraph(spark.createDataFrame([(i, i + 1, 1.0) for i in range(5)], ['src', 'dst', 'w']))\n"
            "for df in (g.sssp(0, 'w'), g.wcc(), g.cdlp(2), g.lcc(), g.pageRank()):\n"
            "    df.count()\n"
            "spark.stop()\n")
    script = tmp_path / "progress.py"
    script.write_text(snippet + more, encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=170, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = re.findall(r"INFO progress: (\S+(?: \S+)?) \(\d+ processes?\): (\w+) (\d+), ([a-z-]+) (\S+), ", out.stderr)
    seen: Dict[str, List[Tuple[str, int, str, str]]] = {}
    for what, unit, k, measure, value in lines:
        seen.setdefault(what, []).append((unit, int(k), measure, value))
    want = {"LpfGraph BFS": ("level", 0, "frontier"), "LpfGraph SSSP": ("round", 1, "improved"),
            "LpfGraph WCC": ("round", 1, "changed"), "LpfGraph CDLP": ("iteration", 1, "changed"),
            "LpfGraph LCC": ("phase", 1, "candidates"), "LpfPageRank": ("iteration", 1, "residual")}
    assert set(seen) == set(want), f"progress of {sorted(seen)}: {out.stderr[-2000:]}"
    for what, (unit, first, measure) in want.items():
        got = seen[what]
        assert [k for _, k, _, _ in got] == list(range(first, first + len(got))), (what, got)
        assert got[0][0] == unit and got[0][2] == measure, (what, got)
    assert [v for _, _, _, v in seen["LpfGraph BFS"]] == ["1"] * 6, seen["LpfGraph BFS"]
    assert len(seen["LpfGraph CDLP"]) == 2 and len(seen["LpfGraph LCC"]) == 2, seen
