package org.lpf.spark

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.lpf.LpfSparkAccess
import org.slf4j.LoggerFactory

/**
 * Spark's task kill, passed on to the task's LPF processes. Spark kills a task (a
 * cancelled job, a failed barrier stage, speculation) by marking its `TaskContext`, and
 * interrupts its thread only with `spark.job.interruptOnCancel`; a thread inside native
 * code sees neither, and would keep its task slot until the native call ended. While a
 * task runs LPF ([[LpfHook.withGroup]], `runWithoutBarrier`), its [[LpfCancel]] token is
 * registered here, and one daemon thread per JVM looks at every registered task every
 * [[LpfTaskKill.PollMs]] ms: once Spark marked one killed (`TaskContext.isInterrupted`),
 * it sets the token, so the task's native join, waits and syncs fail within
 * milliseconds (at the next superstep where it computes) and its thread returns to
 * Spark, which frees the slot.
 */
private[spark] object LpfTaskKill {
  private val log = LoggerFactory.getLogger(getClass)
  /** How often the watcher looks at the running tasks. */
  val PollMs = 100L

  private val running = new ConcurrentHashMap[LpfCancel, TaskContext]()

  private lazy val watcher: Thread = {
    val t = new Thread("lpf-task-kill-watch") {
      override def run(): Unit = while (true) {
        try {
          Thread.sleep(PollMs)
          running.forEach((token, ctx) => if (ctx.isInterrupted() && !token.isCancelled) token.cancel(reason(ctx)))
        } catch { case NonFatal(e) => log.warn(s"LPF task-kill watch: $e") }
      }
    }
    t.setDaemon(true)
    t.start()
    t
  }

  private def reason(ctx: TaskContext): String = {
    val why = LpfSparkAccess.killReason(ctx).getOrElse("no reason given")
    s"Spark killed task ${ctx.taskAttemptId()} (stage ${ctx.stageId()}, partition ${ctx.partitionId()}): $why"
  }

  /**
   * Runs `body` with a token that is set once Spark kills the task of `ctx` (the
   * current task); the token is closed when `body` returns (close the groups made with
   * it inside `body`).
   */
  def watching[T](ctx: TaskContext)(body: LpfCancel => T): T = {
    val token = new LpfCancel()
    try {
      running.put(token, ctx)
      watcher
      // Killed before it was registered: the watcher would see it too, a poll later.
      if (ctx.isInterrupted()) token.cancel(reason(ctx))
      body(token)
    } finally {
      running.remove(token)
      token.close()
    }
  }
}
