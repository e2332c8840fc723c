package org.apache.spark.lpftests

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.TaskSchedulerImpl

/** What the tests need from Spark's scheduler that Spark keeps package-private. */
object SchedulerAccess {
  /**
   * How many times a task may fail before its job fails (1: no retry). Read from the
   * scheduler, not the configuration: `local[N]` ignores `spark.task.maxFailures`.
   */
  def maxTaskFailures(sc: SparkContext): Int = sc.taskScheduler match {
    case t: TaskSchedulerImpl => t.maxTaskFailures
    case other => throw new IllegalStateException(s"unknown task scheduler ${other.getClass.getName}")
  }
}
