package org.lpf.spark.examples

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.spark.lpf.LpfSparkAccess
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow
import org.apache.spark.sql.types.{DoubleType, LongType, StructField, StructType}
import org.lpf.spark.LpfNative

/**
 * Graph500 Kronecker (R-MAT) graphs as Parquet `(src, dst: bigint, w: double)`, from the
 * project's one generator (graphblas::kron through `LpfNative.rmatEdges`): the edges
 * relabelled, self-loops dropped, duplicates kept (as the native CLIs' `--rmat` input),
 * `w` an integer weight in 1..63 from the edge's index. The same (scale, edge factor,
 * seed) gives the same rows for any number of files. The tasks decode the native
 * triples into one reused internal row each: no `Row` per edge.
 */
object KronParquet {
  val Schema: StructType = StructType(Seq(StructField("src", LongType, nullable = false),
    StructField("dst", LongType, nullable = false), StructField("w", DoubleType, nullable = false)))

  /** Bytes of one native triple (long source, long target, double weight). */
  private val TripleBytes = 24
  /** Edges generated per native call: 24 MiB arrays, whatever the scale. */
  private val EdgesPerCall = 1L << 20
  /** Edges per Parquet file (one task each): 2 files at scale 20, 32 at scale 24. */
  private val EdgesPerFile = 1L << 23

  /** Generated edges (self-loops included) of the graph. */
  def generatedEdges(scale: Int, edgeFactor: Int): Long = edgeFactor.toLong << scale

  /** The edges of piece `piece` of `pieces`, decoded into one reused row. */
  private def rows(scale: Int, edgeFactor: Int, seed: Long, piece: Int, pieces: Int): Iterator[InternalRow] = {
    val b = ByteBuffer.wrap(LpfNative.rmatEdges(scale, edgeFactor, seed, piece, pieces)).order(ByteOrder.LITTLE_ENDIAN)
    val row = new SpecificInternalRow(Schema.map(_.dataType))
    Iterator.fill(b.remaining / TripleBytes) {
      row.setLong(0, b.getLong)
      row.setLong(1, b.getLong)
      row.setDouble(2, b.getDouble)
      row
    }
  }

  /**
   * The graph as a DataFrame of `files` partitions (default: one per 2^23 generated
   * edges, at least 2), each generating its share in pieces of about 2^20 edges.
   */
  def frame(spark: SparkSession, scale: Int, edgeFactor: Int = 16, seed: Long = 1L, files: Int = 0): DataFrame = {
    val m = generatedEdges(scale, edgeFactor)
    val parts = if (files > 0) files else math.max(2L, (m + EdgesPerFile - 1) / EdgesPerFile).toInt
    val perPart = math.max(1L, (m / parts + EdgesPerCall - 1) / EdgesPerCall).toInt
    val pieces = parts * perPart
    val rdd = spark.sparkContext.parallelize(0 until parts, parts).mapPartitions(_.flatMap { part =>
      (0 until perPart).iterator.flatMap(j => rows(scale, edgeFactor, seed, part * perPart + j, pieces))
    })
    LpfSparkAccess.internalFrame(spark, rdd, Schema)
  }

  /** Writes the graph to `path` as Parquet (replacing what is there); its rows. */
  def write(spark: SparkSession, path: String, scale: Int, edgeFactor: Int = 16, seed: Long = 1L,
            files: Int = 0): Long = {
    frame(spark, scale, edgeFactor, seed, files).write.mode("overwrite").parquet(path)
    spark.read.parquet(path).count()
  }

  /** Whether `path` holds a completely written Parquet data set (Spark's `_SUCCESS` marker). */
  def written(path: String): Boolean = new java.io.File(path, "_SUCCESS").isFile

  /**
   * The path of kron`scale` (edge factor 16, seed 1) in directory `data`, generated there
   * first when not completely written; `say` tells which.
   */
  def ensure(spark: SparkSession, data: String, scale: Int, say: String => Unit): String = {
    val path = new java.io.File(data, s"kron$scale.parquet").getPath
    if (written(path)) say(s"kron$scale: $path present, not generated again")
    else {
      say(s"kron$scale: generating ${generatedEdges(scale, 16)} edges into $path")
      val t0 = System.nanoTime
      val n = write(spark, path, scale)
      say(f"kron$scale: generated $n edges (self-loops dropped) in ${(System.nanoTime - t0) / 1e9}%.1f s")
    }
    path
  }

  /**
   * A source vertex for BFS and SSSP that every contender uses: the source of the first
   * edge that is no self-loop (a vertex with an out-edge), from the generator on the driver.
   */
  def firstSource(scale: Int, edgeFactor: Int = 16, seed: Long = 1L): Long = {
    val pieces = math.max(1L, generatedEdges(scale, edgeFactor) / 1024).toInt
    Iterator.range(0, pieces).map(k => LpfNative.rmatEdges(scale, edgeFactor, seed, k, pieces))
      .find(_.length > 0).map(b => ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong(0))
      .getOrElse(throw new IllegalStateException(s"kron$scale has no edge"))
  }
}
