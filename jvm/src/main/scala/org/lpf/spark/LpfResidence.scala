package org.lpf.spark

import java.lang.ref.Cleaner
import java.security.SecureRandom

import org.apache.spark.{SparkContext, SparkEnv}
import org.slf4j.LoggerFactory

/**
 * Where an [[LpfGraph]]'s resident parts are (docs/spark.md, "Resident graphs"): the
 * driver's record of the graph kept in the executors' native memory, one part per LPF
 * process, each under the graph's id in the executor that ran that process. A cell of its
 * own, apart from the graph, so that releasing the parts when the graph becomes
 * unreachable does not keep the graph reachable.
 */
private[spark] final class LpfResidence(sc: SparkContext) {
  import LpfResidence._

  /** The graph's calls should keep it ([[LpfGraph.cache]]) or not. */
  @volatile var wanted = false
  @volatile private var kept: Option[Parts] = None
  /** Held while the parts change (a load, a release), so that concurrent calls load once. */
  val lock = new Object

  def current: Option[Parts] = kept

  def keep(parts: Parts): Unit = lock.synchronized { kept = Some(parts) }

  /** Drops `parts` (a call found one of them missing) if they are still the current ones. */
  def forget(parts: Parts): Unit = lock.synchronized {
    if (kept.exists(_ eq parts)) { kept = None; drop(sc, parts) }
  }

  /** Releases the current parts, if any, in the executors now. */
  def release(): Unit = lock.synchronized { kept.foreach(drop(sc, _)); kept = None }
}

private[spark] object LpfResidence {
  private val log = LoggerFactory.getLogger(classOf[LpfResidence])
  private val random = new SecureRandom()
  private val cleaner = Cleaner.create()

  /**
   * A resident graph: its id (16 random bytes, unique per load), the processes' parts in
   * pid order (the executor that keeps each, and its native bytes), and the edge column
   * whose weights it holds, if any.
   */
  final case class Parts(id: Array[Byte], parts: Seq[LpfGraphCall.Part], weight: Option[String])

  def newId(): Array[Byte] = {
    val id = new Array[Byte](16)
    random.nextBytes(id)
    id
  }

  def hex(id: Array[Byte]): String = id.map(b => f"${b & 0xff}%02x").mkString

  /**
   * Releases `parts` in the executors that keep them: a small job with one task per such
   * executor, each placed there (its preferred location) and dropping every part of the
   * graph its JVM keeps. A task that ran elsewhere leaves its executor's part: tried again,
   * three times in all. An executor that is gone took its parts with it; a stopped
   * SparkContext has no executors left.
   */
  def drop(sc: SparkContext, parts: Parts): Unit = if (!sc.isStopped) {
    val id = hex(parts.id)
    var left = parts.parts.map(p => (p.executor, p.host)).distinct
    var attempt = 0
    try while (left.nonEmpty && attempt < 3) {
      attempt += 1
      val ran = sc.makeRDD(left.map { case (e, h) => ((e, h), Seq(s"executor_${h}_$e")) })
        .map { _ => LpfNative.dropGraph(id); SparkEnv.get.executorId }
        .setName(s"LpfGraph release $id").collect().toSet
      left = left.filterNot { case (e, _) => ran(e) }
    } catch {
      case e: Exception if sc.isStopped => log.debug(s"release of graph $id: the SparkContext stopped", e)
    }
    if (left.nonEmpty)
      log.info(s"LpfGraph: graph $id: executors ${left.map(_._1).mkString(", ")} were not reached to release its " +
        "parts (gone, or busy elsewhere): they release them when they exit")
  }

  /** Releases `cell`'s parts (on a thread of its own) once `graph` is unreachable. */
  def releaseWhenUnreachable(graph: AnyRef, cell: LpfResidence): Unit =
    cleaner.register(graph, () => if (cell.current.isDefined) {
      val t = new Thread(() => try cell.release() catch {
        case e: Exception => log.warn("LpfGraph: releasing the parts of an unreachable graph failed", e)
      }, "lpf-graph-release")
      t.setDaemon(true)
      t.start()
    })
}
