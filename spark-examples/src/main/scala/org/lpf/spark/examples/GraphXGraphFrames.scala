package org.lpf.spark.examples

import scala.reflect.ClassTag

import org.apache.spark.graphx.{Edge, EdgeContext, Graph, VertexId, VertexRDD}
import org.apache.spark.graphx.lib.{ConnectedComponents, LabelPropagation, PageRank, ShortestPaths,
  StronglyConnectedComponents, TriangleCount}
import org.apache.spark.ml.linalg.SQLDataTypes.VectorType
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col, lit, struct}
import org.apache.spark.sql.types.{BooleanType, DataType, DoubleType, IntegerType, LongType, MapType, StructField,
  StructType}

/**
 * GraphFrames' algorithms the way GraphFrames runs them on GraphX (GraphFrameBenchmark's
 * GraphX side), from a vertex DataFrame (`id`: bigint) and an edge DataFrame (`src`,
 * `dst`: bigint) to a DataFrame of the vertex rows with the result column:
 *
 *  - the conversion: vertex rows keyed by `id`, edge rows as edge attributes, `Graph(v, e)`
 *    (GraphFrames' toGraphX for integral ids);
 *  - the algorithm: GraphX's library where it has one (PageRank.runUntilConvergence /
 *    runWithOptions (personalized: a source), runParallelPersonalizedPageRank,
 *    ConnectedComponents, StronglyConnectedComponents, LabelPropagation, ShortestPaths,
 *    TriangleCount, which drops self-loops and canonicalises the edges itself);
 *    k-core, maximal independent set and BFS, which GraphX does not have, as supersteps of
 *    `aggregateMessages` written here the way GraphFrames' Pregel versions do them;
 *  - the result: GraphX's (vertex id, value) as a DataFrame joined with the vertex rows on
 *    `id` (GraphFrames joins the result back the same way).
 *
 * Nothing here is computed until the caller runs an action on the result.
 */
object GraphXGraphFrames {
  /** The graph of the frames, rows as attributes. */
  def toGraphX(vertices: DataFrame, edges: DataFrame): Graph[Row, Row] = {
    val v = vertices.select(col("id").cast(LongType), struct(vertices.columns.map(col).toSeq: _*)).rdd
      .map(r => (r.getLong(0), r.getStruct(1)))
    val e = edges.select(col("src").cast(LongType), col("dst").cast(LongType), struct(edges.columns.map(col).toSeq: _*))
      .rdd.map(r => Edge(r.getLong(0), r.getLong(1), r.getStruct(2)))
    Graph(v, e)
  }

  /** `vertices` joined on `id` with GraphX's (id, value) as column `name` of type `t`. */
  def joined(spark: SparkSession, vertices: DataFrame, values: RDD[(VertexId, Any)], name: String, t: DataType): DataFrame =
    vertices.join(spark.createDataFrame(values.map { case (v, x) => Row(v, x) },
      StructType(Seq(StructField("id", LongType, nullable = false), StructField(name, t, nullable = true)))), "id")

  /** What one algorithm needs beside the graph: its sources, landmarks, target and seed. */
  case class Args(source: Long, sources: Seq[Long], landmarks: Seq[Long], bfsFrom: Long, bfsTo: Long,
                  labelPropagationIterations: Int, pageRankIterations: Int, pageRankTol: Double,
                  resetProbability: Double, sccIterations: Int, maxPathLength: Int, seed: Long)

  /** The result DataFrame of `algorithm` (GraphFrameBenchmark.Algorithms) on the frames; lazy. */
  def run(spark: SparkSession, vertices: DataFrame, edges: DataFrame, algorithm: String, a: Args): DataFrame = {
    lazy val g = toGraphX(vertices, edges)
    def out(values: RDD[(VertexId, Any)], name: String, t: DataType) = joined(spark, vertices, values, name, t)
    algorithm match {
      case "pr-tol" =>
        out(PageRank.runUntilConvergence(g, a.pageRankTol, a.resetProbability).vertices.mapValues(x => x: Any),
          "pagerank", DoubleType)
      case "pr-iter" =>
        out(PageRank.runWithOptions(g, a.pageRankIterations, a.resetProbability, None).vertices.mapValues(x => x: Any),
          "pagerank", DoubleType)
      case "ppr" =>
        out(PageRank.runWithOptions(g, a.pageRankIterations, a.resetProbability, Some(a.source)).vertices
          .mapValues(x => x: Any), "pagerank", DoubleType)
      case "pppr" =>
        out(PageRank.runParallelPersonalizedPageRank(g, a.pageRankIterations, a.resetProbability, a.sources.toArray)
          .vertices.mapValues(x => x: Any), "pageranks", VectorType)
      case "cc" => out(ConnectedComponents.run(g).vertices.mapValues(x => x: Any), "component", LongType)
      case "scc" =>
        out(StronglyConnectedComponents.run(g, a.sccIterations).vertices.mapValues(x => x: Any), "component", LongType)
      case "lpa" =>
        out(LabelPropagation.run(g, a.labelPropagationIterations).vertices.mapValues(x => x: Any), "label", LongType)
      case "sp" =>
        out(ShortestPaths.run(g, a.landmarks).vertices.mapValues(m => m: Any),
          "distances", MapType(LongType, IntegerType, valueContainsNull = false))
      case "tc" => out(TriangleCount.run(g).vertices.mapValues(x => x.toLong: Any), "count", LongType)
      case "kcore" => out(kCore(g).mapValues(x => x: Any), "kcore", IntegerType)
      case "mis" => out(maximalIndependentSet(g, a.seed).mapValues(x => x: Any), "selected", BooleanType)
      case "bfs" => bfsPaths(vertices, edges, g, a.bfsFrom, a.bfsTo, a.maxPathLength)
      case other => throw new IllegalArgumentException(s"algorithm '$other': GraphX has no counterpart here")
    }
  }

  /**
   * Supersteps until `step` changes no vertex (or `maxSteps`): each step's graph cached and
   * materialised before the previous one is released, as GraphX's Pregel does.
   */
  private def supersteps[VD: ClassTag](start: Graph[VD, Unit], maxSteps: Int)
                                      (step: Graph[VD, Unit] => Graph[VD, Unit]): Graph[VD, Unit] = {
    var g = start.cache()
    var changed = 1L
    var steps = 0
    while (changed > 0 && steps < maxSteps) {
      val next = step(g).cache()
      changed = next.vertices.innerJoin(g.vertices)((_, a, b) => a != b).filter(_._2).count()
      next.edges.count()
      g.unpersist(blocking = false)
      g = next
      steps += 1
    }
    g
  }

  /** The undirected structure without self-loops (multi-edges kept), attributes dropped. */
  private def structure[VD](g: Graph[VD, _]): Graph[Unit, Unit] =
    g.mapVertices((_, _) => ()).mapEdges(_ => ()).subgraph(epred = t => t.srcId != t.dstId)

  /**
   * k-core by h-index (as GraphFrames' KCore): every vertex starts at its degree (both
   * directions, multi-edges counted) and each superstep takes the h-index of its
   * neighbours' values, capped by its own, until nothing changes. A message is a histogram
   * (value -> neighbours), each value already capped at the receiver's (so a histogram has
   * at most that many entries; merging is linear in the smaller one).
   */
  def kCore[VD](g: Graph[VD, _]): VertexRDD[Int] = {
    val s = structure(g)
    val start = s.outerJoinVertices(s.degrees)((_, _, d) => d.getOrElse(0))
    def merge(a: Map[Int, Int], b: Map[Int, Int]): Map[Int, Int] = {
      val (big, small) = if (a.size >= b.size) (a, b) else (b, a)
      small.foldLeft(big) { case (m, (k, c)) => m.updated(k, m.getOrElse(k, 0) + c) }
    }
    // The largest h <= cap with at least h neighbours at h or above: over the values v
    // (descending) with n(v) neighbours at v or above, the largest min(v, n(v)).
    def hIndex(cap: Int, hist: Map[Int, Int]): Int = {
      var atOrAbove = 0
      var h = 0
      for ((value, count) <- hist.toSeq.sortBy(-_._1)) {
        atOrAbove += count
        h = math.max(h, math.min(value, atOrAbove))
      }
      math.min(cap, h)
    }
    val done = supersteps(start, Int.MaxValue) { cur =>
      val msgs = cur.aggregateMessages[Map[Int, Int]](ctx => {
        ctx.sendToDst(Map(math.min(ctx.srcAttr, ctx.dstAttr) -> 1))
        ctx.sendToSrc(Map(math.min(ctx.srcAttr, ctx.dstAttr) -> 1))
      }, merge)
      cur.outerJoinVertices(msgs)((_, c, m) => m.map(hIndex(c, _)).getOrElse(0))
    }
    done.vertices
  }

  /** A 64-bit mix of the seed, the round and the vertex (SplitMix64's finaliser). */
  private def priority(seed: Long, round: Int, v: Long): Long = {
    var z = seed + round * 0x9e3779b97f4a7c15L + v * 0xbf58476d1ce4e5b9L
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL
    z ^ (z >>> 31)
  }

  private val Undecided: Byte = 0
  private val Selected: Byte = 1
  private val Excluded: Byte = 2

  /**
   * A maximal independent set, Luby-style (as GraphFrames' randomized MIS): each round
   * every undecided vertex draws a priority; one below all its undecided neighbours'
   * (ties by id) joins the set, and its undecided neighbours leave; until none is
   * undecided. Two `aggregateMessages` per round.
   */
  def maximalIndependentSet[VD](g: Graph[VD, _], seed: Long): VertexRDD[Boolean] = {
    var round = 0
    var chosenBefore: Option[Graph[Byte, Unit]] = None
    val done = supersteps(structure(g).mapVertices((_, _) => Undecided), Int.MaxValue) { cur =>
      // The previous round's graph is materialised: its chosen vertices are no longer needed.
      chosenBefore.foreach(_.unpersist(blocking = false))
      round += 1
      val r = round
      def key(v: Long) = (priority(seed, r, v), v)
      val lowest = cur.aggregateMessages[(Long, Long)](ctx => if (ctx.srcAttr == Undecided && ctx.dstAttr == Undecided) {
        ctx.sendToDst(key(ctx.srcId)); ctx.sendToSrc(key(ctx.dstId))
      }, (a, b) => if (Ordering[(Long, Long)].lteq(a, b)) a else b)
      val chosen = cur.outerJoinVertices(lowest)((v, s, m) =>
        if (s == Undecided && m.forall(Ordering[(Long, Long)].lt(key(v), _))) Selected else s).cache()
      chosenBefore = Some(chosen)
      val hit = chosen.aggregateMessages[Boolean](ctx => {
        if (ctx.srcAttr == Selected && ctx.dstAttr == Undecided) ctx.sendToDst(true)
        if (ctx.dstAttr == Selected && ctx.srcAttr == Undecided) ctx.sendToSrc(true)
      }, _ || _)
      chosen.outerJoinVertices(hit)((_, s, h) => if (s == Undecided && h.isDefined) Excluded else s)
    }
    chosenBefore.foreach(_.unpersist(blocking = false))
    done.vertices.mapValues(_ == Selected)
  }

  /**
   * GraphFrames' bfs from `from` to `to` on GraphX: level-synchronous BFS along the edges
   * (one `aggregateMessages` from the frontier per level) until `to` is reached, the
   * frontier is empty or `maxPathLength` levels; then every shortest path joined from the
   * target back, level by level, as GraphFrames' paths DataFrame (`from`, `e0`, `v1`, ...,
   * `to`: vertex and edge rows as structs); empty when `to` is not reached.
   */
  def bfsPaths(vertices: DataFrame, edges: DataFrame, g: Graph[Row, Row], from: Long, to: Long,
               maxPathLength: Int): DataFrame = {
    val spark = vertices.sparkSession
    val unreached = Int.MaxValue
    var depths = g.mapVertices((v, _) => if (v == from) 0 else unreached).mapEdges(_ => ()).cache()
    var level = 0
    var frontier = 1L
    var reached = from == to
    while (!reached && frontier > 0 && level < maxPathLength) {
      val l = level
      val next = depths.aggregateMessages[Int](ctx => if (ctx.srcAttr == l && ctx.dstAttr == unreached && ctx.srcId != ctx.dstId)
        ctx.sendToDst(l + 1), math.min)
      val d = depths.outerJoinVertices(next)((_, x, m) => m.getOrElse(x)).cache()
      val (n, hit) = d.vertices.filter(_._2 == l + 1).map { case (v, _) => (1L, v == to) }
        .fold((0L, false)) { case ((n1, h1), (n2, h2)) => (n1 + n2, h1 || h2) }
      frontier = n
      reached = hit
      depths.unpersist(blocking = false)
      depths = d
      level += 1
    }
    val vs = vertices.select(col("id"), struct(vertices.columns.map(col).toSeq: _*).as("row"))
    if (!reached) return spark.createDataFrame(spark.sparkContext.emptyRDD[Row], vertices.schema)
    val byDepth = spark.createDataFrame(depths.vertices.filter(_._2 <= level).map { case (v, x) => Row(v, x) },
      StructType(Seq(StructField("id", LongType, nullable = false), StructField("depth", IntegerType, nullable = false))))
      .cache()
    if (level == 0) {
      val v = vs.filter(col("id") === lit(to))
      return v.select(col("row").as("from")).crossJoin(v.select(col("row").as("to")))
    }
    val es = edges.select(col("src"), col("dst"), struct(edges.columns.map(col).toSeq: _*).as("edge"))
    // p{k}: the id at depth k of a path; its edge into p{k+1} is e{k}.
    var paths = byDepth.filter(col("id") === lit(to) && col("depth") === level).select(col("id").as(s"p$level"))
    for (k <- level - 1 to 0 by -1) {
      val into = es.join(byDepth.filter(col("depth") === k), es("src") === byDepth("id"))
        .select(col("src").as(s"p$k"), col("dst").as("_dst"), col("edge").as(s"e$k"))
      paths = paths.join(into, paths(s"p${k + 1}") === into("_dst")).drop("_dst")
    }
    def vertexAt(k: Int, name: String): DataFrame => DataFrame = p =>
      p.join(vs.select(col("id").as(s"_id$k"), col("row").as(name)), p(s"p$k") === col(s"_id$k")).drop(s"_id$k")
    val named = (0 to level).foldLeft(paths) { (p, k) =>
      vertexAt(k, if (k == 0) "from" else if (k == level) "to" else s"v$k")(p)
    }
    val order: Seq[Column] = (0 to level).flatMap { k =>
      val v = col(if (k == 0) "from" else if (k == level) "to" else s"v$k")
      if (k < level) Seq(v, col(s"e$k")) else Seq(v)
    }
    named.select(order: _*)
  }
}
