package org.lpf.spark.examples

import java.io.File

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{asc, col, desc}
import org.apache.spark.storage.StorageLevel
import org.lpf.spark.graphframes.GraphFrame

/**
 * GraphFrames' algorithms, ours beside GraphX's, end to end (issue 26's benchmark): the
 * edges of kron`S` read from Parquet ([[KronParquet]]: `src`, `dst`: bigint, `w`), the
 * vertices those of the edges (GraphFrames' `fromEdges`: the distinct `src` and `dst`),
 * to the result DataFrame with the vertex columns, written to Spark's `noop` sink (every
 * row and column computed, nothing kept). One application runs one contender's
 * algorithms (graphframes.sh runs one per algorithm, the contenders interleaved):
 *
 *   algorithm  ours (GraphFrame)                        GraphX (GraphXGraphFrames)
 *   pr-tol     pageRank.resetProbability(0.15).tol(0.01) PageRank.runUntilConvergence
 *   pr-iter    pageRank ... .maxIter(10)                 PageRank.runWithOptions(10)
 *   ppr        pageRank ... .maxIter(10).sourceId(s)     runWithOptions(10, Some(s))
 *   pppr       parallelPersonalizedPageRank (4 sources,  runParallelPersonalizedPageRank
 *              maxIter 10)
 *   cc         connectedComponents                       ConnectedComponents.run
 *   scc        stronglyConnectedComponents.maxIter(10)   StronglyConnectedComponents.run(10)
 *   lpa        labelPropagation.maxIter(5)               LabelPropagation.run(5)
 *   sp         shortestPaths (2 landmarks)               ShortestPaths.run
 *   tc         triangleCount                             TriangleCount.run
 *   kcore      kCore                                     h-index supersteps (written here)
 *   mis        maximalIndependentSet.run(12345)          Luby rounds (written here)
 *   bfs        bfs "id = from" -> "id = to"              level-synchronous BFS + path joins
 *
 * The sources, landmarks and the BFS target are the vertices of highest out-degree
 * (smallest id among equals; found before any call, not timed); the BFS source is
 * [[KronParquet.firstSource]]. Each call is timed by [[ScaleBenchmark.timed]] (its own
 * job group, cut after `--cut-minutes`: outcome `cut`, failures recorded by kind).
 *
 * Writes OUT/graphframes.csv (one row per (scale, contender, algorithm, round); rows of
 * other keys kept), OUT/graphframes-median.csv (per scale and algorithm: the median of
 * each contender's rounds that ended ok, GraphX / ours; when GraphX has no such round,
 * its longest cut or failed run, the ratio a lower bound ">=") and OUT/graphframes.png.
 */
object GraphFrameBenchmark {
  val Algorithms: Seq[String] = Seq("pr-tol", "pr-iter", "ppr", "pppr", "cc", "scc", "lpa", "sp", "tc", "kcore", "mis",
    "bfs")
  val Contenders: Seq[String] = Seq("ours", "graphx")
  val ResetProbability = 0.15
  val PageRankTol = 0.01
  val PageRankIterations = 10
  val LabelPropagationIterations = 5
  val SccIterations = 10
  val MaxPathLength = 10
  val Seed = 12345L

  case class Result(scale: Int, contender: String, algorithm: String, round: Int, wall: Double, outcome: String,
                    loadAverage: Double) {
    def csv: String = s"$scale,$contender,$algorithm,$round,${if (wall.isNaN) "" else f"$wall%.3f"},$outcome," +
      f"$loadAverage%.2f"
    def key: (Int, String, String, Int) = (scale, contender, algorithm, round)
  }

  val Header = "scale,contender,algorithm,round,wall_s,outcome,load_avg"

  private def parse(line: String): Result = {
    val f = line.split(",", -1)
    Result(f(0).toInt, f(1), f(2), f(3).toInt, if (f(4).isEmpty) Double.NaN else f(4).toDouble, f(5), f(6).toDouble)
  }

  private def say(msg: String): Unit = { println(s"gfbench: $msg"); System.out.flush() }

  /** The sources, landmarks and BFS ends of the graph (see the object's comment). */
  def arguments(edges: DataFrame, scale: Int): GraphXGraphFrames.Args = {
    val top = edges.groupBy("src").count().orderBy(desc("count"), asc("src")).limit(4).collect().map(_.getLong(0)).toSeq
    val from = KronParquet.firstSource(scale)
    GraphXGraphFrames.Args(source = top.head, sources = top, landmarks = top.take(2), bfsFrom = from,
      bfsTo = top.find(_ != from).get, labelPropagationIterations = LabelPropagationIterations,
      pageRankIterations = PageRankIterations, pageRankTol = PageRankTol, resetProbability = ResetProbability,
      sccIterations = SccIterations, maxPathLength = MaxPathLength, seed = Seed)
  }

  /** GraphFrames' `fromEdges` vertices: the distinct ids of `src` and `dst`, persisted as it does. */
  def vertexFrame(edges: DataFrame): DataFrame =
    edges.select(col("src").as("id")).union(edges.select(col("dst").as("id"))).distinct()
      .persist(StorageLevel.MEMORY_AND_DISK)

  /**
   * Our result DataFrame of `algorithm` from the edges: GraphFrame.fromEdges and the
   * GraphFrames call, as a GraphFrames user writes it (the call runs the LPF job; the
   * result is read when forced).
   */
  def ours(edges: DataFrame, algorithm: String, a: GraphXGraphFrames.Args): DataFrame = {
    val g = GraphFrame.fromEdges(edges)
    val any = (xs: Seq[Long]) => xs.map(x => x: Any)
    algorithm match {
      case "pr-tol" => g.pageRank.resetProbability(a.resetProbability).tol(a.pageRankTol).run().vertices
      case "pr-iter" => g.pageRank.resetProbability(a.resetProbability).maxIter(a.pageRankIterations).run().vertices
      case "ppr" => g.pageRank.resetProbability(a.resetProbability).maxIter(a.pageRankIterations).sourceId(a.source)
        .run().vertices
      case "pppr" => g.parallelPersonalizedPageRank.resetProbability(a.resetProbability).maxIter(a.pageRankIterations)
        .sourceIds(any(a.sources).toArray).run().vertices
      case "cc" => g.connectedComponents.run()
      case "scc" => g.stronglyConnectedComponents.maxIter(a.sccIterations).run()
      case "lpa" => g.labelPropagation.maxIter(a.labelPropagationIterations).run()
      case "sp" => g.shortestPaths.landmarks(any(a.landmarks)).run()
      case "tc" => g.triangleCount.run()
      case "kcore" => g.kCore.run()
      case "mis" => g.maximalIndependentSet.run(a.seed)
      case "bfs" => g.bfs.fromExpr(s"id = ${a.bfsFrom}").toExpr(s"id = ${a.bfsTo}").maxPathLength(a.maxPathLength).run()
      case other => throw new IllegalArgumentException(s"unknown algorithm $other")
    }
  }

  /** Computes every row and column of `df` without keeping it. */
  def force(df: DataFrame): Unit = df.write.format("noop").mode("overwrite").save()

  def main(args: Array[String]): Unit = {
    var scale = 0
    var data = "/work/data/scale"
    var contender = ""
    var algorithms = Seq.empty[String]
    var round = 1
    var cutMinutes = 10.0
    var out = "spark-examples/bench/results"
    var i = 0
    def bad(msg: String): Nothing = {
      System.err.println(s"GraphFrameBenchmark: $msg\noptions: --scale S --contender ours|graphx --algorithms A,... " +
        s"[--round R] [--data DIR] [--cut-minutes 10] [--out DIR]\nalgorithms: ${Algorithms.mkString(", ")}")
      sys.exit(2)
    }
    def value(): String = { if (i + 1 >= args.length) bad(s"${args(i)} needs a value"); i += 1; args(i) }
    def number[T](f: String => T): T = { val v = value(); try f(v) catch { case _: NumberFormatException => bad(s"bad number $v") } }
    while (i < args.length) {
      args(i) match {
        case "--scale" => scale = number(_.toInt)
        case "--data" => data = value()
        case "--contender" => contender = value()
        case "--algorithms" => algorithms = value().split(",").map(_.trim).filter(_.nonEmpty).toSeq
        case "--round" => round = number(_.toInt)
        case "--cut-minutes" => cutMinutes = number(_.toDouble)
        case "--out" => out = value()
        case a => bad(s"unknown option $a")
      }
      i += 1
    }
    if (scale < 1 || scale > 31) bad(s"--scale $scale: need 1..31")
    if (!Contenders.contains(contender)) bad(s"--contender '$contender': ours or graphx")
    if (algorithms.isEmpty) bad("--algorithms: none given")
    algorithms.find(a => !Algorithms.contains(a)).foreach(a => bad(s"--algorithms: unknown '$a'"))
    if (round < 1) bad(s"--round $round: need >= 1")

    val spark = SparkSession.builder().appName(s"GraphFrameBenchmark kron$scale $contender ${algorithms.mkString(",")}")
      .getOrCreate()
    val sc = spark.sparkContext
    sc.setLogLevel("WARN")
    val stageCount = new ScaleBenchmark.StageCount
    sc.addSparkListener(stageCount)
    new File(out).mkdirs()
    val csvFile = new File(out, "graphframes.csv")
    def record(r: Result): Unit = {
      val sorted = ResultsCsv.update(csvFile, Header, parse, (x: Result) => x.csv) { rows =>
        (rows.filterNot(_.key == r.key) :+ r)
          .sortBy(x => (x.scale, Algorithms.indexOf(x.algorithm), Contenders.indexOf(x.contender), x.round))
      }
      summarise(new File(out, "graphframes-median.csv"), new File(out, "graphframes.png"), sorted)
    }
    val load0 = ScaleBenchmark.loadAverage()
    algorithms.foreach(a => record(Result(scale, contender, a, round, Double.NaN,
      "error: the application ended during this run", load0)))

    val path = KronParquet.ensure(spark, data, scale, say)
    val edges = spark.read.parquet(path)
    val a = arguments(edges, scale)
    say(s"kron$scale: $path, ${edges.rdd.getNumPartitions} partitions; sources ${a.sources.mkString(" ")}, " +
      s"landmarks ${a.landmarks.mkString(" ")}, bfs ${a.bfsFrom} -> ${a.bfsTo}")
    val cutMs = (cutMinutes * 60000).toLong
    for (algorithm <- algorithms) {
      val what = s"kron$scale $contender $algorithm round $round"
      val la = ScaleBenchmark.loadAverage()
      say(f"$what: start (load average $la%.2f)")
      val (wall, _, stages, outcome) = ScaleBenchmark.timed(sc, stageCount, s"gfbench-$scale-$contender-$algorithm",
        what, cutMs, say) {
        force(if (contender == "ours") ours(edges, algorithm, a)
          else GraphXGraphFrames.run(spark, vertexFrame(edges), edges, algorithm, a))
        Double.NaN
      }
      record(Result(scale, contender, algorithm, round, wall, outcome, la))
      say(f"$what: $outcome, $wall%.2f s, $stages stages")
      spark.sparkContext.getPersistentRDDs.values.foreach(_.unpersist(blocking = false))
    }
    say(s"wrote $csvFile")
    spark.stop()
  }

  private def median(xs: Seq[Double]): Double = {
    val s = xs.sorted
    if (s.isEmpty) Double.NaN else if (s.length % 2 == 1) s(s.length / 2) else (s(s.length / 2 - 1) + s(s.length / 2)) / 2
  }

  /**
   * graphframes-median.csv and graphframes.png from all rows: per (scale, algorithm) the
   * median wall of each contender's ok rounds; GraphX without one: its longest run that
   * did not end ok (cut, oom, ...), the ratio then ">=" that over ours.
   */
  def summarise(csv: File, png: File, rows: Seq[Result]): Unit = {
    case class Line(scale: Int, algorithm: String, ours: Double, oursRounds: Int, graphx: Double, graphxRounds: Int,
                    graphxOutcome: String, lowerBound: Boolean) {
      def ratio: Double = graphx / ours
      def csv: String = Seq(scale.toString, algorithm, f"$ours%.3f", oursRounds.toString, f"$graphx%.3f",
        graphxRounds.toString, graphxOutcome, (if (lowerBound) ">=" else "") + f"$ratio%.1f")
        .map(_.replace("NaN", "")).mkString(",")
    }
    val lines = rows.groupBy(r => (r.scale, r.algorithm)).toSeq
      .sortBy { case ((s, a), _) => (s, Algorithms.indexOf(a)) }.map { case ((s, a), rs) =>
        def ok(c: String) = rs.filter(r => r.contender == c && r.outcome == "ok").map(_.wall)
        val failed = rs.filter(r => r.contender == "graphx" && r.outcome != "ok" && !r.wall.isNaN).sortBy(-_.wall)
        val gx = ok("graphx")
        if (gx.nonEmpty || failed.isEmpty) Line(s, a, median(ok("ours")), ok("ours").length, median(gx), gx.length,
          if (gx.nonEmpty) "ok" else "", lowerBound = false)
        else Line(s, a, median(ok("ours")), ok("ours").length, failed.head.wall, 0,
          failed.head.outcome.takeWhile(_ != ':'), lowerBound = true)
      }
    ResultsCsv.write(csv, "scale,algorithm,ours_median_s,ours_rounds,graphx_s,graphx_rounds,graphx_outcome,graphx_over_ours",
      lines, (l: Line) => l.csv)
    val scales = lines.map(_.scale).distinct.sorted
    val series = scales.flatMap(s => Contenders.map(c => s"$c kron$s"))
    val algorithms = Algorithms.filter(a => lines.exists(_.algorithm == a))
    val walls = lines.flatMap(l => Seq((l.algorithm, s"ours kron${l.scale}") -> l.ours) ++
      (if (l.lowerBound) Nil else Seq((l.algorithm, s"graphx kron${l.scale}") -> l.graphx))).toMap
    val ratios = lines.filter(l => !l.lowerBound).map(l => (l.algorithm, s"graphx kron${l.scale}") -> l.ratio).toMap
    val notes = lines.filter(_.lowerBound).map(l => f"kron${l.scale} ${l.algorithm}: GraphX ${l.graphxOutcome} after " +
      f"${l.graphx}%.0f s")
    Chart.write(png, "GraphFrames' algorithms from a DataFrame: ours vs GraphX (median s), local-cluster[2,1,M]",
      algorithms, series, Seq(Chart.Panel("wall time (median of rounds)", "s", walls),
        Chart.Panel("GraphX time / ours (bars: graphx kronS)", "x", ratios)),
      if (notes.isEmpty) Nil else Seq(notes.mkString("; ").take(200)))
  }
}
