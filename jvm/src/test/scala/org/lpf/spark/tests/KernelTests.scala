package org.lpf.spark.tests

import scala.collection.mutable
import scala.util.Random

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import org.lpf.spark._
import org.lpf.spark.tests.TestSupport._

/**
 * The graph kernels of LpfGraph (bfs, wcc, cdlp, sssp, lcc) as a real Spark application
 * (tests/spark/run.sh):
 *
 *   spark-submit --master M --class org.lpf.spark.tests.KernelTests \
 *     --jars lpf-spark_<scala>-<version>.jar,lpf-spark-examples_<scala>.jar lpf-spark-tests_<scala>.jar
 *
 * Every kernel on a DataFrame of string ids is compared, exactly, with a plain
 * reference written here from the Graphalytics semantics (a queue BFS, union-find,
 * Dijkstra, a label-propagation loop), not with the native algorithms. Prints
 * `RESULT ok|FAIL NAME` lines and `RESULT done`, as DataFrameTests.
 */
object KernelTests {
  private def test(name: String)(body: => Unit): Unit = { runCase(name)(body); () }

  /** A graph over ids: edges with integer weights (zero included), duplicates, self-loops, several components. */
  final case class Graph[K](ids: Seq[K], edges: Seq[(K, K, Double)])

  private def randomGraph(n: Int, m: Int, seed: Long): Graph[Int] = {
    val rnd = new Random(seed)
    val withEdges = n - n / 10 // the last tenth: vertices without edges
    // Two halves without edges between them: at least two components besides the isolated ones.
    val half = withEdges / 2
    val es = Seq.fill(m) {
      val lo = if (rnd.nextBoolean()) 0 else half
      val size = if (lo == 0) half else withEdges - half
      (lo + rnd.nextInt(size), lo + rnd.nextInt(size), rnd.nextInt(4).toDouble)
    }
    Graph(0 until n, es ++ Seq((0, 0, 1.0), (1, 2, 3.0), (1, 2, 1.0)))
  }

  // --- references (vertex -> value), from the semantics alone

  private def bfsRef[K](g: Graph[K], s: K): Map[K, Long] = {
    val out = g.edges.groupBy(_._1).map { case (u, es) => u -> es.map(_._2) }
    val depth = mutable.Map(s -> 0L)
    val queue = mutable.Queue(s)
    while (queue.nonEmpty) {
      val u = queue.dequeue()
      out.getOrElse(u, Nil).foreach(v => if (!depth.contains(v)) { depth(v) = depth(u) + 1; queue.enqueue(v) })
    }
    g.ids.map(v => v -> depth.getOrElse(v, Long.MaxValue)).toMap
  }

  private def wccRef[K](g: Graph[K])(implicit ord: Ordering[K]): Map[K, K] = {
    val parent = mutable.Map(g.ids.map(v => v -> v): _*)
    def find(v: K): K = { val p = parent(v); if (p == v) v else { val r = find(p); parent(v) = r; r } }
    g.edges.foreach { case (u, v, _) => val (a, b) = (find(u), find(v)); if (a != b) parent(ord.max(a, b)) = ord.min(a, b) }
    g.ids.map(v => v -> find(v)).toMap
  }

  private def ssspRef[K](g: Graph[K], s: K): Map[K, Double] = {
    val out = g.edges.groupBy(_._1).map { case (u, es) => u -> es.map(e => (e._2, e._3)) }
    val dist = mutable.Map(s -> 0.0)
    val done = mutable.Set.empty[K]
    val heap = mutable.PriorityQueue((0.0, s))(Ordering.by[(Double, K), Double](_._1).reverse)
    while (heap.nonEmpty) {
      val (d, u) = heap.dequeue()
      if (!done(u)) {
        done += u
        out.getOrElse(u, Nil).foreach { case (v, w) =>
          if (d + w < dist.getOrElse(v, Double.PositiveInfinity)) { dist(v) = d + w; heap.enqueue((d + w, v)) }
        }
      }
    }
    g.ids.map(v => v -> dist.getOrElse(v, Double.PositiveInfinity)).toMap
  }

  /** Synchronous label propagation over the distinct edges: in- and out-neighbours, ties to the smallest label. */
  private def cdlpRef[K](g: Graph[K], iterations: Int)(implicit ord: Ordering[K]): Map[K, K] = {
    val edges = g.edges.map(e => (e._1, e._2)).distinct
    var label = g.ids.map(v => v -> v).toMap
    for (_ <- 0 until iterations) {
      val counts = mutable.Map.empty[K, mutable.Map[K, Int]]
      def see(v: K, l: K): Unit = { val c = counts.getOrElseUpdate(v, mutable.Map.empty); c(l) = c.getOrElse(l, 0) + 1 }
      edges.foreach { case (u, v) => see(v, label(u)); see(u, label(v)) }
      label = label.map { case (v, l) =>
        v -> counts.get(v).fold(l)(c => c.toSeq.min(Ordering.by[(K, Int), (Int, K)](x => (-x._2, x._1))(Ordering.Tuple2(Ordering.Int, ord)))._1)
      }
    }
    label
  }

  /** LCC from its definition: N(v) = in- and out-neighbours but v; directed edges between distinct members. */
  private def lccRef[K](g: Graph[K]): Map[K, Double] = {
    val arcs = g.edges.collect { case (u, v, _) if u != v => (u, v) }.toSet
    val nbrs = mutable.Map[K, Set[K]]().withDefaultValue(Set.empty)
    arcs.foreach { case (u, v) => nbrs(u) += v; nbrs(v) += u }
    g.ids.map { v =>
      val nv = nbrs(v)
      val d = nv.size
      v -> (if (d < 2) 0.0 else arcs.count { case (a, b) => nv(a) && nv(b) }.toDouble / (d.toDouble * (d - 1)))
    }.toMap
  }

  private def collected[K, V](df: DataFrame, column: String): Map[K, V] = {
    val rows = df.collect()
    expect(df.columns.toSeq == Seq("id", column), s"columns ${df.columns.mkString(", ")}, expected id, $column")
    val m = rows.map(r => r.get(0).asInstanceOf[K] -> r.get(1).asInstanceOf[V]).toMap
    expect(m.size == rows.length, s"$column: an id appears twice")
    df.unpersist()
    m
  }

  private def same[K, V](got: Map[K, V], want: Map[K, V], what: String): Unit = {
    expect(got.keySet == want.keySet, s"$what: ids differ (${got.size} vs ${want.size} vertices; " +
      s"extra ${(got.keySet -- want.keySet).take(3)}, missing ${(want.keySet -- got.keySet).take(3)})")
    val bad = want.filter { case (k, v) => got(k) != v }
    expect(bad.isEmpty, s"$what: ${bad.size} of ${want.size} values differ from the reference, e.g. " +
      bad.take(3).map { case (k, v) => s"$k: got ${got(k)}, want $v" }.mkString("; "))
  }

  def main(args: Array[String]): Unit = {
    // Graphs of hundreds of edges: a few shuffle partitions, not 200 tasks per join.
    val spark = SparkSession.builder().appName("lpf-kernel-tests").config("spark.sql.shuffle.partitions", "4").getOrCreate()
    val sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    awaitExecutors(sc)
    println(s"RESULT info master=${sc.master} native=${LpfNative.version()}")
    val settings = LpfSettings(bootstrapTimeoutMs = 30000L, slotWaitMs = 30000L)
    val p = 2

    // String ids (not in the order of the numbers they stand for), a vertex DataFrame for the isolated ones.
    val n = 300
    val num = randomGraph(n, 900, 21L)
    val name = (0 until n).map(i => f"v${(i * 7919) % 1000}%03d-$i").toArray
    val g = Graph(num.ids.map(name), num.edges.map { case (u, v, w) => (name(u), name(v), w) })
    val edf = spark.createDataFrame(sc.parallelize(g.edges.map { case (u, v, w) => Row(u, v, w.toInt) }, 3),
      StructType(Seq(StructField("src", StringType), StructField("dst", StringType), StructField("w", IntegerType))))
    val vdf = spark.createDataFrame(sc.parallelize(g.ids.map(Row(_)), 2), StructType(Seq(StructField("id", StringType))))
    val graph = LpfGraph(edf, vdf)
    val source = name(1)

    test("kernels-string-ids-bfs-equals-a-queue-bfs") {
      val df = graph.bfs(source, p, 0, settings)
      expect(df.schema("id").dataType == StringType && df.schema("depth").dataType == LongType, s"schema ${df.schema}")
      val got = collected[String, Long](df, "depth")
      same(got, bfsRef(g, source), "BFS")
      expect(got.values.exists(_ == Long.MaxValue) && got.values.count(_ < Long.MaxValue) > 10, "BFS: a trivial graph")
    }

    test("kernels-string-ids-wcc-equals-union-find") {
      val got = collected[String, String](graph.wcc(p, 0, settings), "component")
      same(got, wccRef(g), "WCC")
      expect(got.values.toSet.size > 2, s"WCC: ${got.values.toSet.size} components")
    }

    test("kernels-string-ids-cdlp-equals-label-propagation") {
      for (it <- Seq(1, 5)) same(collected[String, String](graph.cdlp(it, p, 0, settings), "label"), cdlpRef(g, it), s"CDLP $it")
    }

    test("kernels-string-ids-sssp-equals-dijkstra") {
      val df = graph.sssp(source, "w", p, 0, settings)
      expect(df.schema("distance").dataType == DoubleType, s"schema ${df.schema}")
      val got = collected[String, Double](df, "distance")
      same(got, ssspRef(g, source), "SSSP")
      expect(got.values.exists(_.isInfinite), "SSSP: no unreachable vertex")
    }

    test("kernels-string-ids-lcc-equals-the-definition") {
      val df = graph.lcc(p, 0, settings)
      expect(df.schema("lcc").dataType == DoubleType, s"schema ${df.schema}")
      val got = collected[String, Double](df, "lcc")
      val want = lccRef(g)
      expect(got.keySet == want.keySet, s"LCC: ids differ (${got.size} vs ${want.size} vertices)")
      val bad = want.filter { case (k, v) => math.abs(got(k) - v) > 1e-12 }
      expect(bad.isEmpty, s"LCC: ${bad.size} values differ by more than 1e-12, e.g. " +
        bad.take(3).map { case (k, v) => s"$k: got ${got(k)}, want $v" }.mkString("; "))
      expect(got.values.count(_ > 0) > 10, "LCC: a trivial graph")
    }

    test("kernels-64-bit-ids-keep-their-order-and-type") {
      // Negative ids: WCC's smallest id and CDLP's smallest label in signed order.
      val ids = Array(-5L, Long.MinValue, 7L, Long.MaxValue, 0L, -1L)
      val lg = Graph(ids.toSeq, Seq((0, 1), (1, 2), (3, 4), (4, 3), (2, 2)).map { case (u, v) => (ids(u), ids(v), 1.0) })
      val df = spark.createDataFrame(sc.parallelize(lg.edges.map(e => Row(e._1, e._2))),
        StructType(Seq(StructField("src", LongType), StructField("dst", LongType))))
      val vs = spark.createDataFrame(sc.parallelize(Seq(Row(-1L))), StructType(Seq(StructField("id", LongType))))
      val h = LpfGraph(df, vs)
      same(collected[Long, Long](h.wcc(p, 0, settings), "component"), wccRef(lg), "WCC of 64-bit ids")
      same(collected[Long, Long](h.cdlp(2, p, 0, settings), "label"), cdlpRef(lg, 2), "CDLP of 64-bit ids")
      same(collected[Long, Long](h.bfs(-5, p, 0, settings), "depth"), bfsRef(lg, -5L), "BFS of 64-bit ids (an Int source)")
    }

    test("kernels-bad-source-column-weight-and-iterations-are-LpfExceptions-naming-them") {
      def argument(body: => Any, want: String): Unit = {
        val l = lpfException(thrown(body))
        expect(l.phase() == "argument" && l.permanent() && l.detail().contains(want), s"expected '$want', got ${l.getMessage}")
      }
      argument(graph.bfs("nobody"), "BFS source nobody is not a vertex")
      argument(graph.sssp("nobody", "w"), "SSSP source nobody is not a vertex")
      argument(graph.sssp(source, "weight"), "no column 'weight' for the weight ids")
      argument(graph.cdlp(-1), "iterations must be >= 0, got -1")
      val neg = edf.selectExpr("src", "dst", "case when src = '" + g.edges(5)._1 + "' then -2 else w end as w")
      argument(LpfGraph(neg, vdf).sssp(source, "w"), "has weight -2 in the column 'w': SSSP needs weights >= 0")
      val text = edf.selectExpr("src", "dst", "cast(w as string) as w")
      argument(LpfGraph(text, vdf).sssp(source, "w"), "'w' has type string; weights must be numbers")
    }

    test("request-layouts-written-here-are-the-ones-native-code-reads") {
      // Every field distinct, so that a shifted or swapped field shows.
      val pr = LpfPageRank.Params(0.5, 0.001, 17L, 3, "plan")
      val req = LpfPageRank.edgesRequest(pr, LpfEdges.batches(Iterator((5L, -6L), (7L, 8L)), LpfEdges.pairs), None)
      expect(LpfNative.describeRequest("pagerank", req) ==
        "pagerank alpha=0.5 tol=0.001 max_iters=17 threads=3 exchange=Plan progress=false edges [(5, 18446744073709551610), (7, 8)]",
        s"pagerank edges: ${LpfNative.describeRequest("pagerank", req)}")
      val numbered = LpfPageRank.edgesRequest(pr.copy(exchange = "allgather"), LpfEdges.batches(Iterator((0L, 1L)), LpfEdges.pairs), Some(9L))
      expect(LpfNative.describeRequest("pagerank", numbered).endsWith("exchange=Allgather progress=false numbered n=9 edges [(0, 1)]"),
        s"pagerank numbered: ${LpfNative.describeRequest("pagerank", numbered)}")
      val file = LpfPageRank.fileRequest(pr, "/data/g.el", "edges")
      expect(LpfNative.describeRequest("pagerank", file).endsWith("file /data/g.el format=Edges"),
        s"pagerank file: ${LpfNative.describeRequest("pagerank", file)}")
      val rmat = LpfPageRank.rmatRequest(pr, 12, 16, 0.57, 0.19, 0.18, 99L)
      expect(LpfNative.describeRequest("pagerank", rmat).endsWith("rmat scale=12 edge_factor=16 a=0.57 b=0.19 c=0.18 seed=99"),
        s"pagerank rmat: ${LpfNative.describeRequest("pagerank", rmat)}")
      val weighted = LpfEdges.Reader[(Long, Long, Double)](weighted = true, (it, b) => it.foreach(e => b.add(e._1, e._2, e._3)))
      val k = LpfKernels.request(LpfKernels.Sssp, 2, 11L, 4L, 0, LpfEdges.batches(Iterator((1L, 2L, 0.5), (3L, 4L, 0.0)), weighted))
      expect(LpfNative.describeRequest("graph-kernel", k) ==
        "graph-kernel Sssp threads=2 n=11 source=4 edges [(1, 2), (3, 4)] weights Some([0.5, 0.0])",
        s"graph-kernel sssp: ${LpfNative.describeRequest("graph-kernel", k)}")
      val c = LpfKernels.request(LpfKernels.Cdlp, 1, 3L, 0L, 6, LpfEdges.batches(Iterator((0L, 2L)), LpfEdges.pairs))
      expect(LpfNative.describeRequest("graph-kernel", c) == "graph-kernel Cdlp { iterations: 6 } threads=1 n=3 source=0 edges [(0, 2)] weights None",
        s"graph-kernel cdlp: ${LpfNative.describeRequest("graph-kernel", c)}")
    }

    test("pagerank-parameters-get-the-native-check-and-message") {
      // The message of the graphblas crate's check_parameters (the CLI's and every process's).
      val l = lpfException(thrown(graph.pageRank(1.5, 1e-7, 10)))
      expect(l.phase() == "argument" && l.detail() == "alpha must be in [0, 1], got 1.5", s"alpha: ${l.getMessage}")
      val t = lpfException(thrown(graph.pageRank(0.85, Double.NaN, 10)))
      expect(t.detail().startsWith("tol must be a finite number >= 0, got NaN"), s"tol: ${t.getMessage}")
      val m = lpfException(thrown(graph.pageRank(0.85, 1e-7, 0)))
      expect(m.detail() == "max_iters must be at least 1, got 0", s"maxIter: ${m.getMessage}")
    }

    println("RESULT done")
    spark.stop()
  }
}
