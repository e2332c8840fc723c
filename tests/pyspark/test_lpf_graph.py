"""The PySpark package against a plain-Python power iteration, and its errors."""
import random
import subprocess
import sys
from pathlib import Path
from typing import Dict, Hashable, List, Sequence, Tuple

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

from lpf_spark import LpfError, LpfGraph

ALPHA, TOL, MAX_ITER = 0.85, 1e-13, 1000


def power_iteration(vertices: Sequence[Hashable], edges: Sequence[Tuple[Hashable, Hashable]],
                    alpha: float = ALPHA, tol: float = TOL, max_iter: int = MAX_ITER) -> Dict[Hashable, float]:
    """PageRank written out: each distinct edge once, start 1/n, the rank of vertices
    without out-edges spread uniformly, stop when the L1 change is below tol."""
    n = len(vertices)
    at = {v: i for i, v in enumerate(vertices)}
    links = sorted({(at[u], at[v]) for u, v in edges})
    out = [0] * n
    for u, _ in links:
        out[u] += 1
    r = [1.0 / n] * n
    for _ in range(max_iter):
        dangling = sum(r[i] for i in range(n) if out[i] == 0)
        nxt = [(1 - alpha) / n + alpha * dangling / n] * n
        for u, v in links:
            nxt[v] += alpha * r[u] / out[u]
        change = sum(abs(a - b) for a, b in zip(nxt, r))
        r = nxt
        if change < tol:
            break
    return {v: r[i] for i, v in enumerate(vertices)}


def random_edges(n: int, m: int, seed: int) -> List[Tuple[int, int]]:
    """m random edges over the first 90% of 0..n-1, plus a self-loop and a duplicate."""
    rnd = random.Random(seed)
    k = n - n // 10
    return [(rnd.randrange(k), rnd.randrange(k)) for _ in range(m)] + [(0, 0), (1, 2), (1, 2)]


def check(got: List[Tuple[Hashable, float]], want: Dict[Hashable, float], within: float = 1e-10) -> float:
    ids = [i for i, _ in got]
    assert len(set(ids)) == len(ids), "an id appears twice in the ranks"
    assert set(ids) == set(want), f"ids differ: {len(set(ids) ^ set(want))} not in both"
    worst = max(abs(r - want[i]) for i, r in got)
    assert worst <= within, f"largest difference from the power iteration {worst:.3e}"
    assert abs(sum(r for _, r in got) - 1.0) < 1e-12
    return worst


def test_string_ids_and_vertices_without_edges(spark: SparkSession) -> None:
    n = 300
    name = [f"page/{i}/{(i * 7919) % 1000}" for i in range(n)]
    edges = [(name[u], name[v]) for u, v in random_edges(n, 2000, 21)]
    edf = spark.createDataFrame(edges, ["from", "to"]).repartition(3)
    vdf = spark.createDataFrame([(v,) for v in name] + [(name[5],)], ["name"])
    run = LpfGraph(edf, vdf, src="from", dst="to", id="name").pageRankRun(ALPHA, TOL, MAX_ITER, nprocs=2)
    ranks = run.ranks
    assert ranks.columns == ["id", "pagerank"]
    assert ranks.schema["id"].dataType == StringType()
    assert run.vertices == n and run.converged
    check([(r["id"], r["pagerank"]) for r in ranks.collect()], power_iteration(name, edges))
    ranks.unpersist()


def test_64_bit_ids(spark: SparkSession) -> None:
    n = 400
    rnd = random.Random(22)
    ids = list(dict.fromkeys([-(2 ** 63), 2 ** 63 - 1, -1, 0] + [rnd.randrange(-(2 ** 63), 2 ** 63) for _ in range(n)]))[:n]
    edges = [(ids[u], ids[v]) for u, v in random_edges(n, 2500, 23)]
    schema = StructType([StructField("src", LongType()), StructField("dst", LongType())])
    ranks = LpfGraph(spark.createDataFrame(edges, schema)).pageRank(alpha=ALPHA, tol=TOL, maxIter=MAX_ITER)
    assert ranks.schema["id"].dataType == LongType()
    named = list(dict.fromkeys(v for e in edges for v in e))
    check([(r["id"], r["pagerank"]) for r in ranks.collect()], power_iteration(named, edges))
    ranks.unpersist()


def test_bad_column_name_raises_lpf_error(spark: SparkSession) -> None:
    edf = spark.createDataFrame([(1, 2), (2, 1)], ["src", "dst"])
    with pytest.raises(LpfError) as e:
        LpfGraph(edf, dst="target").pageRank()
    assert e.value.phase == "argument" and e.value.pid == -1 and e.value.host == "driver"
    assert "no column 'target'" in e.value.message and "src, dst" in e.value.message
    assert e.value.permanent


def test_malformed_graph_raises_lpf_error(spark: SparkSession) -> None:
    schema = StructType([StructField("src", StringType()), StructField("dst", StringType())])
    nulls = spark.createDataFrame([("a", "b"), (None, "a")], schema)
    with pytest.raises(LpfError) as e:
        LpfGraph(nulls).pageRank()
    assert "the edge column 'src' has null ids (the first: the edge (null, a))" in e.value.message, str(e.value)
    assert (e.value.phase, e.value.host, e.value.pid) == ("argument", "driver", -1), str(e.value)
    doubles = spark.createDataFrame([(1.0, 2.0)], StructType([StructField("src", DoubleType()),
                                                               StructField("dst", DoubleType())]))
    with pytest.raises(LpfError) as e:
        LpfGraph(doubles).pageRank()
    assert "'src' has type double" in e.value.message, str(e.value)
    # No vertex at all: the LPF processes' verdict, which all of them give alike: an
    # argument error, as the driver's own checks are.
    empty = spark.createDataFrame([], StructType([StructField("src", LongType()), StructField("dst", LongType())]))
    with pytest.raises(LpfError) as e:
        LpfGraph(empty).pageRankRun(nprocs=2)
    assert "no vertices" in e.value.message and e.value.phase == "argument" and e.value.permanent, str(e.value)


def test_docs_python_snippet_runs(spark: SparkSession, capsys: pytest.CaptureFixture) -> None:
    """docs/spark.md's PySpark example, taken from the doc and run as it is."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "spark.md").read_text(encoding="utf-8")
    section = doc[doc.index("## DataFrames and PySpark"):]
    start = section.index("```python\n") + len("```python\n")
    snippet = section[start:section.index("```", start)]
    namespace: Dict[str, object] = {}
    exec(compile(snippet, "docs/spark.md (PySpark example)", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "-1 driver argument the edge DataFrame has no column 'from'" in printed, printed
    ranks = namespace["ranks"]
    rows = ranks.collect()  # type: ignore[attr-defined]
    assert sorted(r["id"] for r in rows) == ["a", "b", "c", "d", "e"]
    assert abs(sum(r["pagerank"] for r in rows) - 1.0) < 1e-12
    ranks.unpersist()  # type: ignore[attr-defined]


def test_session_without_the_jar_raises_lpf_error_saying_how_to_add_it(tmp_path: Path) -> None:
    """A session started without configure() (another Python process: one JVM per process)."""
    script = tmp_path / "nojar.py"
    script.write_text(
        "from pyspark.sql import SparkSession\n"
        "from lpf_spark import LpfError, LpfGraph\n"
        "spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()\n"
        "edges = spark.createDataFrame([(1, 2)], ['src', 'dst'])\n"
        "try:\n"
        "    LpfGraph(edges)\n"
        "except LpfError as e:\n"
        "    print('LPFERROR', e.phase, '|', e.message)\n"
        "spark.stop()\n", encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=150)
    line = next((x for x in out.stdout.splitlines() if x.startswith("LPFERROR")), None)
    assert line is not None, f"no LpfError (exit {out.returncode}): {out.stdout[-500:]} {out.stderr[-1500:]}"
    assert "check | the lpf-spark jar is not on the driver's classpath" in line and "configure" in line, line


def test_a_job_held_in_python_shows_no_secret(spark: SparkSession) -> None:
    """Issue #24 item 7: an LpfJob reached from Python (py4j) prints without its secret
    or the driver's rendezvous token, with str() (its toString) and repr()."""
    jvm = spark.sparkContext._jvm
    settings = jvm.org.lpf.spark.LpfSettings(120000, "auto", 0, 0, 30000)
    job = jvm.org.lpf.spark.LpfHook.prepare(spark.sparkContext._jsc.sc(), 2, settings)
    hidden = [job.secret(), job.rendezvous().get().token()]
    assert all(len(h) >= 32 for h in hidden)
    for form in (str(job), repr(job), f"{job}", str([job])):
        for h in hidden:
            assert h not in form, form
    assert "redacted" in str(job) and job.id() in str(job), str(job)
