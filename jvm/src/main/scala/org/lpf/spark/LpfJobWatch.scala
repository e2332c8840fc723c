package org.lpf.spark

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import scala.util.control.NonFatal

import org.apache.spark.SparkContext
import org.apache.spark.lpf.LpfSparkAccess
import org.apache.spark.scheduler._
import org.slf4j.LoggerFactory

/**
 * The driver's watch over the Spark jobs of one LPF job, while an entry point that runs
 * the stage itself (`LpfHook.runStage`, `LpfHook.collect`, `runWithoutBarrier`,
 * `LpfPageRank.*`) waits for them:
 *
 *  - it records the [[LpfException]]s the tasks throw (the driver receives them
 *    deserialized), so that the entry point throws the typed exception of the failing
 *    process instead of Spark's `SparkException` with the text inside;
 *  - at the first *permanent* one (a rerun on the same input fails the same way: a
 *    malformed file, an id out of range, a missing symbol) it cancels the job at once,
 *    instead of letting Spark run the stage `spark.task.maxFailures` times;
 *  - when no task of the job runs and the cluster has fewer task slots than the barrier
 *    stage needs (executors lost for good) for `slotWaitMs`, it cancels the job with an
 *    [[LpfException]] naming how many slots the job needs and has (Spark itself would
 *    skip resource offers for the barrier stage forever).
 *
 * The Spark jobs are recognised by a local property carrying the LPF job's id, set on
 * the calling thread for the duration of the action.
 */
private[spark] final class LpfJobWatch(sc: SparkContext, job: LpfJob, what: String) extends SparkListener {
  import LpfJobWatch._

  private val jobs = ConcurrentHashMap.newKeySet[Integer]()
  private val stages = ConcurrentHashMap.newKeySet[Integer]()
  private val running = new AtomicInteger(0)
  @volatile private var permanent: Option[LpfException] = None
  @volatile private var last: Option[LpfException] = None
  @volatile private var verdict: Option[LpfException] = None
  @volatile private var done = false

  override def onJobStart(e: SparkListenerJobStart): Unit =
    if (e.properties != null && e.properties.getProperty(JobProperty) == job.id) {
      jobs.add(e.jobId)
      e.stageIds.foreach(s => stages.add(s))
    }

  override def onTaskStart(e: SparkListenerTaskStart): Unit =
    if (stages.contains(e.stageId)) running.incrementAndGet()

  override def onTaskEnd(e: SparkListenerTaskEnd): Unit = if (stages.contains(e.stageId)) {
    running.decrementAndGet()
    LpfSparkAccess.exceptionOf(e.reason) match {
      case Some(l: LpfException) =>
        last = Some(l)
        if (l.permanent() && permanent.isEmpty) {
          permanent = Some(l)
          cancel(s"LPF process ${l.pid()} on ${l.host()} failed in phase ${l.phase()} with an error that a rerun " +
            s"on the same input cannot cure: ${l.detail()}")
        }
      case _ =>
    }
  }

  private def cancel(reason: String): Unit = {
    log.warn("LPF {}: cancelling Spark job(s) {}: {}", what, jobs, reason)
    jobs.forEach(j => try sc.cancelJob(j, reason) catch { case NonFatal(_) => })
  }

  /** Watches the task slots while the job runs (a daemon thread). */
  private val slotWatch = new Thread(s"lpf-slot-watch-${job.id}") {
    override def run(): Unit = {
      var shortSince = -1L
      while (!done && verdict.isEmpty) {
        try Thread.sleep(PollMs) catch { case _: InterruptedException => }
        if (!done && !jobs.isEmpty) {
          val slots = LpfSparkAccess.maxConcurrentTasks(sc)
          val now = System.currentTimeMillis
          if (slots >= job.nprocs || running.get > 0) shortSince = -1L
          else if (shortSince < 0) shortSince = now
          else if (now - shortSince >= job.settings.slotWaitMs) {
            val e = new LpfException(-1, "driver", "slots", s"$what: the barrier stage needs ${job.nprocs} task " +
              s"slots at once, but the cluster has had only $slots for ${now - shortSince} ms (slotWaitMs = " +
              s"${job.settings.slotWaitMs}) with no task of the job running: executors were lost and did not come " +
              s"back; the job is cancelled. Add executors or cores, use at most $slots processes, or raise " +
              "LpfSettings.slotWaitMs", false)
            verdict = Some(e)
            cancel(e.detail())
          }
        }
      }
    }
  }
  slotWatch.setDaemon(true)

  /** Runs `action` (which starts the Spark jobs of this LPF job) under the watch. */
  def apply[T](action: => T): T = {
    val before = sc.getLocalProperty(JobProperty)
    sc.setLocalProperty(JobProperty, job.id)
    sc.addSparkListener(this)
    slotWatch.start()
    try action
    catch {
      case NonFatal(e) =>
        LpfSparkAccess.drainListeners(sc, 10000L) // task failures reach the listener after the job's end
        verdict.orElse(permanent).orElse(last) match {
          case Some(l) =>
            throw new LpfException(l.pid(), l.host(), l.phase(), l.detail(), l.permanent(), e)
          case None => throw e
        }
    } finally {
      done = true
      slotWatch.interrupt()
      sc.setLocalProperty(JobProperty, before)
      sc.removeSparkListener(this)
    }
  }
}

private[spark] object LpfJobWatch {
  private val log = LoggerFactory.getLogger(classOf[LpfJobWatch])
  /** Local property naming the LPF job of the Spark jobs the current thread starts. */
  val JobProperty = "spark.lpf.job"
  private val PollMs = 250L

  def apply[T](sc: SparkContext, job: LpfJob, what: String)(action: => T): T =
    new LpfJobWatch(sc, job, what).apply(action)
}
