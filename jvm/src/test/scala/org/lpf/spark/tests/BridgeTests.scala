package org.lpf.spark.tests

import java.net.{InetAddress, ServerSocket}
import java.nio.{ByteBuffer, ByteOrder}

import scala.util.control.NonFatal

import org.apache.spark.{BarrierTaskContext, SparkConf, SparkContext, SparkEnv}
import org.lpf.spark._
import org.lpf.spark.tests.TestSupport._

/**
 * The Spark bridge's tests, run as a real Spark application through spark-submit by
 * tests/spark/run.sh:
 *
 *   spark-submit --master local[4] | local-cluster[2,1,1024] --class org.lpf.spark.tests.BridgeTests \
 *     --jars lpf-spark_<scala>-<version>.jar lpf-spark-tests_<scala>.jar <path of libspmd_test.so>
 *
 * Prints one line per case, `RESULT ok NAME` or `RESULT FAIL NAME: why`, then
 * `RESULT done`.
 */
object BridgeTests {
  private def longs(xs: Long*): Array[Byte] = {
    val b = ByteBuffer.allocate(8 * xs.length).order(ByteOrder.LITTLE_ENDIAN)
    xs.foreach(b.putLong)
    b.array()
  }

  private def unlongs(a: Array[Byte]): Seq[Long] = {
    val b = ByteBuffer.wrap(a).order(ByteOrder.LITTLE_ENDIAN)
    Seq.fill(a.length / 8)(b.getLong)
  }



  private def eq[T](got: T, want: T, what: String): Unit =
    expect(got == want, s"$what: got $got, want $want")


  /** Runs `body`, which must fail; returns the failure's text (the whole chain). */
  private def failure(body: => Any): String =
    try {
      body
      throw new Failed("expected a failure, but it succeeded")
    } catch {
      case f: Failed => throw f
      case NonFatal(e) => messages(e)
    }

  private def contains(text: String, parts: String*): Unit =
    parts.foreach(p => expect(text.contains(p), s"the error does not mention '$p': $text"))

  private var results = Vector.empty[String]


  private def test(name: String)(body: => Unit): Unit = runCase(name)(body).foreach(line => results :+= line)

  /** A 2-process TCP job through the rendezvous service, with its sums checked. */
  private def allreduce(sc: SparkContext, settings: LpfSettings): Unit = {
    val out = LpfHook.runStage(sc.parallelize(Seq(longs(1, 20), longs(300, 4000)), 2),
      LpfProgram.bundled("allreduce-sum-i64"), settings = settings)
    eq(out.map(unlongs).toSeq, Seq(Seq(301L, 4020L), Seq(301L, 4020L)), "allreduce sums")
  }

  private def rendezvousUnderAttack(sc: SparkContext, settings: LpfSettings): Unit = {
    val r = LpfRendezvous.target(sc).getOrElse(throw new Failed("the driver has no rendezvous service"))
    val flood = 300L << 20 // the driver's heap is 1 GiB: a service that reads it all into a line dies
    val cutOff = 64L << 20 // what a service that reads no further than the token lets through (socket buffers)

    test("rendezvous-listens-on-the-drivers-bind-address-only") {
      val conf = sc.getConf
      val want = InetAddress.getByName(conf.get("spark.driver.bindAddress", conf.get("spark.driver.host")))
      val bound = LpfRendezvous.current.map(_.boundAddress).orNull
      eq(bound, want, "the service's address")
      expect(!bound.isAnyLocalAddress, s"the service listens on every interface ($bound)")
      eq(InetAddress.getByName(r.host), InetAddress.getByName(conf.get("spark.driver.host")), "the address jobs are given")
    }

    test("rendezvous-flood-without-newline-is-cut-off-and-jobs-run") {
      for ((what, prefix) <- Seq("a line without the token" -> "", "a request line after the token" -> s"${r.token} put name ")) {
        val (took, closed) = Strangers.flood(r.host, r.port, flood, prefix)
        expect(closed && took < cutOff, s"the service took ${took >> 20} MiB of $what and " +
          (if (closed) "then closed the connection" else "did not close the connection"))
      }
      allreduce(sc, settings)
      eq(LpfRendezvous.target(sc), Some(r), "the service after the floods (the same one)")
    }

    test("rendezvous-slow-senders-do-not-delay-a-job") {
      // One byte every 0.5 s, without and with the token: neither line ever ends.
      val slow = Seq(new Strangers.SlowSender(r.host, r.port), new Strangers.SlowSender(r.host, r.port, s"${r.token} get "))
      try {
        val t0 = System.nanoTime
        allreduce(sc, settings)
        println(f"RESULT info rendezvous: a job with two slow senders took ${(System.nanoTime - t0) / 1e9}%.1f s; " +
          s"the senders were closed after ${slow.map(_.closedAfterMs.fold("(open)")(ms => s"$ms ms")).mkString(", ")}")
        // Not a speed bound: a deadline per connection, not per read, ends them.
        slow.foreach(s => expect(s.awaitClosed(30000L), "the service kept a slow sender's connection open for 30 s"))
      } finally slow.foreach(_.stop())
    }

    test("rendezvous-many-idle-connections-do-not-stop-a-job") {
      val idle = Strangers.idle(r.host, r.port, 300)
      try allreduce(sc, settings) finally Strangers.closeAll(idle)
    }

    test("rendezvous-garbage-and-wrong-tokens-are-closed-unanswered") {
      val wrong = r.token.map(c => if (c == 'a') 'b' else 'a')
      for (line <- Seq("garbage\n", "\n", "get x\n", s"$wrong get x\n", s"${r.token.take(31)} get x\n",
        s"${r.token}get x\n", s"${r.token} frobnicate x\n", s"${r.token} put only-a-name\n", s"${r.token} get\n"))
        eq(Strangers.exchange(r.host, r.port, line), Some(""), s"the answer to '${line.trim}'")
      eq(Strangers.exchange(r.host, r.port, s"${r.token} get nothing-here\n"), Some("\n"), "the answer to a real get")
      // A long reason is cut to fit a request, not refused.
      LpfRendezvous.put(r, "long-reason", "!" + "\u00e9" * 2000)
      val got = LpfRendezvous.await(r, "long-reason", 1000L).getOrElse("")
      expect(got.startsWith("!\u00e9\u00e9") && got.getBytes("UTF-8").length < LpfRendezvous.MaxRequestBytes,
        s"the long reason came back as ${got.length} characters")
      allreduce(sc, settings)
    }

    test("rendezvous-a-stopped-service-is-replaced") {
      val stopped = LpfRendezvous.current.getOrElse(throw new Failed("no service"))
      stopped.close()
      expect(!stopped.alive, "the service still serves after close")
      val next = LpfRendezvous.target(sc).getOrElse(throw new Failed("no service after the first stopped"))
      expect(next.token != r.token && LpfRendezvous.current.exists(_.alive), s"target gave $next after the service stopped")
      allreduce(sc, settings)
    }
  }

  def main(args: Array[String]): Unit = {
    val clib = args(0)
    val sc = new SparkContext(new SparkConf().setAppName("lpf-bridge-tests"))
    sc.setLogLevel("ERROR")
    awaitExecutors(sc)
    val cluster = !(sc.master == "local" || sc.master.startsWith("local[")) // local-cluster or a real cluster
    val version = LpfNative.version()
    println(s"RESULT info master=${sc.master} native=$version loaded-from=${NativeLoader.loadedFrom()}")
    val settings = LpfSettings(bootstrapTimeoutMs = 20000L, slotWaitMs = 60000L)

    test("native-library-from-jar") {
      val from = NativeLoader.loadedFrom()
      expect(from != null && from.contains("liblpf_jni-") && from.endsWith(".so"),
        s"the driver's library should be extracted from the jar, was loaded from $from")
      expect(LpfNative.algorithms().split(",").contains("allreduce-sum-i64"), "allreduce-sum-i64 is not bundled")
      expect(version.contains("engines=shm,tcp"), s"the native library lacks an engine: $version")
      val rows = sc.parallelize(0 until 2, 2).barrier().mapPartitions { _ =>
        LpfNative.ensureLoaded()
        Iterator((SparkEnv.get.executorId, NativeLoader.loadedFrom(), System.getProperty("user.dir"), LpfNative.version()))
      }.collect()
      rows.foreach { case (e, from, dir, v) =>
        expect(v == version, s"executor $e has native $v, driver $version")
        if (cluster) expect(from.startsWith(dir + "/liblpf_jni-"), s"executor $e loaded $from, not from its work dir $dir")
      }
      if (cluster) eq(rows.map(_._1).distinct.length, 2, "distinct executors")
    }

    test("allreduce-runStage") {
      val rdd = sc.parallelize(Seq(longs(1, 10, -5, Long.MaxValue), longs(2, 20, -5, 1)), 2)
      val out = LpfHook.runStage(rdd, LpfProgram.bundled("allreduce-sum-i64"), settings = settings)
      eq(out.length, 2, "outputs")
      out.foreach(o => eq(unlongs(o), Seq(3L, 30L, -10L, Long.MinValue), "sums"))
    }

    test("ring-shift-user-barrier-stage") {
      val p = 2
      val job = LpfHook.prepare(sc, p, settings)
      val out = sc.parallelize(0 until p, p).barrier().mapPartitions { it =>
        val me = it.next()
        val res = LpfHook.withGroup(job) { g =>
          (g.engine(), g.hook(LpfProgram.bundled("ring-shift"), Array.fill(5)((me + 1).toByte), 5))
        }
        Iterator((me, res._1, res._2.toSeq))
      }.collect().sortBy(_._1)
      out.foreach { case (pid, engine, got) =>
        eq(got, Seq.fill(5)(((pid + p - 1) % p + 1).toByte), s"pid $pid's bytes")
        eq(engine, if (cluster) "tcp" else "shm", "engine")
      }
    }

    test("direct-buffers") {
      val job = LpfHook.prepare(sc, 2, settings)
      val out = sc.parallelize(0 until 2, 2).barrier().mapPartitions { it =>
        val me = it.next()
        val in = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN)
        in.position(8) // the part to send: from the position to the limit
        in.putLong(me + 100L).putLong(7L)
        in.flip(); in.position(8)
        val outBuf = ByteBuffer.allocateDirect(16).order(ByteOrder.LITTLE_ENDIAN)
        LpfHook.withGroup(job)(_.hook(LpfProgram.bundled("allreduce-sum-i64"), in, outBuf))
        Iterator((outBuf.getLong(0), outBuf.getLong(8)))
      }.collect()
      out.foreach(o => eq(o, (201L, 14L), "direct sums"))
    }

    test("concurrent-jobs-keep-their-data-apart") {
      // Rounds of jobs submitted at once from several driver threads, each round filling
      // the task slots: sizes 1+2+3 (with 6 slots: tests/spark/run.sh runs this case under
      // local[6] too), 2+2 (same size), 1+1+2 and 1+3. In local mode every process is a
      // thread of one JVM (shared-memory groups), so the jobs' groups form in the same JVM
      // at the same time. Every job's sums must be its own, and no job may fail.
      val slots = org.apache.spark.lpf.LpfSparkAccess.maxConcurrentTasks(sc)
      val rounds = Seq(Seq(1, 2, 3), Seq(2, 2), Seq(1, 1, 2), Seq(1, 3), Seq(3, 2, 1), Seq(2, 2), Seq(1, 1, 2), Seq(1, 1))
        .filter(_.sum <= slots)
      expect(rounds.nonEmpty, s"$slots task slots: too few for any round")
      val pool = java.util.concurrent.Executors.newFixedThreadPool(6)
      try {
        for ((sizes, round) <- rounds.zipWithIndex) {
          val futures = sizes.zipWithIndex.map { case (p, j) =>
            pool.submit(new java.util.concurrent.Callable[(Int, Int, Seq[Seq[Long]])] {
              def call(): (Int, Int, Seq[Seq[Long]]) = {
                val tag = 1000L * (round * 10 + j + 1)
                val rdd = sc.parallelize((0 until p).map(i => longs(tag + i, p.toLong, 1L)), p)
                (j, p, LpfHook.runStage(rdd, LpfProgram.bundled("allreduce-sum-i64"), settings = settings).map(unlongs).toSeq)
              }
            })
          }
          futures.map(_.get(120, java.util.concurrent.TimeUnit.SECONDS)).foreach { case (j, p, outs) =>
            val tag = 1000L * (round * 10 + j + 1)
            eq(outs.length, p, s"round $round (sizes ${sizes.mkString("+")}) job $j outputs")
            outs.foreach(o => eq(o, Seq(p * tag + (0 until p).sum, p.toLong * p, p.toLong),
              s"round $round (sizes ${sizes.mkString("+")}) job $j (p = $p) sums"))
          }
        }
      } finally pool.shutdownNow()
    }

    test("c-library-spmd") {
      val rdd = sc.parallelize(Seq(longs(1, 2, 3), longs(10, 20)), 2)
      val out = LpfHook.runStage(rdd, LpfProgram.library(clib, "spmd_sum"), Some((_: Long) => 24L), settings)
      out.zipWithIndex.foreach { case (o, pid) => eq(unlongs(o), Seq(2L, pid.toLong, 36L), s"pid $pid's output") }
    }

    test("c-library-fatal-error-becomes-LpfException") {
      val rdd = sc.parallelize(Seq(longs(1), longs(2)), 2)
      val e = failure(LpfHook.runStage(rdd, LpfProgram.library(clib, "spmd_bad_put"), Some((_: Long) => 8L), settings))
      contains(e, "org.lpf.spark.LpfException", "failed in phase hook", "spmd_bad_put")
      // runStage throws the failing process's typed exception on the driver (not Spark's
      // SparkException with the text inside).
      try { LpfHook.runStage(rdd, LpfProgram.library(clib, "spmd_bad_put"), Some((_: Long) => 8L), settings); expect(false, "succeeded") }
      catch {
        case l: LpfException =>
          expect(l.pid() >= 0 && l.pid() < 2 && l.phase() == "hook" && l.detail().contains("spmd_bad_put"), s"typed: ${l.getMessage}")
        case f: Failed => throw f
        case other: Throwable => throw new Failed(s"the driver got ${other.getClass.getName}, not an LpfException: ${messages(other)}")
      }
    }

    test("missing-symbol-fails-in-load-phase") {
      val rdd = sc.parallelize(Seq(longs(1), longs(2)), 2)
      val e = failure(LpfHook.runStage(rdd, LpfProgram.library(clib, "no_such_spmd"), Some((_: Long) => 8L),
        settings.copy(engine = if (cluster) "auto" else "shm")))
      contains(e, "LpfException", "failed in phase load", "no_such_spmd")
    }

    test("unequal-inputs-fail-on-every-process") {
      val rdd = sc.parallelize(Seq(longs(1, 2), longs(1)), 2)
      val e = failure(LpfHook.runStage(rdd, LpfProgram.bundled("allreduce-sum-i64"), settings = settings))
      contains(e, "LpfException", "failed in phase hook", "same length")
    }

    test("outside-barrier-mode-is-refused") {
      val job = LpfHook.prepare(sc, 2, settings)
      val e = failure(sc.parallelize(0 until 2, 2).mapPartitions { _ =>
        Iterator(LpfHook.run(job, LpfProgram.bundled("allreduce-sum-i64"), longs(1)))
      }.collect())
      contains(e, "LpfException", "failed in phase check", "rdd.barrier()")
    }

    test("driver-checks-say-what-to-change") {
      val slots = org.apache.spark.lpf.LpfSparkAccess.maxConcurrentTasks(sc)
      val e1 = failure(LpfHook.check(sc, slots + 1, settings.copy(slotWaitMs = 1000L)))
      contains(e1, "LpfException", "failed in phase check", s"${slots + 1} partitions", s"at most $slots partitions")
      val base = sc.getConf
      contains(failure(LpfHook.checkConf(base.clone().set("spark.dynamicAllocation.enabled", "true"), sc.master, 2)),
        "spark.dynamicAllocation.enabled=false")
      contains(failure(LpfHook.checkConf(base.clone().remove("spark.barrier.sync.timeout"), sc.master, 2)),
        "spark.barrier.sync.timeout=")
      contains(failure(LpfHook.checkConf(base, "local", 2)), "--master local runs one task at a time")
      contains(failure(LpfHook.checkConf(base, "local-cluster[2,1,1024]", 3)), "gives 2 task slots")
      LpfHook.checkConf(base, "local[4]", 4) // enough: no exception
    }

    test("paper-way-without-barrier-mode") {
      val port = { val s = new ServerSocket(0); try s.getLocalPort finally s.close() }
      val out = LpfHook.runWithoutBarrier(sc, LpfProgram.bundled("allreduce-sum-i64"), pid => longs(7, pid.toLong),
        settings = settings.copy(port = port))
      val p = if (cluster) 2 else 1 // local mode: one executor (the driver)
      eq(out.length, p, "processes (one per executor)")
      out.foreach(o => eq(unlongs(o), Seq(7L * p, (0 until p).sum.toLong), "sums"))
    }

    test("bootstrap-that-cannot-complete-times-out") {
      // A peer whose master accepts TCP connections but never answers, and a master
      // whose peer never comes: both must fail within the timeout, naming host and phase.
      val timeoutMs = 3000L
      val rows = sc.parallelize(0 until 1, 1).map { _ =>
        val host = InetAddress.getLoopbackAddress.getHostAddress
        val silent = new ServerSocket(0, 16, InetAddress.getLoopbackAddress)
        def attempt(pid: Int, port: Int): (Int, String, Double) = {
          val t0 = System.nanoTime
          val msg = try {
            val g = LpfGroup.tcp(host, port, pid, 2, timeoutMs, "timeout-test secret (16+ bytes)", 0, "timeout-test", s"executor-host-$pid")
            try { g.join(); "joined?!" } finally g.close()
          } catch { case e: LpfException => s"${e.pid}|${e.host}|${e.phase}|${e.getMessage}" }
          (pid, msg, (System.nanoTime - t0) / 1e9)
        }
        try Seq(attempt(1, silent.getLocalPort), attempt(0, 0)) finally silent.close()
      }.collect().head
      for ((pid, msg, secs) <- rows) {
        val parts = msg.split("\\|", 4)
        expect(parts.length == 4, s"pid $pid did not fail with an LpfException: $msg")
        eq(parts(0), pid.toString, "pid in the exception")
        eq(parts(1), s"executor-host-$pid", "host in the exception")
        eq(parts(2), "bootstrap", "phase")
        expect(secs >= timeoutMs / 1000.0 * 0.8 && secs <= timeoutMs / 1000.0 + 10,
          f"pid $pid failed after $secs%.1f s, want about ${timeoutMs / 1000.0}%.0f s")
      }
    }

    test("a-task-that-dies-fails-the-stage-without-hang") {
      val job = LpfHook.prepare(sc, 2, settings.copy(bootstrapTimeoutMs = 8000L))
      val t0 = System.nanoTime
      val e = failure(sc.parallelize(0 until 2, 2).barrier().mapPartitions { it =>
        val me = it.next()
        if (me == 1) throw new IllegalStateException("task 1 dies before joining")
        Iterator(LpfHook.run(job, LpfProgram.bundled("allreduce-sum-i64"), longs(1)))
      }.collect())
      val secs = (System.nanoTime - t0) / 1e9
      contains(e, "task 1 dies before joining")
      expect(secs < 60, f"the job took $secs%.0f s to fail")
    }

    test("the-secret-and-tokens-are-in-no-printable-form") {
      // Issue #24 item 7: what a shell echo, a notebook cell, a log line or an error
      // message shows of a job must not give its secret or the driver's tokens.
      val job = LpfHook.prepare(sc, 2, settings)
      val progress = LpfProgressTarget("driver-host", 1234, "0123456789abcdef0123456789abcdef")
      val hidden = Seq(job.secret, progress.token) ++ job.rendezvous.map(_.token)
      expect(job.secret.length >= 32, s"a secret of ${job.secret.length} characters")
      val printed = Seq(job.toString, String.valueOf(job), s"$job", Seq(job).toString, Some(job).toString,
        job.rendezvous.toString, progress.toString, scala.runtime.ScalaRunTime.replStringOf(job, 1000))
      // Spark's "Task not serializable" lists the objects on the way to the culprit, each
      // with its toString: here the pair holding the job.
      val pair = (job, new Object)
      val error = failure(sc.parallelize(0 until 2, 2).map(i => i + pair._1.nprocs + pair._2.hashCode).collect())
      contains(error, "not serializable", "LpfJob(", "redacted")
      for ((text, what) <- printed.map(_ -> "printed") :+ (error -> "Spark's error"); h <- hidden)
        expect(!text.contains(h), s"$what form shows a secret or token: $text")
      expect(job.toString.contains(job.id) && job.toString.contains("secret <redacted>"), s"the job prints as $job")
    }

    // The driver's rendezvous service against a stranger who reaches its port (loopback):
    // on local-cluster, where every 2-process job forms its TCP group through it (the
    // service is the same on every master).
    if (sc.master.startsWith("local-cluster")) rendezvousUnderAttack(sc, settings)

    println("RESULT done")
    sc.stop()
  }
}
