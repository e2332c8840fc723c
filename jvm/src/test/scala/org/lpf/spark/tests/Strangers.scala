package org.lpf.spark.tests

import java.io.IOException
import java.net.{InetSocketAddress, Socket}
import java.nio.charset.StandardCharsets

/**
 * What a stranger who can reach one of the driver's services (the rendezvous service,
 * a progress listener) does to it, over loopback: floods, slow senders, idle
 * connections, lines it made up. The tests then check that real jobs still run.
 */
private[tests] object Strangers {
  private def connect(host: String, port: Int): Socket = {
    val s = new Socket()
    s.connect(new InetSocketAddress(host, port), 5000)
    s
  }

  /**
   * Writes `prefix`, then up to `bytes` bytes of 'x' (no newline) in 1 MiB writes,
   * stopping when the service closes the connection: the bytes of 'x' written before a
   * write failed, and whether the service closed it (else it took them all, or it
   * stopped reading: a write blocked for `stallMs` and the socket was closed here).
   */
  def flood(host: String, port: Int, bytes: Long, prefix: String = "", stallMs: Long = 60000L): (Long, Boolean) = {
    val s = connect(host, port)
    @volatile var progress = System.currentTimeMillis
    @volatile var stalled = false
    val watchdog = new Thread("flood-watchdog") {
      override def run(): Unit = try {
        while (!s.isClosed) {
          if (System.currentTimeMillis - progress > stallMs) { stalled = true; s.close() }
          Thread.sleep(100)
        }
      } catch { case _: InterruptedException => }
    }
    watchdog.setDaemon(true)
    watchdog.start()
    val chunk = Array.fill[Byte](1 << 20)('x'.toByte)
    var written = 0L
    var closed = false
    try {
      val out = s.getOutputStream
      out.write(prefix.getBytes(StandardCharsets.UTF_8))
      while (written < bytes) {
        val n = math.min(chunk.length.toLong, bytes - written).toInt
        out.write(chunk, 0, n)
        written += n
        progress = System.currentTimeMillis
      }
      out.flush()
    } catch { case _: IOException => closed = !stalled } finally { s.close(); watchdog.interrupt() }
    (written, closed)
  }

  /**
   * A connection that sends `prefix` and then one byte ('x') every `everyMs`, until
   * [[stop]] or until the service closes it ([[closedAfterMs]]: how long after the
   * start it noticed).
   */
  final class SlowSender(host: String, port: Int, prefix: String = "", everyMs: Long = 500L) {
    private val socket = connect(host, port)
    private val t0 = System.currentTimeMillis
    @volatile private var stopped = false
    @volatile var closedAfterMs: Option[Long] = None
    private val thread = new Thread("slow-sender") {
      override def run(): Unit = try {
        val out = socket.getOutputStream
        out.write(prefix.getBytes(StandardCharsets.UTF_8))
        while (!stopped) {
          out.write('x'.toInt)
          out.flush()
          Thread.sleep(everyMs)
        }
      } catch {
        case _: IOException => closedAfterMs = Some(System.currentTimeMillis - t0)
        case _: InterruptedException =>
      }
    }
    thread.setDaemon(true)
    thread.start()

    /** Waits up to `ms` for the service to close the connection; whether it did. */
    def awaitClosed(ms: Long): Boolean = { thread.join(ms); closedAfterMs.isDefined }
    def stop(): Unit = { stopped = true; thread.interrupt(); socket.close(); thread.join(2000) }
  }

  /** `n` connections that send nothing (close them with [[closeAll]]). */
  def idle(host: String, port: Int, n: Int): Seq[Socket] = (0 until n).map(_ => connect(host, port))

  def closeAll(sockets: Seq[Socket]): Unit = sockets.foreach(s => try s.close() catch { case _: IOException => })

  /**
   * Sends `text` as it is and reads until the service closes the connection or
   * `timeoutMs` passes: `Some(bytes received)` when it closed, `None` when it kept the
   * connection open that long.
   */
  def exchange(host: String, port: Int, text: String, timeoutMs: Long = 15000L): Option[String] = {
    val s = connect(host, port)
    try {
      s.getOutputStream.write(text.getBytes(StandardCharsets.UTF_8))
      s.getOutputStream.flush()
      s.setSoTimeout(timeoutMs.toInt)
      val got = new java.io.ByteArrayOutputStream()
      val in = s.getInputStream
      try {
        var b = in.read()
        while (b >= 0) { got.write(b); b = in.read() }
        Some(got.toString("UTF-8"))
      } catch {
        case _: java.net.SocketTimeoutException => None
        case _: IOException => Some(got.toString("UTF-8")) // reset: closed
      }
    } finally s.close()
  }
}
