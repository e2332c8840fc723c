package org.lpf.spark.tests

import java.io.{File, PrintWriter}
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap

import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{Configurator, Property}
import org.apache.spark.{BarrierTaskContext, SparkConf, SparkContext, SparkEnv, Success => TaskSuccess}
import org.apache.spark.lpf.LpfSparkAccess
import org.apache.spark.lpftests.SchedulerAccess
import org.apache.spark.scheduler._
import org.apache.spark.storage.StorageLevel
import org.lpf.spark._
import org.lpf.spark.examples.Graphs
import org.lpf.spark.tests.TestSupport._

/**
 * LPF PageRank through the Spark bridge, as a real Spark application (tests/spark/run.sh):
 *
 *   spark-submit --master M --class org.lpf.spark.tests.PageRankTests \
 *     --jars lpf-spark_<scala>-<version>.jar,lpf-spark-examples_<scala>.jar lpf-spark-tests_<scala>.jar <pagerank CLI> <work dir> <group>
 *
 * The cases come in two groups, one per submission, because Spark's retries are fixed per
 * application: `no-retries` (spark.task.maxFailures = 1: a flaky hook fails its case
 * instead of passing on a retry) and `retries` (spark.task.maxFailures > 1, executor JVMs:
 * the cases that kill executors or lose a host, and the one that checks a permanent error
 * is not retried). A scheduler whose retries do not match the group is one failure
 * (`scheduler-retries-match-the-group`), and then no case runs.
 * Prints `RESULT ok|FAIL NAME` lines and `RESULT done`, as BridgeTests.
 */
object PageRankTests {



  /** The group of this submission: `retries` or `no-retries` (set in main). */
  private var retrying = false
  /** The scheduler's retries do not match the group: no case runs. */
  private var misconfigured = false

  /**
   * A case of group `retries` (or not), run when it belongs to this submission's group,
   * `applies` (e.g. it needs executor JVMs) and LPF_SPARK_TESTS selects it.
   */
  private def test(name: String, retries: Boolean = false, applies: Boolean = true)(body: => Unit): Unit =
    if (!misconfigured && retries == retrying && applies) { runCase(name)(body); () }

  /** A graph with ids 0..n-1, every one named by some edge (so a file and an RDD of it have the same n). */
  private def denseGraph(sc: SparkContext, scale: Int, seed: Long): Array[(Long, Long)] = {
    val raw = Graphs.rmat(sc, scale, 16, seed, 2).collect()
    val ids = raw.flatMap { case (u, v) => Array(u, v) }.distinct.sorted
    val index = ids.zipWithIndex.map { case (id, i) => id -> i.toLong }.toMap
    raw.map { case (u, v) => (index(u), index(v)) }.sorted
  }

  private def writeEdges(file: File, edges: Array[(Long, Long)]): Unit = {
    val w = new PrintWriter(file, "UTF-8")
    try { w.println("# test graph: source target, 0-based"); edges.foreach { case (u, v) => w.println(s"$u $v") } }
    finally w.close()
  }

  /** Ranks from the native `pagerank` CLI (shared-memory engine, 2 processes). */
  private def cliRanks(cli: String, graph: File, out: File, tol: Double, maxIter: Int): Map[Long, Double] = {
    val cmd = Seq(cli, "--input", graph.getPath, "-p", "2", "--tol", tol.toString, "--max-iters", maxIter.toString,
      "--output", out.getPath, "--quiet")
    val pb = new ProcessBuilder(cmd: _*).redirectErrorStream(true)
    val p = pb.start()
    val text = new String(p.getInputStream.readAllBytes(), StandardCharsets.UTF_8)
    val rc = p.waitFor()
    expect(rc == 0, s"${cmd.mkString(" ")} exited with $rc: $text")
    Files.readAllLines(out.toPath).asScala.filter(_.nonEmpty).map { l =>
      val f = l.split(" ")
      f(0).toLong -> f(1).toDouble
    }.toMap
  }

  /** The largest difference of `got` from `want` (the ranks of `source`), at most `within`. */
  private def compare(got: Map[Long, Double], want: Map[Long, Double], what: String, source: String, within: Double): Double = {
    expect(got.size == want.size, s"$what: ${got.size} vertices, $source has ${want.size}")
    val worst = want.map { case (v, r) =>
      val g = got.getOrElse(v, throw new Failed(s"$what: vertex $v is missing"))
      math.abs(g - r)
    }.max
    expect(worst <= within, f"$what: largest difference from $source's ranks $worst%.3e > $within%.0e")
    worst
  }

  /** The OS threads of this process by name (/proc/self/task/N/comm). */
  private def threadNames(): Map[String, Int] =
    new File("/proc/self/task").listFiles().toSeq.flatMap { t =>
      try Some(new String(Files.readAllBytes(new File(t, "comm").toPath), StandardCharsets.UTF_8).trim.replaceAll("[0-9]+", "#"))
      catch { case _: java.io.IOException => None } // the thread ended meanwhile
    }.groupBy(identity).map { case (k, v) => k -> v.length }

  /**
   * Spark's block-manager thread pools (`block-manager-storage-async-thread-pool` in
   * executors, `block-manager-ask-thread-pool` in the driver; comm names
   * `block-manager-s`, `block-manager-a`): cached pools that grow with unpersist
   * requests and let idle threads go after 60 s. Not ours, so not counted (a thread the
   * native library leaked would carry its own name or its creator's, e.g. `Executor task l`).
   */
  private def sparkPool(name: String): Boolean = name.startsWith("block-manager-")

  /**
   * This process's open descriptors by what they are: a file's path (digits as #), or
   * `socket`, `pipe`, `anon_inode:[eventfd]`, ...; so that a leak names what leaked.
   */
  private def descriptorKinds(): Map[String, Int] =
    Option(new File("/proc/self/fd").listFiles()).toSeq.flatten.flatMap { f =>
      try Some(Files.readSymbolicLink(f.toPath).toString.replaceAll("[0-9]+", "#").replaceAll(":\\[#\\]$", ""))
      catch { case _: java.io.IOException => None } // closed meanwhile
    }.groupBy(identity).map { case (k, v) => k -> v.length }

  /** What grew from `before` to `after` (counts by name), most first, as "'name' +k". */
  private def growth(before: Map[String, Int], after: Map[String, Int]): String =
    after.toSeq.map { case (k, v) => (k, v - before.getOrElse(k, 0)) }.filter(_._2 > 0).sortBy(-_._2)
      .map { case (k, d) => s"'$k' +$d" }.mkString(", ")

  /** Executor-side resource counts: OS threads, open descriptors, resident bytes. */
  private def probe(): (Int, Int, Long) = {
    System.gc()
    val threads = threadNames().filter(t => !sparkPool(t._1)).values.sum
    val fds = new File("/proc/self/fd").list().length
    val statm = new String(Files.readAllBytes(new File("/proc/self/statm").toPath), StandardCharsets.US_ASCII).trim.split("\\s+")
    (threads, fds, statm(1).toLong * 4096L)
  }


  private def longs(xs: Long*): Array[Byte] = {
    val b = java.nio.ByteBuffer.allocate(8 * xs.length).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    xs.foreach(b.putLong)
    b.array()
  }

  private def unlongs(a: Array[Byte]): Seq[Long] = {
    val b = java.nio.ByteBuffer.wrap(a).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    Seq.fill(a.length / 8)(b.getLong)
  }

  /** Warnings the bridge logs on the driver (logger org.lpf.spark), from now on. */
  private lazy val warnings: java.util.concurrent.ConcurrentLinkedQueue[String] = {
    val q = new java.util.concurrent.ConcurrentLinkedQueue[String]()
    val lc = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val app = new AbstractAppender("lpf-test-capture", null, null, true, Property.EMPTY_ARRAY) {
      override def append(e: LogEvent): Unit =
        if (e.getLevel.isMoreSpecificThan(Level.WARN)) q.add(e.getMessage.getFormattedMessage)
    }
    app.start()
    lc.getConfiguration.getLoggerConfig("org.lpf.spark").addAppender(app, Level.WARN, null)
    lc.updateLoggers()
    q
  }



  /**
   * A latch released by the `lines`-th progress line the driver logs from now on
   * (LpfProgress: process 0 of a PageRank reports each iteration), and the function that
   * stops watching: a kill or cancel timed by it lands in the iterations however loaded
   * the machine is.
   */
  private def progressSeen(lines: Int = 1): (java.util.concurrent.CountDownLatch, () => Unit) = {
    val seen = new java.util.concurrent.CountDownLatch(lines)
    val logger = LogManager.getContext(false).asInstanceOf[LoggerContext].getLogger(LpfProgress.LoggerName)
    expect(logger.isInfoEnabled, s"the logger ${LpfProgress.LoggerName} does not log INFO: no progress to wait for")
    val app = new AbstractAppender("lpf-test-progress", null, null, true, Property.EMPTY_ARRAY) {
      override def append(e: LogEvent): Unit = seen.countDown()
    }
    app.start()
    logger.addAppender(app)
    (seen, () => logger.removeAppender(app))
  }

  /** Tasks holding a slot now, as the task scheduler counts them. */
  private def runningTasks(sc: SparkContext): Int = org.apache.spark.lpfexamples.Scheduler.runningTasks(sc)

  /** Stage attempts per stage and failed tasks of the jobs `body` starts (by the listener bus). */
  private def attempts(sc: SparkContext)(body: => Unit): (Map[Int, Int], Int) = {
    val seen = new ConcurrentHashMap[Int, Int]()
    val failures = new java.util.concurrent.atomic.AtomicInteger()
    val l = new SparkListener {
      override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit =
        seen.merge(e.stageInfo.stageId, 1, (a: Int, b: Int) => a + b)
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit = if (e.reason != TaskSuccess) failures.incrementAndGet()
    }
    sc.addSparkListener(l)
    try body finally {
      org.apache.spark.lpfexamples.ListenerBus.drain(sc)
      sc.removeSparkListener(l)
    }
    (seen.asScala.toMap, failures.get)
  }

  /** Executor id -> (executor JVM pid, its parent's pid) of the executors running a p-task barrier stage now. */
  /**
   * The OS process of executor `exec` (local-cluster, or a standalone cluster on this
   * host), found by its command line when the kill is due: an executor started after an
   * earlier kill has an id that a map taken at the start of the test would not know.
   */
  private def executorProcess(exec: String): Option[ProcessHandle] = {
    // This application's executor only: other Spark applications on the machine (a
    // concurrent test run) number their executors from 0 too.
    val app = SparkContext.getOrCreate().applicationId
    def has(args: Array[String], flag: String, value: String) =
      args.sliding(2).exists(w => w.length == 2 && w(0) == flag && w(1) == value)
    ProcessHandle.allProcesses().iterator().asScala.find { h =>
      val args = h.info().arguments().orElse(Array.empty[String])
      args.contains("org.apache.spark.executor.CoarseGrainedExecutorBackend") &&
        has(args, "--executor-id", exec) && has(args, "--app-id", app)
    }
  }

  /** `kill -9 pid`, its exit status; never pid 1 or below (`kill -9 -1` kills everything). */
  private def kill9(pid: Long): Int = {
    require(pid > 1, s"refusing to kill pid $pid")
    new ProcessBuilder("kill", "-9", pid.toString).start().waitFor()
  }

  /**
   * Kills executor `exec` with SIGKILL (with `withWorker`, its worker first, so that it
   * cannot start a new executor) and says what happened: "... exited 0" when it was killed.
   */
  private def killExecutor(exec: String, withWorker: Boolean = false): String =
    executorProcess(exec) match {
      case None => s"no process of executor $exec found"
      case Some(h) =>
        val worker =
          if (!withWorker) "" else h.parent().map[String](w => s"worker ${w.pid()} (exited ${kill9(w.pid())}) and ").orElse("(no worker) ")
        s"kill -9 ${worker}executor ${h.pid()} exited ${kill9(h.pid())}"
    }


  /**
   * Item 17: the executor of pid 1 goes away for good (`cut` does it, given its id) while a long PageRank hook runs. LPF fails the stage, Spark
   * resubmits it, the rerun needs p slots and the cluster has p - 1: the bridge must
   * cancel the job after slotWaitMs with an LpfException naming both numbers. Bounded:
   * a job still running 120 s after the cut is a hang (reported, and cancelled).
   */
  private def hostLostForGood(sc: SparkContext, p: Int, base: LpfSettings,
                              cut: String => String): Unit = {
    val settings = base.copy(slotWaitMs = 5000L, bootstrapTimeoutMs = 10000L)
    val what = new ConcurrentHashMap[String, String]()
    val (iterating, stopWatching) = progressSeen() // the cut lands in the iterations
    val cutAt = new java.util.concurrent.atomic.AtomicLong(0L)
    val listener = new SparkListener {
      @volatile var hookStage = -1
      override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit = {
        val s = e.stageInfo
        if (s.name.contains("LpfPageRank") && s.attemptNumber() == 0 && hookStage < 0) hookStage = s.stageId
        if (s.stageId == hookStage && s.attemptNumber() > 0) what.put("rerun", s"attempt ${s.attemptNumber()}")
      }
      override def onTaskStart(e: SparkListenerTaskStart): Unit =
        if (e.stageId == hookStage && e.stageAttemptId == 0 && e.taskInfo.index == 1 && !what.containsKey("executor")) {
          what.put("executor", e.taskInfo.executorId)
          Future {
            if (!iterating.await(120, java.util.concurrent.TimeUnit.SECONDS)) what.put("no progress", "within 120 s")
            cutAt.set(System.nanoTime)
            what.put("cut", try cut(e.taskInfo.executorId) catch { case t: Throwable => s"the cut failed: $t" })
          }
        }
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit =
        if (e.stageId == hookStage && e.stageAttemptId == 0 && e.reason != TaskSuccess && cutAt.get > 0) {
          val k = s"task ${e.taskInfo.index} failed"
          if (!what.containsKey(k)) what.put(k, f"${(System.nanoTime - cutAt.get) / 1e9}%.1f s after the cut (" +
            s"${e.reason.toString.take(120).replace('\n', ' ')})")
        }
      override def onExecutorRemoved(e: SparkListenerExecutorRemoved): Unit =
        if (cutAt.get > 0) what.put(s"executor ${e.executorId} removed", f"${(System.nanoTime - cutAt.get) / 1e9}%.1f s after the cut")
    }
    sc.addSparkListener(listener)
    val graph = Graphs.rmat(sc, 13, 16, 5L, p).persist(StorageLevel.MEMORY_AND_DISK)
    graph.count()
    val run = Future(LpfPageRank.run(graph, tol = 0.0, maxIter = 1000000, settings = settings))
    val outcome = try Right(Await.result(run, 180.seconds)) catch {
      case _: java.util.concurrent.TimeoutException => sc.cancelAllJobs(); Left(new Failed("hang: no outcome 180 s after the start"))
      case e: Throwable => Left(e)
    } finally {
      org.apache.spark.lpfexamples.ListenerBus.drain(sc)
      sc.removeSparkListener(listener)
      stopWatching()
    }
    val after = if (cutAt.get > 0) f"${(System.nanoTime - cutAt.get) / 1e9}%.1f s after the cut" else "(no cut)"
    println(s"RESULT info host lost for good: ${what.asScala.toSeq.sorted.mkString("; ")}; outcome $after: " +
      outcome.fold(e => messages(e).take(300), _ => "succeeded?!"))
    expect(what.containsKey("cut") && !what.get("cut").startsWith("the cut failed") && !what.get("cut").startsWith("no process"),
      s"the executor was not taken away: $what")
    val l = lpfException(outcome.fold(identity, _ => new Failed("the job succeeded without the lost host")))
    expect(l.phase() == "slots" && l.detail().contains(s"needs $p task slots") && l.detail().contains(s"only ${p - 1}"),
      s"not the slots verdict: ${l.getMessage}")
  }

  def main(args: Array[String]): Unit = {
    val (cli, work, group) = (args(0), new File(args(1)), args(2))
    require(group == "retries" || group == "no-retries", s"group must be retries or no-retries, not $group")
    work.mkdirs()
    val sc = new SparkContext(new SparkConf().setAppName(s"lpf-pagerank-tests ($group)"))
    sc.setLogLevel("ERROR")
    awaitExecutors(sc)
    val cluster = !sc.master.startsWith("local[")
    val p = 2
    val settings = LpfSettings(bootstrapTimeoutMs = 30000L, slotWaitMs = 60000L)
    retrying = group == "retries"
    val taskAttempts = SchedulerAccess.maxTaskFailures(sc)
    println(s"RESULT info master=${sc.master} native=${LpfNative.version()} group=$group task attempts=$taskAttempts")
    misconfigured = retrying != taskAttempts > 1
    if (misconfigured)
      println(s"RESULT FAIL scheduler-retries-match-the-group: group $group on a scheduler that allows $taskAttempts " +
        s"attempts per task (master ${sc.master}; spark.task.maxFailures must be ${if (retrying) "> 1, with executor JVMs" else "1"})")

    val edges12 = denseGraph(sc, 12, 7L)
    val file12 = new File(work, "kron12-dense.edges")
    writeEdges(file12, edges12)

    test("ranks-equal-a-power-iteration-and-the-native-cli") {
      val tol = 1e-10
      val want = cliRanks(cli, file12, new File(work, "cli-ranks.txt"), tol, 1000)
      val rdd = sc.parallelize(edges12.toSeq, p)
      val r = LpfPageRank.run(rdd, tol = tol, settings = settings)
      val got = r.ranks.collect()
      expect(got.map(_._1).distinct.length == got.length, "a vertex appears twice in the ranks RDD")
      expect(r.converged && r.residual < tol, s"not converged: residual ${r.residual}")
      expect(math.abs(got.map(_._2).sum - 1.0) < 1e-12, s"ranks sum to ${got.map(_._2).sum}")
      val d1 = compare(got.toMap, want, "LpfPageRank.run", "the CLI", 1e-12)
      val (reference, referenceIterations) = referenceRanks(edges12.toSeq, 0.85, tol, 1000)
      val d0 = compare(got.toMap, reference, "LpfPageRank.run", "the test's power iteration", 1e-10)
      expect(math.abs(r.iterations - referenceIterations) <= 1,
        s"LpfPageRank.run took ${r.iterations} iterations, the test's power iteration $referenceIterations")
      r.unpersist()
      // The same file read natively and in parallel by the executors.
      val f = LpfPageRank.fromFile(sc, file12.getAbsolutePath, tol = tol, nprocs = p, settings = settings)
      val d2 = compare(f.ranks.collect().toMap, want, "LpfPageRank.fromFile", "the CLI", 1e-12)
      expect(f.iterations == r.iterations, s"fromFile ran ${f.iterations} iterations, run ${r.iterations}")
      f.unpersist()
      println(f"RESULT info ${want.size} vertices, ${edges12.length} edges, ${r.iterations} iterations; " +
        f"largest difference from the test's power iteration $d0%.2e ($referenceIterations iterations); from the CLI: run $d1%.2e, fromFile $d2%.2e; ${r.secondsPerIteration * 1e3}%.3f ms/iteration (${r.exchange})")
    }

    test("ingest-pieces-hold-every-edge-across-piece-and-partition-boundaries") {
      // LpfGraphCall's reading alone (no native code): rows into pieces of at most 48 bytes
      // of ids, pieces moved from 7 partitions (empty ones, single edges) into p, and the
      // request's layout: the edges' ids, then their weights, then the vertex ids.
      import org.apache.spark.sql.catalyst.InternalRow
      import org.apache.spark.unsafe.types.UTF8String
      val columns = LpfGraphCall.Columns("src", "dst", "id", Some("w"))
      def longs(a: Array[Byte]): Seq[Long] = {
        val b = java.nio.ByteBuffer.wrap(a).order(java.nio.ByteOrder.LITTLE_ENDIAN)
        Seq.fill(a.length / 8)(b.getLong)
      }
      def pairs(pieces: Seq[LpfGraphCall.Piece]): Seq[(Long, Long)] =
        pieces.flatMap(x => longs(x.ids).grouped(2).map(q => (q(0), q(1))))
      val big = Seq.tabulate(7)(i => (Long.MaxValue - i, Long.MinValue + 3L * i))
      val one = LpfGraphCall.edgePieces(LpfGraphCall.pairRows(big.iterator), strings = false, weighted = false, columns,
        pieceBytes = 48).toSeq
      expect(one.map(_.count) == Seq(3, 3, 1) && one.forall(x => x.refusal == null && !x.vertices),
        s"piece sizes ${one.map(_.count)}")
      expect(pairs(one) == big, "the pieces do not hold the edges in order")
      val edges = Seq.tabulate(40)(i => (i.toLong * 0x0123456789abcdefL, -i.toLong))
      val parts = Seq(edges.take(1), Seq(), edges.slice(1, 20), Seq(), edges.slice(20, 21), edges.drop(21), Seq())
      val rdd = sc.parallelize(parts, parts.length).flatMap(x => x)
      val pieces = rdd.mapPartitions(it => LpfGraphCall.edgePieces(LpfGraphCall.pairRows(it), strings = false,
        weighted = false, columns, pieceBytes = 48))
      val moved = LpfGraphCall.inProcesses(pieces, p)
      expect(moved.getNumPartitions == p, s"${moved.getNumPartitions} partitions, not $p")
      val got = moved.glom().collect().toSeq
      expect(got.forall(_.nonEmpty), s"pieces per partition ${got.map(_.length)}: the pieces were not spread")
      expect(pairs(got.flatten).sorted == edges.sorted, "edges lost or changed on the way")
      // Weighted string edges and vertex ids in one request; then a refusal instead of them.
      val triples = Seq.tabulate(5)(i => (s"s$i", "\u00e9" * i, i + 0.25))
      val rows = triples.iterator.map(t => InternalRow(UTF8String.fromString(t._1), UTF8String.fromString(t._2), t._3))
      val wp = LpfGraphCall.edgePieces(rows, strings = true, weighted = true, columns, pieceBytes = 24).toSeq
      val vp = LpfGraphCall.vertexPieces(Iterator(InternalRow(UTF8String.fromString("lonely"))), strings = true, columns).toSeq
      val call = LpfGraphCall.Call(LpfGraphCall.Sssp, 2, strings = true, Some("s1"), weights = true)
      val req = LpfGraphCall.request(call, wp ++ vp).buffer
      def frame(b: java.nio.ByteBuffer): String = {
        val a = new Array[Byte](b.getInt)
        b.get(a)
        new String(a, "UTF-8")
      }
      expect(req.getLong(48) == 5 && req.getLong(56) == 1 && req.getInt(96) == 0, s"m ${req.getLong(48)}, v ${req.getLong(56)}")
      req.position(100)
      val source = frame(req)
      val gotEdges = Seq.fill(5)((frame(req), frame(req)))
      val gotWeights = Seq.fill(5)(req.getDouble)
      val gotVertex = frame(req)
      expect(source == "s1" && gotEdges == triples.map(t => (t._1, t._2)) && gotWeights == triples.map(_._3) &&
        gotVertex == "lonely" && !req.hasRemaining, s"request: source $source, edges $gotEdges, weights $gotWeights, " +
        s"vertex $gotVertex, ${req.remaining} bytes left")
      val refused = LpfGraphCall.edgePieces(Iterator(InternalRow(UTF8String.fromString("a"), UTF8String.fromString("b"), -2.0)),
        strings = true, weighted = true, columns).toSeq
      val r = LpfGraphCall.request(call, wp ++ refused ++ vp).buffer
      val text = "the edge (a, b) has weight -2 in the column 'w': SSSP needs weights >= 0"
      expect(r.getLong(48) == 0 && r.getInt(96) == text.getBytes("UTF-8").length && r.capacity == 100 + r.getInt(96),
        s"a refused request: m ${r.getLong(48)}, refusal of ${r.getInt(96)} bytes, ${r.capacity} bytes in all")
    }

    test("ingest-empty-and-one-edge-partitions-unions-and-huge-ids-give-the-same-ranks") {
      // 64-bit ids (the extremes, negative ones), more edges than one batch holds.
      val rnd = new scala.util.Random(21L)
      val ids = (Seq(Long.MinValue, Long.MaxValue, -1L, 0L) ++ Iterator.continually(rnd.nextLong()).take(6000)).distinct
      val edges = (Seq.fill((1 << 16) + 5000)((ids(rnd.nextInt(ids.length)), ids(rnd.nextInt(ids.length)))) ++
        Seq((Long.MinValue, Long.MaxValue), (Long.MaxValue, -1L))).toArray
      val tol = 1e-10
      val (want, _) = referenceRanks(edges.toSeq, 0.85, tol, 1000)
      val (a, b) = edges.splitAt(edges.length / 2)
      val layouts = Seq(
        "p partitions, one empty" -> sc.parallelize(Seq(Seq.empty[(Long, Long)], edges.toSeq), p).flatMap(x => x),
        "7 partitions: empty ones, single edges" -> sc.parallelize(
          Seq(Seq(), edges.take(1).toSeq, Seq(), edges.slice(1, 2).toSeq, edges.drop(2).toSeq, Seq(), Seq()), 7).flatMap(x => x),
        // A union of p partitions cannot end a barrier stage as it is (Spark refuses it).
        "a union of p partitions" -> sc.parallelize(a.toSeq, 1).union(sc.parallelize(b.toSeq, 1)))
      val runs = layouts.map { case (what, rdd) =>
        val r = LpfPageRank.run(rdd, tol = tol, nprocs = p, settings = settings)
        val got = try r.ranks.collect().toMap finally r.unpersist()
        expect(r.processes == p && r.edges == edges.distinct.length, s"$what: ${r.processes} processes, ${r.edges} edges")
        (what, compare(got, want, what, "the test's power iteration", 1e-10), got)
      }
      for ((what, _, got) <- runs.tail) compare(got, runs.head._3, what, runs.head._1, 1e-13)
      println(s"RESULT info ingest layouts, ${want.size} vertices, ${edges.length} edges: " +
        runs.map { case (w, d, _) => f"$w $d%.2e" }.mkString(", "))
    }

    test("ingest-seconds-include-reading-the-partitions") {
      // Edges that take 0.2 s each to compute (partitions of 1 and 2 edges): reading them is
      // ingest, inside the barrier tasks.
      val slow = sc.parallelize(Seq((0L, 1L), (1L, 2L), (2L, 0L)), p).map { e => Thread.sleep(200); e }
      val r = LpfPageRank.run(slow, nprocs = p, settings = settings, progress = false)
      r.unpersist()
      expect(r.ingestSeconds >= 0.4, f"ingest ${r.ingestSeconds}%.3f s, but reading the larger partition takes 0.4 s")
    }

    test("groups-form-without-a-one-second-barrier-round") {
      // Spark's allGather sleeps 1 s at a time until its reply is there, so a group formed
      // with one took >= 1 s on every process; through the driver's rendezvous (TCP) or the
      // task infos alone (threads) it takes milliseconds. The best of three runs, so that
      // one slow moment of a shared machine does not decide.
      val tiny = sc.parallelize(Seq((0L, 1L), (1L, 2L), (2L, 0L)), p)
      val seconds = Seq.fill(3) {
        val r = LpfPageRank.run(tiny, nprocs = p, settings = settings, progress = false)
        r.unpersist()
        r.bootstrapSeconds
      }
      expect(seconds.min < 0.9, f"forming the group took ${seconds.map(s => f"$s%.3f").mkString(", ")} s: a barrier round?")
      println(f"RESULT info bootstrap seconds (slowest process) of 3 runs: ${seconds.map(s => f"$s%.3f").mkString(", ")}")
    }

    test("twenty-hooks-leak-no-threads-fds-or-memory") {
      val graph = Graphs.rmat(sc, 14, 16, 3L, p).persist(StorageLevel.MEMORY_AND_DISK)
      graph.count()
      def measure(): Map[String, ((Int, Int, Long), Map[String, Int], Map[String, Int])] = {
        sc.parallelize(0 until p, p).barrier().mapPartitions { _ =>
          Iterator((SparkEnv.get.executorId, (probe(), threadNames(), descriptorKinds())))
        }.collect().groupBy(_._1).map { case (e, xs) => e -> xs.map(_._2).maxBy(_._1._3) }
      }
      def hooks(k: Int): Unit = (1 to k).foreach { _ =>
        val r = LpfPageRank.run(graph, tol = 1e-7, settings = settings)
        expect(r.converged, "a hook did not converge")
        r.ranks.count()
        r.unpersist()
      }
      hooks(3) // warm-up: library loaded, allocator arenas and JIT settled
      val before = measure()
      hooks(20)
      val after = measure()
      graph.unpersist()
      val lines = before.keys.toSeq.sorted.map { e =>
        val (((t0, f0, m0), n0, d0), ((t1, f1, m1), n1, d1)) = (before(e), after.getOrElse(e, throw new Failed(s"executor $e is gone")))
        println(f"RESULT info executor $e: threads $t0 -> $t1, fds $f0 -> $f1, RSS ${m0 / 1048576.0}%.1f -> ${m1 / 1048576.0}%.1f MiB")
        expect(t1 - t0 <= 2, s"executor $e: $t0 threads before 20 hooks, $t1 after; more of: " +
          growth(n0, n1.filter(t => !sparkPool(t._1))))
        expect(f1 - f0 <= 4, s"executor $e: $f0 open descriptors before 20 hooks, $f1 after; more of: ${growth(d0, d1)}")
        expect(m1 - m0 <= 48L * 1048576, f"executor $e: RSS grew by ${(m1 - m0) / 1048576.0}%.1f MiB over 20 hooks")
        e
      }
      expect(lines.nonEmpty, "no executor measured")
    }

    // In the retries group (executor JVMs): that Spark does not run the stage again shows
    // only where it could (local[N] never retries a task).
    test("bad-input-file-fails-at-once-with-a-typed-LpfException", retries = true, applies = cluster) {
      // spark.task.maxFailures = 4 here: Spark would run the stage 4 times.
      val bad = new File(work, "malformed.edges")
      Files.write(bad.toPath, "0 1\n1 2\n2 x\n".getBytes(StandardCharsets.UTF_8))
      var e: Throwable = null
      val t0 = System.nanoTime
      val (stages, failed) = attempts(sc) {
        e = thrown(LpfPageRank.fromFile(sc, bad.getAbsolutePath, nprocs = p, settings = settings))
      }
      val secs = (System.nanoTime - t0) / 1e9
      val l = lpfException(e)
      expect(l.phase() == "hook" && l.pid() >= 0 && l.host().nonEmpty, s"pid ${l.pid()}, host ${l.host()}, phase ${l.phase()}")
      expect(l.permanent(), s"a malformed file is not marked permanent: ${l.getMessage}")
      expect(l.detail().contains("malformed.edges"), s"the message does not name the file: ${l.detail()}")
      val rerun = stages.filter(_._2 > 1)
      expect(rerun.isEmpty, s"stages were attempted again: $rerun (failed tasks: $failed)")
      expect(failed <= p, s"$failed failed tasks for $p processes: the stage was retried")
      println(f"RESULT info malformed file: LpfException after $secs%.1f s, $failed failed tasks, stages $stages: ${l.getMessage.take(200)}")
      // The same through runStage: unequal input lengths are permanent too.
      val (stages2, failed2) = attempts(sc) {
        e = thrown(LpfHook.runStage(sc.parallelize(Seq(longs(1, 2), longs(1)), 2), LpfProgram.bundled("allreduce-sum-i64"),
          settings = settings))
      }
      val l2 = lpfException(e)
      expect(l2.phase() == "hook" && l2.permanent() && l2.detail().contains("same length"), s"runStage: ${l2.getMessage}")
      expect(stages2.forall(_._2 == 1) && failed2 <= 2, s"runStage: stages $stages2, $failed2 failed tasks")
    }

    test("fewer-slots-than-partitions-warns-or-fails") {
      val slots = LpfSparkAccess.maxConcurrentTasks(sc)
      val quick = settings.copy(slotWaitMs = 1500L)
      warnings.clear()
      val r = LpfPageRank.run(sc.parallelize(edges12.toSeq, slots + 1), tol = 1e-6, settings = quick)
      r.unpersist()
      expect(r.processes == slots, s"ran ${r.processes} processes on $slots slots")
      val w = warnings.asScala.filter(_.contains("LpfPageRank")).toSeq
      expect(w.exists(x => x.contains(s"${slots + 1} LPF processes") && x.contains(s"$slots task slots")),
        s"no driver warning naming ${slots + 1} and $slots: ${w.mkString(" | ")}")
      val l = lpfException(thrown(LpfPageRank.run(sc.parallelize(edges12.toSeq, 2), nprocs = slots + 1, settings = quick)))
      expect(l.phase() == "check" && l.detail().contains(s"${slots + 1} partitions") &&
        s"\\b$slots (free )?task slots".r.findFirstIn(l.detail()).isDefined, s"explicit nprocs: ${l.getMessage}")
    }

    test("cancelAllJobs-during-pagerank-frees-the-slots-and-the-next-job-runs") {
      // A PageRank that would run for hours (tol 0: every one of maxIter iterations) is
      // cancelled once its native iterations run (progress lines arrive). Spark marks
      // its tasks killed; the bridge must make them leave native code, so that the
      // slots are free and the next LPF job on all of them runs, within 30 s.
      val t0 = System.nanoTime
      val (iterating, stopWatching) = progressSeen(3)
      val long = Future(LpfPageRank.run(sc.parallelize(edges12.toSeq, p), tol = 0.0, maxIter = Int.MaxValue,
        settings = settings))
      val ran = try iterating.await(120, java.util.concurrent.TimeUnit.SECONDS) finally stopWatching()
      expect(ran, s"no native iterations ran within ${(System.nanoTime - t0) / 1e9} s " +
        s"(${long.value.map(_.toString).getOrElse("still running")})")
      sc.cancelAllJobs()
      val cancelled = System.nanoTime
      def since: Double = (System.nanoTime - cancelled) / 1e9
      val left = () => math.max(0.0, 30.0 - since).seconds
      val outcome = scala.util.Try(Await.result(long, left()))
      expect(outcome.isFailure && !outcome.failed.get.isInstanceOf[java.util.concurrent.TimeoutException],
        f"the cancelled PageRank did not fail within 30 s: $outcome")
      val thrownAfter = since
      while (runningTasks(sc) > 0 && since < 30) Thread.sleep(50)
      val running = runningTasks(sc)
      expect(running == 0, f"$running tasks still hold their slots $since%.1f s after cancelAllJobs")
      val slotsFreeAfter = since
      // The next LPF job, on every slot.
      val slots = LpfSparkAccess.maxConcurrentTasks(sc)
      val ring = (0 until 97).map(i => (i.toLong, ((i * 5 + 1) % 97).toLong)) ++ (0 until 97).map(i => (i.toLong, ((i + 1) % 97).toLong))
      val next = Future(LpfPageRank.run(sc.parallelize(ring, slots), tol = 1e-12, settings = settings))
      val r = scala.util.Try(Await.result(next, left())).fold(e => throw new Failed(
        f"the next LPF job ($slots processes) did not finish within 30 s of the cancel: ${messages(e)}"), identity)
      val (want, _) = referenceRanks(ring, 0.85, 1e-12, 1000)
      val d = compare(r.ranks.collect().toMap, want, "the job after the cancel", "the test's power iteration", 1e-10)
      r.unpersist()
      println(f"RESULT info cancel: the PageRank failed $thrownAfter%.1f s after cancelAllJobs, its slots were free " +
        f"after $slotsFreeAfter%.1f s, the next job ($slots processes, largest difference $d%.1e) ended after $since%.1f s")
    }

    test("user-barrier-stage-through-LpfHook-collect-survives-an-executor-kill", retries = true, applies = cluster) {
      // docs/spark.md's first pattern: the user's own barrier stage, collected with
      // LpfHook.collect (a shuffle after it), so Spark reruns it when an executor dies.
      // The kill lands while attempt 0's tasks are in the stage: they wait (bounded) for
      // the file the driver writes after the kill, so no load makes them finish first
      // (executors run on this host: local-cluster, or standalone here). (`run(direct =
      // true)`, the same stage collected directly, aborts: "Could not recover from a
      // failed barrier ResultStage"; not run here, to save the replacement executor's start.)
      def run(direct: Boolean): (Either[Throwable, Seq[Seq[Long]]], ConcurrentHashMap[String, String]) = {
        val job = LpfHook.prepare(sc, p, settings)
        val killed = new File(work, s"executor-killed-${job.id}")
        val killedPath = killed.getAbsolutePath
        val stage = sc.parallelize(0 until p, p).barrier().mapPartitions { it =>
          val me = it.next()
          val ctx = BarrierTaskContext.get()
          if (ctx.stageAttemptNumber() == 0 && ctx.attemptNumber() == 0) {
            val t0 = System.nanoTime // the executor of pid 1 is killed meanwhile
            while (!new File(killedPath).exists && !ctx.isInterrupted() && System.nanoTime - t0 < 120e9) Thread.sleep(50)
          }
          Iterator(unlongs(LpfHook.run(job, LpfProgram.bundled("allreduce-sum-i64"), longs(me + 1L, 1L))))
        }
        val what = new ConcurrentHashMap[String, String]()
        val killedAt = new java.util.concurrent.atomic.AtomicLong(0L)
        val listener = new SparkListener {
          override def onTaskStart(e: SparkListenerTaskStart): Unit =
            if (e.taskInfo.index == 1 && e.stageAttemptId == 0 && !what.containsKey("executor")) {
              what.put("executor", e.taskInfo.executorId)
              Future {
                try what.put("kill", killExecutor(e.taskInfo.executorId)) finally {
                  killedAt.set(System.nanoTime)
                  killed.createNewFile()
                }
              }
            }
          override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit =
            if (e.stageInfo.attemptNumber() > 0) what.put("rerun", s"stage ${e.stageInfo.stageId} attempt ${e.stageInfo.attemptNumber()}")
        }
        sc.addSparkListener(listener)
        val out = try Right((if (direct) stage.collect() else LpfHook.collect(job, stage)).toSeq) catch { case e: Throwable => Left(e) }
        finally {
          if (killedAt.get > 0) what.put("end", f"${(System.nanoTime - killedAt.get) / 1e9}%.1f s after the kill")
          org.apache.spark.lpfexamples.ListenerBus.drain(sc)
          sc.removeSparkListener(listener)
        }
        (out, what)
      }
      val (viaCollect, w2) = run(direct = false)
      println(s"RESULT info LpfHook.collect: ${w2.asScala.toSeq.sorted.mkString("; ")}")
      expect(w2.getOrDefault("kill", "").endsWith("exited 0"), s"LpfHook.collect: no executor was killed: $w2")
      expect(w2.containsKey("rerun"), s"LpfHook.collect: Spark did not rerun the stage: $w2")
      val sums = viaCollect.fold(e => throw new Failed(s"LpfHook.collect failed: ${messages(e)}"), identity)
      expect(sums == Seq.fill(p)(Seq((1L to p).sum, p.toLong)), s"sums $sums")
    }

    test("executor-killed-during-hook-reruns-the-stage", retries = true, applies = cluster) {
      // The kill lands in the iterations: it waits for the first progress line of the
      // hook (LpfProgress: process 0 reports each iteration to the driver), not for a
      // fixed delay that a loaded machine outruns; the run lasts about 15 s at the rate of
      // a 3000-iteration run, so the kill has seconds to land before it ends.
      // The calibration reports no progress: its 3000 lines, still being logged on a
      // loaded driver, would release the kill before the measured run starts.
      val progressLevel = LogManager.getLogger(LpfProgress.LoggerName).getLevel
      Configurator.setLevel(LpfProgress.LoggerName, Level.WARN)
      val rate = try LpfPageRank.run(sc.parallelize(edges12.toSeq, p), tol = 0.0, maxIter = 3000, settings = settings)
        finally Configurator.setLevel(LpfProgress.LoggerName, progressLevel)
      rate.unpersist()
      val iters = math.min(400000, math.max(3000, (15.0 / math.max(rate.secondsPerIteration, 1e-6)).toInt))
      val want = cliRanks(cli, file12, new File(work, "cli-ranks-kill.txt"), 0.0, iters)
      val killed = new ConcurrentHashMap[String, String]() // what happened, for the verdict
      val (iterating, stopWatching) = progressSeen()
      val listener = new SparkListener {
        @volatile var hookStage = -1
        override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit = {
          val s = e.stageInfo
          if (s.name.contains("LpfPageRank") && s.attemptNumber() == 0 && hookStage < 0) hookStage = s.stageId
          if (s.stageId == hookStage && s.attemptNumber() > 0) killed.put("rerun", s"attempt ${s.attemptNumber()}")
        }
        override def onTaskStart(e: SparkListenerTaskStart): Unit =
          if (e.stageId == hookStage && e.stageAttemptId == 0 && e.taskInfo.index == 1 && !killed.containsKey("executor")) {
            val exec = e.taskInfo.executorId
            killed.put("executor", exec)
            Future {
              if (iterating.await(120, java.util.concurrent.TimeUnit.SECONDS)) killed.put("kill", killExecutor(exec))
              else killed.put("kill", "no progress line within 120 s of the task's start: not killed")
            }
          }
        override def onTaskEnd(e: SparkListenerTaskEnd): Unit =
          if (e.stageId == hookStage && e.stageAttemptId == 0 && e.taskInfo.index == 1)
            killed.put("end", e.reason match { case TaskSuccess => "success"; case r => r.toString })
      }
      sc.addSparkListener(listener)
      val t0 = System.nanoTime
      val rdd = sc.parallelize(edges12.toSeq, p)
      val r = try LpfPageRank.run(rdd, tol = 0.0, maxIter = iters, settings = settings) finally {
        org.apache.spark.lpfexamples.ListenerBus.drain(sc)
        sc.removeSparkListener(listener)
        stopWatching()
      }
      val secs = (System.nanoTime - t0) / 1e9
      println(f"RESULT info $iters iterations; ${killed.asScala.toSeq.sorted.mkString("; ")}; job $secs%.1f s")
      expect(killed.containsKey("kill") && killed.get("kill").endsWith("exited 0"), s"no executor was killed: $killed")
      expect(killed.containsKey("end") && killed.get("end") != "success",
        s"the killed executor's task finished before the kill: $killed")
      expect(killed.containsKey("rerun"), s"Spark did not rerun the hook's stage: $killed")
      expect(r.iterations == iters, s"${r.iterations} iterations, want $iters")
      val d = compare(r.ranks.collect().toMap, want, "after the rerun", "the CLI", 1e-12)
      // After thousands of iterations the ranks are the fixed point: the test's own power
      // iteration, run until its L1 change is below 1e-15, has it too.
      val (reference, _) = referenceRanks(edges12.toSeq, 0.85, 1e-15, 10000)
      val d0 = compare(r.ranks.collect().toMap, reference, "after the rerun", "the test's power iteration", 1e-10)
      println(f"RESULT info after the rerun: largest difference from the CLI $d%.2e, from the test's power iteration $d0%.2e")
      r.unpersist()
    }

    // Last: it takes a worker away for good.
    // A standalone cluster (a worker to kill); the netns run cuts the link instead (host-lost-for-good).
    test("a-host-lost-for-good-cancels-the-rerun-after-slotWaitMs", retries = true,
      applies = sc.master.startsWith("spark://") && !sys.env.contains("LPF_SPARK_NETNS_CUT")) {
      hostLostForGood(sc, p, settings, cut = exec => killExecutor(exec, withWorker = true))
    }

    // The netns run (tests/spark/run.sh, standalone-netns): worker 2 sits in a network
    // namespace; the script cuts its link for good when the file LPF_SPARK_NETNS_CUT names appears.
    test("host-lost-for-good", retries = true, applies = sys.env.contains("LPF_SPARK_NETNS_CUT")) {
      val cutFile = sys.env("LPF_SPARK_NETNS_CUT")
      hostLostForGood(sc, p, settings, cut = { exec =>
        Files.write(new File(cutFile).toPath, exec.getBytes(StandardCharsets.UTF_8))
        val t0 = System.nanoTime
        while (!new File(cutFile + ".done").exists && System.nanoTime - t0 < 20e9) Thread.sleep(100)
        s"link of executor $exec cut (${new File(cutFile + ".done").exists})"
      })
    }

    println("RESULT done")
    sc.stop()
  }
}
