package org.lpf.spark.examples

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.graphx.{Graph, VertexId}
import org.apache.spark.rdd.RDD
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart}
import org.apache.spark.storage.StorageLevel

/**
 * PageRank with GraphX: `pageRank(tol)` (until no vertex changes by more than tol) and
 * `staticPageRank(iterations)`, ranks normalised to sum 1 (GraphX's own sum to about
 * the number of vertices). GraphX does not spread the mass of dangling vertices
 * uniformly (it rescales at the end), so its ranks differ slightly from LPF's and from
 * SparkPageRank.correct's.
 */
object GraphXPageRank {
  case class Run(ranks: RDD[(Long, Double)], seconds: Double, iterations: Option[Int])

  /** The graph of the edges, cached and materialised; returns it and the seconds taken. */
  def load(edges: RDD[(Long, Long)]): (Graph[Int, Int], Double) = {
    val t0 = System.nanoTime
    val g = Graph.fromEdgeTuples(edges, 1, edgeStorageLevel = StorageLevel.MEMORY_AND_DISK,
      vertexStorageLevel = StorageLevel.MEMORY_AND_DISK).cache()
    g.edges.count()
    g.vertices.count()
    (g, (System.nanoTime - t0) / 1e9)
  }

  private def normalised(ranks: RDD[(VertexId, Double)]): RDD[(Long, Double)] = {
    val total = ranks.values.sum()
    ranks.mapValues(_ / total)
  }

  /**
   * Counts GraphX Pregel's iterations: Pregel tests its messages for emptiness once
   * before its loop and once per iteration (`isEmpty` in Spark 4, `count` before), and
   * Spark names each such job after its call site in Pregel.scala. One test may run
   * several jobs (take(1) scans partitions in rounds), so tests are told apart by the
   * RDD they test.
   */
  private final class PregelJobs extends SparkListener {
    val tested = java.util.concurrent.ConcurrentHashMap.newKeySet[Int]()
    override def onJobStart(e: SparkListenerJobStart): Unit = if (e.stageInfos.nonEmpty) {
      val last = e.stageInfos.maxBy(_.stageId) // the job's result stage
      if ((last.name.startsWith("isEmpty at Pregel.scala") || last.name.startsWith("count at Pregel.scala")) &&
        last.rddInfos.nonEmpty) tested.add(last.rddInfos.map(_.id).max)
    }
    def iterations: Option[Int] = if (tested.isEmpty) None else Some(tested.size - 1)
  }

  /** `pageRank(tol)`, normalised, materialised (alpha = 1 - resetProb). */
  def untilTolerance(g: Graph[Int, Int], tol: Double, alpha: Double = 0.85): Run = {
    val sc = g.vertices.sparkContext
    val jobs = new PregelJobs
    sc.addSparkListener(jobs)
    val t0 = System.nanoTime
    val ranks = normalised(g.pageRank(tol, 1 - alpha).vertices).persist(StorageLevel.MEMORY_AND_DISK)
    ranks.count()
    val secs = (System.nanoTime - t0) / 1e9
    org.apache.spark.lpfexamples.ListenerBus.drain(sc)
    sc.removeSparkListener(jobs)
    Run(ranks, secs, jobs.iterations)
  }

  /** `staticPageRank(iterations)`, normalised, materialised. */
  def fixed(g: Graph[Int, Int], iterations: Int, alpha: Double = 0.85): Run = {
    val t0 = System.nanoTime
    val ranks = normalised(g.staticPageRank(iterations, 1 - alpha).vertices).persist(StorageLevel.MEMORY_AND_DISK)
    ranks.count()
    Run(ranks, (System.nanoTime - t0) / 1e9, Some(iterations))
  }

  /**
   * spark-submit --class org.lpf.spark.examples.GraphXPageRank lpf-spark-examples_<scala>.jar
   *   (--scale S | --input FILE) [--tol X] [--partitions P] [--top K]
   */
  def main(args: Array[String]): Unit = {
    val o = Options.parse(args, "GraphXPageRank")
    val sc = new SparkContext(new SparkConf().setAppName("GraphXPageRank"))
    val edges = o.edges(sc).persist(StorageLevel.MEMORY_AND_DISK)
    println(s"graph ${o.describe}: ${edges.count()} edges")
    val (g, loadSeconds) = load(edges)
    val run = untilTolerance(g, o.tol, o.alpha)
    println(f"GraphX pageRank(${o.tol}%.1e): load $loadSeconds%.2f s, ${run.iterations.getOrElse(-1)} iterations in ${run.seconds}%.2f s")
    run.ranks.top(o.top)(Ordering.by(_._2)).foreach { case (v, r) => println(f"  $v%12d $r%.10e") }
    sc.stop()
  }
}
