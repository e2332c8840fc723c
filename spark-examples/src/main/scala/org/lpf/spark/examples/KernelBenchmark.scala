package org.lpf.spark.examples

import java.io.{BufferedWriter, File, FileWriter}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import org.apache.spark.graphx.{Edge, Graph}
import org.apache.spark.graphx.lib.TriangleCount
import org.apache.spark.rdd.RDD
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobEnd, SparkListenerJobStart}
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{abs, col, count, countDistinct, desc, lit, max, sum, when}
import org.apache.spark.sql.types.{DataType, DoubleType, LongType, StructField, StructType}
import org.apache.spark.storage.StorageLevel
import org.lpf.spark.LpfGraph

/**
 * The graph kernels through Spark, LPF (`LpfGraph`) beside what GraphX offers for each,
 * end to end on one edge DataFrame (issue 15's Spark benchmark): per kernel, the edge
 * DataFrame in, the result DataFrame `(id, value)` out, persisted and counted.
 *
 *   kernel  LPF                          GraphX counterpart
 *   bfs     bfs(source): depth           ShortestPaths.run(graph.reverse, Seq(source)): hops
 *                                        (ShortestPaths counts hops *to* a landmark along
 *                                        the edges; on the reversed graph that is the depth
 *                                        from the source)
 *   wcc     wcc(): smallest id           connectedComponents(): smallest id
 *   cdlp    cdlp(10): Graphalytics CDLP  LabelPropagation.run(graph, 10): the same counting
 *                                        (in- and out-neighbours with multiplicity), but a
 *                                        tie goes to whichever label its map yields first,
 *                                        not to the smallest: results differ, agreement is
 *                                        reported, not required
 *   lcc     lcc(): Graphalytics LCC      triangleCount() on the undirected simple graph
 *           (directed: in ∪ out           (self-loops and duplicates removed) and the
 *           neighbours, directed edges    undirected degree d: 2 T / (d (d - 1))
 *           among them)
 *   sssp    sssp(source, "weight")       Pregel single-source shortest paths (written
 *                                        here: relax each edge whose source improved)
 *   pr      pageRank(0.85, tol, maxIter) pageRank(tol) (GraphX stops when no vertex
 *                                        changes by more than tol), ranks normalised to 1
 *
 * Each LPF kernel runs once to warm up, then `--calls` times (the median is reported);
 * GraphX runs once (minutes on kron16; `--no-graphx`: not at all, LPF's times alone, no
 * checks). The Spark jobs of the last LPF call of each kernel are listed (wall, tasks,
 * call site of the last stage): where the call's time goes. The source of BFS and SSSP
 * is the vertex of highest out-degree (smallest id among equals). Edge weights for SSSP:
 * doubles in [0, 1) drawn by a generator seeded with (src, dst), a column `weight` of the
 * same DataFrame.
 *
 * Every LPF result is compared with its GraphX counterpart where the semantics agree,
 * and a disagreement makes the application exit with status 1 after writing its results:
 * BFS depths and SSSP distances exactly, WCC as partitions (equal up to labels), PR as
 * the L1 distance of the normalised ranks (<= `PrAgreement`: both stop at tol 1e-7 by
 * different norms, and GraphX's fixed point without dangling redistribution is
 * proportional to the one with it), LCC on the undirected view: one more LPF call on the
 * symmetrised edges (edges and their reverses, where Graphalytics' directed LCC equals
 * the undirected one) against GraphX's coefficients, within 1e-12. CDLP: the fraction
 * of vertices with the same label.
 *
 * With `--cli PATH` (the `graph` binary) the same weighted edges are written as an edge
 * list and each kernel is run by the CLI (`-p P --engine shm`), whose `compute_s` is the
 * native compute of the kernel: the rest of an LPF call (ingest, barrier stage, native
 * load, result conversion) is its overhead.
 *
 * Writes OUT/kernels.csv (graph, kernel, impl, wall_s, ratio = GraphX wall / this wall,
 * native_compute_s; rows of other graphs kept with `--append`) and OUT/kernels.png.
 */
object KernelBenchmark {
  val Kernels: Seq[String] = Seq("bfs", "wcc", "cdlp", "lcc", "sssp", "pr")
  val CdlpIterations = 10
  /** L1 distance allowed between LPF's and GraphX's normalised PageRank. */
  val PrAgreement = 1e-5
  /** Largest difference allowed between LPF's and GraphX's local clustering coefficients. */
  val LccAgreement = 1e-12

  case class Result(graph: String, kernel: String, impl: String, wall: Double, ratio: Double, nativeCompute: Double) {
    def csv: String = Seq(graph, kernel, impl, wall, ratio, nativeCompute).map {
      case d: Double => if (d.isNaN) "" else f"$d%.4f"
      case x => x.toString
    }.mkString(",")
  }

  val Header = "graph,kernel,impl,wall_s,ratio,native_compute_s"

  private def parse(line: String): Result = {
    val f = line.split(",", -1)
    def d(i: Int) = if (i >= f.length || f(i).isEmpty) Double.NaN else f(i).toDouble
    Result(f(0), f(1), f(2), d(3), d(4), d(5))
  }

  private def seconds[T](body: => T): (T, Double) = {
    val t0 = System.nanoTime
    val x = body
    (x, (System.nanoTime - t0) / 1e9)
  }

  /**
   * The Spark jobs of one call: id, wall seconds (start to end event), tasks and the
   * name of its last stage (Spark names a stage after its call site), in start order.
   */
  private final class JobLog extends SparkListener {
    private val started = new java.util.concurrent.ConcurrentHashMap[Int, (Long, Int, String)]()
    private val ended = new java.util.concurrent.ConcurrentHashMap[Int, Long]()
    override def onJobStart(e: SparkListenerJobStart): Unit = {
      val last = if (e.stageInfos.isEmpty) "?" else e.stageInfos.maxBy(_.stageId).name
      started.put(e.jobId, (e.time, e.stageInfos.map(_.numTasks).sum, last))
    }
    override def onJobEnd(e: SparkListenerJobEnd): Unit = ended.put(e.jobId, e.time)
    def lines: Seq[String] = started.asScala.toSeq.sortBy(_._1).map { case (id, (t0, tasks, name)) =>
      val end = Option(ended.get(id)).map(t => f"${(t - t0) / 1e3}%.3f s").getOrElse("not ended")
      s"job $id: $end, $tasks tasks, $name"
    }
  }

  /** The weight of the edge (u, v): in [0, 1), from a generator seeded with the pair. */
  def weight(u: Long, v: Long): Double = new java.util.SplittableRandom(u * 0x9e3779b97f4a7c15L + v).nextDouble()

  /** The edge DataFrame's graph for GraphX, the weight as edge attribute. */
  private def graphOf(edges: DataFrame): Graph[Int, Double] =
    Graph.fromEdges(edges.select("src", "dst", "weight").rdd.map(r => Edge(r.getLong(0), r.getLong(1), r.getDouble(2))), 1,
      edgeStorageLevel = StorageLevel.MEMORY_AND_DISK, vertexStorageLevel = StorageLevel.MEMORY_AND_DISK).cache()

  /** GraphX's counterpart of `kernel` on `edges`, end to end: (id, value) persisted. */
  def graphx(spark: SparkSession, edges: DataFrame, kernel: String, source: Long, alpha: Double, tol: Double): DataFrame = {
    if (kernel == "pr") {
      val (g, _) = GraphXPageRank.load(edges.select("src", "dst").rdd.map(r => (r.getLong(0), r.getLong(1))))
      val run = GraphXPageRank.untilTolerance(g, tol, alpha)
      println(s"kernelbench: GraphX pageRank($tol): ${run.iterations.getOrElse(-1)} iterations")
      try GraphXKernels.materialised(spark, run.ranks.map { case (v, r) => Row(v, r) }, "pagerank", DoubleType)
      finally { run.ranks.unpersist(blocking = false); g.unpersist(blocking = false) }
    } else {
      val g = graphOf(edges)
      try kernel match {
        case "bfs" => GraphXKernels.bfs(spark, g, source)
        case "wcc" => GraphXKernels.wcc(spark, g)
        case "cdlp" => GraphXKernels.cdlp(spark, g, CdlpIterations)
        case "lcc" =>
          // What triangleCount() does (self-loops out, one edge per vertex pair), kept to
          // take the degrees of the same undirected graph.
          val undirected = g.removeSelfEdges().convertToCanonicalEdges().cache()
          val coefficients = TriangleCount.runPreCanonicalized(undirected).vertices.leftJoin(undirected.degrees) {
            case (_, t, d) =>
              val k = d.getOrElse(0).toDouble
              if (k < 2) 0.0 else 2.0 * t / (k * (k - 1))
          }
          val out = GraphXKernels.materialised(spark, coefficients.map { case (v, c) => Row(v, c) }, "lcc", DoubleType)
          undirected.unpersist(blocking = false)
          out
        case "sssp" =>
          val start = g.mapVertices((v, _) => if (v == source) 0.0 else Double.PositiveInfinity)
          val distances = start.pregel(Double.PositiveInfinity)(
            (_, d, offer) => math.min(d, offer),
            t => if (t.srcAttr + t.attr < t.dstAttr) Iterator((t.dstId, t.srcAttr + t.attr)) else Iterator.empty,
            (a, b) => math.min(a, b))
          GraphXKernels.materialised(spark, distances.vertices.map { case (v, d) => Row(v, d) }, "distance", DoubleType)
      } finally g.unpersist(blocking = false)
    }
  }

  /** LPF's `kernel` on `edges`: (id, value), persisted by LpfGraph. */
  def lpf(edges: DataFrame, kernel: String, source: Long, alpha: Double, tol: Double, maxIter: Int): DataFrame = {
    val g = LpfGraph(edges)
    kernel match {
      case "bfs" => g.bfs(source)
      case "wcc" => g.wcc()
      case "cdlp" => g.cdlp(CdlpIterations)
      case "lcc" => g.lcc()
      case "sssp" => g.sssp(source, "weight")
      case "pr" => g.pageRank(alpha, tol, maxIter)
    }
  }

  /**
   * LPF's result beside GraphX's, both (id, value): what agrees and what not, and whether
   * that is a disagreement where the semantics agree.
   */
  def compare(kernel: String, ours: DataFrame, theirs: DataFrame): (String, Boolean) = {
    val value = ours.columns(1)
    val both = ours.select(col("id"), col(value).as("a")).join(theirs.select(col("id"), col(theirs.columns(1)).as("b")),
      Seq("id"), "full_outer")
    val missing = both.where(col("a").isNull || col("b").isNull).count()
    val total = both.count()
    kernel match {
      case "bfs" | "sssp" =>
        val r = both.agg(sum(when(col("a") =!= col("b"), 1).otherwise(0)),
          max(when(col("a") =!= col("b"), abs(col("a") - col("b"))))).head()
        val differ = r.getLong(0)
        val unreached: Any = if (kernel == "bfs") Long.MaxValue else Double.PositiveInfinity
        val reached = ours.where(col(value) =!= lit(unreached)).count()
        (s"$total vertices ($reached reached), $missing on one side only, $differ values differ" +
          (if (differ > 0) s" (largest difference ${r.get(1)})" else ""), missing == 0 && differ == 0)
      case "wcc" =>
        // Equal partitions: each label of one side goes with exactly one of the other.
        val r = both.agg(countDistinct(col("a")), countDistinct(col("b")), countDistinct(col("a"), col("b")),
          sum(when(col("a") =!= col("b"), 1).otherwise(0))).head()
        val (ka, kb, pairs, labels) = (r.getLong(0), r.getLong(1), r.getLong(2), r.getLong(3))
        (s"$total vertices, $missing on one side only, components $ka (LPF) / $kb (GraphX) / $pairs pairs, " +
          s"$labels labels differ", missing == 0 && ka == kb && kb == pairs)
      case "cdlp" =>
        val r = both.agg(sum(when(col("a") === col("b"), 1).otherwise(0)), countDistinct(col("a")),
          countDistinct(col("b"))).head()
        (f"$total vertices, $missing on one side only, same label for ${r.getLong(0)} (${100.0 * r.getLong(0) / total}%.1f%%); " +
          s"communities ${r.getLong(1)} (LPF) / ${r.getLong(2)} (GraphX); not required to agree (tie-breaking)",
          missing == 0)
      case "lcc" =>
        val d = both.agg(max(abs(col("a") - col("b")))).head().getDouble(0)
        (s"$total vertices, $missing on one side only, largest difference $d (allowed $LccAgreement)",
          missing == 0 && d <= LccAgreement)
      case "pr" =>
        val d = both.agg(sum(abs(col("a") - col("b")))).head().getDouble(0)
        (s"$total vertices, $missing on one side only, L1 distance $d (allowed $PrAgreement)",
          missing == 0 && d <= PrAgreement)
    }
  }

  /** The `graph` CLI's native compute seconds of `kernel` on the edge list `file`. */
  private def cliCompute(cli: String, file: File, kernel: String, source: Long, p: Int, tol: Double): Double = {
    val args = Seq(cli, kernel) ++ (kernel match {
      case "bfs" | "sssp" => Seq("--source", source.toString)
      case "cdlp" => Seq("--iterations", CdlpIterations.toString)
      case "pr" => Seq("--tol", tol.toString)
      case _ => Seq()
    }) ++ Seq("--input", file.getPath, "--format", "edges", "--engine", "shm", "-p", p.toString)
    val out = new java.io.ByteArrayOutputStream
    val pr = new ProcessBuilder(args: _*).redirectErrorStream(true).start()
    pr.getInputStream.transferTo(out)
    val text = out.toString(StandardCharsets.UTF_8)
    if (pr.waitFor() != 0) throw new RuntimeException(s"${args.mkString(" ")} failed: $text")
    "compute_s=([0-9.eE+-]+)".r.findFirstMatchIn(text).map(_.group(1).toDouble)
      .getOrElse(throw new RuntimeException(s"${args.mkString(" ")} printed no compute_s: $text"))
  }

  def main(args: Array[String]): Unit = {
    // Options of this benchmark alone; the rest are the examples' common Options.
    val (cli, calls, kernels, withGraphx, rest) = {
      var cli: Option[String] = None
      var withGraphx = true
      var calls = 3
      var kernels = Kernels
      val rest = Vector.newBuilder[String]
      var i = 0
      def value(): String = {
        if (i + 1 >= args.length) { System.err.println(s"KernelBenchmark: ${args(i)} needs a value"); sys.exit(2) }
        i += 1
        args(i)
      }
      while (i < args.length) {
        args(i) match {
          case "--cli" => cli = Some(value())
          case "--calls" => calls = value().toInt
          case "--kernels" => kernels = value().split(",").map(_.trim).filter(_.nonEmpty).toSeq
          case "--no-graphx" => withGraphx = false
          case a => rest += a
        }
        i += 1
      }
      kernels.find(k => !Kernels.contains(k)).foreach { k =>
        System.err.println(s"KernelBenchmark: unknown kernel $k (known: ${Kernels.mkString(", ")})"); sys.exit(2)
      }
      (cli, calls, kernels, withGraphx, rest.result().toArray)
    }
    val o = Options.parse(rest, "KernelBenchmark")
    val spark = SparkSession.builder().appName(s"Graph kernels LPF vs GraphX ${o.describe}").getOrCreate()
    val sc = spark.sparkContext
    val graph = o.describe
    val edges = spark.createDataFrame(o.edges(sc).map { case (u, v) => Row(u, v, weight(u, v)) },
      StructType(Seq(StructField("src", LongType, nullable = false), StructField("dst", LongType, nullable = false),
        StructField("weight", DoubleType, nullable = false)))).persist(StorageLevel.MEMORY_AND_DISK)
    val m = edges.count()
    val source = edges.groupBy("src").agg(count("*").as("out")).orderBy(desc("out"), col("src")).head().getLong(0)
    val p = edges.rdd.getNumPartitions
    println(s"kernelbench: graph $graph, $m edges in $p partitions, source $source; master ${sc.master}")

    val native: Map[String, Double] = cli.map { path =>
      val file = File.createTempFile(s"kernelbench-$graph-", ".edges")
      file.deleteOnExit()
      val w = new BufferedWriter(new FileWriter(file), 1 << 20)
      try edges.select("src", "dst", "weight").toLocalIterator().asScala
        .foreach(r => w.write(s"${r.getLong(0)} ${r.getLong(1)} ${r.getDouble(2)}\n"))
      finally w.close()
      val t = kernels.map(k => k -> cliCompute(path, file, k, source, p, o.tol)).toMap
      file.delete()
      t.foreach { case (k, s) => println(f"kernelbench: graph CLI $k native compute ($p processes, shm): $s%.4f s") }
      t
    }.getOrElse(Map.empty)

    var rows = Vector.empty[Result]
    var disagreements = Vector.empty[String]
    for (k <- kernels) {
      lpf(edges, k, source, o.alpha, o.tol, o.maxIter).unpersist()
      val timed = (1 to calls).map { i =>
        val jobs = new JobLog
        sc.addSparkListener(jobs)
        val (df, s) = seconds(lpf(edges, k, source, o.alpha, o.tol, o.maxIter))
        org.apache.spark.lpfexamples.ListenerBus.drain(sc)
        sc.removeSparkListener(jobs)
        println(f"kernelbench: $k lpf call $i: $s%.3f s")
        // Where an LPF call's time goes, from the last call's Spark jobs.
        if (i == calls) jobs.lines.foreach(l => println(s"kernelbench: $k lpf call $i $l"))
        (df, s)
      }
      val lpfWall = timed.map(_._2).sorted.apply(timed.length / 2)
      val ours = timed.last._1
      timed.init.foreach(_._1.unpersist())
      val nc = native.getOrElse(k, Double.NaN)
      val overhead = if (nc.isNaN) "" else
        f"; native compute $nc%.4f s, overhead ${lpfWall - nc}%.3f s (${100 * (lpfWall - nc) / lpfWall}%.0f%% of the LPF call)"
      if (withGraphx) {
        val (theirs, gxWall) = seconds(graphx(spark, edges, k, source, o.alpha, o.tol))
        println(f"kernelbench: $k graphx: $gxWall%.3f s")
        val (message, agrees) = if (k == "lcc") {
          // On the undirected view, where both compute the same coefficient.
          val symmetric = edges.select(col("src"), col("dst")).union(edges.select(col("dst"), col("src"))).toDF("src", "dst")
          val undirected = LpfGraph(symmetric).lcc()
          val (text, ok) = compare(k, undirected, theirs)
          undirected.unpersist()
          (s"LPF on the symmetrised edges vs GraphX: $text", ok)
        } else compare(k, ours, theirs)
        println(s"kernelbench: $k check: ${if (agrees) "agrees" else "DISAGREES"}: $message")
        if (!agrees) disagreements :+= s"$k: $message"
        theirs.unpersist()
        println(f"kernelbench: $k lpf median $lpfWall%.3f s, graphx $gxWall%.3f s: ${gxWall / lpfWall}%.1fx$overhead")
        rows :+= Result(graph, k, "lpf", lpfWall, gxWall / lpfWall, nc)
        rows :+= Result(graph, k, "graphx", gxWall, 1.0, Double.NaN)
      } else {
        println(f"kernelbench: $k lpf median $lpfWall%.3f s$overhead; not compared (--no-graphx)")
        rows :+= Result(graph, k, "lpf", lpfWall, Double.NaN, nc)
      }
      ours.unpersist()
    }

    val out = new File(o.out)
    out.mkdirs()
    val csvFile = new File(out, "kernels.csv")
    val all = ResultsCsv.update(csvFile, Header, parse, (r: Result) => r.csv) { earlier =>
      (if (o.append) earlier else Vector.empty).filterNot(r => r.graph == graph) ++ rows
    }
    val graphs = all.map(_.graph).distinct
    def group(r: Result) = if (graphs.length > 1) s"${r.graph} ${r.kernel}" else r.kernel
    Chart.write(new File(out, "kernels.png"), s"Graph kernels from Spark, end to end ($graph, ${sc.master})",
      all.map(group).distinct, Seq("lpf", "graphx"), Seq(
        Chart.Panel("DataFrame in, result DataFrame out", "s", all.map(r => (group(r), r.impl) -> r.wall).toMap),
        Chart.Panel("GraphX / LPF", "x", all.filter(_.impl == "lpf").map(r => (group(r), "lpf") -> r.ratio).toMap)))
    for (r <- rows.filter(r => r.impl == "lpf" && !r.ratio.isNaN))
      println(f"kernelbench: ${r.graph} ${r.kernel}: ${r.ratio}%.1fx faster than GraphX (${if (r.ratio >= 100) "meets" else "misses"} 100x)")
    println(s"kernelbench: wrote $csvFile, ${new File(out, "kernels.png")}")
    spark.stop()
    if (disagreements.nonEmpty) {
      System.err.println(s"kernelbench: LPF and GraphX disagree: ${disagreements.mkString("; ")}")
      sys.exit(1)
    }
  }
}
