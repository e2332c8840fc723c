package org.apache.spark.lpfexamples

import org.apache.spark.SparkContext

/** Spark's listener bus is asynchronous; this waits until it has delivered every event so far. */
object ListenerBus {
  def drain(sc: SparkContext, timeoutMs: Long = 30000L): Unit = sc.listenerBus.waitUntilEmpty(timeoutMs)
}
