package org.lpf.spark.examples

import java.io.{File, PrintWriter}


import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.storage.StorageLevel
import org.lpf.spark.LpfPageRank

/**
 * LPF PageRank against Spark's on one graph, in the layout of the LPF paper's Table 4:
 * input size, load seconds, seconds for n = 1, n = 10 and n = n_eps iterations, seconds
 * per iteration, iterations to tolerance; plus the time to reach the tolerance including
 * the load, and the largest difference of each implementation's normalised ranks from
 * LPF's.
 *
 * Implementations (`--impls`, default lpf,canonical,graphx):
 *   lpf        LpfPageRank.run on the edges RDD (native, in the executors): runs with
 *              maxIter 1 and 10 (tol 0) and to tol; load = the barrier stage's time minus
 *              the iterations (hand-over of the edges, bootstrap, native load, results)
 *   canonical  SparkPageRank.canonical (Spark's example algorithm, the paper's baseline):
 *              n_eps = LPF's iteration count (it has no convergence test); one run,
 *              times read after iterations 1, 10 and n_eps
 *   correct    SparkPageRank.correct: to tol (L1), one run
 *   graphx     GraphX staticPageRank(1), staticPageRank(10) and pageRank(tol) on one cached
 *              graph; GraphX's tol is its own (largest change of one vertex's unnormalised
 *              rank), at least as strict as L1 < tol on normalised ranks
 *
 * Every implementation reads the same cached edges RDD (generated R-MAT or a file); its
 * generation is not counted. Writes (merging with earlier runs of other graphs):
 * OUT/pagerank.csv, OUT/pagerank.md, OUT/pagerank.png.
 */
object Benchmark {
  case class Row(graph: String, impl: String, vertices: Long, edges: Long, load: Double, t1: Double, t10: Double,
                 tEps: Double, nEps: Int, perIter: Double, toTol: Double, maxDiff: Double, note: String) {
    def csv: String = Seq(graph, impl, vertices, edges, load, t1, t10, tEps, nEps, perIter, toTol, maxDiff,
      "\"" + note.replace("\"", "'") + "\"").mkString(",")
  }

  val Header = "graph,impl,vertices,edges,load_s,n1_s,n10_s,neps_s,n_eps,s_per_iter,to_tol_incl_load_s,max_rank_diff_vs_lpf,note"

  /**
   * Seconds per iteration where the iteration count to tolerance is unknown (GraphX
   * before its count was read from Pregel's jobs): from the fixed runs, (t10 - t1) / 9.
   */
  private def filled(r: Row): Row =
    if (r.perIter.isNaN && !r.t10.isNaN && !r.t1.isNaN && r.t10 > r.t1)
      r.copy(perIter = (r.t10 - r.t1) / 9, note = r.note + "; s/iter from (t10 - t1) / 9")
    else r

  private def parseCsv(line: String): Row = {
    val (head, note) = line.indexOf(",\"") match {
      case -1 => (line, "")
      case i => (line.substring(0, i), line.substring(i + 2).stripSuffix("\""))
    }
    val f = head.split(",", -1)
    Row(f(0), f(1), f(2).toLong, f(3).toLong, f(4).toDouble, f(5).toDouble, f(6).toDouble, f(7).toDouble, f(8).toInt,
      f(9).toDouble, f(10).toDouble, f(11).toDouble, note)
  }

  private def maxDiff(a: RDD[(Long, Double)], b: RDD[(Long, Double)]): Double = {
    val both = a.fullOuterJoin(b).map { case (_, (x, y)) => math.abs(x.getOrElse(0.0) - y.getOrElse(0.0)) }
    if (both.isEmpty()) 0.0 else both.max()
  }

  private def fmt(x: Double): String =
    if (x.isNaN) "-" else if (x == 0) "0" else if (x >= 100) f"$x%.0f" else if (x >= 1) f"$x%.2f"
    else if (x >= 0.01) f"$x%.3f" else f"$x%.2e"

  def markdown(rows: Seq[Row]): String = {
    val b = new StringBuilder
    b ++= "| graph | implementation | vertices | edges | load s | n=1 s | n=10 s | n=n_eps s | n_eps | s/iter | to tol incl. load s | max rank diff vs LPF |\n"
    b ++= "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    rows.foreach { r =>
      b ++= s"| ${r.graph} | ${r.impl} | ${r.vertices} | ${r.edges} | ${fmt(r.load)} | ${fmt(r.t1)} | ${fmt(r.t10)} | " +
        s"${fmt(r.tEps)} | ${r.nEps} | ${fmt(r.perIter)} | ${fmt(r.toTol)} | ${fmt(r.maxDiff)} |\n"
    }
    val notes = rows.filter(_.note.nonEmpty).map(r => s"- ${r.graph} ${r.impl}: ${r.note}").distinct
    if (notes.nonEmpty) b ++= "\n" ++= notes.mkString("\n") ++= "\n"
    // Speed-ups of LPF.
    val speed = rows.groupBy(_.graph).toSeq.sortBy(_._1).flatMap { case (graph, rs) =>
      rs.find(_.impl == "lpf").toSeq.flatMap { l =>
        rs.filter(_.impl != "lpf").map { o =>
          val perIter = if (o.perIter.isNaN) "" else f"${o.perIter / l.perIter}%.0fx faster per iteration"
          val toTol = if (o.impl == "canonical") "" else f"${o.toTol / l.toTol}%.1fx faster to tol incl. load"
          s"- $graph: LPF vs ${o.impl}: " + Seq(perIter, toTol).filter(_.nonEmpty).mkString(", ")
        }
      }
    }
    if (speed.nonEmpty) b ++= "\n" ++= speed.mkString("\n") ++= "\n"
    b.toString
  }

  /** pagerank.csv, pagerank.md and pagerank.png in `out` from `all`. */
  def writeReports(out: File, all: Seq[Row], setting: String): Unit = {
    ResultsCsv.write(new File(out, "pagerank.csv"), Header, all, (r: Row) => r.csv)
    val md = markdown(all)
    val mdFile = new PrintWriter(new File(out, "pagerank.md"), "UTF-8")
    try {
      mdFile.println(s"# PageRank: LPF vs Spark ($setting)\n")
      mdFile.print(md)
    } finally mdFile.close()
    val graphs = all.map(_.graph).distinct
    val impls = all.map(_.impl).distinct
    Chart.write(new File(out, "pagerank.png"), s"PageRank: LPF vs Spark ($setting)", graphs, impls, Seq(
      Chart.Panel("seconds per iteration", "s", all.map(r => (r.graph, r.impl) -> r.perIter).toMap),
      Chart.Panel("time to tolerance incl. load", "s", all.filter(_.impl != "canonical").map(r => (r.graph, r.impl) -> r.toTol).toMap)))
    println("benchmark: table (Table 4 layout)\n" + md)
  }

  def main(args: Array[String]): Unit = {
    // --report-only DIR [SETTING]: redo the table and chart from DIR/pagerank.csv, no Spark.
    if (args.headOption.contains("--report-only")) {
      val out = new File(args(1))
      val csv = new File(out, "pagerank.csv")
      if (!csv.exists()) throw new java.io.FileNotFoundException(s"--report-only: no $csv")
      val rows = ResultsCsv.earlier(csv, append = true, parseCsv).map(filled)
      writeReports(out, rows, args.lift(2).getOrElse("local-cluster, alpha 0.85, tol 1e-7"))
      return
    }
    val o = Options.parse(args, "Benchmark")
    val sc = new SparkContext(new SparkConf().setAppName(s"PageRank benchmark ${o.describe}"))
    val graph = o.describe
    val t0 = System.nanoTime
    val edges = o.edges(sc).setName(s"edges of $graph").persist(StorageLevel.MEMORY_AND_DISK)
    val m = edges.count()
    println(f"benchmark: graph $graph, $m edges in ${edges.getNumPartitions} partitions, generated/read in ${(System.nanoTime - t0) / 1e9}%.1f s; master ${sc.master}")
    var rows = Vector.empty[Row]
    var lpfRanks: Option[RDD[(Long, Double)]] = None
    var lpfIterations: Option[Int] = None
    var vertices: Long = -1
    def nVertices: Long = {
      if (vertices < 0) vertices = edges.flatMap { case (u, v) => Iterator(u, v) }.distinct().count()
      vertices
    }
    def report(r: Row): Unit = {
      println(f"benchmark: ${r.impl}%-9s load ${r.load}%.3f s, n=1 ${r.t1}%.3f s, n=10 ${r.t10}%.3f s, n=${r.nEps} ${r.tEps}%.3f s, " +
        f"${r.perIter}%.4f s/iter, to tol incl. load ${r.toTol}%.3f s, max rank diff vs LPF ${r.maxDiff}%.2e ${r.note}")
      rows :+= r
    }
    def diff(ranks: RDD[(Long, Double)]): Double = lpfRanks.map(l => maxDiff(l, ranks)).getOrElse(Double.NaN)

    for (impl <- o.impls) impl match {
      case "lpf" =>
        // Warm-up on a tiny graph: loads the native library in every executor.
        LpfPageRank.run(sc.parallelize(Seq((0L, 1L), (1L, 0L)), edges.getNumPartitions), maxIter = 1).unpersist()
        val r1 = LpfPageRank.run(edges, o.alpha, tol = 0.0, maxIter = 1, threads = o.threads)
        r1.unpersist()
        val r10 = LpfPageRank.run(edges, o.alpha, tol = 0.0, maxIter = 10, threads = o.threads)
        r10.unpersist()
        val r = LpfPageRank.run(edges, o.alpha, o.tol, o.maxIter, threads = o.threads)
        vertices = r.vertices
        lpfIterations = Some(r.iterations)
        lpfRanks = Some(r.ranks)
        val load = r.hookSeconds - r.iterationSeconds
        report(Row(graph, "lpf", r.vertices, r.edges, load, r1.iterationSeconds, r10.iterationSeconds, r.iterationSeconds,
          r.iterations, r.secondsPerIteration, r.hookSeconds, 0.0,
          f"${r.processes} processes, ${r.exchange} exchange, native load ${r.loadSeconds}%.3f s, residual ${r.residual}%.2e"))
      case "canonical" =>
        val iters = lpfIterations.getOrElse(20)
        val run = SparkPageRank.canonical(edges, iters)
        val c = run.cumulativeSeconds
        val ranks = run.ranks
        val total = ranks.values.sum()
        val d = diff(ranks.mapValues(_ / total))
        report(Row(graph, "canonical", nVertices, m, run.loadSeconds, c.head, if (c.length >= 10) c(9) else Double.NaN,
          c.last, iters, c.last / iters, run.loadSeconds + c.last, d,
          s"fixed $iters iterations (no convergence test; n_eps = LPF's), dangling mass lost, ranks normalised for the diff"))
        ranks.unpersist(blocking = false)
      case "correct" =>
        val run = SparkPageRank.correct(edges, o.alpha, o.tol, o.maxIter, o.checkpointDir)
        val c = run.cumulativeSeconds
        report(Row(graph, "correct", nVertices, m, run.loadSeconds, c.head, if (c.length >= 10) c(9) else Double.NaN,
          c.last, run.iterations, c.last / run.iterations, run.loadSeconds + c.last, diff(run.ranks),
          f"dangling redistributed, L1 < ${o.tol}%.0e, checkpoint every 10 iterations, residual ${run.residual}%.2e"))
      case "graphx" =>
        val (g, load) = GraphXPageRank.load(edges)
        val one = GraphXPageRank.fixed(g, 1, o.alpha); one.ranks.unpersist(blocking = false)
        val ten = GraphXPageRank.fixed(g, 10, o.alpha); ten.ranks.unpersist(blocking = false)
        val eps = GraphXPageRank.untilTolerance(g, o.tol, o.alpha)
        val iters = eps.iterations.getOrElse(-1)
        report(Row(graph, "graphx", nVertices, m, load, one.seconds, ten.seconds, eps.seconds, iters,
          if (iters > 0) eps.seconds / iters else Double.NaN, load + eps.seconds, diff(eps.ranks),
          f"pageRank(${o.tol}%.0e) (GraphX's per-vertex tolerance), ranks normalised to sum 1"))
        eps.ranks.unpersist(blocking = false)
        g.unpersist(blocking = false)
    }

    // Merge with earlier results (other graphs), write CSV, markdown and chart.
    val out = new File(o.out)
    out.mkdirs()
    val csvFile = new File(out, "pagerank.csv")
    val earlier = ResultsCsv.earlier(csvFile, o.append, parseCsv)
      .filterNot(r => r.graph == graph && rows.exists(_.impl == r.impl))
    val all = (earlier ++ rows).map(filled)
    writeReports(out, all, s"${sc.master}, alpha ${o.alpha}, tol ${o.tol}")
    println(s"benchmark: wrote $csvFile, ${new File(out, "pagerank.md")}, ${new File(out, "pagerank.png")}")
    sc.stop()
  }
}
