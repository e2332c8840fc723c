package org.apache.spark.lpf

import java.nio.ByteBuffer

import org.apache.spark.{ExceptionFailure, SparkContext, TaskContext, TaskEndReason}
import org.apache.spark.storage.StorageUtils

/** The few Spark internals the LPF bridge's driver-side checks need (private[spark]). */
object LpfSparkAccess {
  /** Task slots of the cluster now (what barrier mode compares a stage's task count to). */
  def maxConcurrentTasks(sc: SparkContext): Int =
    sc.maxNumConcurrentTasks(sc.resourceProfileManager.defaultResourceProfile)

  /** The exception a failed task threw, as the driver received it (deserialized), if any. */
  def exceptionOf(reason: TaskEndReason): Option[Throwable] = reason match {
    case e: ExceptionFailure => e.exception
    case _ => None
  }

  /** Waits (at most `timeoutMs`) until the listener bus has delivered every event posted so far. */
  def drainListeners(sc: SparkContext, timeoutMs: Long): Unit =
    try sc.listenerBus.waitUntilEmpty(timeoutMs) catch { case _: java.util.concurrent.TimeoutException => }

  /** Why Spark killed the task of `ctx`, once it did. */
  def killReason(ctx: TaskContext): Option[String] = ctx.getKillReason()

  /** Frees a direct buffer now instead of at some later GC (Spark's own helper). */
  def dispose(buffer: ByteBuffer): Unit = StorageUtils.dispose(buffer)
}
