package org.lpf.spark.tests

import scala.util.Random

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import org.lpf.spark._
import org.lpf.spark.tests.TestSupport._

/**
 * The DataFrame API (LpfGraph) as a real Spark application (tests/spark/run.sh):
 *
 *   spark-submit --master M --class org.lpf.spark.tests.DataFrameTests \
 *     --jars lpf-spark_<scala>-<version>.jar,lpf-spark-examples_<scala>.jar lpf-spark-tests_<scala>.jar
 *
 * Ranks are compared with a plain power iteration written here (not the native code's
 * algorithm: dense vectors, one pass over the edge list per iteration). Prints
 * `RESULT ok|FAIL|skip NAME` lines and `RESULT done`, as PageRankTests.
 */
object DataFrameTests {



  private def test(name: String)(body: => Unit): Unit = { runCase(name)(body); () }

  /** A random graph over `n` vertices (numbers), with duplicates and self-loops, some vertices without edges. */
  private def randomEdges(n: Int, m: Int, seed: Long): Seq[(Int, Int)] = {
    val rnd = new Random(seed)
    val withEdges = n - n / 10 // the last tenth of the numbers never occurs in an edge
    Seq.fill(m)((rnd.nextInt(withEdges), rnd.nextInt(withEdges))) ++ Seq((0, 0), (1, 2), (1, 2))
  }

  /** got (id -> rank) against the reference (id -> rank): same ids, every one within `within`. */
  private def compare[K](got: Seq[(K, Double)], want: Map[K, Double], what: String, within: Double): Double = {
    expect(got.map(_._1).distinct.length == got.length, s"$what: an id appears twice in the ranks")
    expect(got.length == want.size, s"$what: ${got.length} vertices, the reference has ${want.size}")
    val worst = got.map { case (v, r) => math.abs(r - want.getOrElse(v, throw new Failed(s"$what: id $v is not a vertex"))) }.max
    expect(worst <= within, f"$what: largest difference from the power iteration $worst%.3e > $within%.0e")
    expect(math.abs(got.map(_._2).sum - 1.0) < 1e-12, s"$what: ranks sum to ${got.map(_._2).sum}")
    worst
  }



  /** docs/spark.md's Scala example of LpfGraph, verbatim between the markers (checked by the test). */
  private def docsExample(spark: SparkSession): Long = {
    // docs/spark.md LpfGraph example: begin
    import org.lpf.spark.LpfGraph
    val edges = spark.createDataFrame(Seq(("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"))).toDF("src", "dst")
    val vertices = spark.createDataFrame(Seq(Tuple1("e"))).toDF("id") // a vertex without edges
    val ranks = LpfGraph(edges, vertices).pageRank(alpha = 0.85, tol = 1e-9, maxIter = 100)
    ranks.show() // id: string, pagerank: double; every vertex once, the ranks sum to 1
    // docs/spark.md LpfGraph example: end
    val rows = ranks.collect()
    expect(rows.map(_.getString(0)).sorted.toSeq == Seq("a", "b", "c", "d", "e"), s"ids ${rows.map(_.get(0)).mkString(", ")}")
    expect(math.abs(rows.map(_.getDouble(1)).sum - 1.0) < 1e-12, "ranks do not sum to 1")
    ranks.unpersist()
    rows.length
  }

  /** The first ```scala block after `heading` in `doc`. */
  private def docsBlock(doc: String, heading: String): String = {
    val after = doc.indexOf(heading)
    expect(after >= 0, s"docs/spark.md has no heading '$heading'")
    val start = doc.indexOf("```scala\n", after) + "```scala\n".length
    doc.substring(start, doc.indexOf("```", start)).trim
  }

  def main(args: Array[String]): Unit = {
    val spark = SparkSession.builder().appName("lpf-dataframe-tests").getOrCreate()
    val sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    awaitExecutors(sc)
    println(s"RESULT info master=${sc.master} native=${LpfNative.version()}")
    val (alpha, tol, maxIter) = (0.85, 1e-13, 1000)
    val settings = LpfSettings(bootstrapTimeoutMs = 30000L, slotWaitMs = 30000L)
    val p = 2

    test("dataframe-string-ids-and-vertices-without-edges-equal-a-power-iteration") {
      val n = 400
      val edges = randomEdges(n, 2500, 11L)
      val name = (0 until n).map(i => s"vertex-$i-${(i * 7919) % 1000}").toArray
      val edf = spark.createDataFrame(sc.parallelize(edges.map { case (u, v) => Row(name(u), name(v), u * 0.5) }, 3),
        StructType(Seq(StructField("from", StringType), StructField("to", StringType), StructField("weight", DoubleType))))
      // Every vertex in the vertex DataFrame (the last tenth only there), some twice.
      val vdf = spark.createDataFrame(sc.parallelize((0 until n).map(i => Row(name(i), i)) ++ Seq(Row(name(3), 3)), 2),
        StructType(Seq(StructField("name", StringType), StructField("k", IntegerType))))
      val want = powerIteration(n, edges, alpha, tol, maxIter)._1.zipWithIndex.map { case (r, i) => name(i) -> r }.toMap
      val run = LpfGraph(edf, vdf, src = "from", dst = "to", id = "name")
        .pageRankRun(alpha, tol, maxIter, nprocs = p, settings = settings)
      val ranks = run.ranks
      expect(ranks.columns.toSeq == Seq("id", "pagerank"), s"columns ${ranks.columns.mkString(", ")}")
      expect(ranks.schema("id").dataType == StringType, s"id type ${ranks.schema("id").dataType}")
      expect(run.vertices == n && run.converged, s"${run.vertices} vertices, converged ${run.converged}")
      val d = compare(ranks.collect().toSeq.map(r => (r.getString(0), r.getDouble(1))), want, "string ids", 1e-10)
      ranks.unpersist()
      println(f"RESULT info string ids: $n vertices (${n / 10} without edges), ${run.edges} edges, " +
        f"${run.iterations} iterations, largest difference $d%.2e")
    }

    test("dataframe-64-bit-ids-equal-a-power-iteration") {
      val n = 500
      val edges = randomEdges(n, 3000, 12L).filter { case (u, v) => u < n - n / 10 && v < n - n / 10 }
      val rnd = new Random(13L)
      // Random 64-bit ids, negative ones and the extremes included.
      val ids = (Seq(Long.MinValue, Long.MaxValue, -1L, 0L) ++ Iterator.continually(rnd.nextLong()).take(4 * n)).distinct.take(n).toArray
      val edf = spark.createDataFrame(sc.parallelize(edges.map { case (u, v) => Row(ids(u), ids(v)) }, 3),
        StructType(Seq(StructField("src", LongType), StructField("dst", LongType))))
      val named = edges.flatMap { case (u, v) => Seq(u, v) }.distinct.sorted
      val renum = named.zipWithIndex.toMap
      val ref = powerIteration(named.length, edges.map { case (u, v) => (renum(u), renum(v)) }, alpha, tol, maxIter)._1
      val want = named.map(u => ids(u) -> ref(renum(u))).toMap
      val ranks = LpfGraph(edf).pageRank(alpha, tol, maxIter)
      expect(ranks.schema("id").dataType == LongType, s"id type ${ranks.schema("id").dataType}")
      val d = compare(ranks.collect().toSeq.map(r => (r.getLong(0), r.getDouble(1))), want, "64-bit ids", 1e-10)
      ranks.unpersist()
      // The same with a vertex DataFrame adding vertices without edges (the numbered path).
      val extra = Seq(42L, -42L)
      val vdf = spark.createDataFrame(sc.parallelize(extra.map(Row(_))), StructType(Seq(StructField("id", LongType))))
      val all = named.map(ids(_)) ++ extra
      val ref2 = powerIteration(all.length, edges.map { case (u, v) => (renum(u), renum(v)) }, alpha, tol, maxIter)._1
      val ranks2 = LpfGraph(edf, vdf).pageRank(alpha, tol, maxIter)
      val d2 = compare(ranks2.collect().toSeq.map(r => (r.getLong(0), r.getDouble(1))), all.zip(ref2).toMap,
        "64-bit ids with a vertex DataFrame", 1e-10)
      ranks2.unpersist()
      println(f"RESULT info 64-bit ids: ${named.length} vertices, largest difference $d%.2e; with 2 more vertices $d2%.2e")
    }

    test("dataframe-ingest-empty-and-one-edge-partitions-unions-and-huge-ids-give-the-same-ranks") {
      val rnd = new Random(22L)
      val ids = (Seq(Long.MinValue, Long.MaxValue, -1L, 0L) ++ Iterator.continually(rnd.nextLong()).take(3000)).distinct
      val edges = Seq.fill(20000)((ids(rnd.nextInt(ids.length)), ids(rnd.nextInt(ids.length)))) :+ ((Long.MinValue, Long.MaxValue))
      val (want, _) = referenceRanks(edges, alpha, tol, maxIter)
      def frame(parts: Seq[Seq[(Long, Long)]], nullable: Boolean = false): DataFrame = spark.createDataFrame(
        sc.parallelize(parts, parts.length).flatMap(x => x).map { case (u, v) => Row(u, v) },
        StructType(Seq(StructField("src", LongType, nullable), StructField("dst", LongType, nullable))))
      val (a, b) = edges.splitAt(edges.length / 2)
      val layouts = Seq(
        "5 partitions: empty ones, a single edge" -> frame(Seq(Seq(), edges.take(1), Seq(), edges.drop(1), Seq())),
        "p partitions, one empty" -> frame(Seq(edges, Seq())),
        "a union of two frames" -> frame(Seq(a)).union(frame(Seq(b))),
        "nullable columns, 3 partitions" -> frame(Seq(a, Seq(), b), nullable = true))
      val runs = layouts.map { case (what, df) =>
        val ranks = LpfGraph(df).pageRankRun(alpha, tol, maxIter, nprocs = p, settings = settings).ranks
        val got = try ranks.collect().toSeq.map(r => (r.getLong(0), r.getDouble(1))) finally ranks.unpersist()
        (what, compare(got, want, what, 1e-10), got.toMap)
      }
      for ((what, _, got) <- runs.tail; (v, r) <- got)
        expect(math.abs(r - runs.head._3(v)) < 1e-13, s"$what: vertex $v has rank $r, ${runs.head._1} ${runs.head._3(v)}")
      println(s"RESULT info ingest layouts, ${want.size} vertices, ${edges.length} edges: " +
        runs.map { case (w, d, _) => f"$w $d%.2e" }.mkString(", "))
    }

    test("dataframe-int-and-short-ids-keep-their-type") {
      val edges = Seq((0, 1), (1, 2), (2, 0), (2, 3))
      val want = powerIteration(4, edges, alpha, tol, maxIter)._1.zipWithIndex.map { case (r, i) => (i + 100) -> r }.toMap
      val ints = spark.createDataFrame(sc.parallelize(edges.map { case (u, v) => Row(u + 100, v + 100) }),
        StructType(Seq(StructField("src", IntegerType, nullable = false), StructField("dst", IntegerType, nullable = false))))
      val r1 = LpfGraph(ints).pageRank(alpha, tol, maxIter)
      expect(r1.schema("id").dataType == IntegerType, s"int ids came back as ${r1.schema("id").dataType}")
      compare(r1.collect().toSeq.map(r => (r.getInt(0), r.getDouble(1))), want, "int ids", 1e-10)
      r1.unpersist()
      val shorts = ints.selectExpr("cast(src as smallint) as src", "cast(dst as smallint) as dst")
      val r2 = LpfGraph(shorts).pageRank()
      expect(r2.schema("id").dataType == ShortType, s"short ids came back as ${r2.schema("id").dataType}")
      expect(r2.collect().map(_.getShort(0).toInt).sorted.toSeq == Seq(100, 101, 102, 103), "short ids")
      r2.unpersist()
    }

    test("dataframe-numbered-ids-over-many-partitions-come-back-to-their-own-vertices") {
      // The numbered path (a vertex DataFrame) with negative int ids whose order is not
      // the numbers' order, the distinct ids spread over 37 shuffle partitions (adaptive
      // execution off, so many hold one id or none): every rank must come back to its own
      // id (the ranks of a random graph differ, so a shifted or swapped id shows).
      val n = 60
      val edges = randomEdges(n, 300, 7L)
      val idOf = (k: Int) => -1000 + 37 * ((k * 17) % n) // a permutation of 0..n-1, spread out
      val want = powerIteration(n, edges, alpha, tol, maxIter)._1.zipWithIndex.map { case (r, k) => idOf(k) -> r }.toMap
      val edf = spark.createDataFrame(sc.parallelize(edges.map { case (u, v) => Row(idOf(u), idOf(v)) }, 3),
        StructType(Seq(StructField("src", IntegerType, nullable = false), StructField("dst", IntegerType, nullable = false))))
      val vdf = spark.createDataFrame(sc.parallelize((0 until n).map(k => Row(idOf(k))), 2),
        StructType(Seq(StructField("id", IntegerType, nullable = false))))
      val before = Seq("spark.sql.shuffle.partitions", "spark.sql.adaptive.enabled").map(k => k -> spark.conf.get(k))
      spark.conf.set("spark.sql.shuffle.partitions", "37")
      spark.conf.set("spark.sql.adaptive.enabled", "false")
      try {
        val ranks = LpfGraph(edf, vdf).pageRank(alpha, tol, maxIter)
        expect(ranks.schema("id").dataType == IntegerType, s"int ids came back as ${ranks.schema("id").dataType}")
        compare(ranks.collect().toSeq.map(r => (r.getInt(0), r.getDouble(1))), want, "numbered int ids over 37 partitions", 1e-10)
      } finally before.foreach { case (k, v) => spark.conf.set(k, v) }
    }

    test("dataframe-bad-column-name-is-an-LpfException-naming-it") {
      val edf = spark.createDataFrame(sc.parallelize(Seq(Row(1L, 2L))),
        StructType(Seq(StructField("src", LongType), StructField("dst", LongType))))
      val l = lpfException(thrown(LpfGraph(edf, src = "source").pageRank()))
      expect(l.phase() == "argument" && l.permanent() && l.detail().contains("no column 'source'") &&
        l.detail().contains("src, dst"), s"bad column: ${l.getMessage}")
      val v = lpfException(thrown(LpfGraph(edf, edf).pageRank()))
      expect(v.detail().contains("vertex DataFrame has no column 'id'"), s"bad vertex column: ${v.getMessage}")
    }

    test("dataframe-malformed-graph-is-an-LpfException-naming-the-problem") {
      val schema = StructType(Seq(StructField("src", StringType), StructField("dst", StringType)))
      val nulls = spark.createDataFrame(sc.parallelize(Seq(Row("a", "b"), Row("b", null), Row("c", null)), 2), schema)
      val l = lpfException(thrown(LpfGraph(nulls).pageRank()))
      expect(l.phase() == "argument" && l.detail().contains("the edge column 'dst' has null ids (the first: the edge (b, null))"), s"null ids: ${l.getMessage}")
      val longNulls = nulls.selectExpr("cast(length(src) as bigint) as src", "cast(length(dst) as bigint) as dst")
      val l2 = lpfException(thrown(LpfGraph(longNulls).pageRank()))
      expect(l2.detail().contains("the edge column 'dst' has null ids"), s"null long ids: ${l2.getMessage}")
      val intNulls = nulls.selectExpr("cast(length(src) as int) as src", "cast(length(dst) as int) as dst")
      val l2i = lpfException(thrown(LpfGraph(intNulls).pageRank()))
      expect(l2i.detail().contains("the edge column 'dst' has null ids"), s"null int ids: ${l2i.getMessage}")
      val doubles = spark.createDataFrame(sc.parallelize(Seq(Row(1.0, 2.0))),
        StructType(Seq(StructField("src", DoubleType), StructField("dst", DoubleType))))
      val l3 = lpfException(thrown(LpfGraph(doubles).pageRank()))
      expect(l3.detail().contains("'src' has type double"), s"double ids: ${l3.getMessage}")
      val mixed = nulls.na.drop().selectExpr("src", "cast(length(dst) as int) as dst")
      val l4 = lpfException(thrown(LpfGraph(mixed).pageRank()))
      expect(l4.detail().contains("mix strings and numbers"), s"mixed ids: ${l4.getMessage}")
      // No vertices at all: the native side's verdict, on every process, typed.
      val empty = spark.createDataFrame(sc.emptyRDD[Row], StructType(Seq(StructField("src", LongType), StructField("dst", LongType))))
      val l5 = lpfException(thrown(LpfGraph(empty).pageRankRun(nprocs = p, settings = settings)))
      expect(l5.detail().contains("no vertices"), s"empty graph: ${l5.getMessage}")
    }

    test("dataframe-docs-snippet-runs-and-is-the-documented-one") {
      // Run from the repository root (tests/spark/run.sh does): the doc and this source.
      val doc = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("docs/spark.md")), "UTF-8")
      val source = new String(java.nio.file.Files.readAllBytes(
        java.nio.file.Paths.get("jvm/src/test/scala/org/lpf/spark/tests/DataFrameTests.scala")), "UTF-8")
      val marked = source.split("\n").dropWhile(!_.contains("LpfGraph example: begin")).drop(1)
        .takeWhile(!_.contains("LpfGraph example: end")).map(_.trim).mkString("\n")
      val documented = docsBlock(doc, "## DataFrames and PySpark").split("\n").map(_.trim).mkString("\n")
      expect(marked.nonEmpty && marked == documented, s"docs/spark.md's LpfGraph example differs from the tested code:\n" +
        s"$documented\n---\n$marked")
      expect(docsExample(spark) == 5, "the example's graph has 5 vertices")
    }

    test("kron-parquet-scale-8-in-three-files-is-the-native-generators-graph") {
      // The scale benchmark's generator job (spark-examples' KronParquet): the rows Spark
      // writes from the executors' native parts, read back from Parquet, are the
      // generator's edges (self-loops dropped) and weights, as one native call on the
      // driver gives them.
      val dir = java.nio.file.Files.createTempDirectory("lpf-kron-parquet")
      try {
        val path = dir.resolve("kron8.parquet").toString
        val written = org.lpf.spark.examples.KronParquet.write(spark, path, 8, files = 3)
        val back = spark.read.parquet(path)
        expect(back.schema.map(f => (f.name, f.dataType)) == Seq(("src", LongType), ("dst", LongType), ("w", DoubleType)),
          s"schema ${back.schema.simpleString}")
        expect(back.rdd.getNumPartitions >= 1 && dir.resolve("kron8.parquet").toFile.list().count(_.endsWith(".parquet")) == 3,
          "three Parquet files")
        val b = java.nio.ByteBuffer.wrap(LpfNative.rmatEdges(8, 16, 1L, 0, 1)).order(java.nio.ByteOrder.LITTLE_ENDIAN)
        val native = Seq.fill(b.remaining / 24)((b.getLong, b.getLong, b.getDouble))
        val rows = back.collect().toSeq.map(r => (r.getLong(0), r.getLong(1), r.getDouble(2)))
        expect(written == native.length && rows.length == native.length,
          s"Parquet has ${rows.length} rows (written $written), the generator ${native.length} edges")
        val integral = (t: Seq[(Long, Long, Double)]) => t.map { case (u, v, w) => (u, v, w.toLong) }.sorted
        expect(integral(rows) == integral(native), "Parquet's edges and weights differ from the generator's")
        expect(native.length < 16 * 256 && native.forall { case (u, v, w) => u != v && w >= 1 && w <= 63 },
          "self-loops dropped, weights in 1..63")
        println(s"RESULT info kron8 Parquet: ${rows.length} edges of ${16 * 256} generated, 3 files")
      } finally org.apache.commons.io.FileUtils.deleteQuietly(dir.toFile)
    }

    println("RESULT done")
    spark.stop()
  }
}
