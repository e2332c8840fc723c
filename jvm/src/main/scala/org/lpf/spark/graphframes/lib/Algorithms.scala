package org.lpf.spark.graphframes.lib

import org.apache.spark.ml.linalg.{Vector, Vectors}
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions.{array, broadcast, coalesce, col, count, expr, lit, map_filter, map_from_arrays, struct,
  transform_values, udf, when}
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.storage.StorageLevel

import org.lpf.spark.{LpfException, LpfGraph, LpfGraphCall}
import org.lpf.spark.graphframes.GraphFrame
import org.lpf.spark.graphframes.GraphFrame.{DST, ID, SRC, WEIGHT, columnsOf, quoted}

/** What the algorithm builders share: one LpfGraph call, its result joined to the vertices. */
private[lib] object Calls {
  /**
   * `body` (an LpfGraph call), with the native refusal of a duplicate vertex id (flag
   * UNIQUE) said in GraphFrame's terms: the column `id`.
   */
  def calling[T](body: => T): T =
    try body catch {
      case e: LpfException if e.getMessage != null && e.getMessage.contains("appears more than once") =>
        throw LpfException.argument(s"the vertex column '$ID' of the GraphFrame has duplicate ids (${e.detail}); " +
          "each vertex id must appear once")
    }

  /**
   * The result `(id, column)` of `o` (named `name`) joined to `g`'s vertices (a column of
   * that name there is replaced). A graph made by GraphFrame.fromEdges has no vertex
   * column but `id`, and its vertices are exactly the LPF graph's: the result is the
   * native one, ids in the type of the vertex column, with no join (no shuffle).
   */
  def joined(g: GraphFrame, o: LpfGraphCall.Outcome, name: String)(value: Column => Column): DataFrame = {
    val r = o.frame(g.vertices.sparkSession, g.lpfGraph.idType)
    if (g.fromEdgesOnly) {
      val idType = g.vertices.schema(ID).dataType
      r.select(col(LpfGraphCall.IdColumn).cast(idType).as(ID), value(col(o.kernel.column)).as(name))
    } else {
      val result = r.select(col(LpfGraphCall.IdColumn).as(ID), value(col(o.kernel.column)).as(name))
      g.vertices.drop(name).join(result, Seq(ID))
    }
  }

  /** One call of `kernel` on `g`'s LPF graph (see LpfGraph.callWith). */
  def callOn(g: GraphFrame, kernel: LpfGraphCall.Kernel, iterations: Long, alpha: Double = 0, tol: Double = 0)
         (shape: LpfGraphCall.Call => LpfGraphCall.Call): LpfGraphCall.Outcome =
    calling(g.lpfGraph.callWith(kernel, iterations, alpha, tol)(shape))

  /**
   * Components and labels as GraphFrames names them: integral ids the smallest id (bigint);
   * string ids a bigint (the position of the smallest id in the order of all ids: NUMBERS),
   * or with `asIds` the smallest id itself.
   */
  def labels(g: GraphFrame, kernel: LpfGraphCall.Kernel, iterations: Long, name: String, asIds: Boolean): DataFrame = {
    val strings = g.lpfGraph.idType == StringType
    val o = callOn(g, kernel, iterations)(_.copy(numbers = strings && !asIds))
    joined(g, o, name)(c => if (strings && asIds) c else c.cast(LongType))
  }

  /** An id given by the caller, exactly of the graph's id type (else an LpfException naming `role`). */
  def id(g: GraphFrame, value: Any, role: String): Any = LpfGraph.exactId(g.lpfGraph.idType, value, role)

  /** The edges with `weight` = 1 / out-degree of `src` (GraphX's PageRank edge attribute). */
  def weighted(g: GraphFrame): DataFrame =
    g.edges.withColumn(WEIGHT, lit(1.0) / count(lit(1)).over(Window.partitionBy(quoted(SRC))))

  def positive(name: String, value: Int): Int = {
    require(value >= 1, s"$name must be >= 1, got $value")
    value
  }
}
import Calls._

/**
 * PageRank as GraphX computes it (GraphFrames' `pageRank`): every vertex starts at 1, each
 * iteration gives a vertex resetProbability plus (1 - resetProbability) times the ranks
 * its in-neighbours spread over their out-edges (a vertex without out-edges spreads
 * nothing); the ranks are scaled at the end to sum to the number of vertices, or, with
 * [[sourceId]] (personalized), to 1. Exactly one of [[maxIter]] and [[tol]].
 */
final class PageRank private[graphframes] (graph: GraphFrame) extends Serializable {
  private var reset = 0.15
  private var iterations: Option[Int] = None
  private var tolerance: Option[Double] = None
  private var source: Option[Any] = None

  /** The reset probability, in [0, 1] (default 0.15). */
  def resetProbability(value: Double): this.type = { reset = value; this }

  /** Personalized PageRank from the vertex `value` (an id of the vertices' type). */
  def sourceId(value: Any): this.type = { source = Some(value); this }

  /** Runs exactly `value` iterations. */
  def maxIter(value: Int): this.type = { iterations = Some(value); this }

  /** Runs until no rank changes by more than `value` in an iteration. */
  def tol(value: Double): this.type = { tolerance = Some(value); this }

  /**
   * The GraphFrame whose vertices gain `pagerank` (double) and whose edges gain `weight`
   * (1 / out-degree of `src`). IllegalArgumentException unless exactly one of maxIter and tol.
   */
  def run(): GraphFrame = {
    require(!(iterations.isDefined && tolerance.isDefined), "You cannot specify maxIter() and tol() at the same time.")
    if (iterations.isEmpty && tolerance.isEmpty) throw new IllegalArgumentException("Param maxIter is required.")
    iterations.foreach(positive("maxIter", _))
    tolerance.foreach(t => require(t >= 0, s"tol must be >= 0, got $t"))
    val s = source.map(v => id(graph, v, "pageRank sourceId"))
    val o = callOn(graph, LpfGraphCall.GraphxPageRank, iterations.getOrElse(Int.MaxValue).toLong, reset,
      tolerance.getOrElse(0.0))(_.copy(sources = s.map(Seq(_))))
    GraphFrame(joined(graph, o, "pagerank")(identity), weighted(graph))
  }
}

/**
 * Personalized PageRank from each of [[sourceIds]] at once (GraphFrames'
 * `parallelPersonalizedPageRank`), [[maxIter]] iterations, as GraphX computes it.
 */
final class ParallelPersonalizedPageRank private[graphframes] (graph: GraphFrame) extends Serializable {
  private var reset = 0.15
  private var iterations: Option[Int] = None
  private var sources: Option[Array[Any]] = None

  /** The reset probability, in [0, 1] (default 0.15). */
  def resetProbability(value: Double): this.type = { reset = value; this }

  /** The number of iterations (required). */
  def maxIter(value: Int): this.type = { iterations = Some(value); this }

  /** The sources (required, non-empty, distinct ids of the vertices' type). */
  def sourceIds(values: Array[Any]): this.type = { sources = Some(values); this }

  /**
   * The GraphFrame whose vertices gain `pageranks` (a sparse org.apache.spark.ml.linalg
   * Vector, position k the rank from sourceIds(k); each source's ranks sum to 1) and whose
   * edges gain `weight`.
   */
  def run(): GraphFrame = {
    val k = iterations.getOrElse(throw new IllegalArgumentException("Param maxIter is required."))
    positive("maxIter", k)
    val ids = sources.filter(_.nonEmpty).getOrElse(throw new IllegalArgumentException(
      "Param sourceIds is required: a non-empty array of vertex ids"))
    val s = ids.toSeq.zipWithIndex.map { case (v, i) => id(graph, v, s"parallelPersonalizedPageRank sourceIds($i)") }
    val o = callOn(graph, LpfGraphCall.GraphxPageRank, k.toLong, reset)(_.copy(sources = Some(s), vector = true))
    GraphFrame(joined(graph, o, "pageranks")(c => ParallelPersonalizedPageRank.toVector(c)), weighted(graph))
  }
}

private object ParallelPersonalizedPageRank {
  val toVector = udf((ranks: Seq[Double]) => (Vectors.dense(ranks.toArray).toSparse: Vector))
}

/** The setters GraphFrames' iterative engines take; here accepted and ignored (one exact native algorithm). */
trait IgnoredTuning[T] { this: T =>
  private var algorithm = "graphframes"
  private var checkpointInterval = 2
  private var localCheckpoints = false
  private var storageLevel: StorageLevel = StorageLevel.MEMORY_AND_DISK

  /** GraphFrames' choice of engine: accepted and ignored (one native algorithm). */
  def setAlgorithm(value: String): T = { algorithm = value; this }
  /** The value given to [[setAlgorithm]]. */
  def getAlgorithm: String = algorithm
  /** GraphFrames' checkpoint interval: accepted and ignored (no checkpoints are made). */
  def setCheckpointInterval(value: Int): T = { checkpointInterval = value; this }
  /** The value given to [[setCheckpointInterval]]. */
  def getCheckpointInterval: Int = checkpointInterval
  /** GraphFrames' local checkpoints: accepted and ignored (no checkpoints are made). */
  def setUseLocalCheckpoints(value: Boolean): T = { localCheckpoints = value; this }
  /** The value given to [[setUseLocalCheckpoints]]. */
  def getUseLocalCheckpoints: Boolean = localCheckpoints
  /** GraphFrames' storage level of intermediate results: accepted and ignored (there are none). */
  def setIntermediateStorageLevel(value: StorageLevel): T = { storageLevel = value; this }
  /** The value given to [[setIntermediateStorageLevel]]. */
  def getIntermediateStorageLevel: StorageLevel = storageLevel
}

/**
 * Weakly connected components (GraphFrames' `connectedComponents`): each vertex's
 * `component` is the smallest id of its component (integral ids, bigint); for string ids a
 * bigint naming the component (the position of its smallest id in the order of all ids), or
 * with [[setUseLabelsAsComponents]] the smallest id itself (a string).
 */
final class ConnectedComponents private[graphframes] (graph: GraphFrame)
  extends IgnoredTuning[ConnectedComponents] with Serializable {
  private var broadcastThreshold = 1000000
  private var labelsAsComponents = false
  private var iterations = Int.MaxValue - 1

  /** GraphFrames' broadcast threshold of its two-phase engine: accepted and ignored. */
  def setBroadcastThreshold(value: Int): this.type = { broadcastThreshold = value; this }
  /** The value given to [[setBroadcastThreshold]]. */
  def getBroadcastThreshold: Int = broadcastThreshold
  /** String ids: the component is its smallest id (a string) rather than a bigint. */
  def setUseLabelsAsComponents(value: Boolean): this.type = { labelsAsComponents = value; this }
  /** The value given to [[setUseLabelsAsComponents]]. */
  def getUseLabelsAsComponents: Boolean = labelsAsComponents
  /** GraphFrames' iteration cap: accepted and ignored (the components are exact). */
  def maxIter(value: Int): this.type = { iterations = value; this }
  /** The value given to [[maxIter]]. */
  def getMaxIter: Int = iterations

  /** The vertices with `component`. */
  def run(): DataFrame = labels(graph, LpfGraphCall.Wcc, 0, "component", labelsAsComponents)
}

/**
 * Strongly connected components (GraphFrames' `stronglyConnectedComponents`), exact:
 * `component` as in [[ConnectedComponents]] (bigint).
 */
final class StronglyConnectedComponents private[graphframes] (graph: GraphFrame) extends Serializable {
  private var iterations: Option[Int] = None

  /** GraphX's iteration cap (required, >= 1): only checked, the components are exact. */
  def maxIter(value: Int): this.type = { iterations = Some(value); this }

  /** The vertices with `component`. */
  def run(): DataFrame = {
    positive("maxIter", iterations.getOrElse(throw new IllegalArgumentException("Param maxIter is required.")))
    labels(graph, LpfGraphCall.Scc, 0, "component", asIds = false)
  }
}

/**
 * Label propagation (GraphFrames' `labelPropagation`): [[maxIter]] synchronous rounds,
 * each vertex taking the most frequent label among its neighbours over edges both ways,
 * ties to the smallest label (GraphX breaks ties arbitrarily); `label` named as
 * [[ConnectedComponents]] names components (bigint).
 */
final class LabelPropagation private[graphframes] (graph: GraphFrame)
  extends IgnoredTuning[LabelPropagation] with Serializable {
  private var iterations: Option[Int] = None

  /** The number of rounds (required, >= 1). */
  def maxIter(value: Int): this.type = { iterations = Some(value); this }

  /** The vertices with `label`. */
  def run(): DataFrame = {
    val k = positive("maxIter", iterations.getOrElse(throw new IllegalArgumentException("Param maxIter is required.")))
    labels(graph, LpfGraphCall.Cdlp, k.toLong, "label", asIds = false)
  }
}

/**
 * Hop counts to landmarks (GraphFrames' `shortestPaths`): `distances`, a map from each
 * landmark that a vertex reaches (following edges forward, or both ways with
 * setIsDirected(false)) to the number of edges of a shortest path (int).
 */
final class ShortestPaths private[graphframes] (graph: GraphFrame)
  extends IgnoredTuning[ShortestPaths] with Serializable {
  private var targets: Seq[Any] = Nil
  private var directed = true

  /** The landmarks (ids of the vertices' type; required, non-empty). */
  def landmarks(values: Seq[Any]): this.type = { targets = values; this }

  /** The landmarks, from Java. */
  def landmarks(values: java.util.List[Any]): this.type = {
    val b = Seq.newBuilder[Any]
    values.forEach(v => b += v)
    landmarks(b.result())
  }

  /** Whether edges are followed forward only (default true) or both ways. */
  def setIsDirected(value: Boolean): this.type = { directed = value; this }

  /** The vertices with `distances`. */
  def run(): DataFrame = {
    require(targets.nonEmpty, "landmarks must be a non-empty list of vertex ids")
    val ids = targets.zipWithIndex.map { case (v, i) => id(graph, v, s"shortestPaths landmarks($i)") }.distinct
    val o = callOn(graph, LpfGraphCall.Landmarks, 0)(_.copy(sources = Some(ids), undirected = !directed))
    val keyType = graph.vertices.schema(ID).dataType
    val keys = array(ids.map(v => lit(v).cast(keyType)): _*)
    joined(graph, o, "distances") { hops =>
      transform_values(map_filter(map_from_arrays(keys, hops), (_, h) => h =!= lit(Long.MaxValue)), (_, h) => h.cast("int"))
    }
  }
}

/**
 * Triangles through each vertex (GraphFrames' `triangleCount`), edges taken undirected
 * (self-loops dropped, each pair once): `count` (bigint). Always exact.
 */
final class TriangleCount private[graphframes] (graph: GraphFrame) extends Serializable {
  private var storageLevel: StorageLevel = StorageLevel.MEMORY_AND_DISK
  private var algorithm = "exact"
  private var lgNomEntries = 12

  /** GraphFrames' storage level of intermediate results: accepted and ignored (there are none). */
  def setIntermediateStorageLevel(value: StorageLevel): this.type = { storageLevel = value; this }
  /** The value given to [[setIntermediateStorageLevel]]. */
  def getIntermediateStorageLevel: StorageLevel = storageLevel
  /** "exact" or "approx": accepted, the count is always exact. */
  def setAlgorithm(value: String): this.type = {
    require(value == "exact" || value == "approx", s"algorithm must be 'exact' or 'approx', got '$value'")
    algorithm = value; this
  }
  /** The value given to [[setAlgorithm]]. */
  def getAlgorithm: String = algorithm
  /** The sketch size of GraphFrames' approximate count: accepted and ignored (the count is exact). */
  def setLgNomEntries(value: Int): this.type = { lgNomEntries = value; this }
  /** The value given to [[setLgNomEntries]]. */
  def getLgNomEntries: Int = lgNomEntries

  /** The vertices with `count`. */
  def run(): DataFrame = joined(graph, callOn(graph, LpfGraphCall.Triangles, 0)(identity), "count")(identity)
}

/** Coreness (GraphFrames' `kCore`) in the undirected simple graph: `kcore` (int), 0 for isolated vertices. */
final class KCore private[graphframes] (graph: GraphFrame) extends IgnoredTuning[KCore] with Serializable {
  /** The vertices with `kcore`. */
  def run(): DataFrame = joined(graph, callOn(graph, LpfGraphCall.KCore, 0)(identity), "kcore")(_.cast("int"))
}

/**
 * A maximal independent set of the undirected graph, self-loops ignored (GraphFrames'
 * `maximalIndependentSet`): `selected` (boolean). The set depends only on the seed and the
 * graph (not on the number of processes).
 */
final class MaximalIndependentSet private[graphframes] (graph: GraphFrame)
  extends IgnoredTuning[MaximalIndependentSet] with Serializable {
  /** The vertices with `selected`, the set chosen by `seed`. */
  def run(seed: Long): DataFrame =
    joined(graph, callOn(graph, LpfGraphCall.Mis, seed)(identity), "selected")(_ === lit(1L))

  /** [[run]] with seed 12345. */
  def run(): DataFrame = run(12345L)
}

/**
 * Every shortest path from a vertex meeting [[fromExpr]] to one meeting [[toExpr]]
 * (GraphFrames' `bfs`), following edges forward (those meeting [[edgeFilter]]; edges naming
 * an id absent from the vertices are not followed), at most [[maxPathLength]] edges: one row
 * per path, columns `from`, `e0`, `v1`, `e1`, ..., `to` (vertex rows and edge rows as
 * structs); `from` and `to` alone when a vertex meets both; no rows when there is no path.
 * The LPF graph finds the depths (one call); the paths are joined from the targets back
 * over the edges from depth k to k + 1 (found by one pass over the edges).
 */
final class BFS private[graphframes] (graph: GraphFrame) extends Serializable {
  private var from: Option[Column] = None
  private var to: Option[Column] = None
  private var filter: Option[Column] = None
  private var maxLength = 10

  /** The start vertices' condition (required). */
  def fromExpr(value: Column): this.type = { from = Some(value); this }
  /** [[fromExpr]] as SQL. */
  def fromExpr(value: String): this.type = fromExpr(expr(value))
  /** The end vertices' condition (required). */
  def toExpr(value: Column): this.type = { to = Some(value); this }
  /** [[toExpr]] as SQL. */
  def toExpr(value: String): this.type = toExpr(expr(value))
  /** The edges that paths may follow. */
  def edgeFilter(value: Column): this.type = { filter = Some(value); this }
  /** [[edgeFilter]] as SQL. */
  def edgeFilter(value: String): this.type = edgeFilter(expr(value))
  /** The longest path (edges, >= 0; default 10). */
  def maxPathLength(value: Int): this.type = {
    require(value >= 0, s"maxPathLength must be >= 0, got $value")
    maxLength = value; this
  }

  /** The paths. */
  def run(): DataFrame = {
    val isFrom = coalesce(from.getOrElse(throw new IllegalArgumentException("fromExpr is required")), lit(false))
    val isTo = coalesce(to.getOrElse(throw new IllegalArgumentException("toExpr is required")), lit(false))
    val v = graph.vertices
    val vertexStruct = struct(columnsOf(v): _*)
    val mark = (when(isFrom, 1).otherwise(0) + when(isTo, 2).otherwise(0)).as(BFS.Mark)
    // A fromEdges graph's vertices are its edges' ends and have no column but the id: no
    // edge names an absent vertex, and the marks come from the ends that meet an
    // expression (a vertex the LPF graph is not told of is unmarked), with no distinct
    // over every end.
    val kept = filter.fold(graph.edges)(c => graph.edges.filter(c))
    val (followed, marked) = if (graph.fromEdgesOnly) {
      val ends = graph.edges.select(col(SRC).as(ID)).union(graph.edges.select(col(DST).as(ID)))
      (kept, ends.filter(isFrom || isTo).distinct().select(col(ID), mark))
    } else {
      val ids = v.select(col(ID).as(GraphFrame.KeyColumn))
      (kept.join(ids, col(SRC) === col(GraphFrame.KeyColumn), "left_semi").join(ids, col(DST) === col(GraphFrame.KeyColumn), "left_semi"),
        v.select(col(ID), mark))
    }
    val lg = LpfGraph.ofGraphFrame(followed, Some(marked), Some(BFS.Mark))
    val o = calling(lg.callWith(LpfGraphCall.BfsPaths, maxLength.toLong)(identity))
    if (!o.found) return v.filter(lit(false))
    val length = o.rounds.toInt
    if (length == 0) return v.filter(isFrom && isTo).select(vertexStruct.as("from"), vertexStruct.as("to"))
    val depths = o.frame(v.sparkSession, lg.idType)
      .select(col(LpfGraphCall.IdColumn).cast(v.schema(ID).dataType).as(GraphFrame.KeyColumn),
        col(LpfGraphCall.BfsPaths.column).as(BFS.Depth))
      .filter(col(BFS.Depth) <= length)
    // The search's vertices are few next to the edges as a rule: broadcast them, so that
    // the edges are read once, not shuffled, to find those from depth k to k + 1.
    val few = depths.count() <= BFS.BroadcastVertices
    def spread(df: DataFrame) = if (few) broadcast(df) else df
    // (A nullable id stays nullable, so that `from` and `to` have the vertices' type.)
    val key = col(GraphFrame.KeyColumn)
    val reached = if (graph.fromEdgesOnly)
        depths.select((if (v.schema(ID).nullable) when(key.isNotNull, key) else key).as(ID), col(BFS.Depth))
      else v.join(spread(depths), col(ID) === col(GraphFrame.KeyColumn)).drop(GraphFrame.KeyColumn)
    def level(k: Int, name: String) =
      reached.filter(col(BFS.Depth) === k).select(col(ID).as(BFS.Head), vertexStruct.as(name))
    val e = followed
      .join(spread(depths.select(col(GraphFrame.KeyColumn).as(BFS.EdgeSrc), col(BFS.Depth).as(BFS.SrcDepth))), col(SRC) === col(BFS.EdgeSrc))
      .join(spread(depths.select(col(GraphFrame.KeyColumn).as(BFS.EdgeDst), col(BFS.Depth).as(BFS.DstDepth))), col(DST) === col(BFS.EdgeDst))
      .filter(col(BFS.DstDepth) === col(BFS.SrcDepth) + 1)
      .select(col(BFS.EdgeSrc), col(BFS.EdgeDst), struct(columnsOf(followed): _*).as(BFS.Edge))
    var paths = reached.filter(col(BFS.Depth) === length && isTo).select(col(ID).as(BFS.Head), vertexStruct.as("to"))
    for (k <- length - 1 to 0 by -1) {
      val name = if (k == 0) "from" else s"v$k"
      paths = paths.join(e, col(BFS.Head) === col(BFS.EdgeDst)).drop(BFS.Head, BFS.EdgeDst)
        .withColumnRenamed(BFS.Edge, s"e$k")
        .join(level(k, name), col(BFS.EdgeSrc) === col(BFS.Head)).drop(BFS.EdgeSrc)
    }
    val order = Seq("from") ++ (0 until length).flatMap(k => if (k == 0) Seq("e0") else Seq(s"v$k", s"e$k")) ++ Seq("to")
    paths.select(order.map(col): _*)
  }
}

private object BFS {
  /** The most vertices within the path length that are broadcast rather than shuffled. */
  val BroadcastVertices = 2000000L
  val Mark = "__lpf_mark"
  val Depth = "__lpf_depth"
  val Head = "__lpf_head"
  val EdgeSrc = "__lpf_esrc"
  val EdgeDst = "__lpf_edst"
  val SrcDepth = "__lpf_sdepth"
  val DstDepth = "__lpf_ddepth"
  val Edge = "__lpf_edge"
}
