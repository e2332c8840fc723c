package org.lpf.spark

import java.nio.{ByteBuffer, ByteOrder}

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.{HashPartitioner, NarrowDependency, ShuffleDependency}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow

/**
 * How edges travel from Spark into native memory: in batches, byte arrays of
 * little-endian (u64 source, u64 target) pairs, as the native requests want them (see
 * native/lpf-jni/src/pagerank.rs and kernels.rs); weighted batches (SSSP) hold their k
 * pairs followed by their k f64 weights. A partition's edges are written into batches as
 * they are read (no JVM object per edge is kept), moved (when they must change
 * partition) as a few large arrays, and copied into the request's direct buffer with
 * bulk puts. PageRank and the graph kernels share this path.
 */
private[spark] object LpfEdges {
  /** Edges per batch: 1 MiB arrays, big enough for bulk copies, small enough to spread over processes. */
  val BatchEdges: Int = 1 << 16

  /**
   * Reads one partition's elements into a [[Batcher]]: the only per-edge code, one per
   * kind of input (a serializable function, shipped to the executors); `weighted`: it
   * adds a weight with every edge.
   */
  final case class Reader[T](weighted: Boolean, read: (Iterator[T], Batcher) => Unit)

  /** `RDD[(Long, Long)]`: the tuples' fields (Tuple2 is specialised for Long: no boxing). */
  val pairs: Reader[(Long, Long)] = Reader(weighted = false, (it, b) => it.foreach(e => b.add(e._1, e._2)))

  /** A DataFrame's internal rows whose columns 0 and 1 are non-null longs. */
  val longRows: Reader[InternalRow] = Reader(weighted = false, (it, b) => it.foreach(r => b.add(r.getLong(0), r.getLong(1))))

  /** A DataFrame's internal rows of non-null columns (source long, target long, weight double). */
  val weightedLongRows: Reader[InternalRow] =
    Reader(weighted = true, (it, b) => it.foreach(r => b.add(r.getLong(0), r.getLong(1), r.getDouble(2))))

  /** The internal rows of a DataFrame of non-null columns as a [[Reader]] wants them: no conversion to `Row`. */
  def rowsOf(df: DataFrame): RDD[InternalRow] = df.queryExecution.toRdd

  /** Bytes per edge in a batch: a pair, and a weight if `weighted`. */
  private def edgeBytes(weighted: Boolean): Int = if (weighted) 24 else 16

  /** Edges in one batch. */
  def edgesIn(batch: Array[Byte], weighted: Boolean): Int = batch.length / edgeBytes(weighted)

  /** Edges in all `batches`. */
  def edgesIn(batches: Seq[Array[Byte]], weighted: Boolean): Long = batches.foldLeft(0L)(_ + edgesIn(_, weighted))

  /**
   * Writes the batches' edges at `b`'s position as the native requests lay them out: all
   * pairs, then (weighted) all weights in the same order.
   */
  def put(b: ByteBuffer, batches: Seq[Array[Byte]], weighted: Boolean): Unit = {
    batches.foreach(a => b.put(a, 0, 16 * edgesIn(a, weighted)))
    if (weighted) batches.foreach { a => val k = edgesIn(a, weighted); b.put(a, 16 * k, 8 * k) }
  }

  /** A little-endian direct buffer of `bytes` for one process's request, or the error naming the size. */
  def requestBuffer(bytes: Long): ByteBuffer = {
    if (bytes > Int.MaxValue)
      throw new IllegalArgumentException(s"a partition's request would be $bytes bytes (over 2 GiB): use more partitions")
    ByteBuffer.allocateDirect(bytes.toInt).order(ByteOrder.LITTLE_ENDIAN)
  }

  /** Writes edges into batches of at most `batchEdges` edges each (pairs first, then weights, if `weighted`). */
  final class Batcher(batchEdges: Int = BatchEdges, weighted: Boolean = false) {
    private val done = ArrayBuffer.empty[Array[Byte]]
    private var current: ByteBuffer = _
    private var k = 0 // edges in current
    private var edges = 0L

    private def room(): Unit = if (current == null || k == batchEdges) {
      if (current != null) done += current.array()
      current = ByteBuffer.wrap(new Array[Byte](edgeBytes(weighted) * batchEdges)).order(ByteOrder.LITTLE_ENDIAN)
      k = 0
    }

    def add(source: Long, target: Long): Unit = {
      room()
      current.putLong(16 * k, source).putLong(16 * k + 8, target)
      k += 1
      edges += 1
    }

    def add(source: Long, target: Long, weight: Double): Unit = {
      room()
      current.putLong(16 * k, source).putLong(16 * k + 8, target).putDouble(16 * batchEdges + 8 * k, weight)
      k += 1
      edges += 1
    }

    def count: Long = edges

    /** The batches (the last one trimmed to its edges). */
    def batches: Seq[Array[Byte]] =
      if (current == null) done.toSeq
      else if (k == batchEdges) done.toSeq :+ current.array()
      else {
        val a = current.array()
        val last = java.util.Arrays.copyOf(a, edgeBytes(weighted) * k)
        if (weighted) System.arraycopy(a, 16 * batchEdges, last, 16 * k, 8 * k)
        done.toSeq :+ last
      }
  }

  /**
   * One partition's elements as batches, read when the result is first used (so that a
   * barrier task's ingest time, taken around its use, includes the reading).
   */
  def batches[T](it: Iterator[T], read: Reader[T], batchEdges: Int = BatchEdges): Iterator[Array[Byte]] =
    Iterator.single(()).flatMap { _ =>
      val b = new Batcher(batchEdges, read.weighted)
      read.read(it, b)
      b.batches.iterator
    }

  /**
   * Can `rdd` end a barrier stage of `n` tasks as it is? Spark refuses a barrier stage
   * whose RDDs within the stage have another number of partitions (coalesce, union,
   * partition pruning) or read more than one shuffle; this is its rule, checked here
   * so that such an input is moved instead of failing.
   */
  def barrierReady(rdd: RDD[_], n: Int): Boolean =
    rdd.getNumPartitions == n && rdd.dependencies.count(_.isInstanceOf[ShuffleDependency[_, _, _]]) <= 1 &&
      rdd.dependencies.forall {
        case d: NarrowDependency[_] => barrierReady(d.rdd, n)
        case _ => true
      }

  /**
   * The edges of `input` as `p` partitions of batches, fit to end a barrier stage of `p`
   * tasks: read in place when `input` can (see [[barrierReady]]; the reading then happens
   * in the barrier tasks themselves), else read where `input`'s partitions are and
   * shuffled as whole batches (batch j of partition i to partition (i + j) mod p), never
   * as one record per edge. Which process gets which edge does not matter: the native
   * load routes every edge to its owner.
   */
  def inPartitions[T](input: RDD[T], p: Int, read: Reader[T], batchEdges: Int = BatchEdges): RDD[Array[Byte]] =
    if (barrierReady(input, p)) input.mapPartitions(it => batches(it, read, batchEdges))
    else input.mapPartitionsWithIndex { (i, it) =>
      batches(it, read, batchEdges).zipWithIndex.map { case (batch, j) => ((i + j) % p, batch) }
    }.partitionBy(new HashPartitioner(p)).values // an Int key k in 0..p-1 goes to partition k
}
