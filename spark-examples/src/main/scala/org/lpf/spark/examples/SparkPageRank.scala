package org.lpf.spark.examples

import org.apache.spark.{HashPartitioner, SparkConf, SparkContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.storage.StorageLevel

/**
 * PageRank in plain Spark (RDDs), two ways.
 *
 * `canonical`: the algorithm of Spark's own example `SparkPageRank` (the LPF paper's
 * baseline), written here from its description: links = distinct edges grouped by
 * source, every rank starts at 1.0, each iteration sends rank / out-degree along every
 * link and sets rank = 0.15 + 0.85 * (received sum). Fixed iteration count, no dangling
 * handling (their mass is lost), no convergence test; ranks are not normalised, and a
 * vertex nobody links to drops out after the first iteration.
 *
 * `correct`: damping alpha, start 1/n over all vertices, the mass of dangling vertices
 * spread uniformly, stop when the L1 change is below tol; the RDD lineage is cut by a
 * checkpoint every 10 iterations. The same definition as LPF's PageRank.
 *
 * Both return the ranks and the cumulative seconds after each iteration (every iteration
 * is materialised: persisted and counted, the previous one released), so the
 * benchmark can read off the time for 1, 10 and n iterations from one run.
 */
object SparkPageRank {
  case class Run(ranks: RDD[(Long, Double)], loadSeconds: Double, cumulativeSeconds: Seq[Double], residual: Double) {
    def iterations: Int = cumulativeSeconds.length
  }

  private def seconds(t0: Long): Double = (System.nanoTime - t0) / 1e9

  /** Spark's example algorithm for `iterations` iterations. */
  def canonical(edges: RDD[(Long, Long)], iterations: Int): Run = {
    val t0 = System.nanoTime
    val links = edges.distinct().groupByKey().persist(StorageLevel.MEMORY_AND_DISK)
    links.count()
    val load = seconds(t0)
    var ranks: RDD[(Long, Double)] = links.mapValues(_ => 1.0)
    val times = Vector.newBuilder[Double]
    val t1 = System.nanoTime
    for (_ <- 1 to iterations) {
      val sent = links.join(ranks).values.flatMap { case (targets, rank) =>
        val share = rank / targets.size
        targets.iterator.map(t => (t, share))
      }
      val next = sent.reduceByKey(_ + _).mapValues(s => 0.15 + 0.85 * s).persist(StorageLevel.MEMORY_AND_DISK)
      next.count()
      ranks.unpersist(blocking = false)
      ranks = next
      times += seconds(t1)
    }
    Run(ranks, load, times.result(), Double.NaN)
  }

  /** One vertex's state: its out-links, its rank and the change of its last update. */
  final case class Vertex(out: Array[Long], rank: Double, delta: Double)

  /**
   * Correct PageRank: all vertices (named by some edge), dangling mass redistributed,
   * stop at L1 change < tol or after maxIter; checkpoints every 10 iterations (set
   * sc.setCheckpointDir first, or give `checkpointDir`).
   */
  def correct(edges: RDD[(Long, Long)], alpha: Double = 0.85, tol: Double = 1e-7, maxIter: Int = 1000,
              checkpointDir: Option[String] = None): Run = {
    val sc = edges.sparkContext
    checkpointDir.foreach(sc.setCheckpointDir)
    if (sc.getCheckpointDir.isEmpty) sc.setCheckpointDir(s"${System.getProperty("java.io.tmpdir")}/spark-pagerank-checkpoints")
    val part = new HashPartitioner(edges.getNumPartitions)
    val t0 = System.nanoTime
    val unique = edges.distinct()
    val outLinks = unique.groupByKey(part).mapValues(_.toArray)
    val everyone = unique.flatMap { case (u, v) => Iterator((u, ()), (v, ())) }.reduceByKey(part, (_, _) => ())
    val n0 = everyone.leftOuterJoin(outLinks).mapValues { case (_, out) => out.getOrElse(Array.emptyLongArray) }
      .persist(StorageLevel.MEMORY_AND_DISK)
    val n = n0.count()
    var state: RDD[(Long, Vertex)] = n0.mapValues(out => Vertex(out, 1.0 / n, 0.0)).persist(StorageLevel.MEMORY_AND_DISK)
    var dangling = state.filter(_._2.out.isEmpty).map(_._2.rank).sum()
    n0.unpersist(blocking = false)
    val load = seconds(t0)
    val times = Vector.newBuilder[Double]
    var residual = Double.PositiveInfinity
    var k = 0
    val t1 = System.nanoTime
    while (k < maxIter && !(residual < tol)) {
      val base = (1 - alpha) / n + alpha * dangling / n
      val sums = state.flatMap { case (_, v) =>
        val share = v.rank / v.out.length
        v.out.iterator.map(t => (t, share))
      }.reduceByKey(part, _ + _)
      // state and sums share the partitioner: the join is narrow on both sides.
      val next = state.leftOuterJoin(sums).mapValues { case (v, s) =>
        val r = base + alpha * s.getOrElse(0.0)
        Vertex(v.out, r, math.abs(r - v.rank))
      }.persist(StorageLevel.MEMORY_AND_DISK)
      k += 1
      if (k % 10 == 0) next.checkpoint()
      // One action per iteration: the L1 change and the dangling mass of the new ranks.
      val (res, dang) = next.map { case (_, v) => (v.delta, if (v.out.isEmpty) v.rank else 0.0) }
        .fold((0.0, 0.0)) { case (x, y) => (x._1 + y._1, x._2 + y._2) }
      state.unpersist(blocking = false)
      state = next
      residual = res
      dangling = dang
      times += seconds(t1)
    }
    Run(state.mapValues(_.rank), load, times.result(), residual)
  }

  /**
   * spark-submit --class org.lpf.spark.examples.SparkPageRank lpf-spark-examples_<scala>.jar
   *   (--scale S | --input FILE) [--canonical ITERS] [--tol X] [--partitions P] [--top K]
   */
  def main(args: Array[String]): Unit = {
    val o = Options.parse(args, "SparkPageRank")
    val sc = new SparkContext(new SparkConf().setAppName("SparkPageRank"))
    val edges = o.edges(sc).persist(StorageLevel.MEMORY_AND_DISK)
    println(s"graph ${o.describe}: ${edges.count()} edges")
    val run = o.canonicalIterations match {
      case Some(iters) => canonical(edges, iters)
      case None => correct(edges, o.alpha, o.tol, o.maxIter, o.checkpointDir)
    }
    val ranks = run.ranks
    val total = ranks.values.sum()
    println(f"${if (o.canonicalIterations.isDefined) "canonical" else "correct"}: load ${run.loadSeconds}%.2f s, " +
      f"${run.iterations} iterations in ${run.cumulativeSeconds.lastOption.getOrElse(0.0)}%.2f s, residual ${run.residual}%.3e, " +
      f"rank sum $total%.6f")
    ranks.top(o.top)(Ordering.by(_._2)).foreach { case (v, r) => println(f"  $v%12d $r%.10e") }
    sc.stop()
  }
}
