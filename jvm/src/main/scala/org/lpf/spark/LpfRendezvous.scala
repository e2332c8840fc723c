package org.lpf.spark

import java.io.{BufferedInputStream, IOException}
import java.net.{InetAddress, InetSocketAddress, Socket}
import java.nio.charset.StandardCharsets
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.{SparkContext, TaskContext, TaskKilledException}
import org.slf4j.LoggerFactory

/**
 * Where the driver's rendezvous service listens, and the token a request must begin with.
 * Its `toString` leaves the token out.
 */
private[spark] case class LpfRendezvousTarget(host: String, port: Int, token: String) {
  override def toString: String = s"LpfRendezvousTarget($host, $port, token <redacted>)"
}

/**
 * Where pid 0 of a TCP group publishes the port it listens on, and where the other
 * processes read it: a small TCP service on the driver, in place of a round of
 * `BarrierTaskContext.allGather`. Why: Spark's `runBarrier` (4.x) waits for its reply by
 * sleeping a second at a time until it has come (`Thread.sleep(1000)` in a loop), so
 * every allGather round costs about a second, the largest part of a short call's
 * overhead (a kron16 PageRank: bootstrap 1.1-1.3 s of 3.6 s). Polled here every 10-50 ms.
 *
 * One service per driver JVM, started by the first [[LpfHook.prepare]] (an
 * [[LpfLineService]]: token first, bounded lines and time, one thread for any number of
 * connections). A request is one line on its own connection after the token (random
 * per service), answered with one line: `TOKEN put NAME VALUE` → `ok`; `TOKEN get NAME`
 * → the value, or an empty line when nothing was put yet. NAME is a group's name (job
 * id, stage, attempt), VALUE pid 0's port or `!reason` when it could not listen. A
 * connection without the token, a malformed request, a line over [[MaxRequestBytes]],
 * or one not complete within [[RequestDeadlineMs]] is closed unanswered. What is put is
 * only where to connect: a process joining the group still proves the job's secret (the
 * TCP engine's HMAC handshake). Values older than [[MaxAgeMs]] are dropped, at most
 * [[MaxEntries]] are kept.
 *
 * A service that stopped (its thread failed) is replaced by the next [[target]] call; if
 * none can be started, jobs form their groups with an allGather round (logged).
 */
private[spark] object LpfRendezvous {
  private val log = LoggerFactory.getLogger(getClass)
  val MaxAgeMs: Long = 24L * 3600 * 1000
  val MaxEntries = 10000
  /** The longest request after the token, newline included (a name and a port, or a short reason). */
  val MaxRequestBytes = 1024
  /** A connection's token and request must have come this long after it was accepted. */
  val RequestDeadlineMs = 5000L
  private val Limits = LpfLineService.Limits(maxLineBytes = MaxRequestBytes, firstLineMs = RequestDeadlineMs,
    maxPending = 64, maxSessions = 16)
  private val ClientTimeoutMs = 5000
  /** Tries of one request (a connection the service dropped under load is tried again). */
  private val Tries = 3
  /** How long after a failed start the next [[target]] tries again. */
  private val RetryStartMs = 60000L

  /** The values put, with when. */
  private final class Values {
    private val values = new ConcurrentHashMap[String, (String, Long)]()
    def put(name: String, value: String): Unit = {
      val now = System.currentTimeMillis
      if (values.size >= MaxEntries) {
        values.entrySet.removeIf(e => now - e.getValue._2 > MaxAgeMs)
        if (values.size >= MaxEntries) values.remove(values.asScala.minBy(_._2._2)._1)
      }
      values.put(name, (value, now))
    }
    def get(name: String): String = Option(values.get(name)).fold("")(_._1)
  }

  private final class Service(val lines: LpfLineService, host: String) {
    val target: LpfRendezvousTarget = LpfRendezvousTarget(host, lines.port, lines.token)
  }

  private def session(values: Values): LpfLineService.Session = new LpfLineService.Session {
    def line(text: String): LpfLineService.Action = text.split(" ", 3) match {
      case Array("put", name, value) => values.put(name, value); LpfLineService.Reply("ok")
      case Array("get", name) => LpfLineService.Reply(values.get(name))
      case _ => LpfLineService.Refuse("sent a malformed request")
    }
  }

  private var service: Option[Service] = None
  private var failedAt = 0L

  /**
   * Driver: the service (started on the first call, replaced when it stopped), where
   * executors reach the driver: it listens on `spark.driver.bindAddress` (default
   * `spark.driver.host`), as Spark's own RPC does, and is reached at `spark.driver.host`;
   * `None` if it cannot listen (then groups form with an allGather round, as before, and
   * this is logged; a start is tried again [[RetryStartMs]] later).
   */
  def target(sc: SparkContext): Option[LpfRendezvousTarget] = synchronized {
    service.filter(!_.lines.alive).foreach { s =>
      log.warn(s"LPF: the driver's rendezvous service on port ${s.target.port} stopped" +
        s.lines.failedWith.fold("")(e => s" ($e)") + "; starting another")
      s.lines.close()
      service = None
    }
    if (service.isEmpty && System.currentTimeMillis - failedAt >= RetryStartMs) {
      val (host, bind) = driverAddress(sc)
      try {
        val values = new Values
        service = Some(new Service(new LpfLineService("rendezvous", InetAddress.getByName(bind), Limits, () => session(values)), host))
      } catch {
        case NonFatal(e) =>
          failedAt = System.currentTimeMillis
          log.warn(s"LPF: no rendezvous service on the driver ($bind: $e); groups form with a barrier allGather " +
            s"round instead (about a second more per call); trying again in ${RetryStartMs / 1000} s")
      }
    }
    service.map(_.target)
  }

  /**
   * The driver's address as executors reach it (`spark.driver.host`) and the one to
   * listen on (`spark.driver.bindAddress`, default the former): where Spark's RPC
   * listens, so exactly the executors that reach Spark's driver reach these services.
   */
  private[spark] def driverAddress(sc: SparkContext): (String, String) = {
    val conf = sc.getConf
    val host = conf.get("spark.driver.host", InetAddress.getLocalHost.getHostAddress)
    (host, conf.get("spark.driver.bindAddress", host))
  }

  /** The running service's listening socket (tests). */
  private[spark] def current: Option[LpfLineService] = synchronized(service.map(_.lines))

  private def request(t: LpfRendezvousTarget, line: String): String = {
    def once(): String = {
      val s = new Socket()
      try {
        val deadline = System.currentTimeMillis + ClientTimeoutMs
        s.connect(new InetSocketAddress(t.host, t.port), ClientTimeoutMs)
        val out = s.getOutputStream
        out.write(s"${t.token} $line\n".getBytes(StandardCharsets.UTF_8))
        out.flush()
        LpfLineService.readLine(new BufferedInputStream(s.getInputStream), MaxRequestBytes, deadline, s)
          .getOrElse(throw new IOException("the service closed the connection without an answer"))
      } finally s.close()
    }
    var tries = 1
    var answer: Option[String] = None
    while (answer.isEmpty) {
      try answer = Some(once()) catch {
        case e: IOException if tries < Tries =>
          log.debug(s"LPF rendezvous: try $tries of '$line' failed ($e); trying again")
          tries += 1
          Thread.sleep(100)
      }
    }
    answer.get
  }

  /** `value` cut to at most `bytes` bytes of UTF-8, on one line. */
  private[spark] def clipped(value: String, bytes: Int): String = {
    val b = value.replace('\n', ' ').replace('\r', ' ').getBytes(StandardCharsets.UTF_8)
    if (b.length <= bytes) value.replace('\n', ' ').replace('\r', ' ')
    else new String(b, 0, bytes, StandardCharsets.UTF_8).stripSuffix("\uFFFD")
  }

  /** Task (pid 0): publishes `value` (cut to fit a request) under `name`. */
  def put(t: LpfRendezvousTarget, name: String, value: String): Unit = {
    val room = MaxRequestBytes - 1 - s"put $name ".getBytes(StandardCharsets.UTF_8).length
    val r = request(t, s"put $name ${clipped(value, room)}")
    if (r != "ok") throw new IOException(s"the service answered '$r' to put")
  }

  /**
   * Task: the value published under `name`, polling every 10 ms, then every 50 ms, for up
   * to `timeoutMs`; `None` when nothing came in that time. A killed task stops waiting
   * (TaskKilledException), as Spark's barrier calls do.
   */
  def await(t: LpfRendezvousTarget, name: String, timeoutMs: Long): Option[String] = {
    val deadline = System.currentTimeMillis + timeoutMs
    var polls = 0
    var value = request(t, s"get $name")
    while (value.isEmpty && System.currentTimeMillis < deadline) {
      if (Option(TaskContext.get()).exists(_.isInterrupted()))
        throw new TaskKilledException("killed while waiting for pid 0's port at the driver")
      polls += 1
      Thread.sleep(if (polls < 20) 10 else 50)
      value = request(t, s"get $name")
    }
    Some(value).filter(_.nonEmpty)
  }
}
