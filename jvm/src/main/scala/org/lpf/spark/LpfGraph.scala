package org.lpf.spark

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._

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
 * How a call runs (see [[LpfGraphCall]] and docs/spark.md, "One call"): one barrier stage
 * whose tasks read the edge rows (and the vertex rows) straight into native requests, ids
 * in their own encoding (integral ids as 64-bit integers, strings as their UTF-8 bytes);
 * the LPF processes number the ids themselves, in the ids' order (numbers numerically,
 * strings in byte order, which is Spark's order of strings), run the kernel and answer with
 * the original ids, which become the result's rows. Exact for every id: an id is compared
 * as itself, never through a hash or a cast.
 *
 * Bad arguments and data are an [[LpfException]] with pid -1, host `driver`, phase
 * `argument`, naming the column or parameter and the value: found on the driver before any
 * Spark job (a missing column, a column of another type, a source that is not an id of the
 * ids' type, a negative count), or by the call's tasks and LPF processes (a null id, a null
 * or negative weight, a source that is no vertex of the graph), which all refuse alike.
 *
 * An LpfGraph lives on the driver. It is serializable only so that a closure that happens
 * to capture it (a spark-shell line holding one, a field of the user's class) still
 * ships: its DataFrames and session are not shipped, and a copy on an executor cannot run
 * anything.
 */
final class LpfGraph private (@transient val edges: DataFrame, @transient val vertices: Option[DataFrame],
                              val src: String, val dst: String, val id: String,
                              private[spark] val uniqueIds: Boolean = false,
                              private[spark] val markColumn: Option[String] = None) extends Serializable {
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
   * (type [[idType]]), ranks summing to 1. Like every result here, it is computed before
   * it is returned: the native replies are persisted (as bytes) and the DataFrame reads
   * them; they are released when the DataFrame is no longer referenced (Spark's
   * ContextCleaner; `unpersist()` on it changes nothing, `persist()` caches it as any
   * DataFrame).
   */
  def pageRank(alpha: Double, tol: Double, maxIter: Int): DataFrame =
    pageRankRun(alpha, tol, maxIter).ranks

  /** [[pageRank]] with alpha 0.85, tol 1e-7, at most 1000 iterations. */
  def pageRank(): DataFrame = pageRank(0.85, 1e-7, 1000)

  /**
   * [[pageRank]] with the run's figures (iterations, residual, timings: see
   * [[LpfGraphPageRank]]), on `nprocs` LPF processes (0: the task slots) of `threads`
   * threads (0: spark.task.cpus).
   */
  def pageRankRun(alpha: Double = 0.85, tol: Double = 1e-7, maxIter: Int = 1000, nprocs: Int = 0,
                  threads: Int = 0, settings: LpfSettings = LpfSettings()): LpfGraphPageRank = {
    LpfPageRank.checkParameters(alpha, tol, maxIter) // before any Spark job
    val o = call(LpfGraphCall.PageRank, None, maxIter, None, nprocs, threads, settings, alpha, tol)
    LpfGraphPageRank(o.frame(spark, idType), LpfGraphRun(o))
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
    kernel(LpfGraphCall.Bfs, Some(source), 0, None, nprocs, threads, settings)

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
    kernel(LpfGraphCall.Wcc, None, 0, None, nprocs, threads, settings)

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
    kernel(LpfGraphCall.Cdlp, None, iterations, None, nprocs, threads, settings)

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
    kernel(LpfGraphCall.Sssp, Some(source), 0, Some(weightCol), nprocs, threads, settings)

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
    kernel(LpfGraphCall.Lcc, None, 0, None, nprocs, threads, settings)

  /** [[lcc]] with the default settings (for Java and Python). */
  def lcc(nprocs: Int, threads: Int): DataFrame = lcc(nprocs, threads, LpfSettings())

  @volatile private var latest: Option[LpfGraphRun] = None

  /**
   * The figures of the latest call on this graph that completed (from any thread): the
   * kernel, the graph's size, rounds, and where the time went (see [[LpfGraphRun]]).
   */
  def lastRun: Option[LpfGraphRun] = latest

  private def kernel(k: LpfGraphCall.Kernel, source: Option[Any], iterations: Int, weightCol: Option[String],
                     nprocs: Int, threads: Int, settings: LpfSettings): DataFrame =
    call(k, source, iterations, weightCol, nprocs, threads, settings).frame(spark, idType)

  /**
   * One call of `k` with the request's fields that `shape` sets (issue 26's flags: source
   * list, NUMBERS, VECTOR, UNDIRECTED; UNIQUE and MARKS come from how this graph was made),
   * `iterations` as the kernel reads it (a seed, maxPathLength, ...): the run's outcome
   * (its frame, rounds, FOUND). For [[org.lpf.spark.graphframes.GraphFrame]]. A graph with
   * marks never runs resident (the marks belong to the call).
   */
  private[spark] def callWith(k: LpfGraphCall.Kernel, iterations: Long, alpha: Double = 0, tol: Double = 0,
                              settings: LpfSettings = LpfSettings())
                             (shape: LpfGraphCall.Call => LpfGraphCall.Call): LpfGraphCall.Outcome =
    call(k, None, 0, None, 0, 0, settings, alpha, tol, c => shape(c.copy(iterations = iterations)))

  /**
   * One call of `k` (see [[LpfGraphCall]]): the arguments checked on the driver first (no
   * Spark job), then the edge (and vertex) rows projected to the columns the tasks read,
   * integral ids as bigint, weights as double, and one barrier stage.
   */
  private def call(k: LpfGraphCall.Kernel, source: Option[Any], iterations: Int, weightCol: Option[String],
                   nprocs: Int, threads: Int, settings: LpfSettings, alpha: Double = 0,
                   tol: Double = 0, shape: LpfGraphCall.Call => LpfGraphCall.Call = identity): LpfGraphCall.Outcome = {
    LpfPageRank.checkCounts(nprocs, threads)
    val strings = idType == StringType
    val sourceId = source.map(s => exactId(idType, s, s"${k.name} source"))
    val t = if (threads > 0) threads else spark.sparkContext.getConf.getInt("spark.task.cpus", 1)
    val c = shape(LpfGraphCall.Call(k, t, strings, sourceId, iterations.toLong, alpha, tol, weights = weightCol.isDefined,
      unique = uniqueIds && vertices.isDefined, marks = markColumn.isDefined))
    if (k != LpfGraphCall.Load) LpfGraphCall.checkParameters(c)
    val weight = weightCol.map(w => checkedWeight(field(edges, w, WeightColumn)))
    val p = if (nprocs > 0) nprocs
      else LpfPageRank.availableProcesses(spark.sparkContext, None, settings, s"LpfGraph.${k.name.toLowerCase}")
    val o = if (resident.wanted && !c.marks) residentCall(c, p, weight, settings)
      else LpfGraphCall.run(rows(weight), c, p, settings)
    latest = Some(LpfGraphRun(o))
    o
  }

  /** The rows a call reads: ids as bigint (integral) or as they are (strings), the weights as double. */
  private def rows(weight: Option[StructField]): LpfGraphCall.Rows = {
    val ids = (f: StructField) => if (idType == StringType) column(f) else column(f).cast(LongType)
    val edgeRows = LpfEdges.rowsOf(edges.select(Seq(ids(srcField), ids(dstField)) ++
      weight.map(w => column(w).cast(DoubleType)): _*))
    val vertexRows = vertices.map(v => LpfEdges.rowsOf(v.select(Seq(ids(idField.get)) ++
      markColumn.map(m => col(m).cast(ByteType)): _*)))
    LpfGraphCall.Rows(edgeRows, vertexRows, LpfGraphCall.Columns(src, dst, id, weight.map(_.name)))
  }

  // --- resident graphs

  @transient private val resident = new LpfResidence(spark.sparkContext)
  // When this graph is no longer referenced on the driver, its parts are released (as
  // Spark's ContextCleaner does for RDDs); the cell, not the graph, is what the action holds.
  LpfResidence.releaseWhenUnreachable(this, resident)

  /**
   * Keeps the graph loaded in the executors' native memory from its next call on (or
   * from [[load]]): later calls run the kernel on the loaded graph, in one barrier stage
   * that reads no DataFrame and numbers nothing. Returns this graph, as
   * `DataFrame.cache()` does. See docs/spark.md, "Resident graphs".
   */
  def cache(): LpfGraph = persist()

  /** As [[cache]] (native memory is the only level). */
  def persist(): LpfGraph = { resident.wanted = true; this }

  /**
   * Loads the graph into the executors now and keeps it (as [[cache]], then a call that
   * only loads), with the weights of the edge column `weightCol` if not null (what
   * [[sssp]] needs; a resident graph without weights is loaded again, with them, by the
   * first SSSP call). `nprocs` LPF processes (0: the task slots).
   */
  def load(weightCol: String, nprocs: Int, settings: LpfSettings): LpfGraph = {
    persist()
    val want = Option(weightCol)
    if (!resident.current.exists(r => want.isEmpty || r.weight == want))
      call(LpfGraphCall.Load, None, 0, want, nprocs, 0, settings)
    this
  }

  /** [[load]] with the default settings (for Java and Python; `weightCol` may be null). */
  def load(weightCol: String, nprocs: Int): LpfGraph = load(weightCol, nprocs, LpfSettings())

  /** [[load]] without weights, on the task slots. */
  def load(): LpfGraph = load(null, 0, LpfSettings())

  /** [[load]] with the weights of `weightCol`, on the task slots. */
  def load(weightCol: String): LpfGraph = load(weightCol, 0, LpfSettings())

  /**
   * Stops keeping the graph: the executors release its native memory now (a small Spark
   * job over the executors that keep its parts); later calls read the DataFrames again.
   * Returns this graph.
   */
  def unpersist(): LpfGraph = { resident.wanted = false; resident.release(); this }

  /** [[residentBytes]] as a Java map (for Java and Python). */
  def residentBytesJava: java.util.Map[String, java.lang.Long] = {
    val m = new java.util.HashMap[String, java.lang.Long]()
    residentBytes.foreach { case (e, b) => m.put(e, b) }
    m
  }

  /** [[lastRun]] or null (for Java and Python). */
  def lastRunOrNull: LpfGraphRun = lastRun.orNull

  /** Whether the graph is loaded in the executors now. */
  def isResident: Boolean = resident.current.isDefined

  /**
   * The native bytes of the loaded graph per executor (executor id to bytes; empty when
   * not resident), as the LPF processes measured their parts when they loaded them.
   */
  def residentBytes: Map[String, Long] =
    resident.current.fold(Map.empty[String, Long])(_.parts.groupBy(_.executor).map { case (e, ps) =>
      e -> ps.map(_.residentBytes).sum })

  /**
   * A call on the resident graph: on its parts when they are kept by as many processes as
   * the call wants and with the weights it needs; else (or when a part is missing: an
   * executor was lost, a task ran elsewhere) the graph is loaded anew from the DataFrames
   * and kept, and the old parts are released.
   */
  private def residentCall(c: LpfGraphCall.Call, p: Int, weight: Option[StructField],
                           settings: LpfSettings): LpfGraphCall.Outcome = {
    val want = weight.map(_.name)
    def fits(r: LpfResidence.Parts) = r.parts.length == p && (want.isEmpty || r.weight == want)
    def onKept(r: LpfResidence.Parts): Option[LpfGraphCall.Outcome] = {
      val o = LpfGraphCall.run(LpfGraphCall.Kept(spark.sparkContext, r.parts), c.copy(graphId = r.id, use = true,
        weights = false), p, settings)
      if (o.missing) { resident.forget(r); None } else Some(o)
    }
    resident.current.filter(fits).flatMap(onKept).getOrElse {
      resident.lock.synchronized { // one load at a time; a call that waited may find it done
        resident.current.filter(fits).flatMap(onKept).getOrElse {
          val loadWeight = want.orElse(resident.current.flatMap(_.weight))
          resident.release()
          val id = LpfResidence.newId()
          val w = loadWeight.map(name => field(edges, name, WeightColumn))
          val o = LpfGraphCall.run(rows(w), c.copy(graphId = id, keep = true, weights = w.isDefined), p, settings)
          resident.keep(LpfResidence.Parts(id, o.parts, loadWeight))
          o
        }
      }
    }
  }

  /** The weight column, if numeric (nulls and weights SSSP cannot take are refused by the tasks that read them). */
  private def checkedWeight(w: StructField): StructField = {
    if (!w.dataType.isInstanceOf[NumericType])
      throw argument(s"the edge column '${w.name}' has type ${w.dataType.simpleString}; weights must be numbers")
    w
  }
}

/**
 * The figures of one [[LpfGraph]] call: the kernel (`BFS`, `WCC`, `CDLP`, `SSSP`, `LCC`,
 * `PageRank`), the graph's vertices and edges (duplicates once), the rounds the kernel
 * ran (BFS levels, WCC and SSSP rounds, CDLP and PageRank iterations, LCC 1), PageRank's
 * residual (the L1 change of its last iteration; NaN for the others), whether it fell
 * below tol and the exchange that ran, the LPF processes, and seconds: native load (parse,
 * number the ids, route, build; slowest process), of which `idSeconds` numbering the ids
 * and translating the results back to them, the kernel's compute (`computeSeconds`), the
 * driver's set-up before the job, reading the rows into native requests
 * (`ingestSeconds`), forming the LPF group, and the whole call as the driver saw it
 * (`callSeconds`; what Spark adds to the kernel is `callSeconds - computeSeconds`).
 */
case class LpfGraphRun(kernel: String, vertices: Long, edges: Long, rounds: Long, residual: Double, converged: Boolean,
                       exchange: String, processes: Int, loadSeconds: Double, computeSeconds: Double,
                       idSeconds: Double, setupSeconds: Double, ingestSeconds: Double, bootstrapSeconds: Double,
                       callSeconds: Double)

private[spark] object LpfGraphRun {
  def apply(o: LpfGraphCall.Outcome): LpfGraphRun = {
    val pageRank = o.kernel == LpfGraphCall.PageRank || o.kernel == LpfGraphCall.GraphxPageRank
    LpfGraphRun(o.kernel.name, o.vertices, o.edges, o.rounds, if (pageRank) o.residual else Double.NaN,
      pageRank && o.converged, if (pageRank) o.exchange else "", o.processes, o.loadSeconds, o.computeSeconds,
      o.idSeconds, o.setupSeconds, o.ingestSeconds, o.bootstrapSeconds, o.callSeconds)
  }
}

/**
 * PageRank of an [[LpfGraph]]: the ranks `(id, pagerank)` (computed, see
 * [[LpfGraph.pageRank]]) and the run's figures ([[LpfGraphRun]]; iterations, residual,
 * converged, vertices and edges also here).
 */
case class LpfGraphPageRank(ranks: DataFrame, run: LpfGraphRun) {
  def iterations: Int = run.rounds.toInt
  def residual: Double = run.residual
  def converged: Boolean = run.converged
  def vertices: Long = run.vertices
  def edges: Long = run.edges
}

object LpfGraph {
  val IdColumn: String = LpfGraphCall.IdColumn
  val RankColumn: String = LpfGraphCall.PageRank.column
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

  /**
   * The graph of a GraphFrame: columns `src`, `dst`, `id`; the vertex ids must be distinct
   * unless `uniqueIds` is false (UNIQUE: a duplicate is refused natively, naming it); with
   * `marks`, the vertex DataFrame's column of that name is each vertex's mark (bit 0 from,
   * bit 1 to; BFS paths; an id listed twice has the OR of its marks).
   */
  private[spark] def ofGraphFrame(edges: DataFrame, vertices: Option[DataFrame], marks: Option[String] = None,
                                  uniqueIds: Boolean = true): LpfGraph =
    new LpfGraph(edges, vertices, "src", "dst", "id", uniqueIds = uniqueIds, markColumn = marks)

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
