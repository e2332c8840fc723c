package org.lpf.spark.graphframes

import org.apache.spark.graphx.Graph
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.functions.{array, col, count, explode, expr, lit, struct}
import org.apache.spark.sql.types.StructType
import org.apache.spark.storage.StorageLevel

import org.lpf.spark.{LpfException, LpfGraph}
import org.lpf.spark.graphframes.lib._

/**
 * A graph of two DataFrames, as GraphFrames' `org.graphframes.GraphFrame` has it (same
 * names, columns and results; a GraphFrames user changes the import): `vertices` with a
 * column `id`, `edges` with columns `src` and `dst`; every other column is an attribute.
 * The algorithms run natively on LPF ([[lpfGraph]]: one LpfGraph call each) and return
 * the vertex DataFrame with the algorithm's column joined on `id`, so that every vertex
 * column is present. Ids of edges that are absent from `vertices` take part in the
 * computation (they are vertices of the LPF graph) but do not appear in results. Ids are
 * of an integral type or strings; null and duplicate ids in `vertices` make an algorithm
 * fail with an [[LpfException]] naming the column `id`. See docs/graphframes.md.
 *
 * @param vertices the vertex DataFrame (column `id` and attributes)
 * @param edges the edge DataFrame (columns `src`, `dst` and attributes)
 */
final class GraphFrame private (val vertices: DataFrame, val edges: DataFrame,
                                @transient private val lpfVertices: Option[DataFrame]) extends Serializable {
  import GraphFrame._

  /**
   * The LPF graph the algorithms run on: the edges and (unless made by
   * [[GraphFrame.fromEdges]]) the vertex ids, which must be distinct. Its `lastRun` has the
   * figures of the latest algorithm; [[cache]] makes it resident in the executors.
   */
  @transient lazy val lpfGraph: LpfGraph = LpfGraph.ofGraphFrame(edges, lpfVertices)

  /** Made by [[GraphFrame.fromEdges]]: the vertices are the edges' distinct ids and nothing else. */
  private[graphframes] def fromEdgesOnly: Boolean = lpfVertices.isEmpty

  /** The out-degree of each vertex that is the source of some edge: columns `id`, `outDegree` (int; multi-edges count). */
  def outDegrees: DataFrame =
    edges.groupBy(col(SRC).as(ID)).agg(count(lit(1)).cast("int").as("outDegree"))

  /** The in-degree of each vertex that is the target of some edge: columns `id`, `inDegree` (int). */
  def inDegrees: DataFrame =
    edges.groupBy(col(DST).as(ID)).agg(count(lit(1)).cast("int").as("inDegree"))

  /** The degree of each vertex named by some edge: columns `id`, `degree` (int; a self-loop counts 2). */
  def degrees: DataFrame =
    edges.select(explode(array(col(SRC), col(DST))).as(ID)).groupBy(ID).agg(count(lit(1)).cast("int").as("degree"))

  /**
   * Each edge with its vertices: columns `src` (the source vertex's row), `edge` (the edge's
   * row) and `dst`, each a struct; edges naming an id absent from `vertices` are left out.
   */
  def triplets: DataFrame = {
    val e = edges.select(struct(columnsOf(edges): _*).as(EDGE))
    val s = vertices.select(struct(columnsOf(vertices): _*).as(SRC))
    val d = vertices.select(struct(columnsOf(vertices): _*).as(DST))
    e.join(s, col(s"$EDGE.$SRC") === col(s"$SRC.$ID")).join(d, col(s"$EDGE.$DST") === col(s"$DST.$ID"))
      .select(SRC, EDGE, DST)
  }

  /** Caches both DataFrames and keeps the LPF graph resident in the executors from its next algorithm on; returns this. */
  def cache(): this.type = persist()

  /** As [[cache]]: the DataFrames at Spark's default level. */
  def persist(): this.type = { vertices.persist(); edges.persist(); lpfGraph.cache(); this }

  /** Persists both DataFrames at `newLevel` and keeps the LPF graph resident (native memory); returns this. */
  def persist(newLevel: StorageLevel): this.type = {
    vertices.persist(newLevel); edges.persist(newLevel); lpfGraph.cache(); this
  }

  /** Unpersists both DataFrames and releases the resident LPF graph; returns this. */
  def unpersist(): this.type = unpersist(blocking = false)

  /** As [[unpersist]], waiting for the DataFrames' blocks to be removed when `blocking`. */
  def unpersist(blocking: Boolean): this.type = {
    vertices.unpersist(blocking); edges.unpersist(blocking); lpfGraph.unpersist(); this
  }

  /** The subgraph of the vertices meeting `condition` and the edges whose both ends remain. */
  def filterVertices(condition: Column): GraphFrame = {
    val v = vertices.filter(condition)
    val ids = v.select(col(ID).as(KeyColumn))
    val e = edges.join(ids, col(SRC) === col(KeyColumn), "left_semi").join(ids, col(DST) === col(KeyColumn), "left_semi")
    GraphFrame(v, e)
  }

  /** [[filterVertices]] with a SQL expression. */
  def filterVertices(conditionExpr: String): GraphFrame = filterVertices(expr(conditionExpr))

  /** The graph with the edges meeting `condition` and every vertex. */
  def filterEdges(condition: Column): GraphFrame = GraphFrame(vertices, edges.filter(condition))

  /** [[filterEdges]] with a SQL expression. */
  def filterEdges(conditionExpr: String): GraphFrame = filterEdges(expr(conditionExpr))

  /** The graph without the vertices that no edge names; the edges unchanged. */
  def dropIsolatedVertices(): GraphFrame = {
    val ids = edges.select(col(SRC).as(KeyColumn)).union(edges.select(col(DST).as(KeyColumn))).distinct()
    GraphFrame(vertices.join(ids, col(ID) === col(KeyColumn), "left_semi"), edges)
  }

  /** The graph with every edge also reversed (attributes kept; an edge given both ways then appears twice each way). */
  def asUndirected(): GraphFrame = GraphFrame(vertices, edges.union(reversedEdges))

  /** The graph with every edge reversed (attributes kept). */
  def asReversed(): GraphFrame = GraphFrame(vertices, reversedEdges)

  private def reversedEdges: DataFrame = edges.select(edges.columns.toSeq.map {
    case SRC => quoted(DST).as(SRC)
    case DST => quoted(SRC).as(DST)
    case c => quoted(c)
  }: _*)

  /**
   * Checks the graph (Spark jobs): no null and no duplicate vertex ids and, with
   * `checkVertices`, every id of an edge a vertex id; an [[LpfException]] naming the
   * column and the first offending id otherwise.
   */
  def validate(checkVertices: Boolean): Unit = {
    if (!vertices.filter(col(ID).isNull).isEmpty)
      throw LpfException.argument(s"the vertex column '$ID' has null ids; every vertex needs an id")
    val twice = vertices.groupBy(ID).count().filter(col("count") > 1)
    twice.orderBy(ID).select(col(ID).cast("string")).head(1).headOption.foreach { r =>
      throw LpfException.argument(s"the vertex column '$ID' has ${twice.count()} duplicate ids (the first: ${r.getString(0)})")
    }
    if (checkVertices) {
      val named = edges.select(col(SRC).as(KeyColumn)).union(edges.select(col(DST).as(KeyColumn))).distinct()
      val absent = named.join(vertices, col(KeyColumn) === col(ID), "left_anti")
      absent.orderBy(KeyColumn).select(col(KeyColumn).cast("string")).head(1).headOption.foreach { r =>
        throw LpfException.argument(s"the edges name ${absent.count()} ids that the vertex column '$ID' does not " +
          s"have (the first: ${r.getString(0)})")
      }
    }
  }

  /** [[validate]] with checkVertices. */
  def validate(): Unit = validate(checkVertices = true)

  /** [[validate]]; `intermediateStorageLevel` tunes GraphFrames' engine and is ignored. */
  def validate(checkVertices: Boolean, intermediateStorageLevel: StorageLevel): Unit = validate(checkVertices)

  /** `GraphFrame(v:[id: type, ...], e:[src: type, ...])`. */
  override def toString: String = {
    def fields(s: StructType) = s.fields.map(f => s"${f.name}: ${f.dataType.simpleString}").mkString(", ")
    s"GraphFrame(v:[${fields(vertices.schema)}], e:[${fields(edges.schema)}])"
  }

  // --- algorithms

  /** GraphX's PageRank (builder; see [[lib.PageRank]]). */
  def pageRank: PageRank = new PageRank(this)

  /** Personalized PageRank from several sources at once (builder; see [[lib.ParallelPersonalizedPageRank]]). */
  def parallelPersonalizedPageRank: ParallelPersonalizedPageRank = new ParallelPersonalizedPageRank(this)

  /** Weakly connected components (builder; see [[lib.ConnectedComponents]]). */
  def connectedComponents: ConnectedComponents = new ConnectedComponents(this)

  /** Strongly connected components (builder; see [[lib.StronglyConnectedComponents]]). */
  def stronglyConnectedComponents: StronglyConnectedComponents = new StronglyConnectedComponents(this)

  /** Label propagation (builder; see [[lib.LabelPropagation]]). */
  def labelPropagation: LabelPropagation = new LabelPropagation(this)

  /** Hop counts to landmarks (builder; see [[lib.ShortestPaths]]). */
  def shortestPaths: ShortestPaths = new ShortestPaths(this)

  /** Triangles through each vertex (builder; see [[lib.TriangleCount]]). */
  def triangleCount: TriangleCount = new TriangleCount(this)

  /** Coreness of each vertex (builder; see [[lib.KCore]]). */
  def kCore: KCore = new KCore(this)

  /** A maximal independent set (builder; see [[lib.MaximalIndependentSet]]). */
  def maximalIndependentSet: MaximalIndependentSet = new MaximalIndependentSet(this)

  /** Shortest paths between vertex sets (builder; see [[lib.BFS]]). */
  def bfs: BFS = new BFS(this)

  // --- GraphFrames' methods not implemented here

  /** Not implemented: throws UnsupportedOperationException (motif finding). */
  def find(pattern: String): DataFrame = throw unsupported("find")

  /** Not implemented: throws UnsupportedOperationException. */
  def aggregateMessages: DataFrame = throw unsupported("aggregateMessages")

  /** Not implemented: throws UnsupportedOperationException. */
  def pregel: DataFrame = throw unsupported("pregel")

  /** Not implemented: throws UnsupportedOperationException. */
  def svdPlusPlus: DataFrame = throw unsupported("svdPlusPlus")

  /** Not implemented: throws UnsupportedOperationException. */
  def detectingCycles: DataFrame = throw unsupported("detectingCycles")

  /** Not implemented: throws UnsupportedOperationException. */
  def aggregateNeighbors: DataFrame = throw unsupported("aggregateNeighbors")

  /** Not implemented: throws UnsupportedOperationException. */
  def powerIterationClustering(k: Int, maxIter: Int, weightCol: Option[String]): DataFrame =
    throw unsupported("powerIterationClustering")

  /** Not implemented: throws UnsupportedOperationException. */
  def toGraphX: Graph[Row, Row] = throw unsupported("toGraphX")

  /** Not implemented: throws UnsupportedOperationException (typed degrees). */
  def typeOutDegree(edgeTypeCol: String, edgeTypes: Option[Seq[Any]] = None): DataFrame =
    throw unsupported("typeOutDegree")

  /** Not implemented: throws UnsupportedOperationException (typed degrees). */
  def typeInDegree(edgeTypeCol: String, edgeTypes: Option[Seq[Any]] = None): DataFrame =
    throw unsupported("typeInDegree")

  /** Not implemented: throws UnsupportedOperationException (typed degrees). */
  def typeDegree(edgeTypeCol: String, edgeTypes: Option[Seq[Any]] = None): DataFrame =
    throw unsupported("typeDegree")
}

/** GraphFrame's column names and constructors. */
object GraphFrame {
  /** The vertex id column. */
  val ID: String = "id"
  /** The edge source column. */
  val SRC: String = "src"
  /** The edge target column. */
  val DST: String = "dst"
  /** The edge struct column of [[GraphFrame.triplets]]. */
  val EDGE: String = "edge"
  /** PageRank's edge weight column. */
  val WEIGHT: String = "weight"

  /** A helper column name of joins (never in a result). */
  private[graphframes] val KeyColumn = "__lpf_key"

  /**
   * The graph of `vertices` (column `id`) and `edges` (columns `src`, `dst`); an
   * IllegalArgumentException when a column is missing. Nothing else is checked here (see
   * [[GraphFrame.validate]]).
   */
  def apply(vertices: DataFrame, edges: DataFrame): GraphFrame = {
    require(vertices.columns.contains(ID),
      s"Vertex ID column '$ID' missing from vertex DataFrame, which has columns: ${vertices.columns.mkString(",")}")
    require(edges.columns.contains(SRC),
      s"Source vertex ID column '$SRC' missing from edge DataFrame, which has columns: ${edges.columns.mkString(",")}")
    require(edges.columns.contains(DST),
      s"Destination vertex ID column '$DST' missing from edge DataFrame, which has columns: ${edges.columns.mkString(",")}")
    new GraphFrame(vertices, edges, Some(vertices))
  }

  /**
   * The graph of `edges` alone: its vertices are the distinct ids of `src` and `dst` (a
   * DataFrame computed when used); the LPF graph reads the edges only.
   */
  def fromEdges(edges: DataFrame): GraphFrame = {
    require(edges.columns.contains(SRC) && edges.columns.contains(DST),
      s"the edge DataFrame needs columns '$SRC' and '$DST', it has: ${edges.columns.mkString(",")}")
    val v = edges.select(col(SRC).as(ID)).union(edges.select(col(DST).as(ID))).distinct()
    new GraphFrame(v, edges, None)
  }

  /** A top-level column by its exact name (dots in it are not paths). */
  private[graphframes] def quoted(name: String): Column = col("`" + name.replace("`", "``") + "`")

  /** Every top-level column of `df`, by exact name. */
  private[graphframes] def columnsOf(df: DataFrame): Seq[Column] = df.columns.toSeq.map(quoted)

  private def unsupported(method: String) =
    new UnsupportedOperationException(s"$method is not implemented by lpf-spark's GraphFrame " +
      "(org.lpf.spark.graphframes.GraphFrame); use GraphFrames for it")
}
