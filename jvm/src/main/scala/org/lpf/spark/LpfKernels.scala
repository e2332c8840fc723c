package org.lpf.spark

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import org.apache.spark.{BarrierTaskContext, HashPartitioner}
import org.apache.spark.lpf.LpfSparkAccess
import org.apache.spark.rdd.RDD
import org.apache.spark.storage.StorageLevel

/**
 * The graph kernels BFS, WCC, CDLP, SSSP and LCC of the graphblas crate (distributed over LPF)
 * on the Spark executors: one barrier stage, one LPF process per partition, the bundled
 * algorithm `graph-kernel`. The vertices are numbered `0..n-1` by the caller
 * ([[LpfGraph]] does); results carry the numbers. The bytes that cross into native code
 * are documented in native/lpf-jni/src/kernels.rs.
 */
private[spark] object LpfKernels {
  val Algorithm = "graph-kernel"
  private val RequestHeader = 48
  private val ReplyHeader = 56

  /**
   * A kernel and its code in the request. Serializable itself, not only through its case
   * objects: the tasks' closures carry the kernel, and Java deserialization needs the first
   * non-serializable superclass to have a no-argument constructor (Scala 2.12 serializes
   * the case objects as themselves; 2.13 as a proxy that hid this).
   */
  sealed abstract class Kernel(val code: Int, val name: String) extends Serializable
  case object Bfs extends Kernel(1, "BFS")
  case object Wcc extends Kernel(2, "WCC")
  case object Cdlp extends Kernel(3, "CDLP")
  case object Sssp extends Kernel(4, "SSSP")
  case object Lcc extends Kernel(5, "LCC")

  /**
   * This partition's request from its batches (see [[LpfEdges]]): edges (source number,
   * target number), weighted batches for SSSP.
   */
  private[spark] def request(kernel: Kernel, threads: Int, n: Long, source: Long, iterations: Int,
                             batches: Iterator[Array[Byte]]): ByteBuffer = {
    val weighted = kernel == Sssp
    val all = batches.toSeq
    val m = LpfEdges.edgesIn(all, weighted)
    val b = LpfEdges.requestBuffer(RequestHeader + (if (weighted) 24L else 16L) * m)
    b.put("LPFGKQ01".getBytes(StandardCharsets.US_ASCII))
    b.putInt(kernel.code).putInt(math.max(threads, 1)).putLong(n).putLong(source).putLong(iterations.toLong).putLong(m)
    LpfEdges.put(b, all, weighted)
    b.clear()
    b
  }

  /**
   * The kernel's parameter check, the native one (the request's parser: the message every
   * LPF process would give), run on the driver so that a bad value fails before any
   * stage; a driver without the native library leaves it to the processes.
   */
  def checkParameters(kernel: Kernel, iterations: Int): Unit = {
    val loaded = try { LpfNative.ensureLoaded(); true } catch { case _: LpfException | _: LinkageError => false }
    if (loaded) {
      val header = request(kernel, 1, 1L, 0L, iterations, Iterator.empty)
      try LpfNative.describeRequest(Algorithm, header) finally LpfSparkAccess.dispose(header)
    }
  }

  /** The header of one process's reply: (vertices, edges, rounds, vertices owned). */
  private def replyHeader(bytes: Array[Byte]): (Long, Long, Long, Long) = {
    val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val magic = new String(bytes, 0, math.min(8, bytes.length), StandardCharsets.US_ASCII)
    if (bytes.length < ReplyHeader || magic != "LPFGKR01")
      throw new LpfException(-1, "driver", "hook", s"the native graph-kernel reply is malformed (${bytes.length} bytes, magic $magic)")
    val k = b.getLong(48)
    if (bytes.length.toLong != ReplyHeader + 16L * k)
      throw new LpfException(-1, "driver", "hook", s"the native graph-kernel reply has ${bytes.length} bytes for $k vertices")
    (b.getLong(8), b.getLong(16), b.getLong(24), k)
  }

  /** (vertex number, value bits) of one reply. */
  private def replyValues(bytes: Array[Byte]): Iterator[(Long, Long)] = {
    val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val k = (bytes.length - ReplyHeader) / 16
    Iterator.range(0, k).map(i => (b.getLong(ReplyHeader + 8 * i), b.getLong(ReplyHeader + 8 * (k + i))))
  }

  /**
   * Runs `kernel` over the numbered `edges` (n vertices; read into batches by `read`,
   * moved as [[LpfEdges.inPartitions]] does) on `p` LPF processes: every
   * vertex number once with its value's 64 bits (BFS an i64 depth, WCC and CDLP a
   * vertex number, SSSP an f64 distance, LCC an f64 coefficient), persisted; the caller unpersists it.
   */
  def run[T](edges: RDD[T], read: LpfEdges.Reader[T], n: Long, kernel: Kernel, source: Long, iterations: Int, p: Int,
             threads: Int, settings: LpfSettings): RDD[(Long, Long)] = {
    if (read.weighted != (kernel == Sssp))
      throw new IllegalArgumentException(s"${kernel.name} takes ${if (kernel == Sssp) "weighted" else "unweighted"} edges")
    val sc = edges.sparkContext
    val t = if (threads > 0) threads else sc.getConf.getInt("spark.task.cpus", 1)
    val input = LpfEdges.inPartitions(edges, p, read)
    val job = LpfHook.prepare(sc, p, settings)
    val program = LpfProgram.bundled(Algorithm)
    val what = s"LpfGraph ${kernel.name} ($p processes)"
    // Each round in the driver's log, as PageRank's iterations (LpfProgress).
    val listener = LpfProgress.open(sc, what)
    val progress = listener.map(_.target)
    try LpfJobWatch(sc, job, what) {
      val replies = input.barrier().mapPartitions { it =>
        val req = request(kernel, t, n, source, iterations, it)
        val out = try LpfHook.withGroup(job)(LpfProgress.produce(_, program, req, progress))
          finally LpfSparkAccess.dispose(req)
        Iterator((BarrierTaskContext.get().partitionId(), out))
      }.partitionBy(new HashPartitioner(p)).setName(s"LpfGraph ${kernel.name} replies").persist(StorageLevel.MEMORY_AND_DISK)
      val owned = replies.map { case (_, bytes) => replyHeader(bytes)._4 }.collect()
      if (owned.length != p || owned.sum != n) {
        replies.unpersist(blocking = false)
        throw new LpfException(-1, "driver", "hook",
          s"expected $p native ${kernel.name} replies covering $n vertices, got ${owned.length} covering ${owned.sum}")
      }
      val values = replies.flatMap { case (_, bytes) => replyValues(bytes) }
        .setName(s"LpfGraph ${kernel.name} values").persist(StorageLevel.MEMORY_AND_DISK)
      values.count()
      replies.unpersist(blocking = false)
      values
    } finally listener.foreach(_.close())
  }
}
