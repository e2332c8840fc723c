package org.lpf.spark

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import org.apache.spark.{BarrierTaskContext, HashPartitioner, SparkContext}
import org.apache.spark.lpf.LpfSparkAccess
import org.apache.spark.rdd.RDD
import org.apache.spark.storage.StorageLevel
import org.slf4j.LoggerFactory

// The byte layouts' offsets and codes, generated from native/lpf-jni/src/layout.rs.
import org.lpf.spark.LpfLayout.{PageRankReply => R, PageRankRequest => Q}

/**
 * The outcome of an LPF PageRank.
 *
 * @param ranks            (vertex id, rank) for every vertex, summing to 1; partitioned as
 *                         the LPF processes owned them, persisted (call [[unpersist]] when done)
 * @param vertices         vertices of the graph (ids named by some edge; for files as the file says)
 * @param edges            edges of the graph, duplicates counted once
 * @param iterations       iterations run
 * @param residual         L1 change of the last iteration
 * @param converged        residual < tol
 * @param loadSeconds      native load: read or receive the edges, route, renumber, build
 *                         (slowest process)
 * @param iterationSeconds the iterations (slowest process)
 * @param hookSeconds      driver's view of the job that ran the hook: moving the edges (if
 *                         they had to change partition), handing them to native code, group
 *                         bootstrap, load, iterations, results back to the driver
 * @param ingestSeconds    reading this call's input partitions into native memory (the
 *                         request's direct buffer; slowest process; includes computing the
 *                         elements if they were not cached; for an input moved through a
 *                         shuffle, reading the moved batches: the map side is in hookSeconds)
 * @param bootstrapSeconds forming the LPF group (slowest process)
 * @param setupSeconds     the driver's work before the job: task slots, checks, progress listener
 * @param exchange         the contribution exchange that ran (`allgather` or `plan`)
 * @param processes        LPF processes (= partitions of the barrier stage)
 */
case class LpfPageRankResult(
    ranks: RDD[(Long, Double)],
    vertices: Long,
    edges: Long,
    iterations: Int,
    residual: Double,
    converged: Boolean,
    loadSeconds: Double,
    iterationSeconds: Double,
    hookSeconds: Double,
    exchange: String,
    processes: Int,
    private val persisted: RDD[_],
    ingestSeconds: Double = Double.NaN,
    bootstrapSeconds: Double = Double.NaN,
    setupSeconds: Double = Double.NaN) {
  def secondsPerIteration: Double = if (iterations > 0) iterationSeconds / iterations else 0.0

  /** Releases the cached native outputs behind [[ranks]]. */
  def unpersist(): Unit = persisted.unpersist(blocking = false)
}

/**
 * PageRank in native code (the graphblas crate's distributed PageRank over LPF) on the
 * Spark executors: one barrier stage, one LPF process per partition.
 *
 * Every entry point takes `nprocs` and `threads` (0: the default; a negative count is an
 * [[LpfException]] in phase argument) and checks `alpha`, `tol` and `maxIter` before any
 * Spark job.
 *
 * Semantics (the same as the `pagerank` CLI): damping `alpha`, start 1/n, the mass of
 * dangling vertices spread uniformly, stop when the L1 change of an iteration is below
 * `tol` or after `maxIter` iterations; an edge is an edge whatever its multiplicity,
 * self-loops count.
 *
 * {{{
 *   val r = LpfPageRank.run(edges, alpha = 0.85, tol = 1e-7, maxIter = 100)   // RDD[(Long, Long)]
 *   r.ranks.top(10)(Ordering.by(_._2)); println(s"${r.iterations} iterations, residual ${r.residual}")
 *   val f = LpfPageRank.fromFile(sc, "/shared/graph.mtx")                      // parallel native read
 * }}}
 *
 * The bytes that cross into native code are documented in native/lpf-jni/src/pagerank.rs
 * (request: parameters + this partition's edges or a file; reply: this process's (id,
 * rank) pairs, iterations, residual, timings).
 */
object LpfPageRank {
  private val log = LoggerFactory.getLogger(getClass)
  val Algorithm = "pagerank"
  private def formatCode(format: String): Int = format match {
    case "auto" => Q.FORMAT_AUTO
    case "mtx" => Q.FORMAT_MTX
    case "edges" | "txt" | "el" => Q.FORMAT_EDGES
    case "bin" => Q.FORMAT_BIN
    case other => throw new IllegalArgumentException(s"format must be auto, mtx, edges or bin, not $other")
  }

  private def exchangeCode(exchange: String): Int = exchange match {
    case "auto" => LpfLayout.EXCHANGE_AUTO
    case "allgather" => LpfLayout.EXCHANGE_ALLGATHER
    case "plan" => LpfLayout.EXCHANGE_PLAN
    case other => throw new IllegalArgumentException(s"exchange must be auto, allgather or plan, not $other")
  }

  /** Parameters every process passes alike. */
  private[spark] case class Params(alpha: Double, tol: Double, maxIter: Long, threads: Int, exchange: String) {
    checkParameters(alpha, tol, maxIter)
    exchangeCode(exchange)
  }

  /**
   * PageRank's parameter check: the native one (the graphblas crate's, the CLI's too), run
   * on the driver so that a bad value fails before any stage, with the message every LPF
   * process would give. A driver without the native library (another platform) leaves
   * the check to the processes, which make it on the request.
   */
  private[spark] def checkParameters(alpha: Double, tol: Double, maxIter: Long): Unit = {
    val loaded = try { LpfNative.ensureLoaded(); true } catch { case _: LpfException | _: LinkageError => false }
    if (loaded) LpfNative.checkPageRank(alpha, tol, maxIter)
  }

  /**
   * The counts of every entry point (PageRank's and the graph kernels'), named as the
   * Scala and the Python API both name them: 0 means the default (`nprocs`: the task
   * slots, or the partitions of an edges RDD; `threads`: spark.task.cpus), a negative
   * count is an [[LpfException]] (phase argument) before any Spark job.
   */
  private[spark] def checkCounts(nprocs: Int, threads: Int): Unit = {
    if (nprocs < 0) throw LpfException.argument(s"nprocs must be >= 0 (0 lets the bridge choose), got $nprocs")
    if (threads < 0) throw LpfException.argument(s"threads must be >= 0 (0: spark.task.cpus), got $threads")
  }

  private def header(b: ByteBuffer, p: Params, source: Int): Unit = {
    // Each field at its offset; the source's own fields after the fixed ones.
    b.put(Q.MAGIC.getBytes(StandardCharsets.US_ASCII))
    b.putDouble(Q.ALPHA, p.alpha).putDouble(Q.TOL, p.tol).putLong(Q.MAX_ITERS, p.maxIter)
    b.putInt(Q.THREADS, math.max(p.threads, 1)).putInt(Q.SOURCE, source)
    // Flag FLAG_PROGRESS (stderr) unused: progress goes to the driver.
    b.putInt(Q.FLAGS, exchangeCode(p.exchange) << Q.EXCHANGE_SHIFT).putInt(Q.RESERVED, 0)
    b.position(Q.SIZE)
  }

  private[spark] def fileRequest(p: Params, path: String, format: String): LpfEdges.HeapRequest = {
    val name = path.getBytes(StandardCharsets.UTF_8)
    val b = LpfEdges.headerBuffer(Q.SIZE + 8 + name.length)
    header(b, p, Q.SOURCE_FILE)
    b.putInt(formatCode(format)).putInt(name.length).put(name)
    LpfEdges.HeapRequest.of(b)
  }

  private[spark] def rmatRequest(p: Params, scale: Int, edgeFactor: Int, a: Double, bq: Double, c: Double,
                                  seed: Long): LpfEdges.HeapRequest = {
    val b = LpfEdges.headerBuffer(Q.SIZE + 40)
    header(b, p, Q.SOURCE_RMAT)
    b.putInt(scale).putInt(edgeFactor).putDouble(a).putDouble(bq).putDouble(c).putLong(seed)
    LpfEdges.HeapRequest.of(b)
  }

  /** The fixed part of one process's reply. */
  private[spark] case class Reply(vertices: Long, edges: Long, iterations: Long, residual: Double, loadSeconds: Double,
                                  iterationSeconds: Double, converged: Boolean, exchange: Int, owned: Long)

  private[spark] def replyHeader(bytes: Array[Byte]): Reply = {
    val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val magic = new String(bytes, 0, math.min(8, bytes.length), StandardCharsets.US_ASCII)
    if (bytes.length < R.SIZE || magic != R.MAGIC)
      throw new LpfException(-1, "driver", "hook", s"the native pagerank reply is malformed (${bytes.length} bytes, magic $magic)")
    val r = Reply(b.getLong(R.VERTICES), b.getLong(R.EDGES), b.getLong(R.ITERATIONS), b.getDouble(R.RESIDUAL),
      b.getDouble(R.LOAD_SECONDS), b.getDouble(R.ITERATION_SECONDS), b.getInt(R.CONVERGED) != 0, b.getInt(R.EXCHANGE),
      b.getLong(R.COUNT))
    if (bytes.length.toLong != R.SIZE + 16L * r.owned)
      throw new LpfException(-1, "driver", "hook", s"the native pagerank reply has ${bytes.length} bytes for ${r.owned} vertices")
    r
  }

  private[spark] def replyPairs(bytes: Array[Byte]): Iterator[(Long, Double)] = {
    val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val k = ((bytes.length - R.SIZE) / 16)
    Iterator.range(0, k).map { i =>
      val at = R.SIZE + 16 * i
      (b.getLong(at), b.getDouble(at + 8))
    }
  }

  /**
   * Task slots for LPF processes: waits (up to `slotWaitMs`) for as many as the
   * configuration promises (local modes, executors x cores, cores.max) or `want`, then
   * takes what registered; warns when that is fewer than wanted. At least 1.
   */
  private[spark] def availableProcesses(sc: SparkContext, want: Option[Int], settings: LpfSettings, what: String): Int = {
    val expected = want.orElse(LpfHook.configuredSlots(sc)) match {
      case Some(n) => n.max(1)
      case None => return LpfSparkAccess.maxConcurrentTasks(sc).max(1) // nothing promised: what is there
    }
    val slots = LpfHook.awaitSlots(sc, expected, settings.slotWaitMs)
    if (slots < expected)
      log.warn(s"LpfPageRank: $what asks for $expected LPF processes, but the cluster has $slots task slots " +
        s"after waiting ${settings.slotWaitMs} ms for executors: running ${math.max(slots, 1)} processes " +
        "(pass nprocs to require a number and fail otherwise; LpfSettings.slotWaitMs to wait longer)")
    slots.min(expected).max(1)
  }

  private def defaultThreads(sc: SparkContext): Int = sc.getConf.getInt("spark.task.cpus", 1)

  /**
   * One barrier stage over `input` (one LPF process per partition, `request` builds
   * each process's request from its partition), then a shuffle (so a failed process
   * reruns the whole stage) into the persisted replies.
   */
  private def runRequests[T](input: RDD[T], p: Int, progress: Boolean, settings: LpfSettings)
                            (request: Iterator[T] => LpfEdges.HeapRequest): LpfPageRankResult = {
    val sc = input.sparkContext
    val t0 = System.nanoTime
    val job = LpfHook.prepare(sc, p, settings)
    val what = s"LpfPageRank ($p processes)"
    val listener = if (progress) LpfProgress.open(sc, what) else None
    val setup = (System.nanoTime - t0) / 1e9
    try LpfJobWatch(sc, job, what)(runJob(input, p, job, listener.map(_.target))(request)).copy(setupSeconds = setup)
    finally listener.foreach(_.close())
  }

  /** A process's own timings, carried beside its reply: seconds of ingest and of group bootstrap. */
  private case class TaskSeconds(ingest: Double, bootstrap: Double)

  private def runJob[T](input: RDD[T], p: Int, job: LpfJob, progress: Option[LpfProgressTarget])
                       (request: Iterator[T] => LpfEdges.HeapRequest): LpfPageRankResult = {
    val program = LpfProgram.bundled(Algorithm)
    val t0 = System.nanoTime
    val replies = input.barrier().mapPartitions { it =>
      val (out, ingest, bootstrap) = LpfProgress.produceTimed(job, program, progress)(request(it).writeTo)
      Iterator((BarrierTaskContext.get().partitionId(), (TaskSeconds(ingest, bootstrap), out)))
    }.partitionBy(new HashPartitioner(p)).setName("LpfPageRank replies").persist(StorageLevel.MEMORY_AND_DISK)
    val heads = replies.map { case (pid, (secs, bytes)) => (pid, (replyHeader(bytes), secs)) }.collect().sortBy(_._1)
      .map(_._2)
    val hookSeconds = (System.nanoTime - t0) / 1e9
    if (heads.length != p)
      throw new LpfException(-1, "driver", "hook", s"expected $p native pagerank replies, got ${heads.length}")
    val h = heads.head._1
    val ranks = replies.mapPartitions(_.flatMap { case (_, (_, bytes)) => replyPairs(bytes) }, preservesPartitioning = false)
      .setName("LpfPageRank ranks")
    LpfPageRankResult(ranks, h.vertices, h.edges, h.iterations.toInt, h.residual, h.converged,
      heads.map(_._1.loadSeconds).max, heads.map(_._1.iterationSeconds).max, hookSeconds,
      if (h.exchange == LpfLayout.EXCHANGE_PLAN) "plan" else "allgather", p, replies,
      ingestSeconds = heads.map(_._2.ingest).max, bootstrapSeconds = heads.map(_._2.bootstrap).max)
  }

  /**
   * PageRank of the graph whose edges are `edges` (source, target; any Long ids, a
   * vertex exists if some edge names it; duplicates count once). One LPF process per
   * partition of `edges`: at most as many partitions as the cluster has task slots (an
   * RDD with another count, or one that cannot end a barrier stage as it is, has its
   * edges moved to `nprocs` partitions, default the task slots, as a few large arrays per
   * partition: see docs/spark.md, "How the edges reach native code").
   *
   * @param nprocs LPF processes (0: the partitions of `edges`, or the task slots if fewer)
   * @param threads threads per LPF process for the iterations (0: spark.task.cpus)
   * @param exchange `auto`, `allgather` or `plan` (see docs/pagerank.md)
   * @param progress log each iteration (iteration, residual, seconds) on the driver as it
   *                 runs, through the logger `org.lpf.spark.progress` at INFO (nothing is
   *                 sent when that logger is off)
   */
  def run(edges: RDD[(Long, Long)], alpha: Double = 0.85, tol: Double = 1e-7, maxIter: Int = 1000,
          nprocs: Int = 0, threads: Int = 0, exchange: String = "auto", progress: Boolean = true,
          settings: LpfSettings = LpfSettings()): LpfPageRankResult = {
    val sc = edges.sparkContext
    checkCounts(nprocs, threads)
    val params = Params(alpha, tol, maxIter, if (threads > 0) threads else defaultThreads(sc), exchange)
    val parts = edges.getNumPartitions
    // nprocs given: exactly that many (prepare fails, naming both numbers, if the
    // cluster does not get that many slots within slotWaitMs); else the partitions, or
    // fewer (with a warning) if the cluster has fewer slots.
    val p = if (nprocs > 0) nprocs
      else availableProcesses(sc, if (parts > 0) Some(parts) else None, settings, s"an edges RDD of $parts partitions")
    // The path of LpfGraph's calls (one barrier stage; ids numbered by the LPF processes).
    val call = LpfGraphCall.Call(LpfGraphCall.PageRank, params.threads, strings = false, None, maxIter, alpha, tol,
      exchangeCode(exchange))
    val o = LpfGraphCall.run(LpfGraphCall.Rows(edges.mapPartitions(LpfGraphCall.pairRows), None,
      LpfGraphCall.Columns("source", "target", "id", None)), call, p, settings, progress)
    val ranks = o.doubles.setName("LpfPageRank ranks")
    LpfPageRankResult(ranks, o.vertices, o.edges, o.rounds.toInt, o.residual, o.converged, o.loadSeconds,
      o.computeSeconds, o.callSeconds - o.setupSeconds, o.exchange, p, o.replies, o.ingestSeconds, o.bootstrapSeconds,
      o.setupSeconds)
  }

  /**
   * PageRank of the graph in the file at `path`, read in parallel by native code (every
   * process parses its byte range): MatrixMarket (`.mtx`, 1-based ids), edge list
   * (`.edges`/`.txt`/`.el`, `src dst` per line, 0-based) or the binary format of
   * the graphblas crate (`.bin`). The path must be readable at the same place on every
   * executor (a shared file system, or a copy on each node). Errors name the file and
   * line, on every process.
   *
   * @param nprocs LPF processes (0: the cluster's task slots)
   * @param threads threads per LPF process (0: spark.task.cpus)
   */
  def fromFile(sc: SparkContext, path: String, alpha: Double = 0.85, tol: Double = 1e-7, maxIter: Int = 1000,
               format: String = "auto", nprocs: Int = 0, threads: Int = 0, exchange: String = "auto",
               progress: Boolean = true, settings: LpfSettings = LpfSettings()): LpfPageRankResult = {
    formatCode(format)
    checkCounts(nprocs, threads)
    val params = Params(alpha, tol, maxIter, if (threads > 0) threads else defaultThreads(sc), exchange)
    val p = if (nprocs > 0) nprocs else availableProcesses(sc, None, settings, s"fromFile($path)")
    runRequests(sc.parallelize(0 until p, p), p, progress, settings)(_ => fileRequest(params, path, format))
  }

  /**
   * PageRank of a Graph500 R-MAT graph (2^scale vertices, edgeFactor * 2^scale edges
   * before removing self-loops and duplicates, random relabelling) that every process
   * generates its part of natively: the same graph as `pagerank --rmat scale --seed seed`.
   */
  def rmat(sc: SparkContext, scale: Int, edgeFactor: Int = 16, seed: Long = 1L, alpha: Double = 0.85,
           tol: Double = 1e-7, maxIter: Int = 1000, nprocs: Int = 0, threads: Int = 0, exchange: String = "auto",
           settings: LpfSettings = LpfSettings(), a: Double = 0.57, b: Double = 0.19, c: Double = 0.19,
           progress: Boolean = true): LpfPageRankResult = {
    checkCounts(nprocs, threads)
    val params = Params(alpha, tol, maxIter, if (threads > 0) threads else defaultThreads(sc), exchange)
    val p = if (nprocs > 0) nprocs else availableProcesses(sc, None, settings, s"rmat(scale $scale)")
    runRequests(sc.parallelize(0 until p, p), p, progress, settings)(_ => rmatRequest(params, scale, edgeFactor, a, b, c, seed))
  }
}
