package org.lpf.spark.tests

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{Configurator, Property}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession
import org.lpf.spark._
import org.lpf.spark.tests.TestSupport._

/**
 * Per-iteration progress of LPF PageRank in the driver's log (tests/spark/run.sh, on
 * local-cluster: process 0 runs in an executor JVM):
 *
 *   spark-submit --master local-cluster[2,1,1024] --class org.lpf.spark.tests.ProgressTests \
 *     --jars lpf-spark_<scala>-<version>.jar,lpf-spark-examples_<scala>.jar lpf-spark-tests_<scala>.jar
 *
 * An appender added here to the driver's logger `org.lpf.spark.progress` records every
 * line with its time. Prints `RESULT ok|FAIL|skip NAME`, `RESULT info ...` and `RESULT done`.
 */
object ProgressTests {



  private def test(name: String)(body: => Unit): Unit = { runCase(name)(body); () }

  private val LoggerName = LpfProgress.LoggerName

  /** Every event of the progress logger: (time in ms, message). */
  private final class Capture extends AbstractAppender("lpf-progress-capture", null, null, true, Property.EMPTY_ARRAY) {
    val events = new ConcurrentLinkedQueue[(Long, String)]()
    override def append(e: LogEvent): Unit = events.add((e.getTimeMillis, e.getMessage.getFormattedMessage))
    def take(): Seq[(Long, String)] = { val all = events.asScala.toList; events.clear(); all }
  }

  /** Finish times (driver clock, ms) of every task that ends. */
  private final class TaskEnds extends SparkListener {
    val ends = new ConcurrentLinkedQueue[java.lang.Long]()
    override def onTaskEnd(e: SparkListenerTaskEnd): Unit = ends.add(e.taskInfo.finishTime)
    def take(): Seq[Long] = { val all = ends.asScala.toList.map(_.longValue); ends.clear(); all }
  }

  private val Line = """.*: iteration (\d+), residual (\S+), .*""".r

  /** (iteration, residual) of each progress line, in the order logged. */
  private def parsed(events: Seq[(Long, String)]): Seq[(Int, Double)] = events.map {
    case (_, Line(k, r)) => (k.toInt, r.toDouble)
    case (_, other) => throw new Failed(s"a progress line in an unexpected form: $other")
  }

  private def eq[T](got: T, want: T, what: String): Unit = expect(got == want, s"$what: got $got, want $want")

  /**
   * A kron16 PageRank with progress (2 processes) while `attack` runs against its
   * listener, as soon as the listener is open; then: every iteration logged, in order,
   * the last with the run's residual, and the driver still runs jobs. What `attack` returned.
   */
  private def underAttack[T](sc: SparkContext, settings: LpfSettings, capture: Capture)(attack: LpfProgressTarget => T): T = {
    capture.take()
    val before = LpfProgress.openTargets.toSet
    val pool = java.util.concurrent.Executors.newSingleThreadExecutor()
    try {
      val run = pool.submit(new java.util.concurrent.Callable[LpfPageRankResult] {
        def call(): LpfPageRankResult = LpfPageRank.rmat(sc, scale = 16, tol = 1e-12, nprocs = 2, settings = settings)
      })
      val deadline = System.currentTimeMillis + 120000L
      var target: Option[LpfProgressTarget] = None
      while (target.isEmpty && !run.isDone && System.currentTimeMillis < deadline) {
        target = (LpfProgress.openTargets.toSet -- before).headOption
        if (target.isEmpty) Thread.sleep(2)
      }
      val t = target.getOrElse(throw new Failed(s"no progress listener opened for the run (done: ${run.isDone})"))
      val out = attack(t)
      val r = run.get(300, java.util.concurrent.TimeUnit.SECONDS)
      r.unpersist()
      org.apache.spark.lpf.LpfSparkAccess.drainListeners(sc, 10000L)
      val lines = parsed(capture.take())
      expect(lines.map(_._1) == (1 to r.iterations), s"under attack, iterations logged ${lines.map(_._1).mkString(",")}, " +
        s"want 1..${r.iterations}")
      expect(lines.last._2 == r.residual, s"last residual logged ${lines.last._2}, the run's ${r.residual}")
      eq(sc.parallelize(1 to 100, 2).map(_ * 2).sum(), 10100.0, "a Spark job on the driver after the attack")
      out
    } finally pool.shutdownNow()
  }

  def main(args: Array[String]): Unit = {
    val spark = SparkSession.builder().appName("lpf-progress-tests").getOrCreate()
    val sc = spark.sparkContext
    awaitExecutors(sc)
    val capture = new Capture
    capture.start()
    val ctx = LogManager.getContext(false).asInstanceOf[LoggerContext]
    ctx.getLogger(LoggerName).asInstanceOf[org.apache.logging.log4j.core.Logger].addAppender(capture)
    Configurator.setLevel(LoggerName, Level.INFO)
    val ends = new TaskEnds
    sc.addSparkListener(ends)
    val settings = LpfSettings(slotWaitMs = 60000L)

    test("progress-every-iteration-in-order-live-in-the-drivers-log") {
      // kron16 to 1e-12: enough iterations (and time) that lines arrive while it runs.
      capture.take(); ends.take()
      val r = LpfPageRank.rmat(sc, scale = 16, tol = 1e-12, nprocs = 2, settings = settings)
      r.unpersist()
      org.apache.spark.lpf.LpfSparkAccess.drainListeners(sc, 10000L)
      val events = capture.take()
      val lines = parsed(events)
      expect(r.iterations > 10, s"the run took only ${r.iterations} iterations")
      expect(lines.map(_._1) == (1 to r.iterations), s"iterations logged ${lines.map(_._1).mkString(",")}, want 1..${r.iterations}")
      expect(lines.last._2 == r.residual, s"last residual logged ${lines.last._2}, the run's ${r.residual}")
      val taskEnds = ends.take()
      expect(taskEnds.nonEmpty, "no task ended")
      val firstLine = events.head._1
      expect(firstLine < taskEnds.min, s"the first progress line came at $firstLine ms, after the first task of the run " +
        s"ended (${taskEnds.min} ms): not live")
      println(s"RESULT info progress: ${r.iterations} iterations, first line ${taskEnds.min - firstLine} ms before the " +
        s"first task end, last line '${events.last._2}'")
    }

    test("no-progress-lines-when-off-or-the-logger-is-off") {
      capture.take()
      val edges = sc.parallelize(Seq((1L, 2L), (2L, 3L), (3L, 1L), (3L, 4L)), 2)
      val off = LpfPageRank.run(edges, tol = 1e-9, nprocs = 2, progress = false, settings = settings)
      off.unpersist()
      expect(off.iterations > 0 && capture.take().isEmpty, "progress = false still logged progress lines")
      Configurator.setLevel(LoggerName, Level.WARN)
      val quiet = try LpfPageRank.run(edges, tol = 1e-9, nprocs = 2, settings = settings)
        finally Configurator.setLevel(LoggerName, Level.INFO)
      quiet.unpersist()
      expect(quiet.iterations > 0 && capture.take().isEmpty, "the progress logger at WARN still got lines")
      val on = LpfPageRank.run(edges, tol = 1e-9, nprocs = 2, settings = settings)
      on.unpersist()
      expect(parsed(capture.take()).map(_._1) == (1 to on.iterations), "the same small run with progress on logged no lines")
    }

    test("progress-cost-per-iteration-kron16") {
      // Alternating runs with progress on and off; the native iteration time per iteration.
      val per = (0 until 6).map { i =>
        val on = i % 2 == 0
        val r = LpfPageRank.rmat(sc, scale = 16, tol = 1e-12, nprocs = 2, progress = on, settings = settings)
        r.unpersist()
        (on, r.secondsPerIteration)
      }
      capture.take()
      def mean(on: Boolean) = { val xs = per.filter(_._1 == on).map(_._2); xs.sum / xs.length }
      println(f"RESULT info progress cost (kron16, 2 processes, 3 runs each): ${mean(true) * 1e3}%.3f ms per " +
        f"iteration with progress, ${mean(false) * 1e3}%.3f ms without; runs ${per.map(x => f"${x._1}:${x._2 * 1e3}%.3f").mkString(" ")}")
    }

    test("every-graph-kernel-logs-its-rounds-in-order") {
      // A path 0 -> 1 -> ... -> 29 (weights 1) and a triangle 100 -> 101 -> 102 -> 100.
      val n = 30
      val rows = (0 until n - 1).map(v => (v.toLong, v + 1L, 1.0)) ++ Seq((100L, 101L, 1.0), (101L, 102L, 1.0), (102L, 100L, 1.0))
      val g = LpfGraph(spark.createDataFrame(rows).toDF("src", "dst", "w"))
      /** (unit, round, measure, value) of each line `kernel` logged while `run` ran. */
      def rounds(kernel: String)(run: => Any): Seq[(String, Int, String, String)] = {
        capture.take()
        run
        val KernelLine = s"""LpfGraph $kernel \\(2 processes\\): ([a-z]+) (\\d+), ([a-z-]+) (\\S+), \\S+ s \\(\\S+ s since the first\\)""".r
        capture.take().map {
          case (_, KernelLine(unit, k, measure, value)) => (unit, k.toInt, measure, value)
          case (_, other) => throw new Failed(s"$kernel: a progress line in an unexpected form: $other")
        }
      }
      def numbered(kernel: String, got: Seq[(String, Int, String, String)], unit: String, from: Int, measure: String): Unit =
        expect(got.nonEmpty && got.map(l => (l._1, l._3)).distinct == Seq((unit, measure)) && got.map(_._2) == (from until from + got.length),
          s"$kernel logged ${got.mkString(" ")}; want $unit $from, $unit ${from + 1}, ... with $measure")
      val bfs = rounds("BFS")(g.bfs(0L, 2, 0, settings))
      numbered("BFS", bfs, "level", 0, "frontier")
      eq(bfs.map(_._4), Seq.fill(n)("1"), "BFS frontiers")
      val sssp = rounds("SSSP")(g.sssp(0L, "w", 2, 0, settings))
      numbered("SSSP", sssp, "round", 1, "improved")
      // Delta-stepping supersteps: a bucket may hold several path vertices (bucket
      // fusion), but every path vertex improves once and the last superstep improves none.
      eq((sssp.map(_._4.toLong).sum, sssp.last._4), (n - 1L, "0"), "SSSP vertices improved in all (per round: " + sssp.map(_._4).mkString(",") + ")")
      val wcc = rounds("WCC")(g.wcc(2, 0, settings))
      numbered("WCC", wcc, "round", 1, "changed")
      expect(wcc.last._4 == "0" && wcc.init.forall(_._4 != "0"), s"WCC changed per round: ${wcc.map(_._4)}")
      val cdlp = rounds("CDLP")(g.cdlp(4, 2, 0, settings))
      numbered("CDLP", cdlp, "iteration", 1, "changed")
      eq(cdlp.length, 4, "CDLP iterations logged")
      val lcc = rounds("LCC")(g.lcc(2, 0, settings))
      // 28 inner path vertices and the triangle's 3 have two neighbours; each triangle
      // vertex sees one edge between its two.
      eq(lcc, Seq(("phase", 1, "candidates", "31"), ("phase", 2, "links", "3")), "LCC phases")
      println(s"RESULT info kernel progress: BFS ${bfs.length} levels, SSSP ${sssp.length} rounds, WCC ${wcc.length} rounds " +
        s"(changed ${wcc.map(_._4).mkString(",")}), CDLP changed ${cdlp.map(_._4).mkString(",")}")
    }

    // The listener of a running call against a stranger who reaches its port (loopback).
    val flood = 300L << 20 // the driver's heap is 1 GiB
    val cutOff = 64L << 20 // what a listener that reads no further than the token lets through

    test("progress-listener-cuts-floods-off-and-logs-every-iteration") {
      val floods = underAttack(sc, settings, capture) { t =>
        Seq("a line without the token" -> "", "one progress line after the hello" -> s"${t.token} 0\n")
          .map { case (what, prefix) => (what, Strangers.flood(t.host, t.port, flood, prefix)) }
      }
      floods.foreach { case (what, (took, closed)) =>
        expect(closed && took < cutOff, s"the listener took ${took >> 20} MiB of $what and " +
          (if (closed) "then closed the connection" else "did not close the connection"))
      }
    }

    test("progress-listener-outlasts-slow-senders-and-idle-connections") {
      val slow = underAttack(sc, settings, capture) { t =>
        val idle = Strangers.idle(t.host, t.port, 100)
        (idle, Seq(new Strangers.SlowSender(t.host, t.port), new Strangers.SlowSender(t.host, t.port, s"${t.token} ")))
      } match { case (idle, slow) => Strangers.closeAll(idle); slow }
      try slow.foreach(s => expect(s.awaitClosed(30000L), "the listener kept a slow sender's connection open for 30 s"))
      finally slow.foreach(_.stop())
    }

    test("progress-listener-closes-garbage-and-wrong-tokens-unanswered") {
      val answers = underAttack(sc, settings, capture) { t =>
        val wrong = t.token.map(c => if (c == 'a') 'b' else 'a')
        Seq("garbage\n", s"$wrong 0\n", s"${t.token.take(31)} 0\n", s"${t.token} not-an-attempt\n", s"${t.token}0\n")
          .map(line => line.trim -> Strangers.exchange(t.host, t.port, line))
      }
      answers.foreach { case (line, got) => eq(got, Some(""), s"the answer to '$line'") }
    }

    println("RESULT done")
    spark.stop()
  }
}
