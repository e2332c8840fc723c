package org.apache.spark.lpf

import java.nio.ByteBuffer

import org.apache.spark.SparkContext
import org.apache.spark.storage.StorageUtils

/** The few Spark internals the LPF bridge's driver-side checks need (private[spark]). */
object LpfSparkAccess {
  /** Task slots of the cluster now (what barrier mode compares a stage's task count to). */
  def maxConcurrentTasks(sc: SparkContext): Int =
    sc.maxNumConcurrentTasks(sc.resourceProfileManager.defaultResourceProfile)

  /** Frees a direct buffer now instead of at some later GC (Spark's own helper). */
  def dispose(buffer: ByteBuffer): Unit = StorageUtils.dispose(buffer)
}
