"""lpf_spark.graphframes.GraphFrame from PySpark: GraphFrames' user-guide examples on its
friends graph with our import, and the algorithms against plain-Python models written here
(networkx only as the model it is: its classic graphs and core_number), on string and
integral ids, with extra vertex columns; the unsupported methods' and bad parameters' errors.

The friends graph is the user guide's (7 vertices, 8 edges: Scala's Graphs.friends);
GraphFrames' Python Graphs.friends() lacks Gabby and the edge a -> e (6 vertices, 7 edges).
"""
import random
from collections import Counter, deque
from typing import Any, Dict, Hashable, Iterable, List, Optional, Sequence, Set, Tuple

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.storagelevel import StorageLevel

from lpf_spark import LpfError, LpfValueError
from lpf_spark.graphframes import GraphFrame
from test_kernels import cdlp_ref

Id = Hashable
Arc = Tuple[Id, Id]

FRIENDS_VERTICES = [("a", "Alice", 34), ("b", "Bob", 36), ("c", "Charlie", 30), ("d", "David", 29),
                    ("e", "Esther", 32), ("f", "Fanny", 36), ("g", "Gabby", 60)]
FRIENDS_EDGES = [("a", "b", "friend"), ("b", "c", "follow"), ("c", "b", "follow"), ("f", "c", "follow"),
                 ("e", "f", "follow"), ("e", "d", "friend"), ("d", "a", "friend"), ("a", "e", "friend")]


@pytest.fixture(scope="module")
def friends(spark: SparkSession) -> GraphFrame:
    v = spark.createDataFrame(FRIENDS_VERTICES, ["id", "name", "age"])
    e = spark.createDataFrame(FRIENDS_EDGES, ["src", "dst", "relationship"])
    return GraphFrame(v, e)


def by_id(df: DataFrame, column: str) -> Dict[Any, Any]:
    rows = df.collect()
    got = {r["id"]: r[column] for r in rows}
    assert len(got) == len(rows), "an id appears twice"
    return got


# --- plain-Python models -----------------------------------------------------------------

def undirected_simple(vertices: Iterable[Id], arcs: Iterable[Arc]) -> Dict[Id, Set[Id]]:
    """Neighbours with directions ignored, self-loops dropped, each pair once."""
    nbrs: Dict[Id, Set[Id]] = {v: set() for v in vertices}
    for u, v in arcs:
        nbrs.setdefault(u, set())
        nbrs.setdefault(v, set())
        if u != v:
            nbrs[u].add(v)
            nbrs[v].add(u)
    return nbrs


def coreness(vertices: Iterable[Id], arcs: Iterable[Arc]) -> Dict[Id, int]:
    """Peeling: repeatedly remove a vertex of least remaining degree; its coreness is the
    largest such least degree seen so far."""
    nbrs = undirected_simple(vertices, arcs)
    degree = {v: len(n) for v, n in nbrs.items()}
    left, core, k = set(nbrs), {}, 0
    while left:
        v = min(left, key=lambda x: degree[x])
        k = max(k, degree[v])
        core[v] = k
        left.remove(v)
        for w in nbrs[v]:
            if w in left:
                degree[w] -= 1
    return core


def degree_counts(arcs: Sequence[Arc]) -> Tuple[Counter, Counter, Counter]:
    """(out, in, both) per id over every edge row (multi-edges each count, a self-loop twice in both)."""
    out = Counter(u for u, _ in arcs)
    inn = Counter(v for _, v in arcs)
    return out, inn, out + inn


def components(vertices: Sequence[Id], arcs: Sequence[Arc]) -> Dict[Id, Id]:
    """Weakly connected components: the smallest id of each vertex's component."""
    nbrs = undirected_simple(vertices, arcs)
    label: Dict[Id, Id] = {}
    for s in sorted(nbrs):
        if s in label:
            continue
        label[s] = s
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for w in nbrs[u]:
                if w not in label:
                    label[w] = s
                    queue.append(w)
    return label


def reach(start: Id, step: Dict[Id, Set[Id]]) -> Set[Id]:
    seen, queue = {start}, deque([start])
    while queue:
        for w in step.get(queue.popleft(), ()):
            if w not in seen:
                seen.add(w)
                queue.append(w)
    return seen


def strong_components(vertices: Sequence[Id], arcs: Sequence[Arc]) -> Dict[Id, Id]:
    """SCCs by definition: u and v together when each reaches the other; the smallest id labels."""
    fwd: Dict[Id, Set[Id]] = {}
    bwd: Dict[Id, Set[Id]] = {}
    for u, v in arcs:
        fwd.setdefault(u, set()).add(v)
        bwd.setdefault(v, set()).add(u)
    label: Dict[Id, Id] = {}
    for s in sorted(set(vertices) | {x for a in arcs for x in a}):
        if s not in label:
            for w in reach(s, fwd) & reach(s, bwd):
                label[w] = s
    return label


def label_propagation(vertices: Sequence[Id], arcs: Sequence[Arc], rounds: int) -> Dict[Id, Id]:
    """test_kernels' CDLP model over the arcs, every vertex an arc names labelled too."""
    every = set(vertices) | {x for a in arcs for x in a}
    return cdlp_ref(list(every), [(u, v, None) for u, v in arcs], rounds)


def numbered(labels: Dict[Id, Id], all_ids: Iterable[Id]) -> Dict[Id, int]:
    """Labels that are string ids as our bigint columns give them: the label's position
    in the ascending order of every id of the graph."""
    position = {x: k for k, x in enumerate(sorted(set(all_ids)))}
    return {v: position[l] for v, l in labels.items()}


def hops_to(vertices: Sequence[Id], arcs: Sequence[Arc], landmarks: Sequence[Id],
            directed: bool = True) -> Dict[Id, Dict[Id, int]]:
    """Per vertex, the hop count of the shortest path from it to each landmark it reaches."""
    into: Dict[Id, Set[Id]] = {}
    for u, v in arcs:
        into.setdefault(v, set()).add(u)
        if not directed:
            into.setdefault(u, set()).add(v)
    out: Dict[Id, Dict[Id, int]] = {v: {} for v in vertices}
    for l in landmarks:
        depth, queue = {l: 0}, deque([l])
        while queue:
            u = queue.popleft()
            for w in into.get(u, ()):
                if w not in depth:
                    depth[w] = depth[u] + 1
                    queue.append(w)
        for v, d in depth.items():
            if v in out:
                out[v][l] = d
    return out


def triangles(vertices: Sequence[Id], arcs: Sequence[Arc]) -> Dict[Id, int]:
    nbrs = undirected_simple(vertices, arcs)
    return {v: sum(1 for a in n for b in n if a < b and b in nbrs[a]) for v, n in nbrs.items()}


def pagerank(vertices: Sequence[Id], arcs: Sequence[Arc], reset: float, iterations: int,
             source: Optional[Id] = None) -> Dict[Id, float]:
    """GraphX's PageRank over the distinct edges: ranks start at 1 (personalized: 1 at the
    source, 0 elsewhere); r'(v) = reset * [v is the source, or always when not personalized]
    + (1 - reset) * sum over in-edges u -> v of r(u) / outdeg(u); a vertex without out-edges
    spreads nothing. At the end ranks are scaled to sum to n (personalized: to 1)."""
    links = sorted(set(arcs))
    ids = sorted(set(vertices) | {x for a in links for x in a})
    outdeg = Counter(u for u, _ in links)
    rank = {v: (1.0 if source is None or v == source else 0.0) for v in ids}
    for _ in range(iterations):
        got = {v: 0.0 for v in ids}
        for u, v in links:
            got[v] += rank[u] / outdeg[u]
        rank = {v: (reset if source is None or v == source else 0.0) + (1 - reset) * got[v] for v in ids}
    total = sum(rank.values())
    scale = (1.0 if source is not None else len(ids)) / total
    return {v: r * scale for v, r in rank.items()}


def shortest_paths(edges: Sequence[Tuple], is_from: Set[Id], is_to: Set[Id], max_length: int) -> Counter:
    """GraphFrames' bfs by enumeration: every path of the least length L <= max_length from a
    "from" vertex to a "to" vertex following edges (rows (src, dst, ...)) forward, as the tuple
    (v0, edge0, v1, ..., vL), each edge row its own step (multi-edges give several paths).
    A shortest path's i-th vertex lies at BFS depth i from the "from" vertices, so the paths
    are those walks along depths 0, 1, ..., L."""
    out: Dict[Id, List[Tuple]] = {}
    for e in edges:
        out.setdefault(e[0], []).append(e)
    depth = {v: 0 for v in is_from}
    queue = deque(is_from)
    while queue:
        u = queue.popleft()
        for e in out.get(u, ()):
            if e[1] not in depth:
                depth[e[1]] = depth[u] + 1
                queue.append(e[1])
    reached = [depth[v] for v in is_to if v in depth]
    if not reached or min(reached) > max_length:
        return Counter()
    paths = [(v,) for v in is_from]
    for level in range(1, min(reached) + 1):
        paths = [p + (e, e[1]) for p in paths for e in out.get(p[-1], ()) if depth.get(e[1]) == level]
    return Counter(p for p in paths if p[-1] in is_to)


# --- the user guide's examples on the friends graph -------------------------------------

def test_guide_friends_graph_and_its_structure(friends: GraphFrame) -> None:
    assert friends.vertices.count() == 7 and friends.edges.count() == 8
    assert repr(friends).startswith("GraphFrame(v:[id: string, name: string, age: bigint], e:[src: string")
    assert by_id(friends.outDegrees, "outDegree") == {"a": 2, "b": 1, "c": 1, "d": 1, "e": 2, "f": 1}
    assert by_id(friends.inDegrees, "inDegree") == {"a": 1, "b": 2, "c": 2, "d": 1, "e": 1, "f": 1}
    assert by_id(friends.degrees, "degree") == {"a": 3, "b": 3, "c": 3, "d": 2, "e": 3, "f": 2}
    assert dict(friends.degrees.dtypes) == {"id": "string", "degree": "int"}
    assert friends.vertices.groupBy().min("age").collect()[0][0] == 29
    assert friends.edges.filter("relationship = 'follow'").count() == 4
    assert friends.nodes.count() == 7
    t = friends.triplets
    assert t.columns == ["src", "edge", "dst"] and t.count() == 8
    assert sorted((r.src.name, r.edge.relationship, r.dst.name) for r in t.collect())[0] == \
        ("Alice", "friend", "Bob")


def test_guide_subgraph(friends: GraphFrame) -> None:
    g = friends.filterVertices("age > 30").filterEdges("relationship = 'friend'").dropIsolatedVertices()
    assert sorted(r.id for r in g.vertices.collect()) == ["a", "b", "e"]
    assert sorted((r.src, r.dst) for r in g.edges.collect()) == [("a", "b"), ("a", "e")]
    h = friends.filterVertices(F.col("age") > 30).filterEdges(F.col("relationship") == "friend")
    assert h.vertices.count() == 5 and h.edges.count() == 2
    assert sorted((r.dst, r.src) for r in friends.as_reversed().edges.collect()) == sorted(
        (s, d) for s, d, _ in FRIENDS_EDGES)
    assert friends.as_undirected().edges.count() == 16


def test_guide_bfs(friends: GraphFrame) -> None:
    paths = friends.bfs("name = 'Esther'", "age < 32")
    assert paths.columns == ["from", "e0", "to"]
    rows = paths.collect()
    assert [(r["from"].name, r.e0.relationship, r.to.name) for r in rows] == [("Esther", "friend", "David")]
    assert rows[0]["from"].asDict() == {"id": "e", "name": "Esther", "age": 32}
    filtered = friends.bfs("name = 'Esther'", "age < 32", edgeFilter="relationship != 'friend'", maxPathLength=3)
    assert filtered.columns == ["from", "e0", "v1", "e1", "to"]
    assert [(r["from"].id, r.v1.id, r.to.id) for r in filtered.collect()] == [("e", "f", "c")]
    assert friends.bfs("name = 'Esther'", "age < 32", edgeFilter="relationship != 'friend'",
                       maxPathLength=1).count() == 0
    zero = friends.bfs("id = 'd'", F.col("age") < 30)
    assert zero.columns == ["from", "to"] and [(r["from"].id, r.to.id) for r in zero.collect()] == [("d", "d")]


def test_guide_connected_components(friends: GraphFrame) -> None:
    cc = friends.connectedComponents()
    assert cc.columns == ["id", "name", "age", "component"]
    assert dict(cc.dtypes)["component"] == "bigint"
    # string ids: the component's number is its smallest id's position among all ids
    assert by_id(cc, "component") == {"a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 6}
    labels = friends.connectedComponents(useLabelsAsComponents=True)
    assert by_id(labels, "component") == {"a": "a", "b": "a", "c": "a", "d": "a", "e": "a", "f": "a", "g": "g"}
    graphx = friends.connectedComponents(algorithm="graphx", checkpointInterval=0, broadcastThreshold=-1)
    assert by_id(graphx, "component") == by_id(cc, "component")


def test_guide_strongly_connected_components(friends: GraphFrame) -> None:
    scc = friends.stronglyConnectedComponents(maxIter=10)
    assert scc.columns == ["id", "name", "age", "component"]
    assert by_id(scc, "component") == {"a": 0, "d": 0, "e": 0, "b": 1, "c": 1, "f": 5, "g": 6}


def test_guide_label_propagation(friends: GraphFrame) -> None:
    lpa = friends.labelPropagation(maxIter=5)
    assert lpa.columns == ["id", "name", "age", "label"] and dict(lpa.dtypes)["label"] == "bigint"
    arcs = [(s, d) for s, d, _ in FRIENDS_EDGES]
    ids = [v for v, _, _ in FRIENDS_VERTICES]
    assert by_id(lpa, "label") == numbered(label_propagation(ids, arcs, 5), ids)


def test_guide_pagerank(friends: GraphFrame) -> None:
    arcs = [(s, d) for s, d, _ in FRIENDS_EDGES]
    ids = [v for v, _, _ in FRIENDS_VERTICES]
    pr = friends.pageRank(resetProbability=0.15, maxIter=10)
    assert pr.vertices.columns == ["id", "name", "age", "pagerank"]
    got = by_id(pr.vertices, "pagerank")
    want = pagerank(ids, arcs, 0.15, 10)
    assert got.keys() == want.keys() and all(abs(got[v] - want[v]) < 1e-9 for v in want), (got, want)
    assert abs(sum(got.values()) - 7) < 1e-9
    weights = {(r.src, r.dst): r.weight for r in pr.edges.collect()}
    assert weights[("a", "b")] == 0.5 and weights[("b", "c")] == 1.0
    personal = by_id(friends.pageRank(resetProbability=0.15, maxIter=10, sourceId="a").vertices, "pagerank")
    assert personal["g"] == 0.0 and abs(sum(personal.values()) - 1) < 1e-9
    want = pagerank(ids, arcs, 0.15, 10, source="a")
    assert all(abs(personal[v] - want[v]) < 1e-9 for v in want)
    converged = by_id(friends.pageRank(resetProbability=0.15, tol=0.01).vertices, "pagerank")
    assert converged.keys() == got.keys() and abs(sum(converged.values()) - 7) < 1e-9


def test_guide_parallel_personalized_pagerank(friends: GraphFrame) -> None:
    from pyspark.ml.linalg import SparseVector  # needs numpy, which suite.sh installs

    arcs = [(s, d) for s, d, _ in FRIENDS_EDGES]
    ids = [v for v, _, _ in FRIENDS_VERTICES]
    sources = ["a", "b", "c", "d"]
    ppr = friends.parallelPersonalizedPageRank(resetProbability=0.15, sourceIds=sources, maxIter=10)
    assert ppr.vertices.columns == ["id", "name", "age", "pageranks"]
    got = by_id(ppr.vertices, "pageranks")
    assert all(isinstance(x, SparseVector) and x.size == 4 for x in got.values())
    assert got["g"].numNonzeros() == 0
    for k, s in enumerate(sources):
        want = pagerank(ids, arcs, 0.15, 10, source=s)
        assert all(abs(got[v][k] - want[v]) < 1e-9 for v in ids), (s, got, want)
    assert "weight" in ppr.edges.columns


def test_guide_shortest_paths(friends: GraphFrame) -> None:
    sp = friends.shortestPaths(landmarks=["a", "d"])
    assert sp.columns == ["id", "name", "age", "distances"]
    assert by_id(sp, "distances") == {"a": {"a": 0, "d": 2}, "b": {}, "c": {}, "d": {"a": 1, "d": 0},
                                      "e": {"a": 2, "d": 1}, "f": {}, "g": {}}
    both_ways = by_id(friends.shortestPaths(["a"], is_directed=False), "distances")
    assert both_ways["c"] == {"a": 2} and both_ways["g"] == {}


def test_guide_triangle_count(friends: GraphFrame) -> None:
    tc = friends.triangleCount()
    assert tc.columns == ["id", "name", "age", "count"] and dict(tc.dtypes)["count"] == "bigint"
    assert by_id(tc, "count") == {"a": 1, "d": 1, "e": 1, "b": 0, "c": 0, "f": 0, "g": 0}
    assert by_id(friends.triangleCount(algorithm="approx", lg_nom_entries=4), "count") == by_id(tc, "count")


def test_guide_k_core_and_independent_set(friends: GraphFrame) -> None:
    kc = friends.k_core()
    assert kc.columns == ["id", "name", "age", "kcore"] and dict(kc.dtypes)["kcore"] == "int"
    arcs = [(s, d) for s, d, _ in FRIENDS_EDGES]
    assert by_id(kc, "kcore") == coreness([v for v, _, _ in FRIENDS_VERTICES], arcs)
    mis = friends.maximal_independent_set(seed=7)
    assert mis.columns == ["id", "name", "age", "selected"]
    check_independent_and_maximal(by_id(mis, "selected"), [v for v, _, _ in FRIENDS_VERTICES], arcs)


# --- models on networkx's classic graphs and generated graphs ---------------------------

def check_independent_and_maximal(selected: Dict[Id, bool], vertices: Sequence[Id], arcs: Sequence[Arc]) -> None:
    assert set(selected) == set(vertices)
    nbrs = undirected_simple(vertices, arcs)
    chosen = {v for v, s in selected.items() if s}
    for v in vertices:
        if v in chosen:
            assert not (nbrs[v] & chosen), f"{v!r} and its neighbours {nbrs[v] & chosen} are all selected"
        else:
            assert nbrs[v] & chosen, f"{v!r} is not selected and has no selected neighbour: not maximal"


def classic(name: str) -> Tuple[List[Id], List[Arc]]:
    import networkx as nx  # the 3.5 environment lacks networkx: imported by the tests using it

    graph = {"karate": nx.karate_club_graph, "lesmis": nx.les_miserables_graph,
             "florentine": nx.florentine_families_graph, "davis": nx.davis_southern_women_graph}[name]()
    return sorted(graph.nodes), sorted((u, v) for u, v in graph.edges)


def frames(spark: SparkSession, vertices: Sequence[Id], arcs: Sequence[Arc], id_type: str) -> GraphFrame:
    """A GraphFrame with two extra vertex columns (a name and a rank) and an edge attribute."""
    v = spark.createDataFrame([(x, f"vertex {x}", k) for k, x in enumerate(vertices)],
                              f"id {id_type}, name string, rank int")
    e = spark.createDataFrame([(u, w, k % 3) for k, (u, w) in enumerate(arcs)],
                              f"src {id_type}, dst {id_type}, kind int").repartition(3)
    return GraphFrame(v, e)


def check_vertex_columns(df: DataFrame, vertices: Sequence[Id], added: str) -> None:
    """The result carries every vertex column with its values, plus ``added``."""
    assert df.columns == ["id", "name", "rank", added]
    position = {x: k for k, x in enumerate(vertices)}
    rows = df.collect()
    assert sorted(position[r.id] for r in rows) == list(range(len(vertices)))
    assert all(r.name == f"vertex {r.id}" and r.rank == position[r.id] for r in rows)


@pytest.mark.parametrize("name,id_type", [("karate", "int"), ("karate", "bigint"), ("lesmis", "string"),
                                          ("florentine", "string"), ("davis", "string")])
def test_classic_graphs_equal_the_models(spark: SparkSession, name: str, id_type: str) -> None:
    import networkx as nx

    vertices, arcs = classic(name)
    g = frames(spark, vertices, arcs, id_type)
    out, inn, both = degree_counts(arcs)
    assert by_id(g.outDegrees, "outDegree") == dict(out)
    assert by_id(g.inDegrees, "inDegree") == dict(inn)
    assert by_id(g.degrees, "degree") == dict(both)

    kc = g.k_core()
    check_vertex_columns(kc, vertices, "kcore")
    want = coreness(vertices, arcs)
    assert by_id(kc, "kcore") == want
    simple = nx.Graph()
    simple.add_nodes_from(vertices)
    simple.add_edges_from((u, v) for u, v in arcs if u != v)
    assert want == nx.core_number(simple)

    for seed in (42, 2024):
        mis = g.maximal_independent_set(seed=seed)
        check_vertex_columns(mis, vertices, "selected")
        check_independent_and_maximal(by_id(mis, "selected"), vertices, arcs)

    undirected = g.as_undirected()
    both_ways = arcs + [(v, u) for u, v in arcs]
    source, target = vertices[0], vertices[-1]
    paths = undirected.bfs(F.col("id") == F.lit(source), F.col("id") == F.lit(target))
    want_paths = shortest_paths([(u, v) for u, v in both_ways], {source}, {target}, 10)
    assert sum(want_paths.values()) > 0
    assert Counter(path_tuple(r) for r in paths.collect()) == want_paths

    labels = (lambda m: m) if id_type != "string" else (lambda m: numbered(m, vertices))
    assert by_id(g.connectedComponents(), "component") == labels(components(vertices, arcs))
    assert by_id(g.stronglyConnectedComponents(5), "component") == labels(strong_components(vertices, arcs))
    assert by_id(g.labelPropagation(3), "label") == labels(label_propagation(vertices, arcs, 3))
    assert by_id(g.triangleCount(), "count") == triangles(vertices, arcs) == nx.triangles(simple)
    marks = vertices[:3]
    assert by_id(g.shortestPaths(marks), "distances") == hops_to(vertices, arcs, marks)
    assert by_id(g.shortestPaths(marks, is_directed=False), "distances") == hops_to(vertices, arcs, marks, False)


def path_tuple(row: Row) -> Tuple:
    """(from id, (src, dst) of e0, v1 id, ..., to id) of a bfs row."""
    return tuple(row[c].id if k % 2 == 0 else (row[c].src, row[c].dst) for k, c in enumerate(row.__fields__))


def random_multigraph(n: int, m: int, seed: int) -> Tuple[List[int], List[Tuple[int, int, int]]]:
    """Ids 0..n-1 scattered over a wide range, m edges with a weight 0..4: multi-edges
    (some with equal weights), self-loops, isolated vertices."""
    rnd = random.Random(seed)
    ids = sorted(rnd.sample(range(-10**12, 10**12), n))
    edges = [(ids[rnd.randrange(n - 5)], ids[rnd.randrange(n - 5)], rnd.randrange(5)) for _ in range(m)]
    edges += [edges[0], (edges[1][0], edges[1][1], 9), (ids[3], ids[3], 1)]
    return ids, edges


@pytest.mark.parametrize("seed", [1, 2])
def test_generated_multigraphs_equal_the_models(spark: SparkSession, seed: int) -> None:
    ids, edges = random_multigraph(60, 150, seed)
    # bfs from the first id ("kind" 0) to the ids three hops away, or as far as it leads ("kind" 2)
    depth = hops_to(ids, [(b, a) for a, b, _ in edges], [ids[0]])
    far = min(3, max(d[ids[0]] for d in depth.values() if d))
    kind = {x: 0 if x == ids[0] else 2 if depth[x].get(ids[0]) == far else 1 for x in ids}
    v = spark.createDataFrame([(x, kind[x]) for x in ids], "id bigint, kind int")
    e = spark.createDataFrame(edges, "src bigint, dst bigint, w int")
    g = GraphFrame(v, e)
    arcs = [(a, b) for a, b, _ in edges]
    out, inn, both = degree_counts(arcs)
    assert by_id(g.outDegrees, "outDegree") == dict(out)
    assert by_id(g.inDegrees, "inDegree") == dict(inn)
    assert by_id(g.degrees, "degree") == dict(both)
    assert by_id(g.k_core(), "kcore") == coreness(ids, arcs)
    check_independent_and_maximal(by_id(g.maximal_independent_set(seed=seed), "selected"), ids, arcs)
    sources, targets = {x for x in ids if kind[x] == 0}, {x for x in ids if kind[x] == 2}
    found = 0
    for edge_filter, keep, longest in ((None, lambda w: True, 10), ("w < 3", lambda w: w < 3, 10),
                                       ("w < 2", lambda w: w < 2, 10), (None, lambda w: True, far),
                                       (None, lambda w: True, far - 1)):
        want = shortest_paths([e for e in edges if keep(e[2])], sources, targets, longest)
        found += sum(want.values())
        got = g.bfs("kind = 0", "kind = 2", edgeFilter=edge_filter, maxPathLength=longest).collect()
        assert Counter(tuple(r[c].id if k % 2 == 0 else (r[c].src, r[c].dst, r[c].w)
                             for k, c in enumerate(r.__fields__)) for r in got) == want, (edge_filter, longest)
    assert found > 0


def test_integral_id_types_keep_their_type(spark: SparkSession) -> None:
    for id_type in ("tinyint", "smallint", "int", "bigint"):
        g = frames(spark, [1, 2, 3, 4], [(1, 2), (2, 3), (3, 1), (4, 4)], id_type)
        cc = g.connectedComponents()
        assert dict(cc.dtypes)["id"] == id_type and dict(cc.dtypes)["component"] == "bigint"
        assert by_id(cc, "component") == {1: 1, 2: 1, 3: 1, 4: 4}
        assert by_id(g.shortestPaths([3]), "distances") == {1: {3: 2}, 2: {3: 1}, 3: {3: 0}, 4: {}}


def test_edges_naming_ids_absent_from_vertices(spark: SparkSession) -> None:
    """Such ids take part (here 9 joins 1 and 2) but are not in the results."""
    v = spark.createDataFrame([(1, "x"), (2, "y"), (5, "z")], "id bigint, tag string")
    e = spark.createDataFrame([(1, 9), (9, 2)], "src bigint, dst bigint")
    g = GraphFrame(v, e)
    assert by_id(g.connectedComponents(), "component") == {1: 1, 2: 1, 5: 5}
    assert by_id(g.stronglyConnectedComponents(1), "component") == {1: 1, 2: 2, 5: 5}
    with pytest.raises(ValueError):
        g.validate()
    g.validate(check_vertices=False)


def test_a_cached_graph_stays_resident_until_unpersisted(friends: GraphFrame) -> None:
    g = friends.cache()
    assert g is friends
    first = by_id(g.connectedComponents(), "component")
    assert g.lpfGraph.is_resident and g.lpfGraph.last_run is not None
    assert by_id(g.k_core(), "kcore")["g"] == 0 and by_id(g.connectedComponents(), "component") == first
    g.unpersist(blocking=True)
    assert not g.lpfGraph.is_resident
    assert friends.persist(StorageLevel.MEMORY_AND_DISK) is friends
    assert by_id(friends.connectedComponents(), "component") == first and friends.lpfGraph.is_resident
    friends.unpersist()
    assert not friends.lpfGraph.is_resident


# --- errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("method,call", [
    ("find", lambda g: g.find("(a)-[e]->(b)")),
    ("aggregateMessages", lambda g: g.aggregateMessages(F.sum("MSG"), sendToSrc=F.lit(1))),
    ("pregel", lambda g: g.pregel),
    ("svdPlusPlus", lambda g: g.svdPlusPlus()),
    ("detectingCycles", lambda g: g.detectingCycles()),
    ("powerIterationClustering", lambda g: g.powerIterationClustering(2, 10)),
    ("aggregate_neighbors", lambda g: g.aggregate_neighbors([1], ["x"], [F.lit(0)], [F.lit(1)])),
    ("type_out_degree", lambda g: g.type_out_degree("relationship")),
    ("type_in_degree", lambda g: g.type_in_degree("relationship")),
    ("type_degree", lambda g: g.type_degree("relationship")),
])
def test_unsupported_methods_say_so(friends: GraphFrame, method: str, call) -> None:
    with pytest.raises(NotImplementedError,
                       match=rf"^GraphFrame\.{method} is not implemented by lpf-spark's GraphFrame"):
        call(friends)


def argument_error(call, *want: str) -> LpfValueError:
    """The error of ``call()``: an LpfError that is also a ValueError, its message holding each of ``want``."""
    with pytest.raises(LpfValueError) as e:
        call()
    err = e.value
    assert isinstance(err, ValueError) and isinstance(err, LpfError) and err.phase == "argument", str(err)
    for w in want:
        assert w in err.message, f"{w!r} not in {err.message!r}"
    return err


def test_parameter_errors_name_the_parameter(spark: SparkSession, friends: GraphFrame) -> None:
    g = friends
    argument_error(lambda: g.pageRank(maxIter=10, tol=0.01), "maxIter", "tol")
    argument_error(lambda: g.pageRank(), "maxIter")
    argument_error(lambda: g.pageRank(maxIter="10"), "maxIter", "'10'")
    argument_error(lambda: g.pageRank(resetProbability="0.1", maxIter=2), "resetProbability")
    with pytest.raises(LpfError, match="resetProbability"):
        g.pageRank(resetProbability=1.5, maxIter=2)
    argument_error(lambda: g.pageRank(maxIter=2, sourceId=1.0), "sourceId", "1.0")
    with pytest.raises(LpfError, match="zz"):
        g.pageRank(maxIter=2, sourceId="zz")
    with pytest.raises(LpfError, match="string"):
        g.pageRank(maxIter=2, sourceId=1)
    argument_error(lambda: g.parallelPersonalizedPageRank(maxIter=2), "sourceIds")
    argument_error(lambda: g.parallelPersonalizedPageRank(sourceIds=["a"]), "maxIter")
    with pytest.raises(LpfError, match="sourceIds"):
        g.parallelPersonalizedPageRank(sourceIds=[], maxIter=2)
    argument_error(lambda: g.shortestPaths("a"), "landmarks")
    argument_error(lambda: g.shortestPaths([None]), "landmarks[0]")
    with pytest.raises(LpfError, match="maxIter"):
        g.stronglyConnectedComponents(0)
    argument_error(lambda: g.labelPropagation(maxIter=2.5), "maxIter", "2.5")
    argument_error(lambda: g.connectedComponents(useLabelsAsComponents="yes"), "useLabelsAsComponents")
    argument_error(lambda: g.connectedComponents(storage_level="MEMORY"), "storage_level")
    argument_error(lambda: g.maximal_independent_set(seed=1.5), "seed")
    argument_error(lambda: g.bfs(3, "age < 32"), "fromExpr")
    with pytest.raises(LpfError, match="maxPathLength"):
        g.bfs("id = 'a'", "id = 'b'", maxPathLength=-1)
    with pytest.raises(TypeError, match="classic PySpark DataFrames"):
        GraphFrame([("a",)], g.edges)


def test_graph_errors(spark: SparkSession) -> None:
    e = spark.createDataFrame([("a", "b")], ["src", "dst"])
    for v, column in ((spark.createDataFrame([("a",)], ["name"]), "id"),):
        with pytest.raises(ValueError, match=f"'{column}'"):
            GraphFrame(v, e)
    with pytest.raises(ValueError, match="'dst'"):
        GraphFrame(spark.createDataFrame([("a",)], ["id"]), e.withColumnRenamed("dst", "to"))
    twice = GraphFrame(spark.createDataFrame([("a",), ("b",), ("a",)], ["id"]), e)
    with pytest.raises(LpfError, match="appears more than once"):
        twice.connectedComponents().collect()
    with pytest.raises(ValueError, match="duplicate"):
        twice.validate()
    nulls = GraphFrame(spark.createDataFrame([("a",), (None,)], "id string"), e)
    with pytest.raises(LpfError, match="id"):
        nulls.k_core().collect()
    doubles = GraphFrame(spark.createDataFrame([(1.0,)], "id double"),
                         spark.createDataFrame([(1.0, 1.0)], "src double, dst double"))
    with pytest.raises(LpfError, match="double"):
        doubles.triangleCount().collect()


def test_bfs_gives_a_path_per_edge_row(spark: SparkSession) -> None:
    """Repeated edges each make a path (GraphFrames joins edge rows), the LPF graph counts them once."""
    v = spark.createDataFrame([(1, "x"), (2, "y"), (3, "z")], "id int, tag string")
    e = spark.createDataFrame([(1, 2, "p"), (1, 2, "q"), (2, 3, "r"), (1, 1, "loop")], "src int, dst int, via string")
    paths = GraphFrame(v, e).bfs("tag = 'x'", "tag = 'z'")
    assert sorted((r.e0.via, r.v1.tag, r.e1.via) for r in paths.collect()) == [("p", "y", "r"), ("q", "y", "r")]
    assert [f.dataType.simpleString() for f in paths.schema.fields] == [
        "struct<id:int,tag:string>", "struct<src:int,dst:int,via:string>", "struct<id:int,tag:string>",
        "struct<src:int,dst:int,via:string>", "struct<id:int,tag:string>"]
