package org.lpf.spark

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.spark.{NarrowDependency, ShuffleDependency}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow

/**
 * How input reaches native code: a DataFrame's internal rows (read by [[LpfGraphCall]]
 * into pieces of requests, no `Row` or tuple per edge), one process's request (its parts,
 * put into native memory for the hook), and Spark's rule for what may end a barrier stage.
 */
private[spark] object LpfEdges {
  /** The internal rows of a DataFrame: no conversion to `Row`. */
  def rowsOf(df: DataFrame): RDD[InternalRow] = df.queryExecution.toRdd

  /** A little-endian heap buffer of `bytes` for the fixed part of a request (its header). */
  def headerBuffer(bytes: Int): ByteBuffer = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN)

  /**
   * One process's request as its parts in order (a header, then pieces of rows), any
   * length: [[inNative]] puts it into native memory for the hook (no 2 GiB limit, no
   * second copy on the JVM heap), [[buffer]] into one direct buffer for checks and tests.
   */
  final case class Request(parts: Seq[Array[Byte]]) {
    def length: Long = parts.foldLeft(0L)(_ + _.length)

    def inNative: LpfRequest = {
      val r = new LpfRequest(length)
      try { parts.foreach(a => r.put(a)); r }
      catch { case e: Throwable => r.close(); throw e }
    }

    /** The request in one little-endian direct buffer (under 2 GiB). */
    def buffer: ByteBuffer = {
      if (length > Int.MaxValue) throw new IllegalArgumentException(s"a request of $length bytes needs inNative")
      val b = ByteBuffer.allocateDirect(length.toInt).order(ByteOrder.LITTLE_ENDIAN)
      parts.foreach(a => b.put(a))
      b.clear()
      b
    }
  }

  object Request {
    /** A request of one header, written up to its position. */
    def of(header: ByteBuffer): Request = Request(Seq(java.util.Arrays.copyOf(header.array(), header.position())))
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
