package org.apache.spark.lpf

import java.nio.ByteBuffer

import org.apache.spark.{ExceptionFailure, ShuffleDependency, SparkContext, TaskContext, TaskEndReason}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.StructType
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

  /**
   * A DataFrame of `schema` reading the internal rows of `rows` as they are (no `Row`, no
   * encoder per row): Spark's `internalCreateDataFrame` (private[sql]), found by reflection
   * because it lives on `SparkSession` in Spark 3.5 and on `classic.SparkSession` in Spark 4,
   * with the same signature (RDD[InternalRow], StructType, isStreaming).
   */
  def internalFrame(spark: SparkSession, rows: RDD[InternalRow], schema: StructType): DataFrame = {
    val create = spark.getClass.getMethod("internalCreateDataFrame", classOf[RDD[_]], classOf[StructType],
      java.lang.Boolean.TYPE)
    try create.invoke(spark, rows, schema, java.lang.Boolean.FALSE).asInstanceOf[DataFrame]
    catch { case e: java.lang.reflect.InvocationTargetException => throw e.getCause }
  }

  /**
   * Runs only the map stage of `dependency` (its tasks write their shuffle output, nothing
   * reads it yet) and waits for it: one Spark stage, as a job of its own
   * (`SparkContext.submitMapStage`, private[spark]). A later reader of the shuffle finds
   * the output there; a lost output reruns the whole map stage.
   */
  def runMapStage(sc: SparkContext, dependency: ShuffleDependency[_, _, _]): Unit = {
    sc.submitMapStage(dependency).get()
    ()
  }
}
