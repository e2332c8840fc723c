package org.lpf.spark

import java.io.{BufferedReader, InputStreamReader, OutputStreamWriter}
import java.net.{InetAddress, InetSocketAddress, ServerSocket, Socket}
import java.nio.charset.StandardCharsets
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.{SparkContext, TaskContext, TaskKilledException}
import org.slf4j.LoggerFactory

/** Where the driver's rendezvous service listens, and the token a request must begin with. */
private[spark] case class LpfRendezvousTarget(host: String, port: Int, token: String)

/**
 * Where pid 0 of a TCP group publishes the port it listens on, and where the other
 * processes read it: a small TCP service on the driver, in place of a round of
 * `BarrierTaskContext.allGather`. Why: Spark's `runBarrier` (4.x) waits for its reply by
 * sleeping a second at a time until it has come (`Thread.sleep(1000)` in a loop), so
 * every allGather round costs about a second, the largest part of a short call's
 * overhead (a kron16 PageRank: bootstrap 1.1-1.3 s of 3.6 s). Polled here every 10-50 ms.
 *
 * One service per driver JVM, started by the first [[LpfHook.prepare]] (a daemon
 * thread). A request is one line on its own connection, answered with one line:
 * `TOKEN put NAME VALUE` → `ok`; `TOKEN get NAME` → the value, or an empty line when
 * nothing was put yet. NAME is a group's name (job id, stage, attempt), VALUE pid 0's
 * port or `!reason` when it could not listen. A request without the token (random per
 * driver JVM) is closed unanswered. What is put is only where to connect: a process
 * joining the group still proves the job's secret (the TCP engine's HMAC handshake).
 * Values older than [[MaxAgeMs]] are dropped, at most [[MaxEntries]] are kept.
 */
private[spark] object LpfRendezvous {
  private val log = LoggerFactory.getLogger(getClass)
  val MaxAgeMs: Long = 24L * 3600 * 1000
  val MaxEntries = 10000
  /** How long the service waits for a request's line (a stranger that sends nothing delays the next ones this much). */
  private val LineTimeoutMs = 1000
  private val ConnectTimeoutMs = 5000

  private final class Service(server: ServerSocket, val target: LpfRendezvousTarget) {
    private val values = new ConcurrentHashMap[String, (String, Long)]()

    private val acceptor = new Thread(s"lpf-rendezvous-${server.getLocalPort}") {
      override def run(): Unit = while (!server.isClosed) {
        try {
          val s = server.accept()
          try answer(s) finally s.close()
        } catch {
          case NonFatal(e) if !server.isClosed =>
            log.debug(s"LPF rendezvous: a request failed: $e")
            Thread.sleep(10) // e.g. out of file descriptors: no spinning
          case NonFatal(_) =>
        }
      }
    }
    acceptor.setDaemon(true)
    acceptor.start()

    private def answer(s: Socket): Unit = {
      s.setSoTimeout(LineTimeoutMs)
      val line = new BufferedReader(new InputStreamReader(s.getInputStream, StandardCharsets.UTF_8)).readLine()
      val reply = Option(line).map(_.split(" ", 4)).collect {
        case Array(target.token, "put", name, value) =>
          val now = System.currentTimeMillis
          if (values.size >= MaxEntries) {
            values.entrySet.removeIf(e => now - e.getValue._2 > MaxAgeMs)
            if (values.size >= MaxEntries) values.remove(values.asScala.minBy(_._2._2)._1)
          }
          values.put(name, (value, now))
          "ok"
        case Array(target.token, "get", name) => Option(values.get(name)).fold("")(_._1)
      }
      reply.foreach { r =>
        val w = new OutputStreamWriter(s.getOutputStream, StandardCharsets.UTF_8)
        w.write(r + "\n")
        w.flush()
      }
    }
  }

  private var service: Option[Service] = None
  private var failed = false

  /**
   * Driver: the service (started on the first call), on the driver's address as Spark's
   * own RPC (`spark.driver.host`, bound on `spark.driver.bindAddress`); `None` if it
   * cannot listen (then groups form with an allGather round, as before, and this is
   * logged once).
   */
  def target(sc: SparkContext): Option[LpfRendezvousTarget] = synchronized {
    if (service.isEmpty && !failed) {
      val conf = sc.getConf
      val host = conf.get("spark.driver.host", InetAddress.getLocalHost.getHostAddress)
      try {
        val server = new ServerSocket(0, 64, InetAddress.getByName(conf.get("spark.driver.bindAddress", host)))
        service = Some(new Service(server, LpfRendezvousTarget(host, server.getLocalPort, LpfHook.newId() + LpfHook.newId())))
      } catch {
        case NonFatal(e) =>
          failed = true
          log.warn(s"LPF: no rendezvous service on the driver ($host: $e); groups form with a barrier allGather " +
            "round instead (about a second more per call)")
      }
    }
    service.map(_.target)
  }

  private def request(t: LpfRendezvousTarget, line: String): String = {
    val s = new Socket()
    try {
      s.connect(new InetSocketAddress(t.host, t.port), ConnectTimeoutMs)
      s.setSoTimeout(ConnectTimeoutMs)
      val w = new OutputStreamWriter(s.getOutputStream, StandardCharsets.UTF_8)
      w.write(s"${t.token} $line\n")
      w.flush()
      Option(new BufferedReader(new InputStreamReader(s.getInputStream, StandardCharsets.UTF_8)).readLine())
        .getOrElse(throw new java.io.IOException("the service closed the connection without an answer"))
    } finally s.close()
  }

  /** Task (pid 0): publishes `value` under `name`. */
  def put(t: LpfRendezvousTarget, name: String, value: String): Unit = {
    val r = request(t, s"put $name ${value.replace('\n', ' ')}")
    if (r != "ok") throw new java.io.IOException(s"the service answered '$r' to put")
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
