"""GraphFrames' Python API on LPF: code written for GraphFrames changes one import,

>>> from graphframes import GraphFrame            # before
>>> from lpf_spark.graphframes import GraphFrame  # after

and runs its algorithms natively in the executors. Each method maps its arguments onto the
Scala class ``org.lpf.spark.graphframes.GraphFrame`` (the same class Scala and Java users
import) and wraps what it returns; the semantics are documented there and in
docs/graphframes.md. What GraphFrames offers and this class does not (motifs,
aggregateMessages, Pregel, ...) raises ``NotImplementedError`` naming the method.

Errors: a bad argument or a bad graph raises :class:`~lpf_spark.LpfValueError`, an
:class:`~lpf_spark.LpfError` that is also a ``ValueError`` (what GraphFrames raises there);
failures in the executors raise :class:`~lpf_spark.LpfError`.
"""
import numbers
from typing import Any, Callable, List, Optional, Sequence, TypeVar, Union

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.storagelevel import StorageLevel

from .errors import LpfError, LpfValueError
from .graph import (LpfGraph, _argument_error, _bridge_class, _calling_jvm, _integer, _java_of,
                    _jvm_id)

T = TypeVar("T")

#: GraphFrames' column names: the vertex id, an edge's source and destination, the edge
#: struct of :attr:`GraphFrame.triplets`, the edge weight PageRank adds.
ID = "id"
SRC = "src"
DST = "dst"
EDGE = "edge"
WEIGHT = "weight"

_GRAPHFRAME_CLASS = "org.lpf.spark.graphframes.GraphFrame"
_ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"

#: GraphFrames' Python default storage level for intermediate results (accepted, unused).
_DEFAULT_STORAGE = StorageLevel.MEMORY_AND_DISK_DESER


def _calling(call: Callable[[], T]) -> T:
    """Runs a call into the Scala GraphFrame: an LpfException becomes LpfError, an
    IllegalArgumentException (the Scala class's argument checks, GraphFrames' messages)
    an LpfValueError with its message."""
    try:
        return _calling_jvm(call)
    except LpfError:
        raise
    except Exception as e:
        java = _java_of(e)
        if java is not None and java.getClass().getName() == _ILLEGAL_ARGUMENT:
            raise LpfValueError(str(java.getMessage())) from e
        raise


def _not_implemented(method: str) -> NotImplementedError:
    return NotImplementedError(
        f"GraphFrame.{method} is not implemented by lpf-spark's GraphFrame (lpf_spark.graphframes); "
        "see docs/graphframes.md for what it implements, or use graphframes' own GraphFrame for it")


def _boolean(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _argument_error(f"{name} must be a bool, got {value!r} (a {type(value).__name__})")
    return value


def _number(name: str, value: Any) -> float:
    """A float parameter: any real number (an int, a float, a numpy float), not a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _argument_error(f"{name} must be a number, got {value!r} (a {type(value).__name__})")
    return float(value)


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _argument_error(f"{name} must be a str, got {value!r} (a {type(value).__name__})")
    return value


class GraphFrame:
    """A graph of two DataFrames, as GraphFrames' ``GraphFrame``: ``v`` with the vertex
    column ``id``, ``e`` with the edge columns ``src`` and ``dst``; every other column
    is an attribute. Ids are of an integral type (tinyint, smallint, int, bigint) or
    strings. A missing column raises :class:`~lpf_spark.LpfValueError` (a ``ValueError``).

    Algorithm results carry every column of ``v``; an id that edges name but ``v`` lacks
    takes part in the computation and is left out of the results.
    """

    ID = ID
    SRC = SRC
    DST = DST
    EDGE = EDGE
    WEIGHT = WEIGHT

    def __init__(self, v: DataFrame, e: DataFrame) -> None:
        for name, frame in (("v", v), ("e", e)):
            if getattr(frame, "_jdf", None) is None:
                raise TypeError(f"GraphFrame needs classic PySpark DataFrames (JVM-backed; Spark Connect "
                                f"DataFrames are not supported): {name} is a {type(frame).__name__}")
        session = v.sparkSession
        graph_class = _bridge_class(session, _GRAPHFRAME_CLASS)
        self._init(_calling(lambda: graph_class.apply(v._jdf, e._jdf)), session)

    def _init(self, jgraph: Any, session: SparkSession) -> None:
        self._jgf = jgraph
        self._session = session
        self._sc = session.sparkContext

    @classmethod
    def _of(cls, jgraph: Any, session: SparkSession) -> "GraphFrame":
        graph = cls.__new__(cls)
        graph._init(jgraph, session)
        return graph

    def _frame(self, jdf: Any) -> DataFrame:
        return DataFrame(jdf, self._session)

    def _graph(self, call: Callable[[], Any]) -> "GraphFrame":
        return GraphFrame._of(_calling(call), self._session)

    def _storage(self, name: str, level: Any) -> Any:
        if not isinstance(level, StorageLevel):
            raise _argument_error(f"{name} must be a pyspark StorageLevel, got {level!r}")
        return self._sc._getJavaStorageLevel(level)

    def _condition(self, name: str, condition: Any) -> Any:
        if isinstance(condition, Column):
            return condition._jc
        if isinstance(condition, str):
            return condition
        raise _argument_error(f"{name} must be a str (a SQL expression) or a Column, got {condition!r}")

    def _id(self, name: str, value: Any) -> Any:
        """An id argument for the Scala class, which compares it exactly with the ids
        (their type and range) and names it when it is none of them."""
        jvm_value = _jvm_id(self._session, value)
        if jvm_value is None:
            raise _argument_error(f"{name} {value!r} is a {type(value).__name__}: a vertex id is an int (integral "
                                  "ids) or a str (string ids); a float is refused even when whole, a bool always")
        return jvm_value

    def __repr__(self) -> str:
        return str(self._jgf.toString())

    # --- structure (Spark DataFrame operations, as GraphFrames defines them)

    @property
    def vertices(self) -> DataFrame:
        """The vertex DataFrame."""
        return self._frame(self._jgf.vertices())

    @property
    def nodes(self) -> DataFrame:
        """The vertex DataFrame (GraphFrames 0.10's alias of :attr:`vertices`)."""
        return self.vertices

    @property
    def edges(self) -> DataFrame:
        """The edge DataFrame."""
        return self._frame(self._jgf.edges())

    @property
    def outDegrees(self) -> DataFrame:
        """``(id, outDegree)``, ``outDegree`` an int: the edges leaving each id that has
        some (multi-edges each count; ids without out-edges absent)."""
        return self._frame(_calling(self._jgf.outDegrees))

    @property
    def inDegrees(self) -> DataFrame:
        """``(id, inDegree)``, ``inDegree`` an int, as :attr:`outDegrees` for entering edges."""
        return self._frame(_calling(self._jgf.inDegrees))

    @property
    def degrees(self) -> DataFrame:
        """``(id, degree)``, ``degree`` an int: edges at each id, either end (a self-loop counts 2)."""
        return self._frame(_calling(self._jgf.degrees))

    @property
    def triplets(self) -> DataFrame:
        """``(src, edge, dst)``: per edge, its source vertex row, its edge row and its
        destination vertex row, each a struct (edges naming an id absent from the vertices
        are left out)."""
        return self._frame(_calling(self._jgf.triplets))

    def cache(self) -> "GraphFrame":
        """Caches the vertex and edge DataFrames and keeps the LPF graph resident in the
        executors from its next algorithm on. Returns this GraphFrame."""
        _calling(self._jgf.cache)
        return self

    def persist(self, storageLevel: StorageLevel = StorageLevel.MEMORY_ONLY) -> "GraphFrame":
        """Persists the DataFrames at ``storageLevel`` and, as :meth:`cache`, keeps the LPF
        graph resident. Returns this GraphFrame."""
        level = self._storage("storageLevel", storageLevel)
        _calling(lambda: self._jgf.persist(level))
        return self

    def unpersist(self, blocking: bool = False) -> "GraphFrame":
        """Unpersists the DataFrames and releases the resident LPF graph. Returns this GraphFrame."""
        b = _boolean("blocking", blocking)
        _calling(lambda: self._jgf.unpersist(b))
        return self

    def filterVertices(self, condition: Union[str, Column]) -> "GraphFrame":
        """The subgraph of the vertices meeting ``condition`` and the edges between them."""
        c = self._condition("condition", condition)
        return self._graph(lambda: self._jgf.filterVertices(c))

    def filterEdges(self, condition: Union[str, Column]) -> "GraphFrame":
        """The graph with the edges meeting ``condition`` and every vertex."""
        c = self._condition("condition", condition)
        return self._graph(lambda: self._jgf.filterEdges(c))

    def dropIsolatedVertices(self) -> "GraphFrame":
        """The graph without the vertices that no edge names."""
        return self._graph(self._jgf.dropIsolatedVertices)

    def as_undirected(self) -> "GraphFrame":
        """The graph with each edge also reversed (attributes kept)."""
        return self._graph(self._jgf.asUndirected)

    def as_reversed(self) -> "GraphFrame":
        """The graph with every edge reversed (attributes kept)."""
        return self._graph(self._jgf.asReversed)

    def validate(self, check_vertices: bool = True,
                 intermediate_storage_level: StorageLevel = _DEFAULT_STORAGE) -> None:
        """Checks the graph: vertex ids unique and, with ``check_vertices``, every id of an
        edge a vertex. Raises :class:`~lpf_spark.LpfValueError` (a ``ValueError``) naming
        what is wrong. ``intermediate_storage_level`` is accepted and not used."""
        check = _boolean("check_vertices", check_vertices)
        self._storage("intermediate_storage_level", intermediate_storage_level)
        try:
            _calling(lambda: self._jgf.validate(check))
        except LpfValueError:
            raise
        except LpfError as e:
            raise LpfValueError(e.message) from e

    @property
    def lpfGraph(self) -> LpfGraph:
        """The :class:`~lpf_spark.LpfGraph` the algorithms run on (its ``last_run`` holds the
        figures of the latest algorithm, ``is_resident`` whether it is kept in the executors)."""
        return LpfGraph._wrapping(self._jgf.lpfGraph(), self._session)

    # --- algorithms

    def pageRank(self, resetProbability: float = 0.15, sourceId: Any = None,
                 maxIter: Optional[int] = None, tol: Optional[float] = None) -> "GraphFrame":
        """PageRank as GraphX computes it: a GraphFrame whose vertices gain ``pagerank``
        (double; summing to the number of vertices, or to 1 when personalized from
        ``sourceId``) and whose edges gain ``weight`` (1 / out-degree of ``src``). Exactly
        one of ``maxIter`` (iterations) and ``tol`` (run until no rank changes by more)."""
        reset = _number("resetProbability", resetProbability)
        source = None if sourceId is None else self._id("sourceId", sourceId)
        iterations = None if maxIter is None else _integer("maxIter", maxIter)
        tolerance = None if tol is None else _number("tol", tol)

        def run() -> Any:
            builder = self._jgf.pageRank().resetProbability(reset)
            if source is not None:
                builder = builder.sourceId(source)
            if iterations is not None:
                builder = builder.maxIter(iterations)
            if tolerance is not None:
                builder = builder.tol(tolerance)
            return builder.run()

        return self._graph(run)

    def parallelPersonalizedPageRank(self, resetProbability: float = 0.15, sourceIds: Optional[Sequence[Any]] = None,
                                     maxIter: Optional[int] = None) -> "GraphFrame":
        """Personalized PageRank from each of ``sourceIds`` at once, ``maxIter`` iterations:
        vertices gain ``pageranks``, a sparse ``pyspark.ml.linalg`` vector whose position k
        is the rank from ``sourceIds[k]`` (each source's ranks sum to 1); edges gain ``weight``."""
        reset = _number("resetProbability", resetProbability)
        if sourceIds is None or isinstance(sourceIds, (str, bytes)):
            raise _argument_error(f"sourceIds must be a non-empty list of vertex ids, got {sourceIds!r}")
        ids = [self._id(f"sourceIds[{k}]", s) for k, s in enumerate(sourceIds)]
        if maxIter is None:
            raise _argument_error("maxIter is required (the number of iterations)")
        iterations = _integer("maxIter", maxIter)
        gateway = self._sc._gateway
        array = gateway.new_array(gateway.jvm.java.lang.Object, len(ids))
        for k, value in enumerate(ids):
            array[k] = value
        return self._graph(lambda: self._jgf.parallelPersonalizedPageRank().resetProbability(reset)
                           .maxIter(iterations).sourceIds(array).run())

    def connectedComponents(self, algorithm: str = "graphframes", checkpointInterval: int = 2,
                            broadcastThreshold: int = 1000000, useLabelsAsComponents: bool = False,
                            use_local_checkpoints: bool = False, max_iter: int = 2**31 - 2,
                            storage_level: StorageLevel = _DEFAULT_STORAGE) -> DataFrame:
        """Weakly connected components: the vertices with ``component`` (bigint): the
        smallest id of the component for integral ids; for string ids a number naming the
        component, or with ``useLabelsAsComponents`` the smallest id itself (a string).
        ``algorithm``, ``checkpointInterval``, ``broadcastThreshold``,
        ``use_local_checkpoints``, ``max_iter`` and ``storage_level`` tune GraphFrames'
        engines: accepted and not used (one exact native algorithm)."""
        args = (_text("algorithm", algorithm), _integer("checkpointInterval", checkpointInterval),
                _integer("broadcastThreshold", broadcastThreshold),
                _boolean("useLabelsAsComponents", useLabelsAsComponents),
                _boolean("use_local_checkpoints", use_local_checkpoints), _integer("max_iter", max_iter),
                self._storage("storage_level", storage_level))
        return self._frame(_calling(lambda: self._jgf.connectedComponents().setAlgorithm(args[0])
                                    .setCheckpointInterval(args[1]).setBroadcastThreshold(args[2])
                                    .setUseLabelsAsComponents(args[3]).setUseLocalCheckpoints(args[4])
                                    .maxIter(args[5]).setIntermediateStorageLevel(args[6]).run()))

    def stronglyConnectedComponents(self, maxIter: int) -> DataFrame:
        """Strongly connected components (exact; ``maxIter`` only checked >= 1): the vertices
        with ``component`` as :meth:`connectedComponents` names components."""
        iterations = _integer("maxIter", maxIter)
        return self._frame(_calling(lambda: self._jgf.stronglyConnectedComponents().maxIter(iterations).run()))

    def labelPropagation(self, maxIter: int, algorithm: str = "graphx", use_local_checkpoints: bool = False,
                         checkpoint_interval: int = 2, storage_level: StorageLevel = _DEFAULT_STORAGE) -> DataFrame:
        """Label propagation, ``maxIter`` synchronous rounds over edges both ways (ties to
        the smallest label): the vertices with ``label`` (bigint, as components are named
        in :meth:`connectedComponents`). The other parameters are accepted and not used."""
        args = (_integer("maxIter", maxIter), _text("algorithm", algorithm),
                _boolean("use_local_checkpoints", use_local_checkpoints),
                _integer("checkpoint_interval", checkpoint_interval), self._storage("storage_level", storage_level))
        return self._frame(_calling(lambda: self._jgf.labelPropagation().maxIter(args[0]).setAlgorithm(args[1])
                                    .setUseLocalCheckpoints(args[2]).setCheckpointInterval(args[3])
                                    .setIntermediateStorageLevel(args[4]).run()))

    def shortestPaths(self, landmarks: Sequence[Any], algorithm: str = "graphx", use_local_checkpoints: bool = False,
                      checkpoint_interval: int = 2, storage_level: StorageLevel = _DEFAULT_STORAGE,
                      is_directed: bool = True) -> DataFrame:
        """Hop counts to the ``landmarks``: the vertices with ``distances``, a map from
        landmark id to the length of the shortest path from the vertex to it (following
        edges forward, or both ways when ``is_directed`` is False); unreachable landmarks
        are absent. The other parameters are accepted and not used."""
        if landmarks is None or isinstance(landmarks, (str, bytes)):
            raise _argument_error(f"landmarks must be a non-empty list of vertex ids, got {landmarks!r}")
        ids: List[Any] = [self._id(f"landmarks[{k}]", s) for k, s in enumerate(landmarks)]
        args = (_text("algorithm", algorithm), _boolean("use_local_checkpoints", use_local_checkpoints),
                _integer("checkpoint_interval", checkpoint_interval), self._storage("storage_level", storage_level),
                _boolean("is_directed", is_directed))
        jlist = self._sc._jvm.java.util.ArrayList()
        for value in ids:
            jlist.add(value)
        return self._frame(_calling(lambda: self._jgf.shortestPaths().landmarks(jlist).setAlgorithm(args[0])
                                    .setUseLocalCheckpoints(args[1]).setCheckpointInterval(args[2])
                                    .setIntermediateStorageLevel(args[3]).setIsDirected(args[4]).run()))

    def triangleCount(self, storage_level: Optional[StorageLevel] = None, algorithm: str = "exact",
                      lg_nom_entries: int = 12) -> DataFrame:
        """Triangles through each vertex, edges taken undirected (self-loops and repeated
        edges once): the vertices with ``count`` (bigint). Always exact; ``algorithm``
        ("exact" or "approx"), ``lg_nom_entries`` and ``storage_level`` are accepted and not used."""
        args = (self._storage("storage_level", storage_level if storage_level is not None else _DEFAULT_STORAGE),
                _text("algorithm", algorithm), _integer("lg_nom_entries", lg_nom_entries))
        return self._frame(_calling(lambda: self._jgf.triangleCount().setIntermediateStorageLevel(args[0])
                                    .setAlgorithm(args[1]).setLgNomEntries(args[2]).run()))

    def k_core(self, checkpoint_interval: int = 2, use_local_checkpoints: bool = False,
               storage_level: StorageLevel = _DEFAULT_STORAGE) -> DataFrame:
        """Coreness of each vertex in the undirected simple graph (self-loops and repeated
        edges dropped; 0 for isolated vertices): the vertices with ``kcore`` (int). The
        parameters are accepted and not used."""
        args = (_integer("checkpoint_interval", checkpoint_interval),
                _boolean("use_local_checkpoints", use_local_checkpoints), self._storage("storage_level", storage_level))
        return self._frame(_calling(lambda: self._jgf.kCore().setCheckpointInterval(args[0])
                                    .setUseLocalCheckpoints(args[1]).setIntermediateStorageLevel(args[2]).run()))

    def maximal_independent_set(self, seed: int = 42, checkpoint_interval: int = 2,
                                use_local_checkpoints: bool = False,
                                storage_level: StorageLevel = _DEFAULT_STORAGE) -> DataFrame:
        """A maximal independent set of the undirected graph (self-loops ignored), chosen
        by ``seed``: the vertices with ``selected`` (boolean). The other parameters are
        accepted and not used."""
        args = (_integer("seed", seed), _integer("checkpoint_interval", checkpoint_interval),
                _boolean("use_local_checkpoints", use_local_checkpoints), self._storage("storage_level", storage_level))
        return self._frame(_calling(lambda: self._jgf.maximalIndependentSet().setCheckpointInterval(args[1])
                                    .setUseLocalCheckpoints(args[2]).setIntermediateStorageLevel(args[3])
                                    .run(args[0])))

    def bfs(self, fromExpr: Union[str, Column], toExpr: Union[str, Column],
            edgeFilter: Optional[Union[str, Column]] = None, maxPathLength: int = 10) -> DataFrame:
        """Every shortest path, following edges forward (those meeting ``edgeFilter``), from
        a vertex meeting ``fromExpr`` to one meeting ``toExpr``, at most ``maxPathLength``
        edges: columns ``from``, ``e0``, ``v1``, ``e1``, ..., ``to`` (vertex rows and edge
        rows as structs), one row per path; empty when there is none."""
        args = (self._condition("fromExpr", fromExpr), self._condition("toExpr", toExpr),
                None if edgeFilter is None else self._condition("edgeFilter", edgeFilter),
                _integer("maxPathLength", maxPathLength))

        def run() -> Any:
            builder = self._jgf.bfs().fromExpr(args[0]).toExpr(args[1]).maxPathLength(args[3])
            if args[2] is not None:
                builder = builder.edgeFilter(args[2])
            return builder.run()

        return self._frame(_calling(run))

    # --- GraphFrames' methods this class does not implement

    def find(self, pattern: str) -> DataFrame:
        """Not implemented (motif finding): raises NotImplementedError."""
        raise _not_implemented("find")

    def aggregateMessages(self, *args: Any, **kwargs: Any) -> DataFrame:
        """Not implemented: raises NotImplementedError."""
        raise _not_implemented("aggregateMessages")

    @property
    def pregel(self) -> Any:
        """Not implemented: raises NotImplementedError."""
        raise _not_implemented("pregel")

    def svdPlusPlus(self, *args: Any, **kwargs: Any) -> Any:
        """Not implemented: raises NotImplementedError."""
        raise _not_implemented("svdPlusPlus")

    def detectingCycles(self, *args: Any, **kwargs: Any) -> DataFrame:
        """Not implemented: raises NotImplementedError."""
        raise _not_implemented("detectingCycles")

    def powerIterationClustering(self, *args: Any, **kwargs: Any) -> DataFrame:
        """Not implemented: raises NotImplementedError."""
        raise _not_implemented("powerIterationClustering")

    def aggregate_neighbors(self, *args: Any, **kwargs: Any) -> DataFrame:
        """Not implemented: raises NotImplementedError."""
        raise _not_implemented("aggregate_neighbors")

    def type_out_degree(self, *args: Any, **kwargs: Any) -> DataFrame:
        """Not implemented (typed degrees): raises NotImplementedError."""
        raise _not_implemented("type_out_degree")

    def type_in_degree(self, *args: Any, **kwargs: Any) -> DataFrame:
        """Not implemented (typed degrees): raises NotImplementedError."""
        raise _not_implemented("type_in_degree")

    def type_degree(self, *args: Any, **kwargs: Any) -> DataFrame:
        """Not implemented (typed degrees): raises NotImplementedError."""
        raise _not_implemented("type_degree")


__all__ = ["GraphFrame", "ID", "SRC", "DST", "EDGE", "WEIGHT"]
