package org.lpf.spark.examples

import java.io.{BufferedWriter, File, FileWriter}
import java.nio.charset.StandardCharsets


import org.apache.spark.graphx.{Edge, Graph}
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.{DoubleType, LongType, StructField, StructType}
import org.apache.spark.storage.StorageLevel
import org.lpf.spark.{LpfGraph, LpfPageRank}

/**
 * What one PageRank call costs through the bridge (issue 14's benchmark), per graph:
 *
 *   rdd        LpfPageRank.run on a cached RDD[(Long, Long)], ranks RDD materialised
 *   dataframe  LpfGraph(df).pageRankRun on a cached DataFrame (src, dst: bigint), ranks
 *              DataFrame computed, its rows persisted (DataFrame in, DataFrame out)
 *   cached     LpfGraph(df).cache().pageRankRun: the same call on a resident graph (loaded
 *              by the warm-up call; no rows read, no numbering)
 *   spark-job  no LPF: one barrier job of p tasks that do nothing
 *              (`parallelize(0 until p, p).barrier().mapPartitions(identity).count()`),
 *              the floor under any call that runs one barrier stage
 *   graphx     GraphFrames-style on the same DataFrame: its rows to a GraphX graph,
 *              pageRank(tol), the vertices back to a DataFrame (id, pagerank), persisted
 *
 * Each path but GraphX runs once to warm up, then `--calls` rounds run each of them once
 * in turn (interleaved, so that the machine's load falls on all alike); the row has the
 * median call's wall time and that call's parts: driver set-up, ingest (partitions into native
 * memory, slowest process), group bootstrap, native load and compute (slowest process),
 * result conversion (driver's view), and the overhead = wall - native compute. GraphX
 * runs once. With `--cli PATH` the edges are also written as an edge list and loaded by
 * the `pagerank` CLI (`-p P --engine shm`): its load time is the native load of the same
 * graph that ingest is compared with. All to tol (L1 for LPF, GraphX's own per-vertex
 * tolerance for GraphX). Writes (merging with earlier runs of other graphs)
 * OUT/calls.csv and OUT/calls.png.
 */
object CallBenchmark {
  case class Result(graph: String, path: String, vertices: Long, edges: Long, wall: Double, setup: Double,
                    ingest: Double, bootstrap: Double, nativeLoad: Double, nativeCompute: Double, conversion: Double,
                    cliLoad: Double, iterations: Int) {
    def overhead: Double = wall - nativeCompute
    def csv: String = Seq(graph, path, vertices, edges, wall, setup, ingest, bootstrap, nativeLoad, nativeCompute,
      conversion, overhead, cliLoad, iterations).map {
      case d: Double => if (d.isNaN) "" else f"$d%.4f"
      case x => x.toString
    }.mkString(",")
  }

  val Header = "graph,path,vertices,edges,wall_s,setup_s,ingest_s,bootstrap_s,native_load_s,native_compute_s," +
    "conversion_s,overhead_s,cli_native_load_s,iterations"

  private def parse(line: String): Result = {
    val f = line.split(",", -1)
    def d(i: Int) = if (f(i).isEmpty) Double.NaN else f(i).toDouble
    Result(f(0), f(1), f(2).toLong, f(3).toLong, d(4), d(5), d(6), d(7), d(8), d(9), d(10), d(12), f(13).toInt)
  }

  private def seconds[T](body: => T): (T, Double) = {
    val t0 = System.nanoTime
    val x = body
    (x, (System.nanoTime - t0) / 1e9)
  }

  /** Load seconds of the `pagerank` CLI on the edge list `file` (p processes, shared memory). */
  private def cliLoad(cli: String, file: File, p: Int): Double = {
    val out = new java.io.ByteArrayOutputStream
    val pr = new ProcessBuilder(cli, "--input", file.getPath, "--format", "edges", "--engine", "shm", "-p", p.toString,
      "--max-iters", "1", "--quiet").redirectErrorStream(true).start()
    pr.getInputStream.transferTo(out)
    val text = out.toString(StandardCharsets.UTF_8)
    if (pr.waitFor() != 0) throw new RuntimeException(s"$cli failed on $file: $text")
    "load_s=([0-9.]+)".r.findFirstMatchIn(text).map(_.group(1).toDouble)
      .getOrElse(throw new RuntimeException(s"$cli printed no load_s: $text"))
  }

  def main(args: Array[String]): Unit = {
    // Options of this benchmark alone; the rest are the examples' common Options.
    val (cli, calls, paths, rest) = {
      var cli: Option[String] = None
      var calls = 3
      var paths = Seq("rdd", "dataframe", "graphx")
      val rest = Vector.newBuilder[String]
      var i = 0
      while (i < args.length) {
        args(i) match {
          case "--cli" => cli = Some(args(i + 1)); i += 1
          case "--calls" => calls = args(i + 1).toInt; i += 1
          case "--paths" => paths = args(i + 1).split(",").map(_.trim).filter(_.nonEmpty).toSeq; i += 1
          case a => rest += a
        }
        i += 1
      }
      (cli, calls, paths, rest.result().toArray)
    }
    val o = Options.parse(rest, "CallBenchmark")
    val spark = SparkSession.builder().appName(s"PageRank per-call benchmark ${o.describe}").getOrCreate()
    val sc = spark.sparkContext
    val graph = o.describe
    val edges = o.edges(sc).setName(s"edges of $graph").persist(StorageLevel.MEMORY_AND_DISK)
    val m = edges.count()
    val df = spark.createDataFrame(edges.map { case (u, v) => Row(u, v) },
      StructType(Seq(StructField("src", LongType, nullable = false), StructField("dst", LongType, nullable = false))))
      .persist(StorageLevel.MEMORY_AND_DISK)
    df.count()
    val p = edges.getNumPartitions
    println(s"callbench: graph $graph, $m edges in $p partitions; master ${sc.master}")
    val cliSeconds = cli.map { path =>
      val file = File.createTempFile(s"callbench-$graph-", ".edges")
      file.deleteOnExit()
      val w = new BufferedWriter(new FileWriter(file), 1 << 20)
      try edges.toLocalIterator.foreach { case (u, v) => w.write(s"$u $v\n") } finally w.close()
      val s = cliLoad(path, file, p)
      file.delete()
      println(f"callbench: pagerank CLI native load of the same edges ($p processes, shm): $s%.4f s")
      s
    }.getOrElse(Double.NaN)

    def median(rs: Seq[Result]): Result = rs.sortBy(_.wall).apply(rs.length / 2)
    def lpfRdd(): Result = {
      val (r, wall0) = seconds(LpfPageRank.run(edges, o.alpha, o.tol, o.maxIter))
      val (_, conv) = seconds(r.ranks.count())
      r.unpersist()
      Result(graph, "rdd", r.vertices, r.edges, wall0 + conv, r.setupSeconds, r.ingestSeconds, r.bootstrapSeconds,
        r.loadSeconds, r.iterationSeconds, conv, cliSeconds, r.iterations)
    }
    def lpfDf(): Result = {
      val (g, wall) = seconds(LpfGraph(df).pageRankRun(o.alpha, o.tol, o.maxIter))
      val r = g.run
      // Conversion: the ids numbered and the ranks translated back to them (native), as
      // the replies become the DataFrame's rows only when it is read.
      Result(graph, "dataframe", r.vertices, r.edges, wall, r.setupSeconds, r.ingestSeconds, r.bootstrapSeconds,
        r.loadSeconds, r.computeSeconds, r.idSeconds, cliSeconds, g.iterations)
    }
    def report(r: Result): Result = {
      println(f"callbench: ${r.path}%-9s wall ${r.wall}%.3f s (setup ${r.setup}%.3f, ingest ${r.ingest}%.3f, " +
        f"bootstrap ${r.bootstrap}%.3f, native load ${r.nativeLoad}%.3f, native compute ${r.nativeCompute}%.3f, " +
        f"conversion ${r.conversion}%.3f), overhead ${r.overhead}%.3f s, ${r.iterations} iterations")
      r
    }
    lazy val resident = LpfGraph(df).cache()
    def lpfCached(): Result = {
      val (g, wall) = seconds(resident.pageRankRun(o.alpha, o.tol, o.maxIter))
      val r = g.run
      Result(graph, "cached", r.vertices, r.edges, wall, r.setupSeconds, r.ingestSeconds, r.bootstrapSeconds,
        r.loadSeconds, r.computeSeconds, r.idSeconds, cliSeconds, g.iterations)
    }
    def sparkJob(): Result = {
      val (_, wall) = seconds(sc.parallelize(0 until p, p).barrier().mapPartitions(it => it).count())
      Result(graph, "spark-job", 0, 0, wall, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0.0, Double.NaN,
        cliSeconds, 0)
    }
    val once: Map[String, () => Result] =
      Map("rdd" -> (() => lpfRdd()), "dataframe" -> (() => lpfDf()), "cached" -> (() => lpfCached()),
        "spark-job" -> (() => sparkJob()))
    for (path <- paths if path != "graphx" && !once.contains(path))
      throw new IllegalArgumentException(s"unknown implementation $path (rdd, dataframe, cached, spark-job, graphx)")
    val interleaved = paths.filter(once.contains)
    interleaved.foreach(path => once(path)()) // warm-up (and the cached path's load)
    val timed = Seq.fill(calls)(interleaved.map(path => report(once(path)()))).flatten
    var rows = interleaved.map(path => report(median(timed.filter(_.path == path)))).toVector
    for (path <- paths) path match {
      case "graphx" =>
        val t0 = System.nanoTime
        val g = Graph.fromEdges(df.rdd.map(r => Edge(r.getLong(0), r.getLong(1), 1)), 1,
          edgeStorageLevel = StorageLevel.MEMORY_AND_DISK, vertexStorageLevel = StorageLevel.MEMORY_AND_DISK).cache()
        val n = g.vertices.count()
        val load = (System.nanoTime - t0) / 1e9
        val run = GraphXPageRank.untilTolerance(g, o.tol, o.alpha)
        val (ranks, conv) = seconds {
          val out = spark.createDataFrame(run.ranks.map { case (v, r) => Row(v, r) },
            StructType(Seq(StructField("id", LongType, nullable = false), StructField("pagerank", DoubleType, nullable = false))))
            .persist(StorageLevel.MEMORY_AND_DISK)
          out.count()
          out
        }
        ranks.unpersist()
        run.ranks.unpersist(blocking = false)
        g.unpersist(blocking = false)
        rows :+= report(Result(graph, "graphx", n, g.edges.count(), load + run.seconds + conv, Double.NaN, load,
          Double.NaN, Double.NaN, run.seconds, conv, cliSeconds, run.iterations.getOrElse(-1)))
      case _ =>
    }

    val out = new File(o.out)
    out.mkdirs()
    val csvFile = new File(out, "calls.csv")
    val all = ResultsCsv.update(csvFile, Header, parse, (r: Result) => r.csv) { earlier =>
      (if (o.append) earlier else Vector.empty).filterNot(r => r.graph == graph) ++ rows
    }
    val graphs = all.map(_.graph).distinct
    def panel(title: String, f: Result => Double, paths: Seq[String]) =
      Chart.Panel(title, "s", all.filter(r => paths.contains(r.path)).map(r => (r.graph, r.path) -> f(r)).toMap)
    val lpf = Seq("rdd", "dataframe", "cached")
    Chart.write(new File(out, "calls.png"), s"PageRank per call through Spark (${sc.master}, tol ${o.tol})", graphs,
      all.map(_.path).distinct, Seq(
        panel("total wall per call", _.wall, lpf ++ Seq("spark-job", "graphx")),
        panel("ingest", _.ingest, lpf),
        panel("overhead (wall - native compute)", _.overhead, lpf),
        panel("result conversion", _.conversion, lpf :+ "graphx")))
    for (r <- all.filter(_.path == "dataframe"); x <- all.find(x => x.graph == r.graph && x.path == "graphx"))
      println(f"callbench: ${r.graph}: DataFrame in, DataFrame out ${x.wall / r.wall}%.1fx faster than GraphX")
    for (r <- all.filter(x => Seq("rdd", "dataframe").contains(x.path)))
      println(f"callbench: ${r.graph} ${r.path}: ingest / native load: ${r.ingest / r.nativeLoad}%.2f (in the call), " +
        f"${r.ingest / r.cliLoad}%.2f (CLI)")
    println(s"callbench: wrote $csvFile, ${new File(out, "calls.png")}")
    spark.stop()
  }
}
