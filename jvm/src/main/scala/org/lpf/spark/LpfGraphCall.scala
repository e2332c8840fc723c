package org.lpf.spark

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.collection.mutable.ArrayBuffer

import org.apache.spark.{BarrierTaskContext, HashPartitioner, ShuffleDependency, SparkEnv}
import org.apache.spark.lpf.LpfSparkAccess
import org.apache.spark.rdd.{RDD, ShuffledRDD}
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

// The byte layouts' offsets, flags and codes, generated from native/lpf-jni/src/layout.rs.
import org.lpf.spark.LpfLayout.{GraphCallRefused => Refused, GraphCallReply => R, GraphCallRequest => Q}

/**
 * One [[LpfGraph]] call, DataFrame to DataFrame, in one barrier stage (docs/spark.md, "One
 * call"): each task reads its rows (edges, and vertex ids when the graph has a vertex
 * DataFrame) straight into one request in the ids' own encoding, the LPF processes number
 * the ids themselves, run the kernel and answer with the original ids (the bundled algorithm
 * `graph-call`, native/lpf-jni/src/graph_call.rs: the byte layouts are documented there),
 * and the replies become the result's internal rows. No Spark job numbers, joins or sorts
 * the ids; no `Row` or tuple is made per edge or per vertex.
 *
 * Problems of the data that only the rows show (a null id, a null or negative weight) are
 * found by the task that reads them; it sends a refusal instead of its rows, and every LPF
 * process answers with that message, so that the call fails with it as an argument error,
 * not with a failed stage.
 */
private[spark] object LpfGraphCall {
  val Algorithm = "graph-call"
  /** The results' id column (each result's value column is its kernel's `column`). */
  val IdColumn = "id"

  /**
   * A kernel, its code in the request and the result's value column. Serializable itself
   * (see the note on Java serialization of case objects in [[LpfGraph]]'s history: 2.12
   * needs the first non-serializable superclass to have a no-argument constructor).
   */
  sealed abstract class Kernel(val code: Int, val name: String, val column: String) extends Serializable
  case object Bfs extends Kernel(Q.KERNEL_BFS, "BFS", "depth")
  case object Wcc extends Kernel(Q.KERNEL_WCC, "WCC", "component")
  case object Cdlp extends Kernel(Q.KERNEL_CDLP, "CDLP", "label")
  case object Sssp extends Kernel(Q.KERNEL_SSSP, "SSSP", "distance")
  case object Lcc extends Kernel(Q.KERNEL_LCC, "LCC", "lcc")
  case object PageRank extends Kernel(Q.KERNEL_PAGERANK, "PageRank", "pagerank")
  /** GraphX's PageRank (plain, personalized from one source, or one vector per source with VECTOR). */
  case object GraphxPageRank extends Kernel(Q.KERNEL_GRAPHX_PAGERANK, "GraphX PageRank", "pagerank")
  case object Scc extends Kernel(Q.KERNEL_SCC, "SCC", "component")
  /** Hop counts to the landmarks (the source list): w i64 per vertex. */
  case object Landmarks extends Kernel(Q.KERNEL_SHORTEST_PATHS, "ShortestPaths", "distances")
  case object Triangles extends Kernel(Q.KERNEL_TRIANGLES, "TriangleCount", "count")
  case object KCore extends Kernel(Q.KERNEL_KCORE, "KCore", "kcore")
  /** Maximal independent set (seed in `iterations`): 1 in the set, 0 not. */
  case object Mis extends Kernel(Q.KERNEL_MIS, "MIS", "selected")
  /** GraphFrames' bfs: depths from the vertices marked "from" until a "to" vertex is reached. */
  case object BfsPaths extends Kernel(Q.KERNEL_BFS_PATHS, "BFS paths", "depth")
  /** Load the graph and keep it (a resident graph's [[LpfGraph.load]]); no result. */
  case object Load extends Kernel(Q.KERNEL_LOAD, "load", "")

  /**
   * What every process passes alike: the kernel, threads per process, whether the ids are
   * strings, the source (an id as [[LpfGraph.exactId]] gives it), CDLP's rounds or
   * PageRank's maximum iterations, PageRank's alpha, tol and exchange (0 auto, 1
   * allgather, 2 plan), and for a resident graph its id (16 bytes) and whether this call
   * loads the graph and keeps it (`keep`) or runs on the kept graph (`use`: no rows read).
   * `weights`: the edges carry weights (SSSP's, or a resident graph loaded with them).
   * Issue 26's flags: `sources` the source list (flag 6; kernels 7 and 9), `numbers` labels
   * as vertex numbers (7), `unique` the vertex ids must be distinct (8), `vector` one value
   * per source (9), `undirected` (10), `marks` the vertex rows carry a mark each (11).
   */
  final case class Call(kernel: Kernel, threads: Int, strings: Boolean, source: Option[Any] = None,
                        iterations: Long = 0, alpha: Double = 0, tol: Double = 0, exchange: Int = 0,
                        graphId: Array[Byte] = null, keep: Boolean = false, use: Boolean = false,
                        weights: Boolean = false, sources: Option[Seq[Any]] = None, numbers: Boolean = false,
                        unique: Boolean = false, vector: Boolean = false, undirected: Boolean = false,
                        marks: Boolean = false) {
    /** The request's flags word (offset 20). */
    def flags: Int =
      (if (source.isDefined) Q.FLAG_SOURCE else 0) | ((exchange & 3) << Q.EXCHANGE_SHIFT) | (if (keep) Q.FLAG_KEEP else 0) |
        (if (use) Q.FLAG_USE else 0) | (if (weights) Q.FLAG_WEIGHTS else 0) | (if (sources.isDefined) Q.FLAG_SOURCES else 0) |
        (if (numbers) Q.FLAG_NUMBERS else 0) | (if (unique) Q.FLAG_UNIQUE else 0) | (if (vector) Q.FLAG_VECTOR else 0) |
        (if (undirected) Q.FLAG_UNDIRECTED else 0) | (if (marks) Q.FLAG_MARKS else 0)
  }

  /**
   * The native memory a kept graph may use in this executor (`limit`; 0: no limit) and
   * what the graphs it keeps hold already (`kept`).
   */
  final case class Room(limit: Long, kept: Long)

  /**
   * This executor's room for kept graphs: `LpfSettings.residentBytes` if set, else the
   * executor's `spark.executor.memoryOverhead` (what a cluster manager grants a JVM
   * beyond its heap; Spark's default: 10% of spark.executor.memory, at least 384 MiB),
   * and the bytes the graphs kept here hold now. Task side.
   */
  def roomHere(settings: LpfSettings): Room = {
    val conf = SparkEnv.get.conf
    val mib = 1L << 20
    val overhead =
      if (conf.contains("spark.executor.memoryOverhead")) conf.getSizeAsMb("spark.executor.memoryOverhead") * mib
      else math.max(384L * mib, (conf.getDouble("spark.executor.memoryOverheadFactor", 0.1) *
        conf.getSizeAsMb("spark.executor.memory", "1g") * mib).toLong)
    val kept = LpfNative.keptGraphs().split("\n").filter(_.nonEmpty).map(_.split(" ")(3).toLong).sum
    Room(if (settings.residentBytes > 0) settings.residentBytes else overhead, kept)
  }

  /** The names the tasks' messages use for the columns they read. */
  final case class Columns(src: String, dst: String, id: String, weight: Option[String])

  /**
   * Part of one process's input as read from one partition's rows: `count` edges (or, if
   * `vertices`, vertex ids) in the request's encoding (`ids`), the edges' weights (SSSP:
   * `count` f64), or instead the refusal of the input (`refusal` not null).
   */
  final case class Piece(vertices: Boolean, count: Int, ids: Array[Byte], weights: Array[Byte], refusal: String,
                         marks: Array[Byte] = null)

  /** A piece's target size: big enough for bulk copies, small enough to spread over processes. */
  val PieceBytes: Int = 1 << 20

  /** A growing little-endian byte array. */
  private final class Bytes(capacity: Int) {
    private var a = new Array[Byte](math.max(capacity, 16))
    private var b = ByteBuffer.wrap(a).order(ByteOrder.LITTLE_ENDIAN)
    var length = 0

    private def room(k: Int): Unit = if (length + k > a.length) {
      val want = math.max(a.length.toLong * 2, length.toLong + k)
      if (want > Int.MaxValue - 16) throw new IllegalStateException(s"a piece of input would exceed 2 GiB")
      a = java.util.Arrays.copyOf(a, want.toInt)
      b = ByteBuffer.wrap(a).order(ByteOrder.LITTLE_ENDIAN)
    }

    def long(v: Long): Unit = { room(8); b.putLong(length, v); length += 8 }
    def double(v: Double): Unit = { room(8); b.putDouble(length, v); length += 8 }
    def byte(v: Byte): Unit = { room(1); a(length) = v; length += 1 }

    /** A string id: u32 length, then its UTF-8 bytes (Spark's own, copied once). */
    def frame(s: UTF8String): Unit = {
      val k = s.numBytes
      room(4 + k)
      b.putInt(length, k)
      s.writeToMemory(a, Platform.BYTE_ARRAY_OFFSET + length + 4)
      length += 4 + k
    }

    def result: Array[Byte] = java.util.Arrays.copyOf(a, length)
  }

  /** An id of column `c` of `r` as the messages show it. */
  private def shown(r: InternalRow, c: Int, strings: Boolean): String =
    if (r.isNullAt(c)) "null" else if (strings) r.getUTF8String(c).toString else r.getLong(c).toString

  /** A weight as the messages show it: whole numbers without a fraction (-2, not -2.0). */
  private def shownWeight(w: Double): String =
    if (!w.isInfinite && w == math.rint(w) && math.abs(w) < 1e15) w.toLong.toString else w.toString

  /**
   * The pieces of one partition of edge rows, each made as it is read (a consumer holds
   * one at a time): columns 0 and 1 the source and target ids (bigint, or string when
   * `strings`), column 2 the weight as a double when `weighted`. The first null id, null
   * weight or weight SSSP cannot take ends the reading with a refusal naming it.
   */
  def edgePieces(rows: Iterator[InternalRow], strings: Boolean, weighted: Boolean, columns: Columns,
                 pieceBytes: Int = PieceBytes): Iterator[Piece] =
    pieces(rows, vertices = false, weighted, pieceBytes) { (r, ids, weights) =>
      val refusal =
        if (r.isNullAt(0) || r.isNullAt(1)) {
          val column = if (r.isNullAt(0)) columns.src else columns.dst
          s"the edge column '$column' has null ids (the first: the edge (${shown(r, 0, strings)}, " +
            s"${shown(r, 1, strings)})); every edge needs an id"
        } else if (weighted && r.isNullAt(2)) {
          s"the edge column '${columns.weight.get}' has null weights (the first: the edge (${shown(r, 0, strings)}, " +
            s"${shown(r, 1, strings)})); every edge needs a weight"
        } else if (weighted && !(r.getDouble(2) >= 0)) {
          s"the edge (${shown(r, 0, strings)}, ${shown(r, 1, strings)}) has weight ${shownWeight(r.getDouble(2))} in " +
            s"the column '${columns.weight.get}': SSSP needs weights >= 0"
        } else null
      if (refusal == null) {
        if (strings) { ids.frame(r.getUTF8String(0)); ids.frame(r.getUTF8String(1)) }
        else { ids.long(r.getLong(0)); ids.long(r.getLong(1)) }
        if (weighted) weights.double(r.getDouble(2))
      }
      refusal
    }

  /**
   * The pieces of one partition of vertex rows (column 0 the id; with `marked`, column 1 the
   * vertex's mark, a tinyint, null as 0), made as they are read; a null id is a refusal.
   */
  def vertexPieces(rows: Iterator[InternalRow], strings: Boolean, columns: Columns,
                   pieceBytes: Int = PieceBytes, marked: Boolean = false): Iterator[Piece] =
    pieces(rows, vertices = true, weighted = marked, pieceBytes) { (r, ids, marks) =>
      if (r.isNullAt(0)) s"the vertex column '${columns.id}' has null ids; every vertex needs an id"
      else {
        if (strings) ids.frame(r.getUTF8String(0)) else ids.long(r.getLong(0))
        if (marked) marks.byte(if (r.isNullAt(1)) 0 else r.getByte(1))
        null
      }
    }

  /**
   * Pieces of about `pieceBytes` of ids, each made when the consumer asks for it: `add`
   * appends a row to the ids (and weights: for vertex rows, the marks), or returns the
   * refusal of the row, which ends the pieces with a refusal piece.
   */
  private def pieces(rows: Iterator[InternalRow], vertices: Boolean, weighted: Boolean, pieceBytes: Int)
                    (add: (InternalRow, Bytes, Bytes) => String): Iterator[Piece] = new Iterator[Piece] {
    private var refused = false
    def hasNext: Boolean = !refused && rows.hasNext
    def next(): Piece = {
      if (!hasNext) throw new NoSuchElementException("no more pieces")
      val ids = new Bytes(pieceBytes)
      val weights = if (weighted) new Bytes(pieceBytes / 2) else null
      var count = 0
      while (rows.hasNext && ids.length < pieceBytes) {
        val refusal = add(rows.next(), ids, weights)
        if (refusal != null) {
          refused = true
          return Piece(vertices, 0, Array.emptyByteArray, null, refusal)
        }
        count += 1
      }
      if (vertices) Piece(vertices, count, ids.result, null, null, if (weighted) weights.result else null)
      else Piece(vertices, count, ids.result, if (weighted) weights.result else null, null)
    }
  }

  /**
   * One process's request, written into `to` as `pieces` are read (see graph_call.rs for
   * the layout): each piece's ids and weights to their sections, then the head (header,
   * source) with the counts; a refusal instead drops what was written and sends the head
   * with its text alone.
   */
  def write(call: Call, pieces: Iterator[Piece], room: Room, to: LpfEdges.RequestSink): Unit = {
    val weighted = call.weights
    var (m, v) = (0L, 0L)
    var refusal = Array.emptyByteArray
    // The marks follow all vertex ids of the process: gathered here (one byte per vertex).
    val marks = new Bytes(if (call.marks) 1024 else 0)
    while (refusal.isEmpty && pieces.hasNext) {
      val piece = pieces.next()
      if (piece.refusal != null) {
        refusal = piece.refusal.getBytes(StandardCharsets.UTF_8)
        to.discard()
        m = 0
        v = 0
      } else if (piece.vertices) {
        to.put(LpfRequest.VERTICES, piece.ids)
        if (call.marks) piece.marks.foreach(marks.byte)
        v += piece.count
      } else {
        to.put(LpfRequest.EDGES, piece.ids)
        if (weighted) to.put(LpfRequest.WEIGHTS, piece.weights)
        m += piece.count
      }
    }
    if (call.marks && refusal.isEmpty && marks.length > 0) to.put(LpfRequest.VERTICES, marks.result)
    def encoded(id: Any): Array[Byte] = id match {
      case s: String =>
        val b = s.getBytes(StandardCharsets.UTF_8)
        ByteBuffer.allocate(4 + b.length).order(ByteOrder.LITTLE_ENDIAN).putInt(b.length).put(b).array()
      case x => ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(x.asInstanceOf[Number].longValue).array()
    }
    val source: Array[Byte] =
      if (refusal.nonEmpty) Array.emptyByteArray
      else (call.source, call.sources) match {
        case (Some(s), _) => encoded(s)
        case (None, Some(list)) =>
          val each = list.map(encoded)
          val b = ByteBuffer.allocate(4 + each.map(_.length).sum).order(ByteOrder.LITTLE_ENDIAN).putInt(list.length)
          each.foreach(b.put)
          b.array()
        case _ => Array.emptyByteArray
      }
    val b = LpfEdges.headerBuffer(Q.SIZE + refusal.length + source.length)
    // Each field at its offset; the refusal and the source after the fixed fields.
    b.put(Q.MAGIC.getBytes(StandardCharsets.US_ASCII))
    b.putInt(Q.KERNEL, call.kernel.code).putInt(Q.THREADS, math.max(call.threads, 1))
    b.putInt(Q.ID_KIND, if (call.strings) Q.STRING_IDS else Q.INTEGRAL_IDS).putInt(Q.FLAGS, call.flags)
    b.putLong(Q.ITERATIONS, call.iterations).putDouble(Q.ALPHA, call.alpha).putDouble(Q.TOL, call.tol)
    b.putLong(Q.EDGE_COUNT, m).putLong(Q.VERTEX_COUNT, v)
    if (call.graphId != null) { b.position(Q.GRAPH_ID); b.put(call.graphId) }
    b.putLong(Q.MEMORY_LIMIT, room.limit).putLong(Q.KEPT_BYTES, room.kept)
    b.putInt(Q.REFUSAL_LENGTH, refusal.length)
    b.position(Q.SIZE)
    b.put(refusal)
    b.put(source)
    to.put(LpfRequest.HEAD, LpfEdges.headOf(b))
  }

  /** One process's request on the heap (checks and tests; see [[write]]). */
  def request(call: Call, pieces: Seq[Piece], room: Room = Room(0, 0)): LpfEdges.HeapRequest = {
    val r = new LpfEdges.HeapRequest
    write(call, pieces.iterator, room, r)
    r
  }

  /**
   * The call's parameters as every LPF process would check them (the native parser's
   * message), on the driver, before any stage; a driver without the native library leaves
   * it to the processes.
   */
  def checkParameters(call: Call): Unit = {
    val loaded = try { LpfNative.ensureLoaded(); true } catch { case _: LpfException | _: LinkageError => false }
    if (loaded) {
      val header = request(call, Seq.empty).buffer
      try LpfNative.describeRequest(Algorithm, header) finally LpfSparkAccess.dispose(header)
    }
  }

  /**
   * A reply's header fields. `refusal`: the message of an input every process refused;
   * `missing`: a call on a resident graph found it missing in some process (every process
   * says so); `residentBytes`: the native bytes of the graph this process keeps (0: none).
   */
  final case class Reply(vertices: Long, edges: Long, rounds: Long, loadSeconds: Double, computeSeconds: Double,
                         residual: Double, converged: Boolean, exchange: Int, idSeconds: Double, count: Long,
                         residentBytes: Long, refusal: Option[String], missing: Boolean = false,
                         found: Boolean = false)

  private def malformed(detail: String): LpfException =
    new LpfException(-1, "driver", "hook", s"the native graph-call reply is malformed: $detail")

  private def isRefusal(bytes: Array[Byte]): Boolean =
    bytes.length >= Refused.SIZE && new String(bytes, 0, 8, StandardCharsets.US_ASCII) == Refused.MAGIC

  /** The header of one reply (`LPFGCR01`), or the refusal every process answered (`LPFGCE01`). */
  def replyHeader(bytes: Array[Byte]): Reply = {
    val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val magic = new String(bytes, 0, math.min(8, bytes.length), StandardCharsets.US_ASCII)
    magic match {
      case Refused.MAGIC if bytes.length >= Refused.SIZE && b.getInt(Refused.LENGTH) == bytes.length - Refused.SIZE =>
        val text = new String(bytes, Refused.SIZE, bytes.length - Refused.SIZE, StandardCharsets.UTF_8)
        Reply(0, 0, 0, 0, 0, 0, converged = false, 0, 0, 0, 0, Some(text))
      case Refused.MISSING_MAGIC => Reply(0, 0, 0, 0, 0, 0, converged = false, 0, 0, 0, 0, None, missing = true)
      case R.MAGIC if bytes.length >= R.SIZE =>
        val flags = b.getInt(R.FLAGS)
        Reply(b.getLong(R.VERTICES), b.getLong(R.EDGES), b.getLong(R.ROUNDS), b.getDouble(R.LOAD_SECONDS),
          b.getDouble(R.COMPUTE_SECONDS), b.getDouble(R.RESIDUAL), (flags & R.FLAG_CONVERGED) != 0,
          (flags >> R.EXCHANGE_SHIFT) & 3, b.getDouble(R.ID_SECONDS), b.getLong(R.COUNT), b.getLong(R.KEPT_BYTES), None,
          found = (flags & R.FLAG_FOUND) != 0)
      case _ => throw malformed(s"${bytes.length} bytes, magic '$magic'")
    }
  }

  /**
   * The reply's value kind for `call` (graph_call.rs: 1 i64, 2 f64, 3 an id, 4 w i64 per
   * vertex, 5 w f64 per vertex): labels are ids, or vertex numbers with NUMBERS; landmarks'
   * hop counts and PageRank's vectors (VECTOR) w values per vertex.
   */
  def valueKind(call: Call): Int = call.kernel match {
    case Wcc | Cdlp | Scc => if (call.numbers) R.VALUES_I64 else R.VALUES_ID
    case Bfs | Load | Triangles | KCore | Mis | BfsPaths => R.VALUES_I64
    case Sssp | Lcc | PageRank => R.VALUES_F64
    case GraphxPageRank => if (call.vector) R.VALUES_F64_PER_SOURCE else R.VALUES_F64
    case Landmarks => R.VALUES_I64_PER_SOURCE
  }

  /** The result's value type for value kind `kind`: bigint, double, the id type, or arrays of w of them. */
  def valueType(kind: Int, idType: DataType): DataType = kind match {
    case R.VALUES_I64 => LongType
    case R.VALUES_F64 => DoubleType
    case R.VALUES_ID => idType
    case R.VALUES_I64_PER_SOURCE => ArrayType(LongType, containsNull = false)
    case R.VALUES_F64_PER_SOURCE => ArrayType(DoubleType, containsNull = false)
  }

  /**
   * The rows `(id, value)` of one reply, ids of type `idType`. One mutable row serves every
   * vertex: Spark's scan of an RDD of internal rows projects each row into its own unsafe
   * row before anything keeps it (RDDScanExec), so nothing here may hold a row; string ids
   * point into the reply's bytes, which the persisted replies keep.
   */
  def rows(bytes: Array[Byte], kind: Int, width: Int, idType: DataType): Iterator[InternalRow] = {
    val h = replyHeader(bytes)
    if (h.refusal.isDefined || h.missing) return Iterator.empty
    val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    if (h.count > 0 && b.getInt(R.VALUE_KIND) != kind) throw malformed(s"value kind ${b.getInt(R.VALUE_KIND)}, expected $kind")
    val strings = idType == StringType
    val row = new SpecificInternalRow(Seq(idType, valueType(kind, idType)))
    var at = R.SIZE
    def skipId(): Unit = at += (if (strings) 4 + b.getInt(at) else 8)
    // The values follow the k ids.
    val k = h.count
    if (kind >= R.VALUES_I64_PER_SOURCE && k > 0 && width < 1) throw malformed("a reply of w values per vertex with w = 0")
    var vat = if (strings) { var i = 0L; while (i < k) { skipId(); i += 1 }; at } else R.SIZE + 8 * k.toInt
    at = R.SIZE
    def setId(column: Int, pos: Int): Int = idType match {
      case StringType =>
        val len = b.getInt(pos)
        row.update(column, UTF8String.fromBytes(bytes, pos + 4, len))
        pos + 4 + len
      case ByteType => row.setByte(column, b.getLong(pos).toByte); pos + 8
      case ShortType => row.setShort(column, b.getLong(pos).toShort); pos + 8
      case IntegerType => row.setInt(column, b.getLong(pos).toInt); pos + 8
      case _ => row.setLong(column, b.getLong(pos)); pos + 8
    }
    Iterator.range(0, k.toInt).map { _ =>
      at = setId(0, at)
      kind match {
        case R.VALUES_I64 => row.setLong(1, b.getLong(vat)); vat += 8
        case R.VALUES_ID => vat = setId(1, vat)
        case R.VALUES_F64 => row.setDouble(1, b.getDouble(vat)); vat += 8
        // Each row its own array: the projection copies the row, and an array is copied with it.
        case R.VALUES_I64_PER_SOURCE =>
          row.update(1, new GenericArrayData(Array.tabulate[Any](width)(i => b.getLong(vat + 8 * i)))); vat += 8 * width
        case R.VALUES_F64_PER_SOURCE => row.update(1, new GenericArrayData(Array.tabulate[Any](width)(i => b.getDouble(vat + 8 * i)))); vat += 8 * width
      }
      row
    }
  }

  /**
   * What a process tells the driver besides its reply: its pid and stage attempt, the
   * reply's header (or its refusal's text), and its own timings: reading its rows into the
   * request, forming the group.
   */
  final case class Head(pid: Int, attempt: Int, header: Array[Byte], refusal: String, ingestSeconds: Double,
                        bootstrapSeconds: Double, executor: String, host: String)

  /** Where a process of a call ran and the native bytes of the graph it keeps there (0: none). */
  final case class Part(executor: String, host: String, residentBytes: Long)

  /**
   * What a call gives back: the replies (the output of the barrier stage's shuffle, which
   * the result reads; removed by Spark's ContextCleaner once nothing references them) and
   * the run's figures (per process: the slowest). `loadSeconds` (native: parse, number the
   * ids, route, build) includes `idSeconds` (numbering the ids and translating the results
   * back); `setupSeconds` is the driver's work before the job, `ingestSeconds` reading the
   * rows into a request (in the barrier task; for rows moved first, reading the moved
   * pieces), `callSeconds` the whole call as the driver sees it. `parts`: where each
   * process ran and what it keeps; `missing`: a call on a resident graph that some
   * process did not find (nothing else is set then); `listed`: the vertices the replies
   * list (every vertex but for BFS paths, which lists those on a path).
   */
  final case class Outcome(replies: RDD[(Int, Array[Byte])], kernel: Kernel, vertices: Long, edges: Long,
                           rounds: Long, residual: Double, converged: Boolean, exchange: String, loadSeconds: Double,
                           computeSeconds: Double, idSeconds: Double, processes: Int, setupSeconds: Double,
                           ingestSeconds: Double, bootstrapSeconds: Double, callSeconds: Double, parts: Seq[Part],
                           missing: Boolean = false, kind: Int = 0, width: Int = 0, found: Boolean = false,
                           listed: Long = 0) {
    /** The result `(id, value)` as a DataFrame, ids of type `idType`, read from the replies' bytes. */
    def frame(spark: SparkSession, idType: DataType): DataFrame = {
      val (k, w) = (kind, width)
      val schema = StructType(Seq(StructField(IdColumn, idType, nullable = false),
        StructField(kernel.column, valueType(k, idType), nullable = false)))
      LpfSparkAccess.internalFrame(spark, replies.mapPartitions(_.flatMap { case (_, bytes) => rows(bytes, k, w, idType) }),
        schema)
    }

    /** The result as (id, value) pairs, for integral ids and a kernel of double values (PageRank, SSSP, LCC). */
    def doubles: RDD[(Long, Double)] = {
      val (k, w) = (kind, width)
      require(k == R.VALUES_F64, s"${kernel.name}'s values are not doubles")
      replies.mapPartitions(_.flatMap { case (_, bytes) => rows(bytes, k, w, LongType).map(r => (r.getLong(0), r.getDouble(1))) })
    }

  }

  /** A task's `(Long, Long)` edges as the internal rows [[edgePieces]] reads (one row, reused). */
  def pairRows(it: Iterator[(Long, Long)]): Iterator[InternalRow] = {
    val row = new SpecificInternalRow(Seq(LongType, LongType))
    it.map { case (u, v) => row.setLong(0, u); row.setLong(1, v); row }
  }

  /**
   * `pieces` in `p` partitions, moved as whole pieces (never a record per edge), spread:
   * piece j of partition i to partition (i + j) mod p. Which process gets which edge does
   * not matter: the native load routes every edge to its owner.
   */
  def inProcesses(pieces: RDD[Piece], p: Int): RDD[Piece] =
    pieces.mapPartitionsWithIndex { (i, it) =>
      it.zipWithIndex.map { case (piece, j) => ((i + j) % p, piece) }
    }.partitionBy(new HashPartitioner(p)).values // an Int key k goes to partition k

  /**
   * Where the input of a call comes from: the rows of DataFrames (see [[Rows]]) or, for a
   * call on a resident graph, the executors that keep its parts ([[Kept]]).
   */
  sealed trait Input
  /** The edge rows (see [[edgePieces]]) and the vertex rows (see [[vertexPieces]]). */
  final case class Rows(edges: RDD[InternalRow], vertices: Option[RDD[InternalRow]], columns: Columns) extends Input
  /** The parts of a resident graph: part i kept by the executor `parts(i)`. */
  final case class Kept(sc: org.apache.spark.SparkContext, parts: Seq[Part]) extends Input

  /**
   * Runs `call` on `p` LPF processes: one barrier stage. From [[Rows]]: read in place when
   * the rows can end a barrier stage of `p` tasks as they are (see
   * [[LpfEdges.barrierReady]]), else after one stage that reads the rows into pieces and
   * moves them as whole pieces. From [[Kept]] parts: one task per part, placed on the
   * executor that keeps it (its preferred location); a task elsewhere does not find the
   * part, and then every process answers "missing" (the caller rebuilds). The replies stay
   * in the barrier stage's shuffle output (a lost output reruns the whole stage, never one
   * process alone); the result reads them.
   */
  def run(input: Input, call: Call, p: Int, settings: LpfSettings, progress: Boolean = true): Outcome = {
    val t0 = System.nanoTime
    val sc = input match {
      case r: Rows => r.edges.sparkContext
      case k: Kept => k.sc
    }
    val strings = call.strings
    val weighted = call.weights
    val job = LpfHook.prepare(sc, p, settings)
    val program = LpfProgram.bundled(Algorithm)
    val what = s"${if (call.kernel == PageRank) "LpfPageRank" else s"LpfGraph ${call.kernel.name}"} ($p processes)"
    val listener = if (progress) LpfProgress.open(sc, what) else None
    val target = listener.map(_.target)
    val setupSeconds = (System.nanoTime - t0) / 1e9
    // Each task's reply header (and timings) reaches the driver through an accumulator, so
    // that the call needs no stage after the barrier stage to learn them.
    val heads = sc.collectionAccumulator[Head](s"$what replies")
    def stage[T](input: RDD[T])(read: Iterator[T] => Iterator[Piece]): RDD[(Int, Array[Byte])] =
      input.barrier().mapPartitions { it =>
        val (out, ingest, bootstrap) = LpfProgress.produceTimed(job, program, target) {
          write(call, read(it), if (call.keep) roomHere(settings) else Room(0, 0), _)
        }
        val ctx = BarrierTaskContext.get()
        val env = SparkEnv.get
        heads.add(Head(ctx.partitionId(), ctx.stageAttemptNumber(), java.util.Arrays.copyOf(out,
          math.min(out.length, R.SIZE)), if (isRefusal(out)) new String(out, Refused.SIZE, out.length - Refused.SIZE,
          StandardCharsets.UTF_8) else null, ingest, bootstrap, env.executorId, env.blockManager.blockManagerId.host))
        Iterator((ctx.partitionId(), out))
      }
    def fromRows(r: Rows): RDD[(Int, Array[Byte])] = {
      val (edges, vertices, columns) = (r.edges, r.vertices, r.columns)
      val readEdges = (it: Iterator[InternalRow]) => edgePieces(it, strings, weighted, columns)
      val readVertices = (it: Iterator[InternalRow]) => vertexPieces(it, strings, columns, marked = call.marks)
      val ready = LpfEdges.barrierReady(edges, p) && vertices.forall(LpfEdges.barrierReady(_, p))
      (vertices, ready) match {
        case (None, true) => stage(edges)(readEdges)
        case (Some(vs), true) => stage(edges.zipPartitions(vs)((e, v) => Iterator((e, v)))) { it =>
          it.flatMap { case (e, v) => readEdges(e) ++ readVertices(v) } }
        case _ =>
          val pieces = edges.mapPartitions(readEdges) ++ vertices.fold(sc.emptyRDD[Piece])(_.mapPartitions(readVertices))
          stage(inProcesses(pieces, p))(identity)
      }
    }
    // Spark's name for an executor as a preferred location (TaskLocation's executor form).
    def fromKept(k: Kept): RDD[(Int, Array[Byte])] =
      stage(sc.makeRDD(k.parts.zipWithIndex.map { case (part, i) => (i, Seq(s"executor_${part.host}_${part.executor}")) }))(
        _ => Iterator.empty)
    // The stages are named after the call (Spark's UI, listeners), not after the lines
    // here: a stage takes its name from where its RDD was made.
    val (short, long) = (sc.getLocalProperty("callSite.short"), sc.getLocalProperty("callSite.long"))
    sc.setCallSite(what)
    try LpfJobWatch(sc, job, what) {
      val answered = input match {
        case r: Rows => fromRows(r)
        case k: Kept => fromKept(k)
      }
      // The barrier stage is the map stage of a shuffle, and the call runs only it: the
      // replies stay in its output, which the result reads; a lost output reruns the whole
      // barrier stage (never one process alone), and Spark's ContextCleaner removes it once
      // nothing references the result.
      val replies = new ShuffledRDD[Int, Array[Byte], Array[Byte]](answered, new HashPartitioner(p))
        .setName(s"LpfGraph ${call.kernel.name} replies")
      LpfSparkAccess.runMapStage(sc, replies.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]])
      // A retried stage may have added some processes' heads twice: the last attempt's count.
      val last = heads.value.asScala.groupBy(_.pid).map { case (pid, hs) => pid -> hs.maxBy(_.attempt) }
      val both = (0 until p).flatMap(last.get)
      both.flatMap(h => Option(h.refusal)).headOption.foreach(text => throw LpfException.argument(text))
      val figures = both.map(h => replyHeader(h.header))
      val parts = both.zip(figures).map { case (h, f) => Part(h.executor, h.host, f.residentBytes) }
      val seconds = (System.nanoTime - t0) / 1e9
      if (figures.length == p && figures.forall(_.missing))
        Outcome(replies, call.kernel, 0, 0, 0, 0, converged = false, "", 0, 0, 0, p, setupSeconds, 0, 0, seconds, parts,
          missing = true, kind = valueKind(call), width = call.sources.fold(0)(_.length))
      else {
        val n = figures.headOption.map(_.vertices).getOrElse(0L)
        // BFS paths lists only the vertices on a path; the others list every vertex once.
        val listed = figures.map(_.count).sum
        val covered = call.kernel match { case Load => Some(0L); case BfsPaths => None; case _ => Some(n) }
        if (figures.length != p || figures.exists(_.missing) || covered.exists(_ != listed) || listed > n)
          throw new LpfException(-1, "driver", "hook", s"expected $p native ${call.kernel.name} replies covering " +
            s"${covered.getOrElse(s"at most $n")} vertices, got ${figures.length} covering $listed")
        val h = figures.head
        Outcome(replies, call.kernel, n, h.edges, h.rounds, h.residual, h.converged,
          if (h.exchange == LpfLayout.EXCHANGE_PLAN) "plan" else "allgather", figures.map(_.loadSeconds).max,
          figures.map(_.computeSeconds).max, figures.map(_.idSeconds).max, p, setupSeconds,
          both.map(_.ingestSeconds).max, both.map(_.bootstrapSeconds).max, seconds, parts, kind = valueKind(call),
          width = call.sources.fold(0)(_.length), found = h.found, listed = listed)
      }
    } finally {
      sc.setLocalProperty("callSite.short", short)
      sc.setLocalProperty("callSite.long", long)
      listener.foreach(_.close())
    }
  }
}
