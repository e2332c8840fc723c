package org.lpf.spark

import java.net.InetAddress
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.{BarrierTaskContext, SparkContext}
import org.apache.spark.lpf.LpfSparkAccess
import org.slf4j.LoggerFactory

/**
 * Where LPF process 0 sends its progress: the driver's listener. Captured by the stage's
 * closure; its `toString` leaves the token out.
 */
private[spark] case class LpfProgressTarget(host: String, port: Int, token: String) {
  /** The first line process 0 sends: the token, then the stage attempt it runs in. */
  def hello(stageAttempt: Int): String = s"$token $stageAttempt"
  override def toString: String = s"LpfProgressTarget($host, $port, token <redacted>)"
}

/**
 * The driver's end of a native algorithm's per-round progress (PageRank and CDLP
 * iterations, BFS levels, WCC and SSSP rounds, LCC phases): a TCP listener on the
 * driver's address (port chosen by the OS) that LPF process 0 connects to from its
 * executor, writing one line per round from the native loop
 * (native/lpf-jni/src/progress.rs); each line is logged at INFO by the logger
 * [[LpfProgress.LoggerName]] on the driver as it arrives, e.g.
 * `LpfPageRank (2 processes): iteration 3, residual 0.0123, 0.0021 s (0.0065 s since the first)`,
 * `LpfGraph BFS (2 processes): level 2, frontier 1234, 0.0010 s (0.0040 s since the first)`.
 *
 * Why a socket of its own: Spark carries nothing from a running task to the driver
 * live but its RPC (private to Spark); accumulators reach the driver with executor
 * heartbeats (every `spark.executor.heartbeatInterval`, 10 s) and at task end, too late
 * for runs of seconds.
 *
 * The listener is an [[LpfLineService]] with a token per call: a connection must begin
 * with the token and the stage attempt (the hello, within [[HelloTimeoutMs]]); then each
 * line (at most [[MaxLineBytes]]) is one round. Anything else is closed unread. At
 * most [[MaxReporters]] reporters at once (one per stage attempt is what a call has).
 */
private[spark] final class LpfProgress private (service: LpfLineService, host: String, what: String) {
  import LpfProgress._

  val target: LpfProgressTarget = LpfProgressTarget(host, service.port, service.token)

  /**
   * Stops listening and waits (at most [[DrainMs]]) for the lines already sent: process
   * 0 closes its connection when its hook returns, before its task (and so the job)
   * ends, so they are all logged when this returns.
   */
  def close(): Unit = {
    listening.remove(this)
    service.close(DrainMs)
  }
}

private[spark] object LpfProgress {
  /** The driver's logger for per-round progress (INFO). Set it to WARN to turn progress off. */
  val LoggerName = "org.lpf.spark.progress"
  private val log = LoggerFactory.getLogger(LoggerName)
  /** How long after its accept a reporter's hello may take. */
  val HelloTimeoutMs = 10000L
  /** The longest line a reporter may send (newline included). */
  val MaxLineBytes = 1024
  /** Reporters of one call at once: pid 0 reports once per stage attempt; more are strangers. */
  val MaxReporters = 16
  private val DrainMs = 5000L
  private val Limits = LpfLineService.Limits(maxLineBytes = MaxLineBytes, firstLineMs = HelloTimeoutMs,
    maxPending = 64, maxSessions = MaxReporters)

  /** The listeners open now (tests find a running call's port here). */
  private val listening = ConcurrentHashMap.newKeySet[LpfProgress]()
  private[spark] def openTargets: Seq[LpfProgressTarget] = listening.asScala.toSeq.map(_.target)

  private val Word = "[a-z][a-z-]{0,31}".r
  private val Count = "[0-9]{1,20}".r

  /**
   * Logs one progress line of `what` (native/lpf-jni/src/progress.rs:
   * `unit round measure value seconds elapsed`) as
   * `what: unit round, measure value, 0.0021 s (0.0065 s since the first)`; a count as
   * it is, a real number (PageRank's residual) exactly. `None` if the line is malformed.
   */
  private def logged(what: String, text: String): Option[Unit] = text.split(' ') match {
    case Array(unit @ Word(), round @ Count(), measure @ Word(), value, sec, elapsed) =>
      try {
        val shown = value match {
          case Count() => value
          case _ => java.lang.Double.parseDouble(value).toString
        }
        Some(log.info(f"$what: $unit $round, $measure $shown, ${sec.toDouble}%.4f s (${elapsed.toDouble}%.4f s since the first)"))
      } catch { case _: NumberFormatException => None }
    case _ => None
  }

  /** One reporter's lines: the rest of its hello (the stage attempt), then one per round. */
  private def reporter(what: String): LpfLineService.Session = new LpfLineService.Session {
    private var attempt: Option[String] = None
    def line(text: String): LpfLineService.Action = attempt match {
      case None if text.nonEmpty && text.length <= 9 && text.forall(_.isDigit) =>
        attempt = Some(if (text.toInt == 0) "" else s" (stage attempt ${text.toInt})")
        LpfLineService.Continue
      case None => LpfLineService.Refuse("sent a malformed hello")
      case Some(a) =>
        logged(what + a, text).getOrElse(log.warn(s"$what: a malformed progress line from process 0: $text"))
        LpfLineService.Continue
    }
  }

  /**
   * Task side: runs the bundled `program` on `g` with `input`, LPF process 0 sending its
   * progress to `to` (the call's listener, if it has one).
   */
  private[spark] def produce(g: LpfGroup, program: LpfProgram, input: LpfRequest, to: Option[LpfProgressTarget]): Array[Byte] =
    to.filter(_ => g.pid == 0) match {
      case Some(t) => g.produce(program, input, t.host, t.port, t.hello(BarrierTaskContext.get().stageAttemptNumber()))
      case None => g.produce(program, input, null, 0, null)
    }

  /**
   * Task side: the request `write` writes into native memory (timed as ingest: for a
   * kernel, reading the rows), then this task's LPF group formed (timed as bootstrap) and
   * the bundled `program` run on it; the request is handed over to the run, which frees
   * it (or freed here if the run never starts). The output and the two timings, seconds.
   */
  private[spark] def produceTimed(job: LpfJob, program: LpfProgram, to: Option[LpfProgressTarget])
                                 (write: LpfEdges.RequestSink => Unit): (Array[Byte], Double, Double) = {
    val t0 = System.nanoTime
    val req = new LpfRequest()
    try {
      write(LpfEdges.native(req))
      val t1 = System.nanoTime
      var t2 = t1
      val out = LpfHook.withGroup(job) { g =>
        t2 = System.nanoTime
        produce(g, program, req, to)
      }
      (out, (t1 - t0) / 1e9, (t2 - t1) / 1e9)
    } finally req.close()
  }

  /**
   * A listener for the progress of `what`, when the progress logger logs INFO (else no
   * listener, and the native loop reports nothing). Where [[LpfRendezvous]]'s service
   * listens: `spark.driver.bindAddress` (default `spark.driver.host`), reached at
   * `spark.driver.host`.
   */
  def open(sc: SparkContext, what: String): Option[LpfProgress] = if (!log.isInfoEnabled) None else {
    val (host, bind) = LpfRendezvous.driverAddress(sc)
    try {
      val p = new LpfProgress(new LpfLineService("progress", InetAddress.getByName(bind), Limits, () => reporter(what)), host, what)
      listening.add(p)
      Some(p)
    } catch {
      case NonFatal(e) =>
        log.warn(s"$what: no progress lines (the driver could not listen for them on $bind: $e)")
        None
    }
  }
}
