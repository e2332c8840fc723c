"""LpfGraph: a graph made from PySpark DataFrames, computed by LPF in the executors."""
import operator
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, TypeVar, Union

from pyspark.sql import DataFrame, SparkSession

from .errors import LpfError, LpfValueError, lpf_error_of

T = TypeVar("T")

#: A vertex id as the graph's id columns hold it: an int for integral ids, a str for strings.
VertexId = Union[int, str]

#: The range of a JVM long: a Python int outside it goes to the JVM as a BigInteger (Py4J
#: would send it as a long it cannot parse), for the JVM's range check to name it.
_LONG_RANGE = range(-2**63, 2**63)


def _argument_error(message: str) -> LpfValueError:
    """A bad argument found before any Spark job, as the JVM's driver-side checks report one
    (an LpfError, also a ValueError)."""
    return LpfValueError(message)


def _integer(name: str, value: Any) -> int:
    """The int value of the integer parameter ``name`` (an int or anything with
    ``__index__``, e.g. a numpy integer); a bool, a float (even a whole one) or anything
    else is an LpfError naming the parameter: ``int()`` would truncate 2.5 to 2."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise _argument_error(f"{name} must be an int, got {value!r} (a {type(value).__name__})")


def _jvm_id(session: SparkSession, value: Any) -> Any:
    """A vertex id for the JVM: a str as it is, an int (or anything with ``__index__``, e.g.
    a numpy integer) as an int, or as a Java BigInteger beyond 64 bits; None for anything
    else (None, a bool, a float even when whole). The JVM compares it exactly with the
    ids in their own type (``LpfGraph.exactId``: range, string or number)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return None
    try:
        number = operator.index(value)
    except TypeError:
        return None
    if number in _LONG_RANGE:
        return number
    return session.sparkContext._jvm.java.math.BigInteger(str(number))


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


@dataclass(frozen=True)
class GraphRun:
    """The figures of one call on an :class:`LpfGraph` (Scala's ``LpfGraphRun``): the
    kernel, the graph's vertices and edges, the rounds it ran, the LPF processes, and
    seconds: native load (of it ``id_seconds`` numbering the ids and translating the
    results back), the kernel's compute, and the whole call as the driver saw it."""

    kernel: str
    vertices: int
    edges: int
    rounds: int
    processes: int
    load_seconds: float
    compute_seconds: float
    id_seconds: float
    call_seconds: float


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


def _bridge_class(session: SparkSession, name: str) -> Any:
    """The Py4J class ``name`` of the bridge's jar; an LpfError when the driver lacks the jar."""
    found = session.sparkContext._jvm
    for part in name.split("."):
        found = getattr(found, part)
    # Py4J answers a JavaPackage, not a JavaClass, for a class it cannot load.
    if type(found).__name__ != "JavaClass":
        raise LpfError(-1, "driver", "check",
                       "the lpf-spark jar is not on the driver's classpath (no class " + name + "): build the "
                       "session with lpf_spark.configure(SparkSession.builder) or start it with --jars "
                       "$(python -c 'import lpf_spark; print(lpf_spark.jar_path())')")
    return found


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
    persisted until the DataFrame is no longer referenced). ``nprocs``: LPF processes (0, the default:
    the cluster's task slots); ``threads``: threads per process (0, the default: ``spark.task.cpus``);
    a negative count, or one that is not an int, raises :class:`LpfError` naming the parameter.
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
        graph_class = _bridge_class(self._session, "org.lpf.spark.LpfGraph")
        self._jgraph = _calling_jvm(lambda: graph_class.create(
            jdf, vertices._jdf if vertices is not None else None, src, dst, id))

    @classmethod
    def _wrapping(cls, jgraph: Any, session: SparkSession) -> "LpfGraph":
        """The LpfGraph of a JVM ``org.lpf.spark.LpfGraph`` made elsewhere (a GraphFrame's)."""
        graph = cls.__new__(cls)
        graph._session = session
        graph._jgraph = jgraph
        return graph

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
        """As :meth:`pageRank`, with the run's figures. ``nprocs``: LPF processes (0, the
        default: the cluster's task slots); ``threads``: threads per process (0, the
        default: ``spark.task.cpus``); negative counts raise :class:`LpfError`."""
        ints = (_integer("maxIter", maxIter), _integer("nprocs", nprocs), _integer("threads", threads))
        r = _calling_jvm(lambda: self._jgraph.pageRankRun(float(alpha), float(tol), *ints))
        return PageRankRun(ranks=DataFrame(r.ranks(), self._session), iterations=int(r.iterations()),
                           residual=float(r.residual()), converged=bool(r.converged()),
                           vertices=int(r.vertices()), edges=int(r.edges()))

    def _kernel(self, call: Callable[[], Any]) -> DataFrame:
        return DataFrame(_calling_jvm(call), self._session)

    def _source(self, source: Any, kernel: str) -> Any:
        """``source`` for the JVM (:func:`_jvm_id`); what Python alone knows is refused
        here, in Python's words: None, a bool, a float (even a whole one), anything not an
        int or a str."""
        value = _jvm_id(self._session, source)
        if value is not None:
            return value
        id_type = str(self._jgraph.idType().simpleString())
        role = f"the {kernel} source"
        if source is None:
            raise _argument_error(f"{role} is None; give an id of type {id_type}")
        kind = type(source).__name__
        if id_type == "string":
            raise _argument_error(f"{role} {source!r} is a {kind}, not an id of type string: give a str")
        raise _argument_error(f"{role} {source!r} is a {kind}, not an id of type {id_type}: ids of an integral "
                              "type are given as int; a float is refused even when whole, a bool always")

    def bfs(self, source: VertexId, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Breadth-first search from the vertex ``source``, following edges forward: a
        DataFrame ``(id, depth)``, every vertex once, ``depth`` a bigint,
        9223372036854775807 where the source does not lead.

        ``source`` is an id of the graph, compared exactly with the ids in their own type:
        an ``int`` (or numpy integer) within the range of the id type for integral ids, a
        ``str`` for string ids. Anything else (None, a bool, a float even when whole, a
        value out of range, a str for integral ids, an int for string ids) and a source
        that is no vertex raise :class:`LpfError` naming the value and the id type."""
        s, counts = self._source(source, "BFS"), (_integer("nprocs", nprocs), _integer("threads", threads))
        return self._kernel(lambda: self._jgraph.bfs(s, *counts))

    def wcc(self, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Weakly connected components: a DataFrame ``(id, component)``, ``component`` the
        smallest id of the vertex's component (numbers numerically, strings as Spark
        sorts them), of the ids' type."""
        counts = (_integer("nprocs", nprocs), _integer("threads", threads))
        return self._kernel(lambda: self._jgraph.wcc(*counts))

    def cdlp(self, iterations: int = 10, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Community detection by synchronous label propagation, ``iterations`` rounds
        (>= 0): each vertex starts with its id as label and takes, each round, the most
        frequent label among its in- and out-neighbours (ties to the smallest). A
        DataFrame ``(id, label)`` of the ids' type."""
        ints = (_integer("iterations", iterations), _integer("nprocs", nprocs), _integer("threads", threads))
        return self._kernel(lambda: self._jgraph.cdlp(*ints))

    def sssp(self, source: VertexId, weightCol: str, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Single-source shortest paths from ``source``, each edge weighing its value in
        the numeric edge column ``weightCol`` (>= 0, not null; parallel edges count with
        their smallest weight): a DataFrame ``(id, distance)``, ``distance`` a double,
        ``inf`` where the source does not lead. ``source`` is an id as for :meth:`bfs`. A
        source that is not exactly an id or no vertex, a missing column, a null or
        negative weight raise :class:`LpfError` naming them."""
        s, counts = self._source(source, "SSSP"), (_integer("nprocs", nprocs), _integer("threads", threads))
        return self._kernel(lambda: self._jgraph.sssp(s, weightCol, *counts))

    def lcc(self, nprocs: int = 0, threads: int = 0) -> DataFrame:
        """Local clustering coefficient: a DataFrame ``(id, lcc)``, ``lcc`` a double: with
        N(v) the neighbours of v over in- and out-edges (v itself, duplicate edges and
        self-loops left out), the directed edges between distinct members of N(v) divided
        by |N(v)|(|N(v)| - 1); 0 when |N(v)| < 2."""
        counts = (_integer("nprocs", nprocs), _integer("threads", threads))
        return self._kernel(lambda: self._jgraph.lcc(*counts))

    # --- resident graphs (docs/spark.md, "Resident graphs")

    def cache(self) -> "LpfGraph":
        """Keeps the graph loaded in the executors' native memory from its next call on
        (or from :meth:`load`): later calls run the kernel on the loaded graph, in one
        Spark stage that reads no DataFrame. Returns this graph, as ``DataFrame.cache()``
        does."""
        _calling_jvm(lambda: self._jgraph.cache())
        return self

    def persist(self) -> "LpfGraph":
        """As :meth:`cache` (native memory is the only level)."""
        _calling_jvm(lambda: self._jgraph.persist())
        return self

    def load(self, weightCol: Optional[str] = None, nprocs: int = 0) -> "LpfGraph":
        """Loads the graph into the executors now and keeps it (as :meth:`cache`), with the
        weights of the edge column ``weightCol`` if given (what :meth:`sssp` needs).
        Returns this graph."""
        n = _integer("nprocs", nprocs)
        _calling_jvm(lambda: self._jgraph.load(weightCol, n))
        return self

    def unpersist(self) -> "LpfGraph":
        """Stops keeping the graph: the executors release its native memory now. Returns
        this graph."""
        _calling_jvm(lambda: self._jgraph.unpersist())
        return self

    @property
    def is_resident(self) -> bool:
        """Whether the graph is loaded in the executors now."""
        return bool(self._jgraph.isResident())

    @property
    def resident_bytes(self) -> Dict[str, int]:
        """Native bytes of the loaded graph per executor id (empty when not resident)."""
        m = self._jgraph.residentBytesJava()
        return {str(k): int(m[k]) for k in m}

    @property
    def last_run(self) -> Optional[GraphRun]:
        """The figures of the latest call on this graph (see :class:`GraphRun`), if any."""
        r = self._jgraph.lastRunOrNull()
        if r is None:
            return None
        return GraphRun(kernel=str(r.kernel()), vertices=int(r.vertices()), edges=int(r.edges()),
                        rounds=int(r.rounds()), processes=int(r.processes()), load_seconds=float(r.loadSeconds()),
                        compute_seconds=float(r.computeSeconds()), id_seconds=float(r.idSeconds()),
                        call_seconds=float(r.callSeconds()))
