"""LpfGraph: a graph made from PySpark DataFrames, computed by LPF in the executors."""
from dataclasses import dataclass
from typing import Any, Callable, Optional, TypeVar, Union

from pyspark.sql import DataFrame, SparkSession

from .errors import LpfError, lpf_error_of

T = TypeVar("T")

#: A vertex id as the graph's id columns hold it: an int for integral ids, a str for strings.
VertexId = Union[int, str]


@dataclass(frozen=True)
class PageRankRun:
    """A PageRank with the native run's figures.

    ``ranks``: DataFrame ``(id, pagerank)``, computed (its rows persisted until it is no
    longer referenced);
    ``iterations`` run; ``residual``: L1 change of the last iteration; ``converged``:
    residual < tol; ``vertices`` and ``edges`` of the graph (duplicate edges once).
    """

    ranks: DataFrame
    iterations: int
    residual: float
    converged: bool
    vertices: int
    edges: int


def _java_of(e: BaseException) -> Any:
    """The Java throwable behind a Py4J or PySpark exception, if any."""
    return getattr(e, "java_exception", None) or getattr(e, "_origin", None)


def _calling_jvm(call: Callable[[], T]) -> T:
    """Runs a call into the JVM; an LpfException anywhere in the Java cause chain becomes LpfError."""
    try:
        return call()
    except Exception as e:
        java = _java_of(e)
        err = lpf_error_of(java) if java is not None else None
        if err is None:
            raise
        raise err from e


class LpfGraph:
    """A graph for LPF's algorithms, made from DataFrames (GraphFrames-like naming).

    :param edges: one row per edge; the columns ``src`` and ``dst`` (names configurable)
        hold source and target ids, of an integral type (tinyint, smallint, int, bigint)
        or strings. Other columns are ignored; duplicate edges count once, self-loops
        count.
    :param vertices: optional; its column ``id`` names vertices, which are part of the
        graph whether or not an edge names them (an isolated vertex still holds rank).
    :param src: the edge column of source ids.
    :param dst: the edge column of target ids.
    :param id: the vertex column of ids.

    Results carry the original ids in their original type. A missing column, ids of
    another type, null ids or an empty graph raise :class:`LpfError` naming the problem.

    >>> ranks = LpfGraph(edges, vertices, src="from", dst="to").pageRank(tol=1e-9)
    >>> depths = LpfGraph(edges).bfs("a")          # DataFrame (id, depth)

    The graph kernels (:meth:`bfs`, :meth:`wcc`, :meth:`cdlp`, :meth:`sssp`, :meth:`lcc`) follow the
    LDBC Graphalytics semantics and return DataFrames computed before they are returned (their rows
    persisted until the DataFrame is no longer referenced). ``nprocs``: LPF processes (default: the
    cluster's task slots); ``threads``: threads per process (default ``spark.task.cpus``).
    """

    def __init__(self, edges: DataFrame, vertices: Optional[DataFrame] = None,
                 src: str = "src", dst: str = "dst", id: str = "id") -> None:
        jdf = getattr(edges, "_jdf", None)
        if jdf is None:
            raise TypeError("LpfGraph needs a classic PySpark DataFrame (a JVM-backed one; Spark Connect "
                            f"DataFrames are not supported), got {type(edges).__name__}")
        if vertices is not None and getattr(vertices, "_jdf", None) is None:
            raise TypeError(f"vertices must be a classic PySpark DataFrame or None, got {type(vertices).__name__}")
        self._session: SparkSession = edges.sparkSession
        jvm = self._session.sparkContext._jvm
        graph_class = jvm.org.lpf.spark.LpfGraph
        # Py4J answers a JavaPackage, not a JavaClass, for a class it cannot load.
        if type(graph_class).__name__ != "JavaClass":
            raise LpfError(-1, "driver", "check",
                           "the lpf-spark jar is not on the driver's classpath: build the session with "
                           "lpf_spark.configure(SparkSession.builder) or start it with --jars "
                           "$(python -c 'import lpf_spark; print(lpf_spark.jar_path())')")
        self._jgraph = _calling_jvm(lambda: graph_class.create(
            jdf, vertices._jdf if vertices is not None else None, src, dst, id))

    def pageRank(self, alpha: float = 0.85, tol: float = 1e-7, maxIter: int = 1000) -> DataFrame:
        """PageRank of the graph as a DataFrame ``(id, pagerank)``: every vertex once,
        ids as in the input, ranks summing to 1. Damping ``alpha``, start 1/n, the rank
        of vertices without out-edges spread uniformly; stops when the L1 change of an
        iteration is below ``tol`` or after ``maxIter`` iterations. The DataFrame is
        computed before it is returned (its rows persisted until it is no longer referenced).
        """
        return self.pageRankRun(alpha, tol, maxIter).ranks

    def pageRankRun(self, alpha: float = 0.85, tol: float = 1e-7, maxIter: int = 1000,
                    nprocs: int = 0, threads: int = 0) -> PageRankRun:
        """As :meth:`pageRank`, with the run's figures. ``nprocs``: LPF processes (default:
        the cluster's task slots); ``threads``: threads per process (default
        ``spark.task.cpus``)."""
        r = _calling_jvm(lambda: self._jgraph.pageRankRun(float(alpha), float(tol), int(maxIter),
                                                          int(nprocs), int(threads)))
        return PageRankRun(ranks=DataFrame(r.ranks(), self._session), iterations=int(r.iterations()),
                           residual=float(r.residual()), converged=bool(r.converged()),
                           vertices=int(r.vertices()), edges=int(r.edges()))

    def _kernel(self, call: Callable[[], Any]) -> DataFrame:
        return DataFrame(_calling_jvm(call), self._session)

    def bfs(self, source: VertexId, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Breadth-first search from the vertex ``source`` (an id of the graph), following
        edges forward: a DataFrame ``(id, depth)``, every vertex once, ``depth`` a bigint,
        9223372036854775807 where the source does not lead. A source that is no vertex
        raises :class:`LpfError` naming it."""
        return self._kernel(lambda: self._jgraph.bfs(source, int(nprocs), int(threads)))

    def wcc(self, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Weakly connected components: a DataFrame ``(id, component)``, ``component`` the
        smallest id of the vertex's component (numbers numerically, strings as Spark
        sorts them), of the ids' type."""
        return self._kernel(lambda: self._jgraph.wcc(int(nprocs), int(threads)))

    def cdlp(self, iterations: int = 10, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Community detection by synchronous label propagation, ``iterations`` rounds
        (>= 0): each vertex starts with its id as label and takes, each round, the most
        frequent label among its in- and out-neighbours (ties to the smallest). A
        DataFrame ``(id, label)`` of the ids' type."""
        return self._kernel(lambda: self._jgraph.cdlp(int(iterations), int(nprocs), int(threads)))

    def sssp(self, source: VertexId, weightCol: str, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Single-source shortest paths from ``source``, each edge weighing its value in
        the numeric edge column ``weightCol`` (>= 0, not null; parallel edges count with
        their smallest weight): a DataFrame ``(id, distance)``, ``distance`` a double,
        ``inf`` where the source does not lead. An absent source or column, a null or
        negative weight raise :class:`LpfError` naming them."""
        return self._kernel(lambda: self._jgraph.sssp(source, weightCol, int(nprocs), int(threads)))

    def lcc(self, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Local clustering coefficient: a DataFrame ``(id, lcc)``, ``lcc`` a double: with
        N(v) the neighbours of v over in- and out-edges (v itself, duplicate edges and
        self-loops left out), the directed edges between distinct members of N(v) divided
        by |N(v)|(|N(v)| - 1); 0 when |N(v)| < 2."""
        return self._kernel(lambda: self._jgraph.lcc(int(nprocs), int(threads)))
