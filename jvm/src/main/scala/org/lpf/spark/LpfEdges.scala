package org.lpf.spark

import java.nio.{ByteBuffer, ByteOrder}

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.{NarrowDependency, ShuffleDependency}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow

/**
 * How input reaches native code: a DataFrame's internal rows (read by [[LpfGraphCall]]
 * into pieces of requests, no `Row` or tuple per edge), one process's request (its
 * sections, written into native memory for the hook as the rows are read), and Spark's
 * rule for what may end a barrier stage.
 */
private[spark] object LpfEdges {
  /** The internal rows of a DataFrame: no conversion to `Row`. */
  def rowsOf(df: DataFrame): RDD[InternalRow] = df.queryExecution.toRdd

  /** A little-endian heap buffer of `bytes` for the fixed part of a request (its head). */
  def headerBuffer(bytes: Int): ByteBuffer = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN)

  /** The head written so far (up to the buffer's position). */
  def headOf(b: ByteBuffer): Array[Byte] = java.util.Arrays.copyOf(b.array(), b.position())

  /**
   * Where a process's request goes as a task reads it, section by section (the sections
   * of [[LpfRequest]]): native memory for the hook ([[native]]), or the heap
   * ([[HeapRequest]]: checks, tests, small requests).
   */
  trait RequestSink {
    def put(section: Int, bytes: Array[Byte]): Unit
    /** Drops every section written so far (a refused input sends its head alone). */
    def discard(): Unit
  }

  def native(r: LpfRequest): RequestSink = new RequestSink {
    def put(section: Int, bytes: Array[Byte]): Unit = r.put(section, bytes)
    def discard(): Unit = r.discard()
  }

  /** A request on the JVM heap, by section. */
  final class HeapRequest extends RequestSink {
    private val parts = Array.fill(LpfLayout.SECTIONS)(ArrayBuffer.empty[Array[Byte]])
    def put(section: Int, bytes: Array[Byte]): Unit = parts(section) += bytes
    def discard(): Unit = parts.foreach(_.clear())
    def length: Long = parts.iterator.flatten.foldLeft(0L)(_ + _.length)
    def writeTo(to: RequestSink): Unit = for (s <- parts.indices; b <- parts(s)) to.put(s, b)

    /** The request's contiguous form (its sections one after the other) in one little-endian direct buffer. */
    def buffer: ByteBuffer = {
      val n = length
      if (n > Int.MaxValue) throw new IllegalArgumentException(s"a request of $n bytes has no contiguous form")
      val b = ByteBuffer.allocateDirect(n.toInt).order(ByteOrder.LITTLE_ENDIAN)
      parts.iterator.flatten.foreach(a => b.put(a))
      b.clear()
      b
    }
  }

  object HeapRequest {
    /** A request of one head. */
    def of(head: ByteBuffer): HeapRequest = { val r = new HeapRequest; r.put(LpfRequest.HEAD, headOf(head)); r }
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
}
