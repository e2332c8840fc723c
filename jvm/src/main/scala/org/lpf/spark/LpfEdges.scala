package org.lpf.spark

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.spark.{NarrowDependency, ShuffleDependency}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow

/**
 * How input reaches native code: a DataFrame's internal rows (read by [[LpfGraphCall]]
 * into pieces of requests, no `Row` or tuple per edge), the direct buffer of one
 * process's request, and Spark's rule for what may end a barrier stage.
 */
private[spark] object LpfEdges {
  /** The internal rows of a DataFrame: no conversion to `Row`. */
  def rowsOf(df: DataFrame): RDD[InternalRow] = df.queryExecution.toRdd

  /** A little-endian direct buffer of `bytes` for one process's request, or the error naming the size. */
  def requestBuffer(bytes: Long): ByteBuffer = {
    if (bytes > Int.MaxValue)
      throw new IllegalArgumentException(s"a partition's request would be $bytes bytes (over 2 GiB): use more partitions")
    ByteBuffer.allocateDirect(bytes.toInt).order(ByteOrder.LITTLE_ENDIAN)
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
