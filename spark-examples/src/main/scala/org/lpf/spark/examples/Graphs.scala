package org.lpf.spark.examples

import org.apache.spark.SparkContext
import org.apache.spark.rdd.RDD

/**
 * Graphs for the examples: a Graph500 R-MAT generator that runs in Spark and gives the
 * same edge set for any number of partitions, and a reader of edge-list / MatrixMarket
 * text files into an RDD of (source, target).
 */
object Graphs {
  /** SplitMix64's finaliser: a bijective 64-bit mix. */
  private def mix(z0: Long): Long = {
    var z = z0
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL
    z ^ (z >>> 31)
  }

  /** A uniform double in [0, 1) from a hash. */
  private def unit(h: Long): Double = (h >>> 11) * (1.0 / (1L << 53))

  /**
   * A bijection of [0, 2^scale): rounds of multiply-by-odd, add and xor-shift, each a
   * bijection modulo 2^scale (the random vertex relabelling of Graph500).
   */
  final class Relabel(scale: Int, seed: Long) extends Serializable {
    private val mask = if (scale >= 63) -1L else (1L << scale) - 1
    private val shift = math.max(1, scale / 2)
    private val mul = Array.tabulate(3)(i => mix(seed ^ (0x5bd1e995L * (i + 1))) | 1L)
    private val add = Array.tabulate(3)(i => mix(seed + 0x9e3779b97f4a7c15L * (i + 7)))
    def apply(x0: Long): Long = {
      var x = x0
      var i = 0
      while (i < 3) {
        x = (x * mul(i) + add(i)) & mask
        x = x ^ (x >>> shift)
        i += 1
      }
      x
    }
  }

  /**
   * Edge `e` of the R-MAT graph before relabelling: at each of `scale` levels a quadrant
   * chosen with probabilities a, b, c, d = 1 - a - b - c from a hash of (seed, e, level),
   * so every edge depends on its index only.
   */
  def rmatEdge(e: Long, scale: Int, a: Double, b: Double, c: Double, seed: Long): (Long, Long) = {
    var u = 0L
    var v = 0L
    val base = mix(seed ^ mix(e))
    var level = 0
    while (level < scale) {
      val r = unit(mix(base + 0x9e3779b97f4a7c15L * (level + 1)))
      val (du, dv) = if (r < a) (0, 0) else if (r < a + b) (0, 1) else if (r < a + b + c) (1, 0) else (1, 1)
      u = (u << 1) | du
      v = (v << 1) | dv
      level += 1
    }
    (u, v)
  }

  /**
   * The Graph500 Kronecker / R-MAT graph of 2^scale vertices and edgeFactor * 2^scale
   * generated edges (A = 0.57, B = C = 0.19 by default), vertices relabelled at random,
   * self-loops and duplicates removed, in `partitions` partitions. Deterministic: the
   * same (scale, edgeFactor, seed) gives the same edge set for any partitioning.
   */
  def rmat(sc: SparkContext, scale: Int, edgeFactor: Int = 16, seed: Long = 1L, partitions: Int = 2,
           a: Double = 0.57, b: Double = 0.19, c: Double = 0.19): RDD[(Long, Long)] = {
    require(scale >= 1 && scale <= 40, s"scale $scale outside 1..40")
    val m = edgeFactor.toLong << scale
    val relabel = new Relabel(scale, seed)
    sc.range(0L, m, 1L, partitions).map { e =>
      val (u, v) = rmatEdge(e, scale, a, b, c, seed)
      (relabel(u), relabel(v))
    }.filter { case (u, v) => u != v }.distinct(partitions)
  }

  /**
   * The edges of a text file: MatrixMarket coordinate (`.mtx`: `%` comments, a size
   * line, then `row col [value]`, 1-based, kept as in the file; `symmetric` adds the
   * mirrored entries) or an edge list (`src dst` per line, `#`/`%` comments). An entry
   * (i, j) of a matrix is the edge i -> j, as in the graphblas crate's readers.
   */
  def readEdges(sc: SparkContext, path: String, partitions: Int): RDD[(Long, Long)] = {
    val lines = sc.textFile(path, partitions)
    val mtx = path.endsWith(".mtx")
    val symmetric = mtx && {
      val first = lines.first().toLowerCase
      first.startsWith("%%matrixmarket") && (first.contains("symmetric") || first.contains("hermitian"))
    }
    val body = lines.filter(l => l.nonEmpty && !l.startsWith("%") && !l.startsWith("#"))
    val entries = if (mtx) {
      // The first non-comment line of a MatrixMarket file is its size line.
      body.mapPartitionsWithIndex { (i, it) => if (i == 0) it.drop(1) else it }
    } else body
    val pairs = entries.flatMap { l =>
      val f = l.trim.split("\\s+")
      if (f.length < 2) Iterator.empty else {
        val (u, v) = (f(0).toLong, f(1).toLong)
        if (symmetric && u != v) Iterator((u, v), (v, u)) else Iterator((u, v))
      }
    }
    pairs.distinct(partitions)
  }
}
