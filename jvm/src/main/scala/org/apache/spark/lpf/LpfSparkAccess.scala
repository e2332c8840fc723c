package org.apache.spark.lpf

import org.apache.spark.SparkContext

/** The few Spark internals the LPF bridge's driver-side checks need (private[spark]). */
object LpfSparkAccess {
  /** Task slots of the cluster now (what barrier mode compares a stage's task count to). */
  def maxConcurrentTasks(sc: SparkContext): Int =
    sc.maxNumConcurrentTasks(sc.resourceProfileManager.defaultResourceProfile)
}
