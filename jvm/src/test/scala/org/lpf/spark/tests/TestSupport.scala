package org.lpf.spark.tests

import org.apache.spark.SparkContext
import org.apache.spark.lpf.LpfSparkAccess
import org.apache.spark.sql.SparkSession
import org.lpf.spark.{LpfException, LpfHook}

/**
 * What the Spark test applications share: the failure of a check, the checks, the case
 * filter, and a PageRank reference written independently of the code under test.
 */
private[tests] object TestSupport {
  /** A check that did not hold. */
  class Failed(msg: String) extends Exception(msg)

  def expect(cond: Boolean, what: => String): Unit = if (!cond) throw new Failed(what)

  /** The throwable chain's messages, outermost first. */
  def messages(t: Throwable): String =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).map(x => s"${x.getClass.getName}: ${x.getMessage}").mkString(" <- ")

  /** `LPF_SPARK_TESTS=a,b` (environment of spark-submit) runs only the cases whose names contain a or b. */
  val only: Seq[String] = sys.env.get("LPF_SPARK_TESTS").map(_.split(",").toSeq.filter(_.nonEmpty)).getOrElse(Nil)

  /**
   * Runs the case `name` unless the filter leaves it out, and prints its verdict line
   * (`RESULT ok NAME` or `RESULT FAIL NAME: why`) with its time; the verdict, if it ran.
   */
  def runCase(name: String)(body: => Unit): Option[String] =
    if (only.nonEmpty && !only.exists(name.contains)) None
    else {
      val t0 = System.nanoTime
      val line =
        try { body; s"RESULT ok $name" } catch {
          case e: Throwable => s"RESULT FAIL $name: ${messages(e).replace('\n', ' ').take(1500)}"
        }
      println(f"$line%s  (${(System.nanoTime - t0) / 1e9}%.1f s)")
      Some(line)
    }

  /**
   * Waits (at most `waitMs`) until the cluster has the task slots its configuration
   * promises (local-cluster, standalone with spark.cores.max): executors register over
   * time, and a barrier stage submitted before they have is refused
   * (BarrierJobSlotsNumberCheckFailed), most often on a loaded machine. The test apps
   * call it once before their first case; cases that submit barrier stages of their own
   * rely on it. Fails when the slots do not come.
   */
  def awaitExecutors(sc: SparkContext, waitMs: Long = 120000L): Unit =
    LpfHook.configuredSlots(sc).foreach { want =>
      val t0 = System.nanoTime
      val slots = LpfHook.awaitSlots(sc, want, waitMs)
      if (slots < want)
        throw new IllegalStateException(s"the cluster (${sc.master}) has $slots of its $want task slots after " +
          s"waiting $waitMs ms for its executors")
      println(f"RESULT info $slots task slots after ${(System.nanoTime - t0) / 1e9}%.1f s")
    }

  /** The Spark stages (submitted, not skipped) that `body` ran on `sc`, with its result. */
  def stagesOf[T](sc: SparkContext, what: String)(body: => T): (T, Int) = {
    val group = s"stages-${System.nanoTime}"
    val stages = new java.util.concurrent.atomic.AtomicInteger
    val listener = new org.apache.spark.scheduler.SparkListener {
      override def onStageSubmitted(e: org.apache.spark.scheduler.SparkListenerStageSubmitted): Unit =
        if (Option(e.properties).exists(_.getProperty("spark.jobGroup.id") == group)) stages.incrementAndGet()
    }
    sc.addSparkListener(listener)
    try {
      sc.setJobGroup(group, what)
      val r = try body finally sc.clearJobGroup()
      LpfSparkAccess.drainListeners(sc, 10000L)
      (r, stages.get)
    } finally sc.removeSparkListener(listener)
  }

  /**
   * The session of a test application on a cluster whose task slots have come: a few
   * shuffle partitions (graphs of hundreds of edges), Spark's own log quiet, the master
   * and the native library named in a `RESULT info` line.
   */
  def testSession(name: String): SparkSession = {
    val spark = SparkSession.builder().appName(name).config("spark.sql.shuffle.partitions", "4").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    awaitExecutors(spark.sparkContext)
    println(s"RESULT info master=${spark.sparkContext.master} native=${org.lpf.spark.LpfNative.version()}")
    spark
  }

  /** Runs `body`, which must throw; returns what it threw. */
  def thrown(body: => Any): Throwable =
    try { body; throw new Failed("expected a failure, but it succeeded") } catch {
      case f: Failed => throw f
      case e: Throwable => e
    }

  /** The typed LpfException an entry point must throw on the driver. */
  def lpfException(e: Throwable): LpfException = e match {
    case l: LpfException => l
    case other => throw new Failed(s"the driver got ${other.getClass.getName}, not an LpfException: ${messages(other)}")
  }

  /**
   * PageRank by power iteration: vertices `0..n-1`, each distinct edge once, damping
   * `alpha`, start 1/n, the rank of vertices without out-edges spread uniformly, stop
   * when the L1 change of an iteration is below `tol` (or after `maxIter`). The ranks and
   * the iterations run.
   */
  def powerIteration(n: Int, edges: Seq[(Int, Int)], alpha: Double, tol: Double, maxIter: Int): (Array[Double], Int) = {
    val distinct = edges.distinct
    val out = new Array[Int](n)
    distinct.foreach { case (u, _) => out(u) += 1 }
    var r = Array.fill(n)(1.0 / n)
    var change = Double.PositiveInfinity
    var k = 0
    while (k < maxIter && change >= tol) {
      val dangling = (0 until n).iterator.filter(out(_) == 0).map(r(_)).sum
      val next = Array.fill(n)((1 - alpha) / n + alpha * dangling / n)
      distinct.foreach { case (u, v) => next(v) += alpha * r(u) / out(u) }
      change = (0 until n).iterator.map(i => math.abs(next(i) - r(i))).sum
      r = next
      k += 1
    }
    (r, k)
  }

  /** [[powerIteration]] of a graph whose vertices are the ids its edges name: id -> rank, iterations. */
  def referenceRanks(edges: Seq[(Long, Long)], alpha: Double, tol: Double, maxIter: Int): (Map[Long, Double], Int) = {
    val ids = edges.flatMap { case (u, v) => Seq(u, v) }.distinct.sorted
    val index = ids.zipWithIndex.toMap
    val (ranks, iterations) = powerIteration(ids.length, edges.map { case (u, v) => (index(u), index(v)) }, alpha, tol, maxIter)
    (ids.indices.map(i => ids(i) -> ranks(i)).toMap, iterations)
  }
}
