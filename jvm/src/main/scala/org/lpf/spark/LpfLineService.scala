package org.lpf.spark

import java.io.{IOException, InputStream}
import java.net.{InetAddress, InetSocketAddress}
import java.nio.ByteBuffer
import java.nio.channels.{SelectionKey, Selector, ServerSocketChannel, SocketChannel}
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import scala.collection.mutable

import org.slf4j.LoggerFactory

/**
 * A small TCP service on the driver that the executors' tasks talk to in lines: the core
 * of the rendezvous service ([[LpfRendezvous]]) and of the progress listener
 * ([[LpfProgress]]). Its port is reachable by anyone who can reach the driver's address,
 * so it is written for strangers:
 *
 *  - '''Authentication first.''' A connection must begin with the service's token (128
 *    random bits as 32 lowercase hex digits, [[LpfLineService.TokenLength]]) and a space.
 *    Nothing more than those 33 bytes is read before they are compared (in constant time,
 *    `MessageDigest.isEqual`); anything else closes the connection unanswered, at once
 *    when a byte cannot belong to any token (not a hex digit, a newline early: the form
 *    of a token is no secret).
 *  - '''Bounded requests.''' After the token come lines (`\n`-terminated) of at most
 *    `limits.maxLineBytes` bytes each (a longer one closes the connection), each handed to
 *    the connection's [[LpfLineService.Session]].
 *  - '''Bounded time.''' The token and the first line must have arrived within
 *    `limits.firstLineMs` of the accept: one deadline per connection, not per read, so a
 *    connection trickling a byte at a time is closed at the deadline.
 *  - '''Concurrency without threads per connection.''' One thread serves every connection
 *    with non-blocking sockets (a `java.nio` selector), one read per ready connection per
 *    round: a slow, silent or flooding connection costs a descriptor and a buffer of at most
 *    `maxLineBytes`, never the thread, and never delays the others. At most
 *    `limits.maxPending` connections may be waiting for their first line (a new one
 *    evicts the oldest: a real client sends its line at once) and at most
 *    `limits.maxSessions` authenticated connections stay open after it.
 *  - '''Failures.''' Anything thrown while serving one connection (an `Error` such as
 *    `OutOfMemoryError` included) closes that connection and the service goes on; a
 *    failure of the service itself (its selector or listening socket) ends it: [[alive]]
 *    turns false, and its owner replaces it or does without. Refused connections are
 *    logged (logger `org.lpf.spark.LpfLineService`, WARN) at most once per 10 s with a count.
 *
 * @param what     names the service in its thread's name and log lines
 * @param bind     the address it listens on (port: the OS chooses)
 * @param session  a fresh [[LpfLineService.Session]] for each authenticated connection
 */
private[spark] final class LpfLineService(what: String, bind: InetAddress, limits: LpfLineService.Limits,
                                          session: () => LpfLineService.Session) {
  import LpfLineService._

  /** What a connection must begin with (then a space). Random per service. */
  val token: String = LpfHook.newId() + LpfHook.newId()
  private val greeting = (token + " ").getBytes(StandardCharsets.US_ASCII)
  require(token.length == TokenLength)

  private val selector = Selector.open()
  private val server = try {
    val s = ServerSocketChannel.open()
    try {
      s.bind(new InetSocketAddress(bind, 0), Backlog)
      s.configureBlocking(false)
      s.register(selector, SelectionKey.OP_ACCEPT)
      s
    } catch { case e: Throwable => s.close(); throw e }
  } catch { case e: Throwable => selector.close(); throw e }

  /** The port it listens on. */
  val port: Int = server.socket.getLocalPort
  /** The address it listens on (`bind`, resolved). */
  val boundAddress: InetAddress = server.socket.getInetAddress

  // Touched by the service's thread only.
  private val pending = mutable.LinkedHashSet[Connection]() // in accept order, so deadlines ascend
  private val sessions = mutable.LinkedHashSet[Connection]()
  private var acceptPausedUntil = 0L
  private var refusedSinceLog = 0
  private var lastRefusalLog = 0L
  private var lastRefusal = ""

  /** When set: no new connections; the open sessions may go on until this time (ms). */
  @volatile private var stopAt = Long.MaxValue
  @volatile private var failure: Option[Throwable] = None

  private val thread = new Thread(s"lpf-$what-$port") { override def run(): Unit = serve() }
  thread.setDaemon(true)
  thread.start()

  /** Whether it still serves (not closed, not failed). */
  def alive: Boolean = thread.isAlive && stopAt == Long.MaxValue

  /** What ended it, if it failed. */
  def failedWith: Option[Throwable] = failure

  /**
   * Stops accepting and closes the connections that have not sent their first line (after
   * reading what they sent); the others may finish (their lines are still handed on) for
   * up to `drainMs`. Returns
   * when the service's thread has ended (or `drainMs` + 2 s passed).
   */
  def close(drainMs: Long = 0L): Unit = {
    if (stopAt == Long.MaxValue) stopAt = System.currentTimeMillis + math.max(drainMs, 0L)
    selector.wakeup()
    if (Thread.currentThread ne thread) thread.join(math.max(drainMs, 0L) + 2000L)
  }

  private def serve(): Unit = {
    var draining = false
    try {
      while (!(draining && (sessions.isEmpty || System.currentTimeMillis >= stopAt))) {
        selector.select(selectTimeout())
        val ready = selector.selectedKeys.iterator
        while (ready.hasNext) {
          val key = ready.next()
          ready.remove()
          key.attachment match {
            case c: Connection => guarded(c)(readFrom(c))
            case _ => if (key.isValid && key.isAcceptable) acceptAll()
          }
        }
        expire()
        if (acceptPausedUntil != 0 && System.currentTimeMillis >= acceptPausedUntil && server.isOpen) {
          acceptPausedUntil = 0
          server.keyFor(selector).interestOps(SelectionKey.OP_ACCEPT)
        }
        if (!draining && stopAt != Long.MaxValue) {
          draining = true
          server.close()
          // A real client's greeting and first line may be waiting unread: read what is
          // there (two reads: the token, then the line), then close whoever has not
          // sent a first line.
          for (_ <- 1 to 2) pending.toList.foreach(c => guarded(c)(readFrom(c)))
          pending.toList.foreach(c => drop(c, None))
        }
      }
    } catch {
      case e: Throwable =>
        failure = Some(e)
        quietly(log.error(s"LPF $what on port $port stopped: $e"))
    } finally {
      (pending.toList ++ sessions.toList).foreach(c => quietly(drop(c, None)))
      quietly(server.close())
      quietly(selector.close())
    }
  }

  /** Until the next deadline (0: none, wait for an event). */
  private def selectTimeout(): Long = {
    val now = System.currentTimeMillis
    val until = Seq(pending.headOption.map(_.deadline), Some(acceptPausedUntil).filter(_ != 0),
      Some(stopAt).filter(_ != Long.MaxValue)).flatten
    if (until.isEmpty) 0L else math.max(1L, until.min - now)
  }

  private def acceptAll(): Unit = {
    var more = true
    while (more && server.isOpen) {
      val channel = try server.accept() catch {
        case e: IOException =>
          // Out of descriptors, most likely: stop accepting for a moment rather than spin.
          refused(s"accepting failed ($e); paused for $AcceptPauseMs ms")
          acceptPausedUntil = System.currentTimeMillis + AcceptPauseMs
          server.keyFor(selector).interestOps(0)
          null
      }
      if (channel == null) more = false
      else try {
        if (pending.size >= limits.maxPending) drop(pending.head, Some("evicted by a newer connection before it sent a request"))
        channel.configureBlocking(false)
        val c = new Connection(channel, System.currentTimeMillis + limits.firstLineMs, greeting.length)
        channel.register(selector, SelectionKey.OP_READ, c)
        pending += c
      } catch { case e: Throwable => quietly(channel.close()); refused(s"could not take a connection: $e") }
    }
  }

  /** One read of what the connection sent (at most what its buffer holds), then its complete lines. */
  private def readFrom(c: Connection): Unit = if (c.channel.isOpen) {
    if (c.channel.read(c.buffer) < 0) { drop(c, if (c.session == null) Some("closed before it authenticated") else None); return }
    if (c.session == null) {
      // What every token looks like is no secret: a byte that no greeting has there
      // (not lowercase hex, then not the space) ends the connection at once.
      if (!looksLikeAGreeting(c.buffer)) { drop(c, Some("did not present the token")); return }
      if (c.buffer.hasRemaining) return
      if (!MessageDigest.isEqual(c.buffer.array, greeting)) { drop(c, Some("did not present the token")); return }
      c.session = session()
      c.buffer = ByteBuffer.allocate(limits.maxLineBytes)
      return // its lines come with the next read
    }
    var start = 0
    var i = 0
    val bytes = c.buffer.array
    while (i < c.buffer.position() && c.channel.isOpen) {
      if (bytes(i) == '\n') {
        handle(c, new String(bytes, start, i - start, StandardCharsets.UTF_8))
        start = i + 1
      }
      i += 1
    }
    if (c.channel.isOpen) {
      c.buffer.flip().position(start)
      c.buffer.compact()
      if (!c.buffer.hasRemaining) drop(c, Some(s"sent a line longer than ${limits.maxLineBytes} bytes"))
    }
  }

  private def handle(c: Connection, line: String): Unit = c.session.line(line) match {
    case Reply(text) =>
      val out = ByteBuffer.wrap((text + "\n").getBytes(StandardCharsets.UTF_8))
      c.channel.write(out) // a fresh connection's send buffer holds a short line
      drop(c, if (out.hasRemaining) Some("did not take its answer") else None)
    case Continue =>
      if (!c.started) {
        c.started = true
        pending -= c
        if (sessions.size >= limits.maxSessions) drop(c, Some(s"${limits.maxSessions} sessions are open already"))
        else sessions += c
      }
    case Refuse(why) => drop(c, Some(why))
  }

  /** Closes the connections whose first line did not come in time. */
  private def expire(): Unit = {
    val now = System.currentTimeMillis
    while (pending.nonEmpty && pending.head.deadline <= now)
      drop(pending.head, Some(s"sent no complete request within ${limits.firstLineMs} ms"))
  }

  /** Closes `c`; `why`, when given, is a refusal (logged). */
  private def drop(c: Connection, why: Option[String]): Unit = {
    pending -= c
    sessions -= c
    val from = why.map(_ => c.from)
    quietly(c.channel.close()) // cancels its key
    if (c.session != null) quietly(c.session.ended())
    why.foreach(w => refused(s"a connection from ${from.get} $w; closed"))
  }

  private def guarded(c: Connection)(body: => Unit): Unit =
    try body catch { case e: Throwable => quietly(drop(c, Some(s"failed: $e"))) }

  /** Logs refusals at most once per [[RefusalLogMs]], with how many there were. */
  private def refused(why: String): Unit = {
    refusedSinceLog += 1
    lastRefusal = why
    val now = System.currentTimeMillis
    if (now - lastRefusalLog >= RefusalLogMs) {
      val more = if (refusedSinceLog > 1) s" ($refusedSinceLog refusals in the last ${RefusalLogMs / 1000} s)" else ""
      quietly(log.warn(s"LPF $what on port $port: $why$more"))
      refusedSinceLog = 0
      lastRefusalLog = now
    }
  }
}

private[spark] object LpfLineService {
  /** Characters of a service's token (two [[LpfHook.newId]]s: 128 random bits in hex). */
  val TokenLength = 32
  private val log = LoggerFactory.getLogger(classOf[LpfLineService])
  private val Backlog = 128
  private val AcceptPauseMs = 100L
  private val RefusalLogMs = 10000L

  /**
   * @param maxLineBytes the longest line a connection may send after the token (newline included)
   * @param firstLineMs  how long after the accept the token and the first line may take
   * @param maxPending   connections that may be waiting for their first line at once
   * @param maxSessions  connections that may stay open after their first line
   */
  case class Limits(maxLineBytes: Int, firstLineMs: Long, maxPending: Int, maxSessions: Int)

  /** One accepted connection: its greeting (token and space) is `greetingLength` bytes. */
  private final class Connection(val channel: SocketChannel, val deadline: Long, greetingLength: Int) {
    /** The greeting's bytes until it is complete, then the current line's. */
    var buffer: ByteBuffer = ByteBuffer.allocate(greetingLength)
    var session: Session = _
    /** Its first line came: no deadline any more. */
    var started = false
    def from: String = try String.valueOf(channel.getRemoteAddress) catch { case _: Exception => "?" }
  }

  /** What to do after a line. */
  sealed trait Action
  /** Answer with this line and close. */
  final case class Reply(line: String) extends Action
  /** Read on (a stream of lines). */
  case object Continue extends Action
  /** Close unanswered (logged as a refusal). */
  final case class Refuse(why: String) extends Action

  /** One authenticated connection. Called on the service's thread: keep it short. */
  trait Session {
    def line(text: String): Action
    /** The connection is closed (by either side). */
    def ended(): Unit = ()
  }

  /** Whether the bytes so far of a greeting have the form of one: [[TokenLength]] lowercase hex digits, a space. */
  private def looksLikeAGreeting(b: ByteBuffer): Boolean = {
    val bytes = b.array
    (0 until b.position()).forall { i =>
      val x = bytes(i)
      if (i < TokenLength) (x >= '0' && x <= '9') || (x >= 'a' && x <= 'f') else x == ' '
    }
  }

  private def quietly(body: => Unit): Unit = try body catch { case _: Throwable => }

  /**
   * A client's read of one answer line: at most `maxBytes` bytes (newline excluded), all
   * by `deadline` (ms) on a stream whose socket has a read timeout; `None` when the peer
   * closed without a line.
   */
  def readLine(in: InputStream, maxBytes: Int, deadline: Long, socket: java.net.Socket): Option[String] = {
    val out = new java.io.ByteArrayOutputStream()
    while (true) {
      val left = deadline - System.currentTimeMillis
      if (left <= 0) throw new java.net.SocketTimeoutException("no complete answer in time")
      socket.setSoTimeout(left.toInt.max(1))
      val b = in.read()
      if (b < 0) return None
      if (b == '\n') return Some(new String(out.toByteArray, StandardCharsets.UTF_8))
      if (out.size >= maxBytes) throw new IOException(s"an answer longer than $maxBytes bytes")
      out.write(b)
    }
    None
  }
}
