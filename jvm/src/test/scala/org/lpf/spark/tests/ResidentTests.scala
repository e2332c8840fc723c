package org.lpf.spark.tests

import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.util.Random

import org.apache.spark.SparkEnv
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import org.lpf.spark._
import org.lpf.spark.tests.TestSupport._

/**
 * Resident graphs (`LpfGraph.cache`, issue 25) as a real Spark application on
 * local-cluster[2,1,1024] (tests/spark/run.sh): calls on a cached graph read no
 * DataFrame, run one stage and give what an uncached call gives; two graphs at once and
 * two driver threads; release on unpersist; 100 cache/unpersist cycles leave the
 * executors' memory and threads flat; an executor killed between two calls. Prints
 * `RESULT ok|FAIL NAME` lines and `RESULT done`.
 */
object ResidentTests {
  private def test(name: String)(body: => Unit): Unit = { runCase(name)(body); () }

  def main(args: Array[String]): Unit = {
    val spark = testSession("lpf-resident-tests")
    val sc = spark.sparkContext
    val settings = LpfSettings(bootstrapTimeoutMs = 30000L, slotWaitMs = 30000L)
    val p = 2

    // String ids, weights, isolated vertices; every row read is counted.
    val rnd = new Random(7L)
    val n = 400
    val name = (0 until n).map(i => f"n${(i * 7919) % 1000}%03d-$i")
    val edgeRows = Seq.fill(1500)((rnd.nextInt(n - 40), rnd.nextInt(n - 40), rnd.nextInt(5))).map {
      case (u, v, w) => Row(name(u), name(v), w)
    }
    val read = sc.longAccumulator("edge rows read")
    val edges = spark.createDataFrame(sc.parallelize(edgeRows, 3).map { r => read.add(1); r },
      StructType(Seq(StructField("src", StringType), StructField("dst", StringType), StructField("w", IntegerType))))
    val vertices = spark.createDataFrame(sc.parallelize(name.map(Row(_)), 2), StructType(Seq(StructField("id", StringType))))
    val source = name(1)

    def rowsOf(df: DataFrame): Map[Any, Any] = {
      val m = df.collect().map(r => r.get(0) -> r.get(1)).toMap
      df.unpersist()
      m
    }
    /** Every kernel's result on `g`, by name. */
    def results(g: LpfGraph): Map[String, Map[Any, Any]] = Map(
      "bfs" -> rowsOf(g.bfs(source, p, 0, settings)), "wcc" -> rowsOf(g.wcc(p, 0, settings)),
      "cdlp" -> rowsOf(g.cdlp(4, p, 0, settings)), "sssp" -> rowsOf(g.sssp(source, "w", p, 0, settings)),
      "lcc" -> rowsOf(g.lcc(p, 0, settings)),
      "pagerank" -> rowsOf(g.pageRankRun(0.85, 1e-9, 200, p, 0, settings).ranks))
    val uncached = results(LpfGraph(edges, vertices))
    expect(uncached.values.forall(_.size == n), s"uncached results of ${uncached.values.map(_.size)} vertices, not $n")

    /** Per executor (one barrier task on each): its id, VmRSS in KiB, threads, and the graph parts it keeps. */
    def executors(): Seq[(String, Long, Long, String)] =
      sc.parallelize(0 until p, p).barrier().mapPartitions { _ =>
        val status = scala.io.Source.fromFile("/proc/self/status").getLines().toSeq
        def field(k: String) = status.find(_.startsWith(k)).map(_.split("\\s+")(1).toLong).getOrElse(-1L)
        Iterator((SparkEnv.get.executorId, field("VmRSS:"), field("Threads:"), LpfNative.keptGraphs()))
      }.collect().toSeq.sortBy(_._1)

    test("resident-calls-read-no-dataframe-run-one-stage-and-equal-uncached-calls") {
      val g = LpfGraph(edges, vertices).cache()
      expect(!g.isResident, "resident before any call")
      read.reset()
      g.load("w", p, settings)
      expect(read.value == edgeRows.length, s"the load read ${read.value} edge rows, not ${edgeRows.length}")
      expect(g.isResident && g.residentBytes.size == p && g.residentBytes.values.forall(_ > 0),
        s"resident bytes per executor after load: ${g.residentBytes}")
      read.reset()
      val cached = results(g)
      expect(read.value == 0, s"calls on the cached graph read ${read.value} edge rows")
      for ((k, want) <- uncached) expect(cached(k) == want, s"$k on the cached graph differs from the uncached call")
      val (_, stages) = stagesOf(sc, "a BFS on the cached graph")(g.bfs(source, p, 0, settings))
      expect(stages == 1, s"a BFS on the cached graph ran $stages Spark stages, not 1")
      val run = g.lastRun.get
      expect(run.kernel == "BFS" && run.vertices == n && run.idSeconds >= 0, s"lastRun $run")
      g.unpersist()
      expect(!g.isResident && executors().forall(_._4.isEmpty), s"parts left after unpersist: ${executors()}")
    }

    test("resident-graph-loaded-by-a-call-and-reloaded-with-weights-for-sssp") {
      val g = LpfGraph(edges, vertices).cache()
      read.reset()
      expect(rowsOf(g.bfs(source, p, 0, settings)) == uncached("bfs"), "the first BFS (which loads) differs")
      val afterLoad = read.value
      expect(afterLoad == edgeRows.length, s"the first call read $afterLoad rows")
      expect(rowsOf(g.wcc(p, 0, settings)) == uncached("wcc"), "WCC on the kept graph differs")
      expect(read.value == afterLoad, "WCC on the kept graph read rows")
      // SSSP needs the weights the kept graph lacks: loaded again, with them, then kept.
      expect(rowsOf(g.sssp(source, "w", p, 0, settings)) == uncached("sssp"), "SSSP (reloading) differs")
      expect(read.value == 2 * afterLoad, s"SSSP did not reload: ${read.value} rows read")
      expect(rowsOf(g.bfs(source, p, 0, settings)) == uncached("bfs"), "BFS on the weighted kept graph differs")
      expect(read.value == 2 * afterLoad && executors().map(_._4.split("\n").count(_.nonEmpty)).sum == p,
        s"after reload: ${read.value} rows read, parts ${executors().map(_._4)}")
      g.unpersist()
    }

    test("resident-two-graphs-at-once-and-two-driver-threads-on-one-graph") {
      val g1 = LpfGraph(edges, vertices).cache().load("w", p, settings)
      val g2 = LpfGraph(edges.where("w > 0")).cache().load(null, p, settings)
      val want2 = rowsOf(LpfGraph(edges.where("w > 0")).wcc(p, 0, settings))
      val kept = executors().map(_._4.split("\n").count(_.nonEmpty)).sum
      expect(kept == 2 * p, s"$kept parts kept for two graphs of $p parts")
      val calls = Seq(Future(rowsOf(g1.cdlp(4, p, 0, settings))), Future(rowsOf(g1.sssp(source, "w", p, 0, settings))),
        Future(rowsOf(g2.wcc(p, 0, settings))))
      val Seq(c, s, w) = calls.map(Await.result(_, 5.minutes))
      expect(c == uncached("cdlp") && s == uncached("sssp") && w == want2, "concurrent calls differ from separate runs")
      g1.unpersist(); g2.unpersist()
      expect(executors().forall(_._4.isEmpty), s"parts left: ${executors().map(_._4)}")
    }

    test("resident-graph-beyond-the-executors-memory-limit-is-an-LpfException-naming-it") {
      val tight = settings.copy(residentBytes = 4096L)
      val g = LpfGraph(edges, vertices)
      val l = lpfException(thrown(g.load(null, p, tight)))
      expect(l.phase() == "argument" && l.permanent() && l.detail().contains("bytes of native memory") &&
        l.detail().contains("spark.executor.memoryOverhead") && l.detail().contains("its 4096 bytes left"),
        s"beyond the limit: ${l.getMessage}")
      expect(!g.isResident && executors().forall(_._4.isEmpty), s"parts kept after the refusal: ${executors().map(_._4)}")
      // The same graph within the default limit (this executor's memoryOverhead, 384 MiB).
      g.load(null, p, settings)
      expect(g.isResident, "not resident within the default limit")
      g.unpersist()
    }

    test("resident-100-cache-call-unpersist-cycles-leave-memory-and-threads-flat") {
      def cycle(): Unit = {
        val g = LpfGraph(edges, vertices).cache()
        g.bfs(source, p, 0, settings).count()
        g.unpersist()
      }
      (1 to 10).foreach(_ => cycle())
      val before = executors()
      (1 to 100).foreach(_ => cycle())
      val after = executors()
      val grown = before.zip(after).map { case (b, a) => (a._2 - b._2) / 1024 }
      val threads = before.zip(after).map { case (b, a) => a._3 - b._3 }
      println(s"RESULT info 100 cycles: RSS grew ${grown.mkString(", ")} MiB, threads ${threads.mkString(", ")}")
      expect(before.map(_._1) == after.map(_._1), s"executors changed: ${before.map(_._1)} -> ${after.map(_._1)}")
      expect(grown.forall(_ < 64) && threads.forall(_ <= 2) && after.forall(_._4.isEmpty),
        s"after 100 cycles: RSS grew ${grown.mkString(", ")} MiB, threads ${threads.mkString(", ")}, parts ${after.map(_._4)}")
    }

    test("resident-an-executor-killed-between-two-calls-still-gives-the-right-answer") {
      val g = LpfGraph(edges, vertices).cache().load(null, p, settings)
      expect(rowsOf(g.wcc(p, 0, settings)) == uncached("wcc"), "WCC before the kill differs")
      // Kill one executor's JVM; the standalone master starts another in its place.
      val victim = sc.parallelize(0 until p, p).barrier().mapPartitions { _ =>
        Iterator((SparkEnv.get.executorId, ProcessHandle.current().pid()))
      }.collect().minBy(_._1)
      new ProcessBuilder("kill", "-9", victim._2.toString).inheritIO().start().waitFor()
      val t0 = System.nanoTime
      while (sc.statusTracker.getExecutorInfos.length > p && System.nanoTime - t0 < 60e9.toLong) Thread.sleep(200)
      Thread.sleep(2000)
      awaitExecutors(sc)
      read.reset()
      expect(rowsOf(g.wcc(p, 0, settings)) == uncached("wcc"), "WCC after the kill differs")
      expect(read.value == edgeRows.length, s"the call after the kill read ${read.value} rows (a reload reads all)")
      expect(rowsOf(g.bfs(source, p, 0, settings)) == uncached("bfs"), "BFS on the reloaded graph differs")
      g.unpersist()
    }

    println("RESULT done")
    spark.stop()
  }
}
