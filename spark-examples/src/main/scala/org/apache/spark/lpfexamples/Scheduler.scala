package org.apache.spark.lpfexamples

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.TaskSchedulerImpl

/** The task scheduler's own state, for tests that need what holds a slot now. */
object Scheduler {
  /** Tasks the scheduler counts as running (holding a slot) now. Spark's status tracker
   *  answers from the listener-fed status store instead, which lags the scheduler and
   *  was seen to report 0 and then 1 running tasks a moment apart after a cancel. */
  def runningTasks(sc: SparkContext): Int = sc.taskScheduler match {
    case t: TaskSchedulerImpl => t.runningTasksByExecutors.values.sum
    case other => throw new IllegalStateException(s"no TaskSchedulerImpl: ${other.getClass.getName}")
  }
}
