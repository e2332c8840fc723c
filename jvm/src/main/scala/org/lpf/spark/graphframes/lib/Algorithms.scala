package org.lpf.spark.graphframes.lib

import org.apache.spark.ml.linalg.{Vector, Vectors}
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions.{array, coalesce, col, count, explode, expr, lit, map_filter, map_from_arrays, struct,
  transform_values, udf, when}
import org.apache.spark.sql.types.{LongType, StringType, StructField, StructType}
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
    val cap = BFS.localRows(v.sparkSession.conf.getOption(BFS.LocalRowsKey))
    val vertexStruct = struct(columnsOf(v): _*)
    val mark = (when(isFrom, 1).otherwise(0) + when(isTo, 2).otherwise(0)).as(BFS.Mark)
    // A fromEdges graph's vertices are its edges' ends and have no column but the id: no
    // edge names an absent vertex, and the marks come from the ends that meet an
    // expression, each as often as it ends an edge (the native load ORs the marks of an
    // id listed twice: no distinct, no shuffle), read from the edges' own partitions (so
    // that the barrier stage can read both in place); a vertex the LPF graph is not told
    // of is unmarked.
    val kept = filter.fold(graph.edges)(c => graph.edges.filter(c))
    val (followed, marked) = if (graph.fromEdgesOnly) {
      val ends = graph.edges.select(explode(array(col(SRC), col(DST))).as(ID))
      (kept, ends.filter(isFrom || isTo).select(col(ID), mark))
    } else {
      val ids = v.select(col(ID).as(GraphFrame.KeyColumn))
      (kept.join(ids, col(SRC) === col(GraphFrame.KeyColumn), "left_semi").join(ids, col(DST) === col(GraphFrame.KeyColumn), "left_semi"),
        v.select(col(ID), mark))
    }
    val lg = LpfGraph.ofGraphFrame(followed, Some(marked), Some(BFS.Mark), uniqueIds = !graph.fromEdgesOnly)
    val o = calling(lg.callWith(LpfGraphCall.BfsPaths, maxLength.toLong)(identity))
    if (!o.found) return v.filter(lit(false))
    val length = o.rounds.toInt
    if (length == 0) return v.filter(isFrom && isTo).select(vertexStruct.as("from"), vertexStruct.as("to"))
    // The reply lists only the vertices on a shortest path, with their depths: few, as a
    // rule, even when the search reached most of the graph. Ids are compared as the LPF
    // graph reads them (bigint, or strings), whatever integral type each column has.
    val keyType = if (lg.idType == StringType) StringType else LongType
    def key(c: String) = col(c).cast(keyType)
    val depths = o.frame(v.sparkSession, lg.idType)
      .select(col(LpfGraphCall.IdColumn).cast(keyType).as(BFS.Head), col(LpfGraphCall.BfsPaths.column).cast("int").as(BFS.Depth))
    val vertexRows = (r: DataFrame) => r.select(col(BFS.Head), col(BFS.Depth), vertexStruct.as(BFS.Vertex))
    // A fromEdges graph's vertex rows are its ids (a nullable id stays nullable, so that
    // `from` and `to` have the vertices' type).
    val idOf = col(BFS.Head).cast(v.schema(ID).dataType)
    def withId(d: DataFrame) = d.withColumn(ID, if (v.schema(ID).nullable) when(col(BFS.Head).isNotNull, idOf) else idOf)
    val edgeRows = (e: DataFrame) => e.select(key(SRC).as(BFS.EdgeSrc), key(DST).as(BFS.EdgeDst), struct(columnsOf(followed): _*).as(BFS.Edge))
    if (o.listed > cap) {
      // Many: joins over the vertices and edges, the depths shuffled with them.
      val ends = (name: String, d: String) => depths.select(col(BFS.Head).as(name), col(BFS.Depth).as(d))
      val reached = vertexRows(if (graph.fromEdgesOnly) withId(depths) else v.join(depths, key(ID) === col(BFS.Head)))
      val e = edgeRows(followed.join(ends(BFS.SrcKey, BFS.SrcDepth), key(SRC) === col(BFS.SrcKey))
        .join(ends(BFS.DstKey, BFS.DstDepth), key(DST) === col(BFS.DstKey))
        .filter(col(BFS.DstDepth) === col(BFS.SrcDepth) + 1))
      return BFS.joined(reached, e, length)
    }
    // Few: their depths come to the driver and select the paths' vertex rows and edges
    // as the rows are read (no join), in one job each, and the paths are put together
    // on the driver unless they are many.
    val (depthRows, localDepths) = BFS.local(depths)
    val depthOf: Map[Any, Int] = depthRows.map(r => r.get(0) -> r.getInt(1)).toMap
    val depthAt = if (keyType == StringType) udf((k: String) => depthOf.getOrElse(k, -1))
      else udf((k: Long) => depthOf.getOrElse(k, -1))
    val reached = vertexRows(if (graph.fromEdgesOnly) withId(localDepths)
      else v.withColumn(BFS.Head, key(ID)).withColumn(BFS.Depth, depthAt(col(BFS.Head))).filter(col(BFS.Depth) >= 0))
    val edges = followed.withColumn(BFS.SrcDepth, depthAt(key(SRC)))
      .filter(col(BFS.SrcDepth) >= 0 && depthAt(key(DST)) === col(BFS.SrcDepth) + 1)
    BFS.assembled(BFS.local(reached), BFS.capped(edgeRows(edges), cap), length, cap)
  }
}

private object BFS {
  /**
   * The most rows (vertices on the paths, their edges, the paths) made on the driver; the
   * Spark SQL setting [[LocalRowsKey]] changes it (0: Spark joins the paths always).
   */
  val LocalRows = 200000
  val LocalRowsKey = "spark.lpf.graphframes.bfs.localRows"

  /** The bound [[LocalRowsKey]] sets (if set): an integer from 0 to 2^31 - 2. */
  def localRows(setting: Option[String]): Int = setting.fold(LocalRows) { s =>
    scala.util.Try(s.trim.toInt).toOption.filter(k => k >= 0 && k < Int.MaxValue).getOrElse(
      throw LpfException.argument(s"$LocalRowsKey must be an integer from 0 to ${Int.MaxValue - 1}, got '$s'"))
  }

  /** `rows` of `df` as a local relation. */
  private def relation(df: DataFrame, rows: Array[Row]): DataFrame =
    df.sparkSession.createDataFrame(java.util.Arrays.asList(rows: _*), df.schema)

  /** `df`'s rows (all of them: a local relation's, or few), and they as a local relation. */
  def local(df: DataFrame): (Array[Row], DataFrame) = {
    val rows = df.collect()
    (rows, relation(df, rows))
  }

  /**
   * `df`'s rows if there are at most `cap` (one job; a partition sends at most one row
   * more), with `df` as a local relation; else `df` as it is.
   */
  def capped(df: DataFrame, cap: Int): (Option[Array[Row]], DataFrame) = {
    val parts = df.sparkSession.sparkContext.runJob(df.rdd, (it: Iterator[Row]) => it.take(cap + 1).toArray)
    val rows = parts.flatten
    if (rows.length > cap) (None, df) else (Some(rows), relation(df, rows))
  }

  /**
   * The paths DataFrame (`from`, `e0`, `v1`, ..., `to`) of the vertices `reached` on the
   * paths (columns [[Head]], [[Depth]] 0..length, [[Vertex]]) and the edges from depth k
   * to k + 1 between them (`e`: [[EdgeSrc]], [[EdgeDst]], [[Edge]]), both in rows on the
   * driver: made there when at most `cap` paths, else joined by Spark.
   */
  def assembled(reached: (Array[Row], DataFrame), e: (Option[Array[Row]], DataFrame), length: Int, cap: Int): DataFrame = {
    val (vertexRows, vertices) = reached
    val edgeRows = e._1.getOrElse(return joined(vertices, e._2, length))
    val vertex = vertexRows.map(r => r.get(0) -> r.get(2)).toMap
    // Into each vertex of the paths, its edges (source, edge row); paths to a vertex counted
    // from depth 0 up, so that their number is known before any is made.
    val into = edgeRows.groupBy(_.get(1)).map { case (dst, rs) => dst -> rs.map(r => (r.get(0), r.get(2))).toSeq }
    val byDepth = vertexRows.groupBy(_.getInt(1)).map { case (k, rs) => k -> rs.map(_.get(0)) }
    val count = scala.collection.mutable.Map[Any, Long]()
    for (k <- 0 to length; u <- byDepth.getOrElse(k, Array.empty))
      count(u) = if (k == 0) 1L else into.getOrElse(u, Nil).map { case (s, _) => count.getOrElse(s, 0L) }.sum
    val total = byDepth.getOrElse(length, Array.empty).map(count).sum
    if (total > cap) return joined(vertices, e._2, length)
    // A path to `u` (at depth k) as its fields from `from` to `u`.
    def to(u: Any, k: Int): Iterator[scala.collection.immutable.Vector[Any]] =
      if (k == 0) Iterator(scala.collection.immutable.Vector(vertex(u)))
      else into.getOrElse(u, Nil).iterator.flatMap { case (s, edge) => to(s, k - 1).map(_ :+ edge :+ vertex(u)) }
    val paths = byDepth.getOrElse(length, Array.empty).iterator.flatMap(to(_, length)).map(Row.fromSeq).toSeq
    val (vt, et) = (vertices.schema(Vertex).dataType, e._2.schema(Edge).dataType)
    val schema = StructType(names(length).map(n => StructField(n, if (n.startsWith("e")) et else vt, nullable = false)))
    vertices.sparkSession.createDataFrame(java.util.Arrays.asList(paths: _*), schema)
  }

  /** The paths' columns: `from`, `e0`, `v1`, `e1`, ..., `to`. */
  def names(length: Int): Seq[String] =
    Seq("from") ++ (0 until length).flatMap(k => if (k == 0) Seq("e0") else Seq(s"v$k", s"e$k")) ++ Seq("to")

  /** The paths as Spark joins them, from the targets (depth `length`) back, level by level. */
  def joined(reached: DataFrame, e: DataFrame, length: Int): DataFrame = {
    def level(k: Int, name: String) = reached.filter(col(Depth) === k).select(col(Head), col(Vertex).as(name))
    var paths = level(length, "to")
    for (k <- length - 1 to 0 by -1) {
      val name = if (k == 0) "from" else s"v$k"
      paths = paths.join(e, col(Head) === col(EdgeDst)).drop(Head, EdgeDst)
        .withColumnRenamed(Edge, s"e$k")
        .join(level(k, name), col(EdgeSrc) === col(Head)).drop(EdgeSrc)
    }
    paths.select(names(length).map(col): _*)
  }

  val Mark = "__lpf_mark"
  val Depth = "__lpf_depth"
  val Head = "__lpf_head"
  val Vertex = "__lpf_vertex"
  val SrcKey = "__lpf_skey"
  val DstKey = "__lpf_dkey"
  val EdgeSrc = "__lpf_esrc"
  val EdgeDst = "__lpf_edst"
  val SrcDepth = "__lpf_sdepth"
  val DstDepth = "__lpf_ddepth"
  val Edge = "__lpf_edge"
}
