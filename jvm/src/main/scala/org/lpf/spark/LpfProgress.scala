package org.lpf.spark

import java.io.{BufferedReader, InputStreamReader}
import java.net.{InetAddress, ServerSocket, Socket}
import java.nio.charset.StandardCharsets
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.SparkContext
import org.slf4j.LoggerFactory

/** Where LPF process 0 sends its progress: the driver's listener. Captured by the stage's closure. */
private[spark] case class LpfProgressTarget(host: String, port: Int, token: String) {
  /** The first line process 0 sends: the token, then the stage attempt it runs in. */
  def hello(stageAttempt: Int): String = s"$token $stageAttempt"
}

/**
 * The driver's end of a native algorithm's per-iteration progress: a TCP listener on the
 * driver's address (port chosen by the OS) that LPF process 0 connects to from its
 * executor, writing one line per iteration from the native loop
 * (native/lpf-jni/src/progress.rs); each line is logged at INFO by the logger
 * [[LpfProgress.LoggerName]] on the driver as it arrives, e.g.
 * `LpfPageRank (2 processes): iteration 3, residual 0.0123, 0.0021 s (0.0065 s since the first)`.
 *
 * Why a socket of its own: Spark carries nothing from a running task to the driver
 * live but its RPC (private to Spark); accumulators reach the driver with executor
 * heartbeats (every `spark.executor.heartbeatInterval`, 10 s) and at task end, too late
 * for runs of seconds. A connection that does not begin with the token (random per job)
 * is closed unread.
 */
private[spark] final class LpfProgress private (server: ServerSocket, host: String, token: String, what: String) {
  import LpfProgress._

  val target: LpfProgressTarget = LpfProgressTarget(host, server.getLocalPort, token)
  private val readers = new ConcurrentLinkedQueue[(Thread, Socket)]()

  private val acceptor = new Thread(s"lpf-progress-accept-${server.getLocalPort}") {
    override def run(): Unit = {
      var warned = false
      while (!server.isClosed) {
        try {
          val s = server.accept()
          if (readers.size >= MaxConnections) s.close() // one job has one reporter: strangers get no threads
          else {
            val t = new Thread(s"lpf-progress-${server.getLocalPort}") { override def run(): Unit = read(s) }
            t.setDaemon(true)
            readers.add((t, s))
            t.start()
          }
        } catch {
          case NonFatal(e) if !server.isClosed =>
            // e.g. out of file descriptors: pause instead of spinning, and say so once
            if (!warned) log.warn(s"$what: accepting progress connections failed ($e); retrying every 100 ms")
            warned = true
            Thread.sleep(100)
          case NonFatal(_) => // closed
        }
      }
    }
  }
  acceptor.setDaemon(true)
  acceptor.start()

  private def read(s: Socket): Unit = try {
    s.setSoTimeout(HelloTimeoutMs)
    val in = new BufferedReader(new InputStreamReader(s.getInputStream, StandardCharsets.UTF_8))
    val hello = Option(in.readLine()).getOrElse("").split(' ')
    if (hello.length != 2 || hello(0) != token) {
      log.warn(s"$what: a progress connection from ${s.getRemoteSocketAddress} did not present the job's token; closed")
      return
    }
    s.setSoTimeout(0)
    val attempt = if (hello(1) == "0") "" else s" (stage attempt ${hello(1)})"
    Iterator.continually(in.readLine()).takeWhile(_ != null).foreach { line =>
      line.split(' ') match {
        case Array(k, r, sec, elapsed) =>
          val residual = try java.lang.Double.parseDouble(r).toString catch { case _: NumberFormatException => r }
          log.info(f"$what$attempt: iteration $k, residual $residual, ${sec.toDouble}%.4f s " +
            f"(${elapsed.toDouble}%.4f s since the first)")
        case _ => log.warn(s"$what: a malformed progress line from process 0: $line")
      }
    }
  } catch {
    case NonFatal(e) => log.warn(s"$what: progress from process 0 ended: $e")
  } finally s.close()

  /**
   * Stops listening and waits (at most [[DrainMs]]) for the lines already sent: process
   * 0 closes its connection when its hook returns, before its task (and so the job)
   * ends, so they are all logged when this returns.
   */
  def close(): Unit = {
    server.close()
    val deadline = System.currentTimeMillis + DrainMs
    readers.asScala.foreach { case (t, _) => t.join(math.max(1L, deadline - System.currentTimeMillis)) }
    readers.asScala.foreach { case (_, s) => s.close() }
  }
}

private[spark] object LpfProgress {
  /** The driver's logger for per-iteration progress (INFO). Set it to WARN to turn progress off. */
  val LoggerName = "org.lpf.spark.progress"
  private val log = LoggerFactory.getLogger(LoggerName)
  private val HelloTimeoutMs = 10000
  /** Connections one call accepts: pid 0 reports once per stage attempt; more are strangers. */
  private val MaxConnections = 16
  private val DrainMs = 5000L

  /**
   * A listener for the progress of `what`, when the progress logger logs INFO (else no
   * listener, and the native loop reports nothing). On the driver's address
   * (`spark.driver.host`, bound on `spark.driver.bindAddress`), as Spark's own RPC.
   */
  def open(sc: SparkContext, what: String): Option[LpfProgress] = if (!log.isInfoEnabled) None else {
    val conf = sc.getConf
    val host = conf.get("spark.driver.host", InetAddress.getLocalHost.getHostAddress)
    try {
      val server = new ServerSocket(0, 16, InetAddress.getByName(conf.get("spark.driver.bindAddress", host)))
      Some(new LpfProgress(server, host, LpfHook.newId() + LpfHook.newId(), what))
    } catch {
      case NonFatal(e) =>
        log.warn(s"$what: no progress lines (the driver could not listen for them on $host: $e)")
        None
    }
  }
}
