package org.lpf.spark

import java.net.InetAddress
import java.security.SecureRandom

import scala.reflect.ClassTag
import scala.util.control.NonFatal

import org.apache.spark.{BarrierTaskContext, HashPartitioner, SparkContext, SparkEnv, TaskContext}
import org.apache.spark.lpf.LpfSparkAccess
import org.apache.spark.rdd.RDD
import org.slf4j.LoggerFactory

/**
 * Knobs of an LPF job, chosen on the driver.
 *
 * @param bootstrapTimeoutMs how long a process waits for the group to form before it fails
 *                           with an [[LpfException]] in phase `bootstrap`
 * @param engine             `auto` (threads when every task runs in one executor JVM, else TCP),
 *                           `shm` or `tcp`
 * @param port               port of pid 0 for TCP; 0 = the OS chooses (barrier mode publishes
 *                           it); the barrier-less mode needs a fixed one
 * @param threads            LPF threads per process for TCP (0 = one; negative is refused)
 * @param slotWaitMs         how long the driver waits for enough task slots: before the job
 *                           (executors registering), and while it runs when a rerun of its
 *                           barrier stage waits for slots that lost executors held (then the
 *                           job is cancelled with an [[LpfException]] in phase `slots`)
 * @param residentBytes      native bytes the resident graphs ([[LpfGraph.cache]]) may hold per
 *                           executor; 0 = the executor's `spark.executor.memoryOverhead`
 */
case class LpfSettings(
    bootstrapTimeoutMs: Long = 120000L,
    engine: String = "auto",
    port: Int = 0,
    threads: Int = 0,
    slotWaitMs: Long = 30000L,
    residentBytes: Long = 0L) {
  require(Set("auto", "shm", "tcp").contains(engine), s"engine must be auto, shm or tcp, not $engine")
  require(bootstrapTimeoutMs > 0, "bootstrapTimeoutMs must be positive")
  require(slotWaitMs >= 0, "slotWaitMs must be >= 0")
  require(threads >= 0, s"LpfSettings.threads must be >= 0 (0: one), got $threads")
  require(residentBytes >= 0, s"LpfSettings.residentBytes must be >= 0 (0: spark.executor.memoryOverhead), got $residentBytes")

  /** The settings as they were before `residentBytes` (Java and Python callers of that constructor). */
  def this(bootstrapTimeoutMs: Long, engine: String, port: Int, threads: Int, slotWaitMs: Long) =
    this(bootstrapTimeoutMs, engine, port, threads, slotWaitMs, 0L)
}

/**
 * One LPF job as the driver prepared it: its settings, its number of processes, a fresh
 * random secret every member presents when it joins, and a random id (not derived from
 * the secret) that names its groups: shared-memory groups are keyed by it (with the
 * stage and attempt), so any number of jobs can run at once in one executor JVM, and
 * TCP groups carry it in their job name. Serializable: capture it in the closure of
 * `rdd.barrier().mapPartitions`. Its `toString` (what a shell, a notebook, a log line or
 * Spark's serialization errors show) leaves the secret and the rendezvous token out.
 */
case class LpfJob(settings: LpfSettings, nprocs: Int, secret: String, id: String = LpfHook.newId(),
                  rendezvous: Option[LpfRendezvousTarget] = None) {
  override def toString: String = s"LpfJob($settings, $nprocs, secret <redacted>, $id, $rendezvous)"
}

/**
 * The bridge between Spark tasks and LPF.
 *
 * Task side (inside the user's own `rdd.barrier().mapPartitions { ... }`):
 * {{{
 *   val job = LpfHook.prepare(sc, rdd.getNumPartitions)        // driver: checks, secret, id
 *   val outs = LpfHook.collect(job, rdd.barrier().mapPartitions { it =>
 *     val out = LpfHook.run(job, LpfProgram.bundled("allreduce-sum-i64"), bytesOf(it))
 *     Iterator(out)
 *   })  // not .collect(): Spark cannot rerun a barrier stage whose result goes to the driver
 * }}}
 * pid = the partition index, p = the number of partitions; pid 0 listens on its
 * executor's address on a port the OS chooses and publishes the port to the others
 * through the driver's rendezvous service ([[LpfRendezvous]]; with
 * `BarrierTaskContext.allGather` when the driver has none). When every task runs in the
 * same executor JVM (the task infos' executor addresses say) the group is formed from
 * threads (shared-memory engine) instead.
 *
 * Driver side: [[LpfHook.runStage]] runs the whole barrier stage for an RDD of byte
 * arrays; [[LpfHook.runWithoutBarrier]] does it the LPF paper's way (one process per
 * executor, no barrier mode).
 */
object LpfHook {
  private val log = LoggerFactory.getLogger(getClass)
  private val Driver = "driver" // SparkContext.DRIVER_IDENTIFIER (private[spark])

  /** `spark.lpf.allowDefaultBarrierTimeout=true` lets jobs run with Spark's 365-day barrier timeout. */
  val AllowDefaultBarrierTimeout = "spark.lpf.allowDefaultBarrierTimeout"

  /** A driver-side check failed: host `driver`, as every driver-side check names it. */
  private def fail(phase: String, message: String): Nothing =
    throw new LpfException(-1, LpfException.DRIVER, phase, message)

  private def localHost: String =
    try InetAddress.getLocalHost.getHostName catch { case _: Exception => "unknown-host" }

  private def randomHex(bytes: Int): String = {
    val b = new Array[Byte](bytes)
    new SecureRandom().nextBytes(b)
    b.map(x => f"${x & 0xff}%02x").mkString
  }

  private def newSecret(): String = randomHex(24)

  /** A fresh job id (random, independent of the secret). */
  private[spark] def newId(): String = randomHex(8)

  /** Task slots of the master URL's local modes, if it is one. */
  private[spark] def localSlots(master: String): Option[Int] = {
    val cores = Runtime.getRuntime.availableProcessors
    val LocalN = """local\[(\d+|\*)(?:,\s*\d+)?\]""".r
    val Cluster = """local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*\d+\s*\]""".r
    master match {
      case "local" => Some(1)
      case LocalN(n) => Some(if (n == "*") cores else n.toInt)
      case Cluster(e, c) => Some(e.toInt * c.toInt)
      case _ => None
    }
  }

  /**
   * Driver-side checks before an LPF job of `nprocs` processes, with messages that say
   * what to change. Throws [[LpfException]] (phase `check`).
   */
  def check(sc: SparkContext, nprocs: Int, settings: LpfSettings = LpfSettings()): Unit = {
    checkConf(sc.getConf, sc.master, nprocs)
    waitForSlots(sc, nprocs, settings)
  }

  /**
   * The checks that need only the configuration and the master URL: dynamic allocation,
   * the barrier timeout, the task slots of the local modes. Throws [[LpfException]]
   * (phase `check`) saying what to change.
   */
  def checkConf(conf: org.apache.spark.SparkConf, master: String, nprocs: Int): Unit = {
    if (nprocs < 1) fail("check", s"an LPF job needs at least one partition, got $nprocs")
    if (conf.getBoolean("spark.dynamicAllocation.enabled", defaultValue = false))
      fail("check", "dynamic allocation is on (spark.dynamicAllocation.enabled=true), and Spark's barrier mode " +
        "refuses it: run the LPF job with --conf spark.dynamicAllocation.enabled=false and a fixed " +
        "spark.executor.instances")
    if (!conf.contains("spark.barrier.sync.timeout") && !conf.getBoolean(AllowDefaultBarrierTimeout, defaultValue = false))
      fail("check", "spark.barrier.sync.timeout is not set, so a lost task would leave the others waiting in " +
        "allGather for Spark's default of 365 days: start Spark with --conf spark.barrier.sync.timeout=300s " +
        s"(or any bound), or set $AllowDefaultBarrierTimeout=true to accept the default")
    val taskCpus = conf.getInt("spark.task.cpus", 1)
    localSlots(master) match {
      case Some(slots) if slots / taskCpus < nprocs =>
        val hint = if (master == "local") "--master local runs one task at a time; use --master local[N]"
          else s"use --master local[N] (or local-cluster) with N*cores >= $nprocs"
        fail("check", s"the master $master gives ${slots / taskCpus} task slots (spark.task.cpus=$taskCpus), " +
          s"but the LPF job has $nprocs partitions and every one must run at once: $hint, or use at most " +
          s"${slots / taskCpus} partitions")
      case _ =>
    }
  }

  /**
   * The cluster's task slots once it has `want` of them, or what it has after waiting
   * `waitMs` (executors register over time).
   */
  private[spark] def awaitSlots(sc: SparkContext, want: Int, waitMs: Long): Int = {
    val deadline = System.currentTimeMillis + waitMs
    var slots = LpfSparkAccess.maxConcurrentTasks(sc)
    while (slots < want && System.currentTimeMillis < deadline) {
      Thread.sleep(200)
      slots = LpfSparkAccess.maxConcurrentTasks(sc)
    }
    slots
  }

  /**
   * Task slots the cluster is configured to have, when the configuration says
   * (local modes; spark.executor.instances x spark.executor.cores; spark.cores.max),
   * divided by spark.task.cpus.
   */
  private[spark] def configuredSlots(sc: SparkContext): Option[Int] = {
    val conf = sc.getConf
    val taskCpus = math.max(conf.getInt("spark.task.cpus", 1), 1)
    localSlots(sc.master).orElse {
      val instances = conf.getOption("spark.executor.instances").map(_.toInt)
      val cores = conf.getOption("spark.executor.cores").map(_.toInt)
      (instances, cores) match {
        case (Some(i), Some(c)) => Some(i * c)
        case _ => conf.getOption("spark.cores.max").map(_.toInt)
      }
    }.map(_ / taskCpus)
  }

  private def waitForSlots(sc: SparkContext, nprocs: Int, settings: LpfSettings): Unit = {
    // Executors register over time: wait a while for enough slots.
    val slots = awaitSlots(sc, nprocs, settings.slotWaitMs)
    if (slots < nprocs)
      fail("check", s"the cluster has $slots free task slots (after waiting ${settings.slotWaitMs} ms for " +
        s"executors) but the LPF job has $nprocs partitions, and barrier mode runs all of them at once: " +
        s"use at most $slots partitions (rdd.repartition), or add executors or cores " +
        "(spark.executor.instances, spark.executor.cores), or lower spark.task.cpus")
    if (sc.master.startsWith("local[") || sc.master == "local")
      log.info("LPF: {} runs every task in one JVM; the {} LPF processes will be threads (shared-memory engine)",
        sc.master, nprocs)
  }

  /**
   * Driver: checks, then a job description with a fresh secret for `nprocs` processes and
   * the driver's rendezvous service (see [[LpfRendezvous]]).
   */
  def prepare(sc: SparkContext, nprocs: Int, settings: LpfSettings = LpfSettings()): LpfJob = {
    check(sc, nprocs, settings)
    LpfJob(settings, nprocs, newSecret(), rendezvous = LpfRendezvous.target(sc))
  }

  /** The host of a barrier task's address (`host:port` on clusters, `host` in local mode). */
  private[spark] def hostOf(address: String): String = {
    val i = address.lastIndexOf(':')
    val hostPart = if (i > 0 && i < address.length - 1 && address.substring(i + 1).forall(_.isDigit) &&
      (address.indexOf(':') == i || address.startsWith("["))) address.substring(0, i) else address
    hostPart.stripPrefix("[").stripSuffix("]")
  }

  /**
   * Task side: joins this task's LPF group (pid = partition index, p = number of
   * partitions), runs `body` with it, and leaves. Must run inside
   * `rdd.barrier().mapPartitions`.
   */
  def withGroup[T](job: LpfJob)(body: LpfGroup => T): T = {
    val ctx = TaskContext.get() match {
      case b: BarrierTaskContext => b
      // Not a driver-side check: the host is this JVM's.
      case null => throw new LpfException(-1, localHost, "check",
        "LpfHook.run was called outside any Spark task; call it inside rdd.barrier().mapPartitions")
      case _ => throw new LpfException(-1, localHost, "check", "LpfHook.run needs a barrier stage (so that every " +
        "process runs at once): use rdd.barrier().mapPartitions { ... }, or LpfHook.runWithoutBarrier")
    }
    val infos = ctx.getTaskInfos()
    val (pid, p) = (ctx.partitionId(), infos.length)
    val host = hostOf(infos(pid).address)
    if (p != job.nprocs)
      throw new LpfException(pid, host, "check", s"the job was prepared for ${job.nprocs} processes, but the barrier " +
        s"stage has $p partitions: call LpfHook.prepare(sc, rdd.getNumPartitions) on the RDD you run")
    LpfNative.ensureLoaded()
    // The group's name: this job (its random id), this stage and attempt. Tasks of an
    // earlier attempt of this stage are refused by this one's (TCP), and shared-memory
    // groups of different jobs never mix, whatever their sizes.
    val jobName = s"spark-job-${job.id}-stage-${ctx.stageId()}-attempt-${ctx.stageAttemptNumber()}"
    // Spark's kill of this task cancels its native join and hooks (LpfTaskKill).
    LpfTaskKill.watching(ctx) { cancel =>
      val group = job.rendezvous match {
        case Some(r) => groupByRendezvous(job, r, ctx, pid, p, host, jobName, cancel)
        case None => groupByAllGather(job, ctx, pid, p, host, jobName, cancel)
      }
      try body(group) finally group.close()
    }
  }

  /** The engine for a group whose tasks run in one executor JVM (`sameJvm`) or not (`executors` says which). */
  private def engineFor(job: LpfJob, sameJvm: Boolean, pid: Int, host: String, executors: => String): String =
    job.settings.engine match {
      case "auto" => if (sameJvm) "shm" else "tcp"
      case "shm" if !sameJvm =>
        throw new LpfException(pid, host, "check", "engine=shm needs every task in one executor JVM, but they run " +
          s"on executors $executors: use engine=auto or tcp")
      case e => e
    }

  /**
   * The group without a barrier round: where each task runs is in the task infos (an
   * executor's address, `host:port`, is its JVM's), and pid 0's port goes through the
   * driver's rendezvous service (see [[LpfRendezvous]] for why).
   */
  private def groupByRendezvous(job: LpfJob, r: LpfRendezvousTarget, ctx: BarrierTaskContext, pid: Int, p: Int,
                                host: String, jobName: String, cancel: LpfCancel): LpfGroup = {
    val addresses = ctx.getTaskInfos().map(_.address)
    val engine = engineFor(job, addresses.distinct.length == 1, pid, host, addresses.distinct.mkString(", "))
    log.info("LPF pid {}/{} on {}: engine {}", Integer.valueOf(pid), Integer.valueOf(p), addresses(pid), engine)
    val timeout = job.settings.bootstrapTimeoutMs
    val service = s"the driver's rendezvous service at ${r.host}:${r.port}"
    engine match {
      case "shm" => LpfGroup.shm(jobName, pid, p, timeout, host, cancel)
      case _ if pid == 0 =>
        val g = LpfGroup.tcp(host, job.settings.port, 0, p, timeout, job.secret, job.settings.threads, jobName, host,
          cancel)
        try {
          val port = try g.boundPort() catch {
            case NonFatal(e) =>
              try LpfRendezvous.put(r, jobName, "!" + String.valueOf(e.getMessage)) catch { case NonFatal(_) => }
              throw e
          }
          try LpfRendezvous.put(r, jobName, port.toString) catch {
            case NonFatal(e) => throw new LpfException(pid, host, "bootstrap",
              s"pid 0 could not publish its port $port to $service: $e (executors must reach the driver's address)")
          }
          g.join()
        } catch { case e: Throwable => g.close(); throw e }
      case _ =>
        val where = try LpfRendezvous.await(r, jobName, timeout) catch {
          case e: java.io.IOException => throw new LpfException(pid, host, "bootstrap",
            s"could not ask $service for pid 0's port: $e (executors must reach the driver's address)")
        }
        where match {
          case None => throw new LpfException(pid, host, "bootstrap",
            s"pid 0 published no port at $service within the bootstrap timeout of $timeout ms")
          case Some(w) if w.startsWith("!") =>
            throw new LpfException(pid, host, "bootstrap", s"pid 0 could not start the group: ${w.substring(1)}")
          case Some(w) if !w.forall(_.isDigit) =>
            throw new LpfException(pid, host, "bootstrap", s"pid 0 published no port (got '$w')")
          case Some(w) =>
            val g = LpfGroup.tcp(hostOf(addresses(0)), w.toInt, pid, p, timeout, job.secret, job.settings.threads,
              jobName, host, cancel)
            try g.join() catch { case e: Throwable => g.close(); throw e }
        }
    }
  }

  /** The group with one allGather round (used when the driver has no rendezvous service). */
  private def groupByAllGather(job: LpfJob, ctx: BarrierTaskContext, pid: Int, p: Int, host: String,
                               jobName: String, cancel: LpfCancel): LpfGroup = {
    val executor = SparkEnv.get.executorId
    // One allGather round (each costs about a second: Spark's BarrierTaskContext polls
    // its barrier once a second): who runs where (executor ids, not hosts: two executors
    // may share a host), and where pid 0 listens. pid 0 binds its port (the OS chooses)
    // before the round, in case the group turns out to need TCP; the field is the port,
    // "" (not listening) or "!reason" (binding failed).
    val early: Option[Either[Throwable, LpfGroup]] =
      if (pid == 0 && job.settings.engine != "shm") Some(
        try {
          val g = LpfGroup.tcp(host, job.settings.port, 0, p, job.settings.bootstrapTimeoutMs, job.secret,
            job.settings.threads, jobName, host, cancel)
          try { g.boundPort(); Right(g) } catch { case NonFatal(e) => g.close(); Left(e) }
        } catch { case NonFatal(e) => Left(e) })
      else None
    val listen = early match {
      case Some(Right(g)) => g.boundPort().toString
      case Some(Left(e)) => "!" + String.valueOf(e.getMessage).replace('\t', ' ')
      case None => ""
    }
    val members = try ctx.allGather(s"$executor\t$host\t$listen").map(_.split("\t", 3)) catch {
      case e: Throwable => early.foreach(_.foreach(_.close())); throw e
    }
    val engine = engineFor(job, members.forall(_(0) == executor), pid, host, members.map(_(0)).distinct.mkString(", "))
    log.info("LPF pid {}/{} on executor {} ({}): engine {}", Integer.valueOf(pid), Integer.valueOf(p), executor, host, engine)
    engine match {
      case "shm" =>
        early.foreach(_.foreach(_.close())) // threads: pid 0's listener is not needed
        LpfGroup.shm(jobName, pid, p, job.settings.bootstrapTimeoutMs, host, cancel)
      case _ if pid == 0 => early match {
        case Some(Right(g)) => try g.join() catch { case e: Throwable => g.close(); throw e }
        case Some(Left(e)) => throw e
        case None => throw new LpfException(pid, host, "bootstrap", "pid 0 did not prepare a TCP group")
      }
      case _ =>
        val (masterHost, where) = (members(0)(1), members(0)(2))
        if (where.startsWith("!"))
          throw new LpfException(pid, host, "bootstrap", s"pid 0 could not start the group: ${where.substring(1)}")
        if (where.isEmpty || !where.forall(_.isDigit))
          throw new LpfException(pid, host, "bootstrap", s"pid 0 published no port (got '$where')")
        val g = LpfGroup.tcp(masterHost, where.toInt, pid, p, job.settings.bootstrapTimeoutMs, job.secret,
          job.settings.threads, jobName, host, cancel)
        try g.join() catch { case e: Throwable => g.close(); throw e }
    }
  }

  /**
   * Task side: runs `program` as this task's LPF process on `input` and returns its
   * output (`outputLength` bytes; -1 = what the bundled algorithm writes or produces).
   */
  def run(job: LpfJob, program: LpfProgram, input: Array[Byte], outputLength: Int = -1): Array[Byte] = {
    LpfNative.ensureLoaded()
    val outLen = if (outputLength >= 0) outputLength else {
      val n = program.outputLength(input.length.toLong)
      // -1 for a bundled algorithm: it produces its output (size known after the run).
      if (n < 0 && program.algorithm == null) throw new IllegalArgumentException(s"give the output length for $program")
      n.toInt
    }
    withGroup(job)(_.hook(program, input, outLen))
  }

  private def concat(it: Iterator[Array[Byte]]): Array[Byte] = {
    val b = new java.io.ByteArrayOutputStream()
    it.foreach(a => b.write(a))
    b.toByteArray
  }

  /**
   * Driver: runs `program` over `rdd` as one barrier stage, one LPF process per
   * partition (its input is the concatenation of its arrays), and returns the outputs by
   * pid. The barrier stage feeds a shuffle, so a failed task reruns the whole stage, not
   * just itself. `outputLength` maps a process's input length to its output length
   * (needed for library programs; bundled ones know).
   */
  def runStage(rdd: RDD[Array[Byte]], program: LpfProgram, outputLength: Option[Long => Long] = None,
               settings: LpfSettings = LpfSettings()): Array[Array[Byte]] = {
    val p = rdd.getNumPartitions
    val job = prepare(rdd.sparkContext, p, settings)
    collect(job, rdd.barrier().mapPartitions { it =>
      val input = concat(it)
      val n = outputLength.map(f => f(input.length.toLong).toInt).getOrElse(-1)
      Iterator(run(job, program, input, n))
    })
  }

  /**
   * Driver: collects the barrier stage `stage` (the user's own
   * `rdd.barrier().mapPartitions { ... LpfHook.run(job, ...) ... }`) so that it survives
   * the loss of an executor, and returns its elements in partition order. Spark cannot
   * rerun a barrier stage whose result goes straight to the driver (`stage.collect()`
   * aborts with "Could not recover from a failed barrier ResultStage"), but it reruns a
   * barrier stage that feeds a shuffle: this puts one after it. Failures come as the
   * typed [[LpfException]] of the failing process; a permanent one (see
   * [[LpfException.permanent]]) cancels the job at once; a rerun that waits for task
   * slots longer than `slotWaitMs` is cancelled (phase `slots`).
   */
  def collect[T: ClassTag](job: LpfJob, stage: RDD[T]): Array[T] = {
    val n = stage.getNumPartitions
    val shuffled = stage.mapPartitionsWithIndex((i, it) => it.zipWithIndex.map { case (x, k) => ((i, k), x) })
      .partitionBy(new HashPartitioner(math.max(n, 1)))
    LpfJobWatch(stage.sparkContext, job, "LpfHook.collect") {
      shuffled.collect().sortBy(_._1).map(_._2)
    }
  }

  /**
   * Driver: the LPF paper's bootstrap, for clusters without barrier mode. Collects the
   * executors (deduplicated by executor id, not host), sorts them, and runs one task on
   * each (placed by preferred location) as one LPF process: p = number of executors,
   * pid = the executor's rank, master = the first executor's host on the fixed
   * `settings.port`. Every process is bounded by the bootstrap timeout, so a task Spark
   * does not start in time makes the others fail instead of hang. `input(pid)` gives
   * each process's input. Returns the outputs by pid.
   */
  def runWithoutBarrier(sc: SparkContext, program: LpfProgram, input: Int => Array[Byte],
                        outputLength: Option[Long => Long] = None,
                        settings: LpfSettings = LpfSettings(port = 7177)): Array[Array[Byte]] = {
    if (settings.port == 0 && settings.engine != "shm")
      fail("check", "runWithoutBarrier has no way to publish an OS-chosen port: give LpfSettings(port = ...) a fixed port")
    val slots = math.max(LpfSparkAccess.maxConcurrentTasks(sc), 1)
    val probe = sc.parallelize(0 until 4 * slots, 4 * slots).mapPartitions { _ =>
      val env = SparkEnv.get
      Iterator((env.executorId, env.blockManager.blockManagerId.host))
    }.collect()
    val byExecutor = probe.groupBy(_._1).map { case (e, hs) => (e, hs.head._2) }.toSeq
    val workers = byExecutor.filter(_._1 != Driver)
    val members = (if (workers.nonEmpty) workers else byExecutor).sortBy(_._1).toArray
    val p = members.length
    check(sc, p, settings)
    val job = LpfJob(settings, p, newSecret())
    val secret = job.secret
    log.info(s"LPF without barrier mode: $p processes on executors ${members.mkString(", ")}")
    val shared = sc.broadcast(members)
    val inputs = (0 until p).map(i => (i, input(i)))
    val placed = inputs.map { case (i, bytes) =>
      val (e, h) = members(i)
      ((i, bytes), if (e == Driver) Seq.empty[String] else Seq(s"executor_${h}_$e"))
    }
    val out = LpfJobWatch(sc, job, "LpfHook.runWithoutBarrier") { sc.makeRDD(placed).mapPartitions { it =>
      val ms = shared.value
      val env = SparkEnv.get
      val me = env.executorId
      val host = env.blockManager.blockManagerId.host
      it.map { case (pid, bytes) =>
        if (ms(pid)._1 != me)
          throw new LpfException(pid, host, "check", s"the task for pid $pid should run on executor ${ms(pid)._1} " +
            s"but Spark placed it on executor $me: without barrier mode placement is only a preference; raise " +
            "spark.locality.wait, or use LpfHook.runStage (barrier mode)")
        LpfNative.ensureLoaded()
        val n = outputLength.map(f => f(bytes.length.toLong).toInt).getOrElse(program.outputLength(bytes.length.toLong).toInt)
        LpfTaskKill.watching(TaskContext.get()) { cancel =>
          val group =
            if (ms.length == 1 || settings.engine == "shm")
              LpfGroup.shm(s"spark-job-${job.id}-no-barrier", pid, ms.length, settings.bootstrapTimeoutMs, host, cancel)
            else {
              val g = LpfGroup.tcp(ms(0)._2, settings.port, pid, ms.length, settings.bootstrapTimeoutMs, secret,
                settings.threads, s"spark-job-${job.id}-no-barrier", host, cancel)
              try g.join() catch { case e: Throwable => g.close(); throw e }
            }
          try { (pid, group.hook(program, bytes, n)) } finally group.close()
        }
      }
    }.collect() }
    out.sortBy(_._1).map(_._2)
  }
}
