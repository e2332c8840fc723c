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
    val spark = testSession("lpf-kernel-tests")
    val sc = spark.sparkContext
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
      argument(graph.bfs("nobody"), "BFS source 'nobody' is not a vertex")
      argument(graph.sssp("nobody", "w"), "SSSP source 'nobody' is not a vertex")
      argument(graph.sssp(source, "weight"), "no column 'weight' for the edge weights")
      argument(graph.cdlp(-1), "iterations must be >= 0, got -1")
      val neg = edf.selectExpr("src", "dst", "case when src = '" + g.edges(5)._1 + "' then -2 else w end as w")
      argument(LpfGraph(neg, vdf).sssp(source, "w"), "has weight -2 in the column 'w': SSSP needs weights >= 0")
      val text = edf.selectExpr("src", "dst", "cast(w as string) as w")
      argument(LpfGraph(text, vdf).sssp(source, "w"), "'w' has type string; weights must be numbers")
    }

    test("request-layouts-written-here-are-the-ones-native-code-reads") {
      // Every field distinct, so that a shifted or swapped field shows.
      val pr = LpfPageRank.Params(0.5, 0.001, 17L, 3, "plan")
      val file = LpfPageRank.fileRequest(pr, "/data/g.el", "edges")
      expect(LpfNative.describeRequest("pagerank", file.buffer).endsWith("file /data/g.el format=Edges"),
        s"pagerank file: ${LpfNative.describeRequest("pagerank", file.buffer)}")
      val rmat = LpfPageRank.rmatRequest(pr, 12, 16, 0.57, 0.19, 0.18, 99L)
      expect(LpfNative.describeRequest("pagerank", rmat.buffer).endsWith("rmat scale=12 edge_factor=16 a=0.57 b=0.19 c=0.18 seed=99"),
        s"pagerank rmat: ${LpfNative.describeRequest("pagerank", rmat.buffer)}")
      // graph-call: string ids (an edge, its weight, a vertex id) and the source; the flags
      // of a resident graph's load and of a call on it; a refusal instead of the rows.
      import org.apache.spark.sql.catalyst.InternalRow
      import org.apache.spark.unsafe.types.UTF8String
      val u = (x: String) => UTF8String.fromString(x)
      val columns = LpfGraphCall.Columns("src", "dst", "id", Some("w"))
      val pieces = LpfGraphCall.edgePieces(Iterator(InternalRow(u("a"), u("\u00e9"), 0.5)), strings = true, weighted = true,
        columns).toSeq ++ LpfGraphCall.vertexPieces(Iterator(InternalRow(u(""))), strings = true, columns)
      val sssp = LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.Sssp, 2, strings = true, Some("a"), weights = true),
        pieces)
      expect(LpfNative.describeRequest("graph-call", sssp.buffer) == "graph-call Sssp threads=2 kind=2 flags=33 iterations=0 " +
        "alpha=0 tol=0 source='a' edges ['a', '\u00e9'] weights Some([0.5]) vertices ['']",
        s"graph-call sssp: ${LpfNative.describeRequest("graph-call", sssp.buffer)}")
      val longs = LpfGraphCall.edgePieces(LpfGraphCall.pairRows(Iterator((-5L, Long.MaxValue))), strings = false,
        weighted = false, columns).toSeq
      val ranks = LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.PageRank, 1, strings = false, None, 17, 0.5, 0.001,
        exchange = 2), longs)
      expect(LpfNative.describeRequest("graph-call", ranks.buffer) == "graph-call PageRank { alpha: 0.5, tol: 0.001, max_iters: 17, " +
        "exchange: Plan } threads=1 kind=1 flags=4 iterations=17 alpha=0.5 tol=0.001 source=none edges [-5, " +
        "9223372036854775807] weights None vertices []", s"graph-call pagerank: ${LpfNative.describeRequest("graph-call", ranks.buffer)}")
      val id = Array.tabulate[Byte](16)(i => (i + 1).toByte)
      val load = LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.Load, 1, strings = false, graphId = id, keep = true),
        longs)
      expect(LpfNative.describeRequest("graph-call", load.buffer).startsWith("graph-call Load threads=1 kind=1 flags=8 "),
        s"graph-call load: ${LpfNative.describeRequest("graph-call", load.buffer)}")
      val use = LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.Cdlp, 1, strings = false, iterations = 6, graphId = id,
        use = true), Seq.empty)
      expect(LpfNative.describeRequest("graph-call", use.buffer).startsWith("graph-call Cdlp { iterations: 6 } threads=1 kind=1 flags=16 "),
        s"graph-call use: ${LpfNative.describeRequest("graph-call", use.buffer)}")
      // Issue 26's fields: vertex marks after the vertex ids (read in pieces, gathered to the
      // section's tail), UNIQUE, NUMBERS, MIS's seed in the iterations.
      val marked = LpfGraphCall.vertexPieces(Iterator(InternalRow(7L, 1.toByte), InternalRow(-3L, 3.toByte),
        InternalRow(9L, 2.toByte)), strings = false, columns, pieceBytes = 8, marked = true).toSeq
      expect(marked.length == 3, s"${marked.length} vertex pieces of 8 bytes, not 3")
      val paths = LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.BfsPaths, 1, strings = false, iterations = 4,
        unique = true, marks = true), longs ++ marked)
      expect(LpfNative.describeRequest("graph-call", paths.buffer) == "graph-call BfsPaths { max_length: 4 } threads=1 " +
        "kind=1 flags=2304 iterations=4 alpha=0 tol=0 source=none edges [-5, 9223372036854775807] weights None vertices " +
        "[7, -3, 9] marks [1, 3, 2]", s"graph-call bfs paths: ${LpfNative.describeRequest("graph-call", paths.buffer)}")
      // The source list (string and integral ids), VECTOR, UNDIRECTED.
      val strEdge = LpfGraphCall.edgePieces(Iterator(InternalRow(u("x"), u(""))), strings = true, weighted = false, columns).toSeq
      val ppr = LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.GraphxPageRank, 1, strings = true, iterations = 10,
        alpha = 0.15, sources = Some(Seq("x", "")), vector = true), strEdge)
      expect(LpfNative.describeRequest("graph-call", ppr.buffer) == "graph-call GraphxPageRank { reset_probability: 0.15, " +
        "tol: 0.0, max_iters: 10, vector: true } threads=1 kind=2 flags=576 iterations=10 alpha=0.15 tol=0 source=none " +
        "sources=['x', ''] edges ['x', ''] weights None vertices []", s"graph-call ppr: ${LpfNative.describeRequest("graph-call", ppr.buffer)}")
      val landmarks = LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.Landmarks, 1, strings = false,
        sources = Some(Seq(-5L, Long.MaxValue)), undirected = true), longs)
      val described = LpfNative.describeRequest("graph-call", landmarks.buffer)
      expect(described.startsWith("graph-call ShortestPaths { undirected: true } threads=1 kind=1 flags=1088 ") &&
        described.contains(" sources=[-5, 9223372036854775807] edges [-5, 9223372036854775807] "), s"graph-call landmarks: $described")
      val scc = LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.Scc, 1, strings = false, numbers = true), longs)
      expect(LpfNative.describeRequest("graph-call", scc.buffer).startsWith("graph-call Scc threads=1 kind=1 flags=128 "),
        s"graph-call scc: ${LpfNative.describeRequest("graph-call", scc.buffer)}")
      val mis = LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.Mis, 1, strings = false, iterations = -9), longs)
      expect(LpfNative.describeRequest("graph-call", mis.buffer).startsWith("graph-call Mis { seed: -9 } threads=1 kind=1 " +
        "flags=0 iterations=-9 "), s"graph-call mis: ${LpfNative.describeRequest("graph-call", mis.buffer)}")
      val refused = LpfGraphCall.edgePieces(Iterator(InternalRow(null, u("b"), 1.0)), strings = true, weighted = true,
        columns).toSeq
      expect(LpfNative.describeRequest("graph-call", LpfGraphCall.request(LpfGraphCall.Call(LpfGraphCall.Wcc, 1,
        strings = true), refused).buffer) == "graph-call refused: the edge column 'src' has null ids (the first: the edge " +
        "(null, b)); every edge needs an id", "graph-call refusal")
    }

    test("a-request-past-2-gib-goes-into-native-memory-whole") {
      // A direct buffer stops at 2 GiB; kron24 in 2 processes needs about 2.1 GiB each.
      // One 1 MiB array stands for every piece, so the JVM heap holds 1 MiB.
      val piece = Array.tabulate[Byte](1 << 20)(i => i.toByte)
      val r = new LpfRequest()
      try {
        r.put(LpfRequest.HEAD, Array[Byte](7))
        for (_ <- 0 until 2049) r.put(LpfRequest.EDGES, piece)
        expect(r.bytes == (2049L << 20) + 1, s"${r.bytes} bytes")
        r.discard()
        expect(r.bytes == 0, s"${r.bytes} bytes after discard")
      } finally r.close()
      val e = thrown(r.put(LpfRequest.HEAD, piece))
      expect(e.isInstanceOf[IllegalStateException] && e.getMessage.contains("freed or handed over"), e.toString)
    }

    test("a-task-reads-its-rows-piece-by-piece-into-the-request") {
      // The JVM holds one piece at a time: a piece reads only its own rows, and each goes
      // to the request before the next is read; the head comes last, with the counts.
      var read = 0
      val edges = Iterator.tabulate(1000) { i => read += 1; (i.toLong, i + 1L) }
      val columns = LpfGraphCall.Columns("src", "dst", "id", None)
      val pieces = LpfGraphCall.edgePieces(LpfGraphCall.pairRows(edges), strings = false, weighted = false, columns,
        pieceBytes = 160)
      expect(read == 0, s"$read rows read before any piece was asked for")
      val first = pieces.next()
      expect(first.count == 10 && read == 10, s"the first piece holds ${first.count} edges, $read rows read")
      val puts = mutable.ArrayBuffer.empty[(Int, Int)] // (section, rows read when it came)
      val sink = new LpfEdges.RequestSink {
        def put(section: Int, bytes: Array[Byte]): Unit = puts += ((section, read))
        def discard(): Unit = puts.clear()
      }
      LpfGraphCall.write(LpfGraphCall.Call(LpfGraphCall.Wcc, 1, strings = false), pieces, LpfGraphCall.Room(0, 0), sink)
      expect(puts.map(_._2) == (20 to 1000 by 10) :+ 1000 && puts.init.forall(_._1 == LpfRequest.EDGES) &&
        puts.last._1 == LpfRequest.HEAD, s"sections and rows read as they came: $puts")
    }

    test("pagerank-parameters-get-the-native-check-and-message") {
      // The message of the graphblas crate's check_parameters (the CLI's and every process's).
      val l = lpfException(thrown(graph.pageRank(1.5, 1e-7, 10)))
      expect(l.phase() == "argument" && l.detail() == "alpha must be in [0, 1], got 1.5", s"alpha: ${l.getMessage}")
      val t = lpfException(thrown(graph.pageRank(0.85, Double.NaN, 10)))
      expect(t.detail().startsWith("tol must be a finite number >= 0, got NaN"), s"tol: ${t.getMessage}")
      val m = lpfException(thrown(graph.pageRank(0.85, 1e-7, 0)))
      // The API's name (Scala's and Python's alike), not the native crate's max_iters.
      expect(m.detail() == "maxIter must be at least 1, got 0", s"maxIter: ${m.getMessage}")
      expect(t.detail().endsWith("(0 runs exactly maxIter iterations)"), s"tol: ${t.getMessage}")
    }

    /** The LpfException (phase argument, host driver, permanent) of `body`, whose message must contain every one of `want`. */
    def refused(body: => Any, want: String*): LpfException = {
      val l = lpfException(thrown(body))
      expect(l.phase() == "argument" && l.permanent() && l.host() == "driver" && l.pid() == -1 &&
        want.forall(l.detail().contains), s"expected an argument error on the driver with ${want.mkString("'", "', '", "'")}, " +
        s"got ${l.getMessage} (host ${l.host()}, permanent ${l.permanent()})")
      l
    }

    // Issue 25: a call from DataFrames to a computed DataFrame is one barrier stage (plus,
    // when the rows cannot end a barrier stage as they are, the stage that moves them, and
    // the stage that reads the replies), for every kernel, integral and string ids; 28-47
    // stages before (numbering by Spark jobs, two joins, routing the results back).
    test("a-call-runs-at-most-3-stages-every-kernel-integral-and-string-ids") {
      val longEdges = spark.createDataFrame(sc.parallelize(num.edges.map { case (u, v, w) => Row(u.toLong * 1000003L - 7L,
        v.toLong * 1000003L - 7L, w) }, 2), StructType(Seq(StructField("src", LongType), StructField("dst", LongType),
        StructField("w", DoubleType))))
      val longGraph = LpfGraph(longEdges)
      val longSource = 1L * 1000003L - 7L
      for ((kind, h, s) <- Seq(("string ids, a vertex DataFrame", graph, source: Any),
                               ("bigint ids, edges in 2 partitions", longGraph, longSource: Any))) {
        val calls: Seq[(String, () => DataFrame)] = Seq(
          "bfs" -> (() => h.bfs(s, p, 0, settings)), "wcc" -> (() => h.wcc(p, 0, settings)),
          "cdlp" -> (() => h.cdlp(3, p, 0, settings)), "sssp" -> (() => h.sssp(s, "w", p, 0, settings)),
          "lcc" -> (() => h.lcc(p, 0, settings)), "pageRank" -> (() => h.pageRankRun(nprocs = p, settings = settings).ranks))
        val seen = scala.collection.mutable.ArrayBuffer.empty[String]
        for ((name, call) <- calls) {
          val (df, stages) = stagesOf(sc, s"$name, $kind")(call())
          seen += s"$name $stages"
          expect(stages >= 1 && stages <= 3, s"$name ($kind) ran $stages Spark stages, at most 3 expected")
          val rows = df.count()
          expect(rows == (if (h eq graph) n.toLong else longGraph.edges.select("src").union(longGraph.edges.select("dst"))
            .distinct().count()), s"$name ($kind): $rows rows")
          df.unpersist()
        }
        println(s"RESULT info stages per call ($kind): ${seen.mkString(", ")}")
      }
    }

    /** Runs `body` in a job group of its own; fails if it started any Spark job. */
    def withoutJobs(what: String)(body: => Unit): Unit = {
      val group = s"no-jobs-${System.nanoTime}"
      sc.setJobGroup(group, what)
      try body finally sc.clearJobGroup()
      val jobs = sc.statusTracker.getJobIdsForGroup(group)
      expect(jobs.isEmpty, s"$what started ${jobs.length} Spark jobs")
    }

    // Issue 24 item 2: a source that was not exactly an id ran from another vertex (Spark's
    // cast: 1.5 -> 1, true -> 1, 2.99 -> 2; with ANSI off 300 -> 44 as a tinyint, 2^32 + 1 -> 1 as an int).
    test("kernels-a-source-not-exactly-an-id-is-refused-ansi-on-and-off") {
      def graphOf(t: DataType, ids: Seq[Any]): LpfGraph = {
        val rows = ids.zip(ids.tail :+ ids.head).map { case (u, v) => Row(u, v, 1) }
        LpfGraph(spark.createDataFrame(sc.parallelize(rows, 2), StructType(Seq(StructField("src", t),
          StructField("dst", t), StructField("w", IntegerType)))))
      }
      val bigints = graphOf(LongType, Seq(1L, 2L, 3L, 44L))
      val tinyints = graphOf(ByteType, Seq(1, 2, 3, 44).map(_.toByte))
      val ints = graphOf(IntegerType, Seq(1, 2, 3, 44))
      val strings = graphOf(StringType, Seq("1", "2", "5"))
      val saved = spark.conf.getOption("spark.sql.ansi.enabled")
      try for (ansi <- Seq("true", "false")) {
        spark.conf.set("spark.sql.ansi.enabled", ansi)
        withoutJobs(s"the refused sources (ANSI $ansi)") {
          refused(bigints.bfs(1.5, p, 0, settings), "BFS source 1.5 is a Double, not an id of type bigint")
          refused(bigints.bfs(true, p, 0, settings), "BFS source true is a Boolean, not an id of type bigint")
          refused(bigints.sssp(2.99, "w", p, 0, settings), "SSSP source 2.99 is a Double, not an id of type bigint")
          refused(bigints.bfs(2.0, p, 0, settings), "BFS source 2.0 is a Double", "refused even when whole")
          refused(bigints.bfs(2.0f, p, 0, settings), "BFS source 2.0 is a Float")
          refused(bigints.bfs(java.math.BigDecimal.ONE, p, 0, settings), "BFS source 1 is a BigDecimal")
          refused(bigints.bfs('a', p, 0, settings), "BFS source a is a Character")
          refused(bigints.bfs("1", p, 0, settings), "BFS source '1' is a string, but the ids are of type bigint")
          refused(bigints.bfs(null, p, 0, settings), "BFS source is null; give an id of type bigint")
          refused(bigints.bfs(BigInt(2).pow(64) + 1, p, 0, settings),
            "BFS source 18446744073709551617 is outside the range of the ids' type bigint")
          refused(bigints.bfs(java.math.BigInteger.valueOf(2).pow(63), p, 0, settings),
            "BFS source 9223372036854775808 is outside the range of the ids' type bigint")
          refused(tinyints.bfs(300, p, 0, settings), "BFS source 300 is outside the range of the ids' type tinyint (-128 to 127)")
          refused(tinyints.sssp(-129L, "w", p, 0, settings), "SSSP source -129 is outside the range of the ids' type tinyint")
          refused(ints.bfs((1L << 32) + 1, p, 0, settings), "BFS source 4294967297 is outside the range of the ids' type int")
          refused(strings.bfs(5, p, 0, settings), "BFS source 5 is a number, but the ids are strings")
          refused(strings.sssp(1.0, "w", p, 0, settings), "SSSP source 1.0 is a Double, not an id of type string")
        }
        // What is exactly an id runs from that id, whatever its integral JVM type.
        def depths(df: DataFrame): Map[Any, Long] = collected[Any, Long](df, "depth")
        expect(depths(tinyints.bfs(44, p, 0, settings)) == Map(44.toByte -> 0L, 1.toByte -> 1L, 2.toByte -> 2L, 3.toByte -> 3L),
          s"tinyint BFS from 44 (ANSI $ansi)")
        expect(depths(bigints.bfs(BigInt(3), p, 0, settings))(3L) == 0L, s"bigint BFS from BigInt(3) (ANSI $ansi)")
        expect(depths(ints.bfs(2.toShort, p, 0, settings))(2) == 0L, s"int BFS from a Short 2 (ANSI $ansi)")
        expect(depths(strings.bfs("5", p, 0, settings))("5") == 0L, s"string BFS from '5' (ANSI $ansi)")
      } finally saved match {
        case Some(v) => spark.conf.set("spark.sql.ansi.enabled", v)
        case None => spark.conf.unset("spark.sql.ansi.enabled")
      }
    }

    // Issue 24 item 9: negative counts meant "the default".
    test("negative-process-and-thread-counts-are-refused-naming-the-parameter") {
      val edges = sc.parallelize(Seq((0L, 1L), (1L, 2L), (2L, 0L)), 2)
      val file = java.io.File.createTempFile("lpf-counts", ".el")
      file.deleteOnExit()
      java.nio.file.Files.write(file.toPath, "0 1\n1 2\n2 0\n".getBytes("UTF-8"))
      val nprocs = "nprocs must be >= 0 (0 lets the bridge choose), got -3"
      val threads = "threads must be >= 0 (0: spark.task.cpus), got -1"
      withoutJobs("the refused counts") {
        refused(graph.bfs(source, -3, 0, settings), nprocs)
        refused(graph.bfs(source, 0, -1, settings), threads)
        refused(graph.wcc(-3, 0, settings), nprocs)
        refused(graph.cdlp(2, 0, -1, settings), threads)
        refused(graph.sssp(source, "w", -3, 0, settings), nprocs)
        refused(graph.lcc(0, -1, settings), threads)
        refused(graph.pageRankRun(nprocs = -3), nprocs)
        refused(graph.pageRankRun(threads = -1), threads)
        refused(LpfPageRank.run(edges, nprocs = -3), nprocs)
        refused(LpfPageRank.run(edges, threads = -1), threads)
        refused(LpfPageRank.fromFile(sc, file.getPath, nprocs = -3), nprocs)
        refused(LpfPageRank.fromFile(sc, file.getPath, threads = -1), threads)
        refused(LpfPageRank.rmat(sc, 4, nprocs = -3), nprocs)
      }
      val e = thrown(LpfSettings(threads = -1))
      expect(e.isInstanceOf[IllegalArgumentException] && e.getMessage.contains("LpfSettings.threads must be >= 0 (0: one), got -1"),
        s"LpfSettings(threads = -1): ${messages(e)}")
      // 0 stays the default.
      val r = LpfPageRank.fromFile(sc, file.getPath, nprocs = 0, threads = 0, settings = settings)
      try expect(r.vertices == 3 && r.processes >= 1, s"fromFile with counts 0: ${r.vertices} vertices, ${r.processes} processes")
      finally r.unpersist()
    }

    // Issue 24 item 12: one wording per parameter, the names both APIs share, no Scala syntax.
    test("argument-messages-name-the-parameters-as-the-apis-do") {
      val w = refused(graph.sssp(source, "weight"), "the edge DataFrame has no column 'weight' for the edge weights",
        "sssp's weightCol names that column")
      expect(!w.detail().contains("LpfGraph(") && !w.detail().contains("weight ids"), s"weightCol: ${w.detail()}")
      val v = refused(LpfGraph(edf, vdf, id = "name"), "the vertex DataFrame has no column 'name' for the vertex ids",
        "LpfGraph's id names that column")
      expect(!v.detail().contains("id ids"), s"vertex column: ${v.detail()}")
      val s = refused(LpfGraph(edf, src = "from"), "the edge DataFrame has no column 'from' for the source ids",
        "LpfGraph's src names that column")
      expect(!s.detail().contains(" = "), s"src: Scala syntax in ${s.detail()}")
      refused(LpfGraph(edf, dst = "to"), "no column 'to' for the target ids", "LpfGraph's dst names that column")
      // Driver-side checks name the host "driver", all of them.
      val slots = lpfException(thrown(graph.bfs(source, 64, 0, settings))) // more than the task slots
      expect(slots.phase() == "check" && slots.host() == "driver" && slots.detail().contains("task slots"),
        s"too many processes: ${slots.getMessage} (host ${slots.host()})")
      val timeout = lpfException(thrown(LpfHook.checkConf(sc.getConf.clone().remove("spark.barrier.sync.timeout"), sc.master, 2)))
      expect(timeout.host() == "driver", s"barrier timeout check: host ${timeout.host()}")
    }

    println("RESULT done")
    spark.stop()
  }
}
