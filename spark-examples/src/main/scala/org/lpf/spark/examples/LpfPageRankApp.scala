package org.lpf.spark.examples

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.storage.StorageLevel
import org.lpf.spark.{LpfPageRank, LpfPageRankResult}

/**
 * Accelerated PageRank: the graph's edges (an RDD) handed to LPF's native PageRank in
 * the executors, or with --native-read a file read in parallel by native code.
 *
 *   spark-submit --jars lpf-spark_<scala>-<version>.jar --conf spark.barrier.sync.timeout=300s \
 *     --class org.lpf.spark.examples.LpfPageRankApp lpf-spark-examples_<scala>.jar (--scale S | --input FILE) [--tol X]
 */
object LpfPageRankApp {
  def describe(r: LpfPageRankResult): String =
    f"${r.vertices} vertices, ${r.edges} edges, ${r.processes} LPF processes (${r.exchange} exchange): " +
      f"load ${r.loadSeconds}%.3f s, ${r.iterations} iterations in ${r.iterationSeconds}%.3f s " +
      f"(${r.secondsPerIteration * 1e3}%.2f ms/iteration), residual ${r.residual}%.3e, stage ${r.hookSeconds}%.2f s"

  def main(args: Array[String]): Unit = {
    val o = Options.parse(args, "LpfPageRankApp")
    val sc = new SparkContext(new SparkConf().setAppName("LpfPageRankApp"))
    val r = (o.nativeRead, o.input) match {
      case (true, Some(path)) => LpfPageRank.fromFile(sc, path, o.alpha, o.tol, o.maxIter, threads = o.threads)
      case _ =>
        val edges = o.edges(sc).persist(StorageLevel.MEMORY_AND_DISK)
        println(s"graph ${o.describe}: ${edges.count()} edges in Spark")
        LpfPageRank.run(edges, o.alpha, o.tol, o.maxIter, threads = o.threads)
    }
    println(s"LPF PageRank: ${describe(r)}")
    r.ranks.top(o.top)(Ordering.by(_._2)).foreach { case (v, x) => println(f"  $v%12d $x%.10e") }
    r.unpersist()
    sc.stop()
  }
}
