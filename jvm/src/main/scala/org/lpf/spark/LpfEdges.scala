package org.lpf.spark

import java.nio.{ByteBuffer, ByteOrder}

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.{HashPartitioner, NarrowDependency, ShuffleDependency}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow

/**
 * How edges travel from Spark into native memory: in batches, byte arrays of
 * little-endian (u64 source, u64 target) pairs, as the native request wants them (see
 * native/lpf-jni/src/pagerank.rs). A partition's edges are written into batches as
 * they are read (no JVM object per edge is kept), moved (when they must change
 * partition) as a few large arrays, and copied into the request's direct buffer with
 * bulk puts.
 */
private[spark] object LpfEdges {
  /** Edges per batch: 1 MiB arrays, big enough for bulk copies, small enough to spread over processes. */
  val BatchEdges: Int = 1 << 16

  /**
   * Reads one partition's elements into a [[Batcher]]: the only per-edge code, one per
   * kind of input (a serializable function, shipped to the executors).
   */
  type Reader[T] = (Iterator[T], Batcher) => Unit

  /** `RDD[(Long, Long)]`: the tuples' fields (Tuple2 is specialised for Long: no boxing). */
  val pairs: Reader[(Long, Long)] = (it, b) => it.foreach(e => b.add(e._1, e._2))

  /** A DataFrame's internal rows whose columns 0 and 1 are non-null longs. */
  val longRows: Reader[InternalRow] = (it, b) => it.foreach(r => b.add(r.getLong(0), r.getLong(1)))

  /** The internal rows of a DataFrame of two non-null long columns (source, target): no conversion to `Row`. */
  def rowsOf(df: DataFrame): RDD[InternalRow] = df.queryExecution.toRdd

  /** Writes edges into batches of at most `batchEdges` edges each. */
  final class Batcher(batchEdges: Int = BatchEdges) {
    private val done = ArrayBuffer.empty[Array[Byte]]
    private var current: ByteBuffer = _
    private var edges = 0L

    def add(source: Long, target: Long): Unit = {
      if (current == null || !current.hasRemaining) {
        if (current != null) done += current.array()
        current = ByteBuffer.wrap(new Array[Byte](16 * batchEdges)).order(ByteOrder.LITTLE_ENDIAN)
      }
      current.putLong(source).putLong(target)
      edges += 1
    }

    def count: Long = edges

    /** The batches (the last one trimmed to its edges). */
    def batches: Seq[Array[Byte]] =
      if (current == null) done.toSeq
      else done.toSeq :+ (if (current.hasRemaining) java.util.Arrays.copyOf(current.array(), current.position())
        else current.array())
  }

  /**
   * One partition's elements as batches, read when the result is first used (so that a
   * barrier task's ingest time, taken around its use, includes the reading).
   */
  def batches[T](it: Iterator[T], read: Reader[T], batchEdges: Int = BatchEdges): Iterator[Array[Byte]] =
    Iterator.single(()).flatMap { _ =>
      val b = new Batcher(batchEdges)
      read(it, b)
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
