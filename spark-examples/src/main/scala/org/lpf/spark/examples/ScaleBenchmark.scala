package org.lpf.spark.examples

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.SparkContext
import org.apache.spark.graphx.{Edge, Graph}
import org.apache.spark.rdd.RDD
import org.apache.spark.scheduler.{SparkListener, SparkListenerStageSubmitted}
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.{DataType, DoubleType, LongType, StructField, StructType}
import org.apache.spark.storage.StorageLevel
import org.lpf.spark.LpfGraph

/**
 * The scale benchmark (issue 25, item 5): Graph500 Kronecker graphs (edge factor 16,
 * integer weights 1..63 in `w`) written once as Parquet ([[KronParquet]]), then read with
 * `spark.read.parquet` and run by one contender in this application:
 *
 *   contender  kernels (from the Parquet DataFrame to a computed result)
 *   lpf        one resident LpfGraph of the scale (`cache()`): `load` (loads it, no
 *              weights), then pr (20 iterations), bfs, wcc, cdlp (10 iterations), lcc on
 *              it; then `load-w` (loads it again with the weights w) and sssp (weights w)
 *   lpf-df     the same kernels on an LpfGraph that is not cached: every call reads the
 *              Parquet DataFrame and loads the graph in its barrier stage
 *   graphx     pr: staticPageRank(20); wcc: connectedComponents(); bfs:
 *              ShortestPaths.run(graph.reverse, Seq(source)) (hops to a landmark along the
 *              edges; on the reversed graph the depth from the source); cdlp:
 *              LabelPropagation.run(graph, 10); lcc: triangleCount()
 *
 * An LPF call is the kernel method (its result is computed when it returns); a GraphX call
 * is the rows to a graph, the algorithm, and its vertices to a persisted, counted
 * DataFrame (`id`, value), as a GraphFrames-style user does. The source of BFS and SSSP is
 * [[KronParquet.firstSource]] for both.
 *
 * Each call runs in a job group of its own: a listener counts the stages submitted in it,
 * and after `--cut-minutes` the group's jobs are cancelled (again every 5 s until the call
 * returns) and the outcome is `cut`. A failure is recorded (`oom`, `lost executor: ...`,
 * `error: ...`) and the next kernel runs. The peak RSS of each executor JVM of this
 * application (VmHWM of its CoarseGrainedExecutorBackend process, reset through
 * /proc/PID/clear_refs before the call) is recorded per call.
 *
 * Writes OUT/scale.csv (rows of other (scale, contender, kernel) kept; this run's rows are
 * written first as "error: the application ended during this run", then replaced as each
 * call ends, so an application that dies leaves that outcome) and OUT/scale.png. Prints a
 * line per phase (`scalebench: ...`) and, every minute of a long call, the stage it is in.
 */
object ScaleBenchmark {
  val LpfKernels: Seq[String] = Seq("pr", "bfs", "wcc", "sssp", "cdlp", "lcc")
  /** The rows of the resident graph's explicit loads: without and with the weights. */
  val Loads: Seq[String] = Seq("load", "load-w")
  /** The order of the rows (and the chart's groups): loads before the calls that use them. */
  val RowOrder: Seq[String] = Seq("load", "pr", "bfs", "wcc", "cdlp", "lcc", "load-w", "sssp")
  val GraphxKernels: Seq[String] = Seq("pr", "bfs", "wcc", "cdlp", "lcc")
  val PageRankIterations = 20
  val CdlpIterations = 10

  case class Result(scale: Int, contender: String, kernel: String, wall: Double, compute: Double, stages: Int,
                    peakRssMiB: String, nativeBytesPerEdge: Double, outcome: String, loadAverage: Double) {
    def sparkSide: Double = wall - compute
    def csv: String = Seq(scale, contender, kernel, wall, compute, sparkSide, if (stages < 0) "" else stages,
      peakRssMiB, nativeBytesPerEdge, outcome, loadAverage).map {
      case d: Double => if (d.isNaN) "" else f"$d%.3f"
      case x => x.toString
    }.mkString(",")
    def key: (Int, String, String) = (scale, contender, kernel)
  }

  val Contenders: Seq[String] = Seq("lpf", "lpf-df", "graphx")

  val Header = "scale,contender,kernel,wall_s,native_compute_s,spark_side_s,stages,peak_rss_mib,native_bytes_per_edge," +
    "outcome,load_avg"

  private def parse(line: String): Result = {
    val f = line.split(",", -1)
    def d(i: Int) = if (f(i).isEmpty) Double.NaN else f(i).toDouble
    Result(f(0).toInt, f(1), f(2), d(3), d(4), if (f(6).isEmpty) -1 else f(6).toInt, f(7), d(8), f(9), d(10))
  }

  def loadAverage(): Double =
    new String(Files.readAllBytes(Paths.get("/proc/loadavg")), StandardCharsets.US_ASCII).split(" ")(0).toDouble

  /** An outcome's text for the CSV: one line, no commas. */
  private def plain(s: String): String = s.replaceAll("[\\r\\n,]+", " ").trim.take(300)

  /** What a failed call's exception says happened. */
  def outcomeOf(e: Throwable, cut: Boolean): String = {
    val all = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(t => s"${t.getClass.getName}: ${t.getMessage}")
      .mkString(" / ")
    if (cut) "cut"
    else if (all.contains("OutOfMemoryError") || all.contains("Java heap space") || all.contains("GC overhead") ||
      all.toLowerCase.contains("out of memory") || all.contains("exit code 52") || all.contains("exitCode=52")) "oom"
    else if (all.contains("ExecutorLostFailure")) s"lost executor: ${plain(all)}"
    else s"error: ${plain(all)}"
  }

  /** The stages submitted in each job group. */
  final class StageCount extends SparkListener {
    private val byGroup = new ConcurrentHashMap[String, AtomicInteger]()
    override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit =
      Option(e.properties).flatMap(p => Option(p.getProperty("spark.jobGroup.id"))).foreach { g =>
        byGroup.computeIfAbsent(g, _ => new AtomicInteger).incrementAndGet()
      }
    def of(group: String): Int = Option(byGroup.get(group)).map(_.get).getOrElse(0)
  }

  /**
   * The executor JVMs of application `appId` on this machine: executor id -> pid, from
   * the command lines of the CoarseGrainedExecutorBackend processes in /proc.
   */
  def executorPids(appId: String): Map[String, Int] = {
    val procs = Option(new File("/proc").listFiles()).getOrElse(Array.empty[File]).filter(_.getName.forall(_.isDigit))
    procs.flatMap { d =>
      val args = try new String(Files.readAllBytes(new File(d, "cmdline").toPath), StandardCharsets.UTF_8).split('\u0000')
        catch { case NonFatal(_) => Array.empty[String] }
      def after(flag: String) = Option(args.indexOf(flag)).filter(i => i >= 0 && i + 1 < args.length).map(i => args(i + 1))
      if (args.exists(_.endsWith("CoarseGrainedExecutorBackend")) && after("--app-id").contains(appId))
        after("--executor-id").map(_ -> d.getName.toInt)
      else None
    }.toMap
  }

  /** Resets the peak RSS of `pid` (Linux: "5" to clear_refs); false where not allowed. */
  private def resetPeak(pid: Int): Boolean =
    try { Files.write(Paths.get(s"/proc/$pid/clear_refs"), "5".getBytes(StandardCharsets.US_ASCII)); true }
    catch { case NonFatal(_) => false }

  /** The peak RSS of `pid` in MiB (VmHWM), if it still runs. */
  private def peakMiB(pid: Int): Option[Long] =
    try Files.readAllLines(Paths.get(s"/proc/$pid/status")).asScala.find(_.startsWith("VmHWM:"))
      .map(_.split("\\s+")(1).toLong / 1024)
    catch { case NonFatal(_) => None }

  /** Peak RSS per executor of `before` (executor id -> pid): "id:MiB" each, "id:lost" for one that is gone. */
  private def peaks(appId: String, before: Map[String, Int]): String = {
    val now = executorPids(appId)
    before.toSeq.sortBy(_._1).map { case (id, pid) =>
      s"$id:${if (now.get(id).contains(pid)) peakMiB(pid).map(_.toString).getOrElse("lost") else "lost"}"
    }.mkString(" ")
  }

  /** GraphX's counterpart of `kernel` on the edges (see the object's comment): (id, value) persisted. */
  def graphx(spark: SparkSession, edges: DataFrame, kernel: String, source: Long): DataFrame = {
    val g = Graph.fromEdges(edges.select("src", "dst", "w").rdd.map(r => Edge(r.getLong(0), r.getLong(1), r.getDouble(2))),
      1, edgeStorageLevel = StorageLevel.MEMORY_AND_DISK, vertexStorageLevel = StorageLevel.MEMORY_AND_DISK).cache()
    try kernel match {
      case "pr" =>
        GraphXKernels.materialised(spark, g.staticPageRank(PageRankIterations).vertices.map { case (v, r) => Row(v, r) },
          "pagerank", DoubleType)
      case "bfs" => GraphXKernels.bfs(spark, g, source)
      case "wcc" => GraphXKernels.wcc(spark, g)
      case "cdlp" => GraphXKernels.cdlp(spark, g, CdlpIterations)
      case "lcc" =>
        GraphXKernels.materialised(spark, g.triangleCount().vertices.map { case (v, t) => Row(v, t.toLong) }, "triangles",
          LongType)
    } finally g.unpersist(blocking = false)
  }

  /**
   * LPF's `kernel` on `g` (or `load` / `load-w`: the resident graph loaded without / with
   * the weights w); the result (None for a load) and the native compute seconds.
   */
  def lpf(g: LpfGraph, kernel: String, source: Long): (Option[DataFrame], Double) = {
    if (Loads.contains(kernel)) {
      if (kernel == "load") g.load() else g.load("w")
      return (None, g.lastRun.map(_.loadSeconds).getOrElse(Double.NaN))
    }
    val out = kernel match {
      case "pr" => g.pageRank(0.85, 0.0, PageRankIterations)
      case "bfs" => g.bfs(source)
      case "wcc" => g.wcc()
      case "sssp" => g.sssp(source, "w")
      case "cdlp" => g.cdlp(CdlpIterations)
      case "lcc" => g.lcc()
    }
    (Some(out), g.lastRun.map(_.computeSeconds).getOrElse(Double.NaN))
  }

  private def say(msg: String): Unit = { println(s"scalebench: $msg"); System.out.flush() }

  private def seconds(t0: Long): Double = (System.nanoTime - t0) / 1e9

  /**
   * Runs `call` in job group `group`: the stages it submitted, its outcome, a progress
   * line each minute (elapsed time, the stages running; through `say`), and the cut
   * after `cutMs`: the group's jobs cancelled, the outcome `cut`.
   */
  def timed(sc: SparkContext, stageCount: StageCount, group: String, what: String, cutMs: Long,
            say: String => Unit)(call: => Double): (Double, Double, Int, String) = {
    val cut = new AtomicBoolean(false)
    val done = new AtomicBoolean(false)
    val t0 = System.nanoTime
    val watcher = new Thread(() => {
      var lastLine = System.nanoTime
      while (!done.get) {
        try Thread.sleep(1000) catch { case _: InterruptedException => }
        if (!done.get && System.nanoTime - t0 >= cutMs * 1000000L) {
          if (!cut.getAndSet(true)) say(f"$what: cut at ${seconds(t0)}%.0f s")
          sc.cancelJobGroup(group)
          try Thread.sleep(4000) catch { case _: InterruptedException => }
        } else if (!done.get && System.nanoTime - lastLine >= 60L * 1000000000L) {
          lastLine = System.nanoTime
          val stages = sc.statusTracker.getActiveStageIds().toSeq.sorted.flatMap(sc.statusTracker.getStageInfo(_))
            .map(s => s"stage ${s.stageId} '${s.name.takeWhile(_ != ' ')}' ${s.numCompletedTasks}/${s.numTasks} tasks")
          say(f"$what: running, ${seconds(t0)}%.0f s${if (stages.isEmpty) "" else stages.mkString(", ", ", ", "")}")
        }
      }
    }, "scalebench-watch")
    watcher.setDaemon(true)
    watcher.start()
    sc.setJobGroup(group, what, interruptOnCancel = true)
    val (compute, outcome) =
      try { (call, "ok") }
      catch { case NonFatal(e) => (Double.NaN, outcomeOf(e, cut.get)) }
      finally { sc.clearJobGroup(); done.set(true); watcher.interrupt() }
    val wall = seconds(t0)
    watcher.join()
    org.apache.spark.lpfexamples.ListenerBus.drain(sc)
    (wall, compute, stageCount.of(group), outcome)
  }

  def main(args: Array[String]): Unit = {
    var scale = 0
    var data = "/work/data/scale"
    var contender = ""
    var kernels = Seq.empty[String]
    var cutMinutes = 30.0
    var out = "spark-examples/bench/results"
    var i = 0
    def bad(msg: String): Nothing = {
      System.err.println(s"ScaleBenchmark: $msg\noptions: --scale S --contender lpf|lpf-df|graphx --kernels K,... " +
        "[--data DIR] [--cut-minutes 30] [--out DIR]")
      sys.exit(2)
    }
    def value(): String = { if (i + 1 >= args.length) bad(s"${args(i)} needs a value"); i += 1; args(i) }
    while (i < args.length) {
      args(i) match {
        case "--scale" => scale = value().toInt
        case "--data" => data = value()
        case "--contender" => contender = value()
        case "--kernels" => kernels = value().split(",").map(_.trim).filter(_.nonEmpty).toSeq
        case "--cut-minutes" => cutMinutes = value().toDouble
        case "--out" => out = value()
        case a => bad(s"unknown option $a")
      }
      i += 1
    }
    if (scale < 1 || scale > 31) bad(s"--scale $scale: need 1..31")
    val known = contender match {
      case "lpf" | "lpf-df" => LpfKernels
      case "graphx" => GraphxKernels
      case c => bad(s"--contender '$c': lpf, lpf-df or graphx")
    }
    kernels.find(k => !known.contains(k)).foreach(k => bad(s"kernel $k: $contender runs ${known.mkString(", ")}"))
    // The resident graph's rows: its loads, each before the calls that use it.
    val runs = if (contender != "lpf") kernels
      else RowOrder.filter(k => kernels.contains(k) || (k == "load" && kernels.exists(x => x != "sssp")) ||
        (k == "load-w" && kernels.contains("sssp")))

    val spark = SparkSession.builder().appName(s"ScaleBenchmark kron$scale $contender ${kernels.mkString(",")}")
      .getOrCreate()
    val sc = spark.sparkContext
    sc.setLogLevel("WARN")
    val stageCount = new StageCount
    sc.addSparkListener(stageCount)
    val csvFile = new File(out, "scale.csv")
    new File(out).mkdirs()
    def record(r: Result): Unit = {
      val rows = ResultsCsv.update(csvFile, Header, parse, (x: Result) => x.csv) { rows =>
        (rows.filterNot(_.key == r.key) :+ r).sortBy(x => (x.scale, Contenders.indexOf(x.contender), RowOrder.indexOf(x.kernel)))
      }
      chart(new File(out, "scale.png"), rows)
    }
    val load0 = loadAverage()
    runs.foreach(k => record(Result(scale, contender, k, Double.NaN, Double.NaN, -1, "", Double.NaN,
      "error: the application ended during this run", load0)))

    val path = KronParquet.ensure(spark, data, scale, say)
    val t0 = System.nanoTime
    val edges = spark.read.parquet(path)
    val m = edges.count()
    val source = KronParquet.firstSource(scale)
    say(f"kron$scale: read $path: $m edges, ${edges.rdd.getNumPartitions} partitions, source $source, " +
      f"${seconds(t0)}%.1f s")

    // One graph per scale: resident (lpf) or read again by every call (lpf-df).
    lazy val g = if (contender == "lpf") LpfGraph(edges).cache() else LpfGraph(edges)
    val cutMs = (cutMinutes * 60000).toLong
    for (k <- runs) {
      val what = s"kron$scale $contender $k"
      val execs = executorPids(sc.applicationId)
      val reset = execs.values.forall(resetPeak)
      val la = loadAverage()
      say(f"$what: start (load average $la%.2f, executors ${execs.toSeq.sorted.map { case (e, p) => s"$e:pid $p" }
        .mkString(" ")})")
      val (wall, compute, stages, outcome) = timed(sc, stageCount, s"scalebench-$scale-$contender-$k", what, cutMs, say) {
        if (contender != "graphx") {
          val (df, c) = lpf(g, k, source)
          df.foreach(_.unpersist())
          c
        } else {
          graphx(spark, edges, k, source).unpersist()
          Double.NaN
        }
      }
      val rss = peaks(sc.applicationId, execs) + (if (reset) "" else " (not reset)")
      // Native bytes per edge of the resident graph, as its processes report them (after a
      // load; the edges as the graph counts them, duplicates once).
      val bytesPerEdge = if (contender != "lpf" || !Loads.contains(k) || outcome != "ok") Double.NaN
        else g.lastRun.filter(_.edges > 0).map(r => g.residentBytes.values.sum.toDouble / r.edges)
          .filter(_ > 0).getOrElse(Double.NaN)
      record(Result(scale, contender, k, wall, compute, stages, rss, bytesPerEdge, outcome, la))
      say(f"$what: $outcome, $wall%.2f s" + (if (compute.isNaN) "" else f", native compute $compute%.3f s") +
        s", $stages stages, peak RSS MiB $rss")
    }
    say(s"wrote $csvFile, ${new File(out, "scale.png")}")
    spark.stop()
  }

  /**
   * Call wall seconds and peak executor RSS per kernel, a bar per contender and scale;
   * the runs that did not end ok (no bar) named under the title.
   */
  def chart(file: File, rows: Seq[Result]): Unit = {
    val kernels = RowOrder.filter(k => rows.exists(_.kernel == k))
    val series = rows.map(_.scale).distinct.sorted.flatMap(s => Contenders.map(c => s"$c kron$s"))
      .filter(x => rows.exists(r => s"${r.contender} kron${r.scale}" == x))
    val ok = rows.filter(_.outcome == "ok")
    def maxRss(r: Result): Double = {
      val each = r.peakRssMiB.split(" ").flatMap(_.split(":").lift(1)).filter(x => x.nonEmpty && x.forall(_.isDigit))
      if (each.isEmpty) Double.NaN else each.map(_.toDouble).max
    }
    val failed = rows.filter(_.outcome != "ok").groupBy(r => r.outcome.takeWhile(_ != ':')).toSeq.sortBy(_._1)
      .map { case (o, rs) => s"$o: " + rs.map(r => s"kron${r.scale} ${r.contender} ${r.kernel}").mkString(", ") }
    def bar(r: Result) = (r.kernel, s"${r.contender} kron${r.scale}")
    Chart.write(file, "Scale benchmark: from Parquet to a computed DataFrame, local-cluster[2,1,M]", kernels, series,
      Seq(Chart.Panel("call wall time", "s", ok.map(r => bar(r) -> r.wall).toMap),
        Chart.Panel("peak RSS of an executor", "MiB", ok.map(r => bar(r) -> maxRss(r)).toMap)),
      failed.map(_.take(160)))
  }
}
