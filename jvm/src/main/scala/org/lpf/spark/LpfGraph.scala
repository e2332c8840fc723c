package org.lpf.spark

import scala.reflect.ClassTag

import org.apache.spark.{Partitioner, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col, isnan}
import org.apache.spark.sql.types._
import org.apache.spark.storage.StorageLevel

/**
 * A graph made from DataFrames, for LPF's algorithms (GraphFrames-like naming): an edge
 * DataFrame with a source and a target column (`src`, `dst` by default) and optionally a
 * vertex DataFrame with an `id` column, whose vertices are part of the graph even when
 * no edge names them. Ids are of an integral type (byte, short, int, long) or strings;
 * results carry the original ids in their original type. Other columns are ignored; an
 * edge is an edge whatever its multiplicity, self-loops count.
 *
 * {{{
 *   val ranks = LpfGraph(edges).pageRank(alpha = 0.85, tol = 1e-9, maxIter = 100) // DataFrame (id, pagerank)
 *   val g = LpfGraph(edges, vertices, src = "from", dst = "to", id = "name")       // configurable columns
 * }}}
 *
 * How the ids reach native code: integral ids without a vertex DataFrame go as they are
 * (as Long; the native side numbers them itself), the path of [[LpfPageRank.run]]. String
 * ids, or a vertex DataFrame, are numbered densely first (the distinct ids, numbered in
 * partition order: see [[VertexNumbers]]), and the native side is told the vertex count,
 * so that vertices without edges are vertices; the results go back to the ids by routing
 * each (number, value) to the partition of ids holding that number, no join. Numbering,
 * not hashing: exact (no collision to detect and resolve), and the count of vertices is
 * needed anyway. The graph kernels always number (WCC's and CDLP's labels are the
 * smallest ids). Either way the edges are read from the DataFrame's internal rows
 * straight into batches of native memory (see [[LpfEdges]]), never as a `Row` or a
 * tuple per edge.
 *
 * Errors found on the driver (a missing column, a column of another type, a null id, a
 * source that is not an id, a negative count) are an [[LpfException]] with pid -1, host
 * `driver`, phase `argument`, naming the column or parameter and the value.
 *
 * An LpfGraph lives on the driver. It is serializable only so that a closure that happens
 * to capture it (a spark-shell line holding one, a field of the user's class) still
 * ships: its DataFrames and session are not shipped, and a copy on an executor cannot run
 * anything.
 */
final class LpfGraph private (@transient val edges: DataFrame, @transient val vertices: Option[DataFrame],
                              val src: String, val dst: String, val id: String) extends Serializable {
  import LpfGraph._

  @transient private val spark: SparkSession = edges.sparkSession
  private val srcField = field(edges, src, SourceColumn)
  private val dstField = field(edges, dst, TargetColumn)
  private val idField = vertices.map(v => field(v, id, VertexColumn))

  /** The type of the ids in the results: the edges' (and vertices') id type, widened. */
  val idType: DataType = {
    val all = Seq(s"edge column '$src'" -> srcField.dataType, s"edge column '$dst'" -> dstField.dataType) ++
      idField.map(f => s"vertex column '$id'" -> f.dataType)
    all.foreach { case (what, t) =>
      if (!Integral.contains(t) && t != StringType)
        throw argument(s"the $what has type ${t.simpleString}; ids must be of an integral type " +
          "(tinyint, smallint, int, bigint) or strings")
    }
    if (all.map(_._2 == StringType).distinct.length > 1)
      throw argument(s"the id columns mix strings and numbers (${all.map { case (w, t) => s"$w: ${t.simpleString}" }
        .mkString(", ")}); cast them to one kind")
    if (all.head._2 == StringType) StringType else all.map(_._2).maxBy(t => Integral.indexOf(t))
  }

  /**
   * PageRank of the graph (damping `alpha`, start 1/n, dangling mass spread uniformly,
   * stop when the L1 change of an iteration is below `tol` or after `maxIter`
   * iterations), as a DataFrame `(id, pagerank)`: every vertex once, ids as in the input
   * (type [[idType]]), ranks summing to 1. The ranks are computed and persisted before
   * they are returned, and released when the DataFrame is no longer referenced (see
   * [[resultFrame]]; `unpersist()` on it changes nothing, `persist()` caches it as any
   * DataFrame).
   */
  def pageRank(alpha: Double, tol: Double, maxIter: Int): DataFrame =
    pageRankRun(alpha, tol, maxIter).ranks

  /** [[pageRank]] with alpha 0.85, tol 1e-7, at most 1000 iterations. */
  def pageRank(): DataFrame = pageRank(0.85, 1e-7, 1000)

  /**
   * [[pageRank]] with the run's figures (iterations, residual, timings: see
   * [[LpfPageRankResult]]) and the options of [[LpfPageRank.run]].
   */
  def pageRankRun(alpha: Double = 0.85, tol: Double = 1e-7, maxIter: Int = 1000, nprocs: Int = 0,
                  threads: Int = 0, settings: LpfSettings = LpfSettings()): LpfGraphPageRank = {
    LpfPageRank.checkParameters(alpha, tol, maxIter) // before any Spark job
    LpfPageRank.checkCounts(nprocs, threads)
    val numbered = idType == StringType || vertices.isDefined
    // A DataFrame's partition count says little about the processes wanted (200 after a
    // join): by default as many processes as the cluster has task slots, as fromFile.
    val p = if (nprocs > 0) nprocs
      else LpfPageRank.availableProcesses(spark.sparkContext, None, settings, "LpfGraph.pageRank")
    val numbers = if (numbered) Some(vertexNumbers(ordered = false)) else None
    try {
      val (edgeRows, vertexCount) = numbers match {
        case Some(ns) => (numberedEdges(ns, weight = None), Some(ns.count))
        case None => (longEdges(), None)
      }
      val run = LpfPageRank.runEdges(LpfEdges.rowsOf(edgeRows), LpfEdges.longRows, vertexCount, alpha, tol, maxIter,
        p, threads, "auto", progress = true, settings)
      val t0 = System.nanoTime
      try {
        val withIds = numbers match {
          case Some(ns) => ns.idsOf(run.ranks)
          case None => // the native side's ids are the input's, as Long
            val narrow = fromLong(idType)
            run.ranks.map { case (v, r) => (narrow(v), r) }
        }
        val ranks = resultFrame(withIds.map { case (v, r) => Row(v, r) }, RankColumn, DoubleType)
        LpfGraphPageRank(ranks, run, (System.nanoTime - t0) / 1e9)
      } finally run.unpersist()
    } finally numbers.foreach(_.unpersist())
  }

  /** [[pageRankRun]] with the default settings (for Java and Python). */
  def pageRankRun(alpha: Double, tol: Double, maxIter: Int, nprocs: Int, threads: Int): LpfGraphPageRank =
    pageRankRun(alpha, tol, maxIter, nprocs, threads, LpfSettings())

  /**
   * Breadth-first search from the vertex `source`, following edges forward: a DataFrame
   * `(id, depth)`, every vertex once, `depth` a bigint, 9223372036854775807
   * (Long.MaxValue) where the source does not lead (Graphalytics BFS).
   *
   * `source` is an id of the graph, compared exactly with the ids in their own type
   * ([[idType]]; see [[LpfGraph.exactId]]): for integral ids an integral value (Byte,
   * Short, Int, Long, BigInt, java.math.BigInteger) within the range of [[idType]]; for
   * string ids a String. Anything else (a Boolean, a Double or Float even when whole, a
   * value out of range, a String for integral ids, a number for string ids, null) and a
   * source that is no vertex are an [[LpfException]] naming the value and the id type,
   * before any Spark job.
   */
  def bfs(source: Any): DataFrame = bfs(source, 0, 0, LpfSettings())

  /** [[bfs]] on `nprocs` LPF processes (0: the task slots) of `threads` threads (0: spark.task.cpus). */
  def bfs(source: Any, nprocs: Int, threads: Int, settings: LpfSettings): DataFrame =
    kernel(LpfKernels.Bfs, Some(source), 0, None, nprocs, threads, settings)

  /** [[bfs]] on `nprocs` LPF processes of `threads` threads, default settings (for Java and Python). */
  def bfs(source: Any, nprocs: Int, threads: Int): DataFrame = bfs(source, nprocs, threads, LpfSettings())

  /**
   * Weakly connected components: a DataFrame `(id, component)`, every vertex once,
   * `component` the smallest id of its component (in the order of [[idType]]: numbers
   * numerically, strings as Spark sorts them), of type [[idType]].
   */
  def wcc(): DataFrame = wcc(0, 0, LpfSettings())

  /** [[wcc]] on `nprocs` LPF processes of `threads` threads. */
  def wcc(nprocs: Int, threads: Int, settings: LpfSettings): DataFrame =
    kernel(LpfKernels.Wcc, None, 0, None, nprocs, threads, settings)

  /** [[wcc]] with the default settings (for Java and Python). */
  def wcc(nprocs: Int, threads: Int): DataFrame = wcc(nprocs, threads, LpfSettings())

  /**
   * Community detection by synchronous label propagation (Graphalytics CDLP),
   * `iterations` rounds: every vertex starts with its own id as label; each round it
   * takes the most frequent label among its in- and out-neighbours counted with
   * multiplicity of direction (an edge both ways counts twice), ties to the smallest.
   * A DataFrame `(id, label)` of type [[idType]]. `iterations` must be >= 0.
   */
  def cdlp(iterations: Int): DataFrame = cdlp(iterations, 0, 0, LpfSettings())

  /** [[cdlp]] on `nprocs` LPF processes of `threads` threads. */
  def cdlp(iterations: Int, nprocs: Int, threads: Int, settings: LpfSettings): DataFrame =
    kernel(LpfKernels.Cdlp, None, iterations, None, nprocs, threads, settings)

  /** [[cdlp]] with the default settings (for Java and Python). */
  def cdlp(iterations: Int, nprocs: Int, threads: Int): DataFrame = cdlp(iterations, nprocs, threads, LpfSettings())

  /**
   * Single-source shortest paths from `source`, the weight of each edge in the edge
   * column `weightCol` (any numeric type, every weight >= 0 and not null; parallel edges
   * count with their smallest weight): a DataFrame `(id, distance)`, `distance` a double,
   * infinity where the source does not lead. `source` is an id as for [[bfs]]. A source
   * that is not exactly an id or no vertex, a missing or non-numeric column, a null or
   * negative weight are an [[LpfException]] naming them.
   */
  def sssp(source: Any, weightCol: String): DataFrame = sssp(source, weightCol, 0, 0, LpfSettings())

  /** [[sssp]] on `nprocs` LPF processes of `threads` threads. */
  def sssp(source: Any, weightCol: String, nprocs: Int, threads: Int, settings: LpfSettings): DataFrame =
    kernel(LpfKernels.Sssp, Some(source), 0, Some(weightCol), nprocs, threads, settings)

  /** [[sssp]] with the default settings (for Java and Python). */
  def sssp(source: Any, weightCol: String, nprocs: Int, threads: Int): DataFrame =
    sssp(source, weightCol, nprocs, threads, LpfSettings())

  /**
   * Local clustering coefficient (Graphalytics LCC): a DataFrame `(id, lcc)`, every vertex
   * once, `lcc` a double: with N(v) the neighbours of v over in- and out-edges (v itself,
   * duplicate edges and self-loops left out), the directed edges between distinct
   * members of N(v) divided by |N(v)|(|N(v)| - 1); 0 when |N(v)| < 2.
   */
  def lcc(): DataFrame = lcc(0, 0, LpfSettings())

  /** [[lcc]] on `nprocs` LPF processes of `threads` threads. */
  def lcc(nprocs: Int, threads: Int, settings: LpfSettings): DataFrame =
    kernel(LpfKernels.Lcc, None, 0, None, nprocs, threads, settings)

  /** [[lcc]] with the default settings (for Java and Python). */
  def lcc(nprocs: Int, threads: Int): DataFrame = lcc(nprocs, threads, LpfSettings())

  private def kernel(k: LpfKernels.Kernel, source: Option[Any], iterations: Int, weightCol: Option[String], nprocs: Int,
                     threads: Int, settings: LpfSettings): DataFrame = {
    // The arguments first, before any Spark job.
    LpfKernels.checkParameters(k, iterations)
    LpfPageRank.checkCounts(nprocs, threads)
    val role = s"${k.name} source"
    val sourceId = source.map(s => exactId(idType, s, role))
    val weight = weightCol.map(w => checkedWeight(field(edges, w, WeightColumn)))
    val p = if (nprocs > 0) nprocs
      else LpfPageRank.availableProcesses(spark.sparkContext, None, settings, s"LpfGraph.${k.name.toLowerCase}")
    val numbers = vertexNumbers(ordered = true)
    try {
      val sourceNumber = sourceId.map(s => numberOf(numbers, s, role))
      val read = if (weight.isDefined) LpfEdges.weightedLongRows else LpfEdges.longRows
      val values = LpfKernels.run(LpfEdges.rowsOf(numberedEdges(numbers, weight)), read, numbers.count, k,
        sourceNumber.getOrElse(0L), iterations, p, threads, settings)
      try {
        val withIds = numbers.idsOf(values) // (id, value bits)
        val (column, valueType, rows) = k match {
          case LpfKernels.Bfs => ("depth", LongType, withIds.map { case (id, v) => Row(id, v) })
          case LpfKernels.Sssp => ("distance", DoubleType, withIds.map { case (id, v) => Row(id, java.lang.Double.longBitsToDouble(v)) })
          case LpfKernels.Lcc => ("lcc", DoubleType, withIds.map { case (id, v) => Row(id, java.lang.Double.longBitsToDouble(v)) })
          case LpfKernels.Wcc | LpfKernels.Cdlp => // the value is a vertex number: its id
            (if (k == LpfKernels.Wcc) "component" else "label", idType,
              numbers.idsOf(withIds.map { case (id, label) => (label, id) }).map { case (label, id) => Row(id, label) })
        }
        resultFrame(rows, column, valueType)
      } finally values.unpersist(blocking = false)
    } finally numbers.unpersist()
  }

  /**
   * The result DataFrame `(id, column)` of `rows`, ids of type [[idType]]: the rows are
   * computed and persisted (as an RDD, MEMORY_AND_DISK) before it is returned, and the
   * DataFrame reads them. Not a cached DataFrame: building its columnar cache cost more
   * than the whole native run (1.1 s more than computing the rows for kron18's 174k
   * vertices, CallBenchmark). The persisted rows are released when the DataFrame is no
   * longer referenced on the driver (Spark's ContextCleaner).
   */
  private def resultFrame(rows: RDD[Row], column: String, valueType: DataType): DataFrame = {
    val held = rows.setName(s"LpfGraph ($IdColumn, $column)").persist(StorageLevel.MEMORY_AND_DISK)
    held.foreachPartition(it => it.foreach(_ => ()))
    spark.createDataFrame(held, StructType(Seq(StructField(IdColumn, idType, nullable = false),
      StructField(column, valueType, nullable = false))))
  }

  /** The number of the vertex `id` (an id of type [[idType]], as [[LpfGraph.exactId]] gives it), or the error naming it. */
  private def numberOf(numbers: VertexNumbers, id: Any, role: String): Long = {
    val hits = numbers.rows.filter(r => r.get(0) == id).map(_.getLong(1)).collect()
    hits.headOption.getOrElse(throw argument(s"the $role ${shown(id)} is not a vertex of the graph " +
      s"(ids of type ${idType.simpleString})"))
  }

  /** The weight column, if numeric and free of nulls and of weights SSSP cannot take. */
  private def checkedWeight(w: StructField): StructField = {
    if (!w.dataType.isInstanceOf[NumericType])
      throw argument(s"the edge column '${w.name}' has type ${w.dataType.simpleString}; weights must be numbers")
    val nulls = if (w.nullable) edges.where(column(w).isNull).count() else 0L
    if (nulls > 0) throw argument(s"the edge column '${w.name}' has $nulls null weights; every edge needs a weight")
    val bad = edges.where(column(w).cast(DoubleType) < 0 || isnan(column(w).cast(DoubleType)))
      .select(column(srcField), column(dstField), column(w)).limit(1).collect()
    bad.headOption.foreach(r => throw argument(s"the edge (${r.get(0)}, ${r.get(1)}) has weight ${r.get(2)} in the column " +
      s"'${w.name}': SSSP needs weights >= 0"))
    w
  }

  /**
   * Integral ids as they are, as two long columns (the null check only if the schema
   * allows nulls).
   */
  private def longEdges(): DataFrame = {
    if (srcField.nullable || dstField.nullable) noNulls(edges, Seq(srcField, dstField), "edge")
    edges.select(column(srcField).cast(LongType), column(dstField).cast(LongType))
  }

  /**
   * The graph's ids (edge endpoints and the vertex DataFrame's ids, each once) numbered
   * 0..n-1 (`ordered`: in the order of the ids, so that the smallest number is the
   * smallest id), persisted; a null id is the error naming the columns.
   */
  private def vertexNumbers(ordered: Boolean): VertexNumbers = {
    val named = Seq(edges.select(column(srcField).cast(idType).as(IdColumn)),
      edges.select(column(dstField).cast(idType).as(IdColumn))) ++
      vertices.map(v => v.select(column(idField.get).cast(idType).as(IdColumn)))
    val distinct = named.reduce(_ union _).distinct()
    val sorted = if (ordered) distinct.orderBy(col(IdColumn)) else distinct
    // Persisted as an RDD, not a cached DataFrame: releasing a cached DataFrame would drop
    // (and later recompute) the cached results derived from it.
    val ids = sorted.rdd.map(_.get(0)).setName("LpfGraph vertex ids").persist(StorageLevel.MEMORY_AND_DISK)
    try {
      val counts = ids.mapPartitions { it =>
        var k = 0L
        var nulls = 0L
        it.foreach { id => k += 1; if (id == null) nulls += 1 }
        Iterator((k, nulls))
      }.collect()
      if (counts.exists(_._2 > 0)) {
        noNulls(edges, Seq(srcField, dstField), "edge")
        vertices.foreach(v => noNulls(v, idField.toSeq, "vertex"))
        throw argument(s"a null id among the ids of the edge columns '$src', '$dst'" +
          vertices.fold("")(_ => s" and the vertex column '$id'"))
      }
      new VertexNumbers(ids, counts.map(_._1).scanLeft(0L)(_ + _))
    } catch { case e: Throwable => ids.unpersist(blocking = false); throw e }
  }

  /**
   * The edges in the vertices' `numbers` as two long columns (s, d) or, with a `weight`
   * column, (s, d, weight as a double).
   */
  private def numberedEdges(numbers: VertexNumbers, weight: Option[StructField]): DataFrame = {
    val index = spark.createDataFrame(numbers.rows,
      StructType(Seq(StructField(IdColumn, idType, nullable = false), StructField(NumberColumn, LongType, nullable = false))))
    val s = index.select(col(IdColumn).as("s_id"), col(NumberColumn).as("s"))
    val d = index.select(col(IdColumn).as("d_id"), col(NumberColumn).as("d"))
    val weights = weight.map(w => column(w).cast(DoubleType).as("w")).toSeq
    edges.select(Seq(column(srcField).cast(idType).as("s_id"), column(dstField).cast(idType).as("d_id")) ++ weights: _*)
      .join(s, "s_id").join(d, "d_id").select("s", Seq("d") ++ weights.map(_ => "w"): _*)
  }

  private def noNulls(df: DataFrame, columns: Seq[StructField], what: String): Unit = columns.foreach { c =>
    val k = df.where(column(c).isNull).count()
    if (k > 0) throw argument(s"the $what column '${c.name}' has $k null ids; every $what needs an id")
  }
}

/**
 * PageRank of an [[LpfGraph]]: the ranks `(id, pagerank)` (computed, see [[LpfGraph.pageRank]]) and the native run's
 * figures. `run.ranks` is released when this is returned (and, for string ids or a vertex
 * DataFrame, holds vertex numbers, not ids): use `ranks`. `conversionSeconds`: the
 * driver's view of turning the native results into `ranks`, computed and persisted.
 */
case class LpfGraphPageRank(ranks: DataFrame, run: LpfPageRankResult, conversionSeconds: Double = Double.NaN) {
  def iterations: Int = run.iterations
  def residual: Double = run.residual
  def converged: Boolean = run.converged
  def vertices: Long = run.vertices
  def edges: Long = run.edges
}

object LpfGraph {
  val IdColumn = "id"
  val RankColumn = "pagerank"
  private val NumberColumn = "lpf_number"
  /** The integral id types, narrowest first. */
  private val Integral: Seq[DataType] = Seq(ByteType, ShortType, IntegerType, LongType)

  /**
   * The graph of `edges` (columns `src`, `dst` name source and target) and, if not null,
   * `vertices` (column `id`; its vertices are vertices of the graph with or without edges).
   */
  def apply(edges: DataFrame, vertices: DataFrame = null, src: String = "src", dst: String = "dst",
            id: String = "id"): LpfGraph =
    new LpfGraph(edges, Option(vertices), src, dst, id)

  /** For Java: the edges alone, columns `src` and `dst`. */
  def create(edges: DataFrame): LpfGraph = apply(edges)

  /** For Java: edges and vertices (null for none), columns named as given. */
  def create(edges: DataFrame, vertices: DataFrame, src: String, dst: String, id: String): LpfGraph =
    apply(edges, vertices, src, dst, id)

  /** Integral ids as the native side returns them (Long) to the type of the ids, `idType`. */
  private def fromLong(idType: DataType): Long => Any = idType match {
    case ByteType => _.toByte
    case ShortType => _.toShort
    case IntegerType => _.toInt
    case _ => v => v
  }

  /** A top-level column by its exact name (dots and back-ticks in it are not paths). */
  private def column(f: StructField) = col("`" + f.name.replace("`", "``") + "`")

  private def argument(message: String): LpfException = LpfException.argument(message)

  /**
   * A column the caller names: in which DataFrame (`frame`), what it holds, and the
   * parameter that names it, as the Scala and the Python API both call it (so that one
   * message serves both).
   */
  private final case class ColumnRole(frame: String, holds: String, parameter: String)
  private val SourceColumn = ColumnRole("edge", "source ids", "LpfGraph's src")
  private val TargetColumn = ColumnRole("edge", "target ids", "LpfGraph's dst")
  private val VertexColumn = ColumnRole("vertex", "vertex ids", "LpfGraph's id")
  private val WeightColumn = ColumnRole("edge", "edge weights", "sssp's weightCol")

  /** The top-level column `name` of `df` (as Spark resolves names: case-insensitive unless configured). */
  private def field(df: DataFrame, name: String, role: ColumnRole): StructField = {
    if (name == null) throw argument(s"the name of the ${role.frame} column of the ${role.holds} is null " +
      s"(${role.parameter})")
    val fields = df.schema.fields
    val caseSensitive = df.sparkSession.conf.get("spark.sql.caseSensitive", "false").toBoolean
    fields.find(_.name == name).orElse(if (caseSensitive) None else fields.find(_.name.equalsIgnoreCase(name)))
      .getOrElse(throw argument(s"the ${role.frame} DataFrame has no column '$name' for the ${role.holds} (its " +
        s"columns: ${fields.map(_.name).mkString(", ")}); ${role.parameter} names that column"))
  }

  /** A value as the messages show it: a string in single quotes, anything else as it prints. */
  private def shown(value: Any): String = value match {
    case s: String => s"'$s'"
    case other => String.valueOf(other)
  }

  /** The range of each integral id type. */
  private val Ranges: Map[DataType, (BigInt, BigInt)] = Map(
    ByteType -> (BigInt(Byte.MinValue), BigInt(Byte.MaxValue)),
    ShortType -> (BigInt(Short.MinValue), BigInt(Short.MaxValue)),
    IntegerType -> (BigInt(Int.MinValue), BigInt(Int.MaxValue)),
    LongType -> (BigInt(Long.MinValue), BigInt(Long.MaxValue)))

  /**
   * The vertex id `value` given by a caller (a BFS or SSSP source) exactly as ids of type
   * `idType` hold it (a boxed Byte, Short, Integer or Long, or a String), or an
   * [[LpfException]] (phase argument) naming `role`, the value and the id type. Nothing is
   * converted that could change the value, and Spark's SQL settings (ANSI mode) play no
   * part:
   *  - integral ids take integral values (Byte, Short, Int, Long, BigInt,
   *    java.math.BigInteger: what Scala, Java and Python, through Py4J, pass for an
   *    integer) whose value lies in the range of `idType`;
   *  - string ids take Strings;
   *  - anything else is refused: null, Booleans, floating-point and decimal numbers even
   *    when whole (a computed double that happens to be whole here would not be
   *    elsewhere; ids are integers or strings), Characters, a String for integral ids, a
   *    number for string ids, a value out of range.
   */
  private[spark] def exactId(idType: DataType, value: Any, role: String): Any = {
    val typeName = idType.simpleString
    def refused(why: String): LpfException = argument(s"the $role ${shown(value)} $why")
    val integer: Option[BigInt] = value match {
      case v: Byte => Some(BigInt(v))
      case v: Short => Some(BigInt(v))
      case v: Int => Some(BigInt(v))
      case v: Long => Some(BigInt(v))
      case v: java.math.BigInteger => Some(BigInt(v))
      case v: BigInt => Some(v)
      case _ => None
    }
    (value, integer) match {
      case (null, _) => throw argument(s"the $role is null; give an id of type $typeName")
      case (s: String, _) if idType == StringType => s
      case (_: String, _) => throw refused(s"is a string, but the ids are of type $typeName: give an integer")
      case (_, Some(_)) if idType == StringType => throw refused("is a number, but the ids are strings: give a string")
      case (_, Some(v)) =>
        val (lo, hi) = Ranges(idType)
        if (v < lo || v > hi) throw refused(s"is outside the range of the ids' type $typeName ($lo to $hi)")
        idType match {
          case ByteType => java.lang.Byte.valueOf(v.toByte)
          case ShortType => java.lang.Short.valueOf(v.toShort)
          case IntegerType => java.lang.Integer.valueOf(v.toInt)
          case _ => java.lang.Long.valueOf(v.toLong)
        }
      case (other, None) =>
        val kind = other.getClass.getSimpleName
        throw refused(if (idType == StringType) s"is a $kind, not an id of type string: give a String"
          else s"is a $kind, not an id of type $typeName: ids of an integral type are given as integers (Byte, " +
            "Short, Int, Long, BigInt); a floating-point number is refused even when whole, a Boolean always")
    }
  }
}

/**
 * Vertex ids numbered 0..n-1 without a table of (id, number) pairs: partition i of `ids`
 * holds the ids numbered `starts(i)` until `starts(i + 1)`, in order (persisted).
 * Translating numbers back to ids routes only the (number, value) records, by number
 * range, to the partition holding those ids ([[idsOf]]): the ids are not shuffled, and
 * nothing is joined.
 */
private final class VertexNumbers(ids: RDD[Any], starts: Array[Long]) {
  /** n, the number of vertices. */
  def count: Long = starts.last

  /** Rows (id, number). */
  def rows: RDD[Row] = {
    val starts = this.starts
    ids.mapPartitionsWithIndex { (i, it) =>
      var k = starts(i) - 1
      it.map { id => k += 1; Row(id, k) }
    }
  }

  /** `(id of the number, value)` for every `(number, value)` of `records`. */
  def idsOf[V: ClassTag](records: RDD[(Long, V)]): RDD[(Any, V)] = {
    val starts = this.starts
    ids.zipPartitions(records.partitionBy(new NumberRanges(starts))) { (here, routed) =>
      val start = starts(TaskContext.getPartitionId())
      val local = here.toArray
      routed.map { case (k, v) => (local((k - start).toInt), v) }
    }
  }

  def unpersist(): Unit = ids.unpersist(blocking = false)
}

/** Number k to the partition i with starts(i) <= k < starts(i + 1) (empty partitions have equal starts). */
private final class NumberRanges(private val starts: Array[Long]) extends Partitioner {
  override def numPartitions: Int = starts.length - 1

  override def getPartition(key: Any): Int = {
    val k = key.asInstanceOf[Long]
    var lo = 0 // the last i with starts(i) <= k is in lo until hi
    var hi = numPartitions
    while (hi - lo > 1) {
      val mid = (lo + hi) >>> 1
      if (starts(mid) <= k) lo = mid else hi = mid
    }
    lo
  }

  override def equals(other: Any): Boolean = other match {
    case r: NumberRanges => java.util.Arrays.equals(starts, r.starts)
    case _ => false
  }

  override def hashCode: Int = java.util.Arrays.hashCode(starts)
}
