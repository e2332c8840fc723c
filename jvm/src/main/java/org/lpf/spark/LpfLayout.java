// Generated from native/lpf-jni/src/layout.rs, the one definition of these layouts: do not edit.
// After a change there: WRITE_JVM_LAYOUT=1 cargo test --release -p lpf-jni layout
package org.lpf.spark;

/**
 * The byte layouts the JVM writes and native code reads (and back), little-endian: the
 * offsets of the fixed fields of the bundled algorithms' requests and replies, their
 * magics, sizes, flags and codes.
 */
public final class LpfLayout {
    private LpfLayout() {}

    /** request section: the head (header, refusal, source). */
    public static final int SECTION_HEAD = 0;
    /** request section: the edges' ids. */
    public static final int SECTION_EDGES = 1;
    /** request section: the edges' weights. */
    public static final int SECTION_WEIGHTS = 2;
    /** request section: the vertex ids (and marks). */
    public static final int SECTION_VERTICES = 3;
    /** the number of request sections. */
    public static final int SECTIONS = 4;
    /** exchange code: auto. */
    public static final int EXCHANGE_AUTO = 0;
    /** exchange code: allgather. */
    public static final int EXCHANGE_ALLGATHER = 1;
    /** exchange code: plan. */
    public static final int EXCHANGE_PLAN = 2;

    /** graph-call's request header (native/lpf-jni/src/graph_call.rs, "Request"). */
    public static final class GraphCallRequest {
        private GraphCallRequest() {}

        public static final String MAGIC = "LPFGCQ01";
        /** Offset of the magic: 8 ASCII bytes. */
        public static final int MAGIC_AT = 0;
        /** Offset of the kernel: u32 (putInt/getInt). */
        public static final int KERNEL = 8;
        /** Offset of threads: u32 (putInt/getInt). */
        public static final int THREADS = 12;
        /** Offset of the id kind: u32 (putInt/getInt). */
        public static final int ID_KIND = 16;
        /** Offset of the flags: u32 (putInt/getInt). */
        public static final int FLAGS = 20;
        /** Offset of the iterations: i64 (putLong/getLong). */
        public static final int ITERATIONS = 24;
        /** Offset of alpha: f64 (putDouble/getDouble). */
        public static final int ALPHA = 32;
        /** Offset of tol: f64 (putDouble/getDouble). */
        public static final int TOL = 40;
        /** Offset of the edge count: u64 (putLong/getLong). */
        public static final int EDGE_COUNT = 48;
        /** Offset of the vertex count: u64 (putLong/getLong). */
        public static final int VERTEX_COUNT = 56;
        /** Offset of the graph id: 16 bytes. */
        public static final int GRAPH_ID = 64;
        /** Offset of the memory limit: u64 (putLong/getLong). */
        public static final int MEMORY_LIMIT = 80;
        /** Offset of the bytes kept: u64 (putLong/getLong). */
        public static final int KEPT_BYTES = 88;
        /** Offset of the refusal length: u32 (putInt/getInt). */
        public static final int REFUSAL_LENGTH = 96;
        /** Bytes of the header. */
        public static final int SIZE = 100;
        /** kernel: load the graph and keep it (needs FLAG_KEEP). */
        public static final int KERNEL_LOAD = 0;
        /** kernel: BFS. */
        public static final int KERNEL_BFS = 1;
        /** kernel: WCC. */
        public static final int KERNEL_WCC = 2;
        /** kernel: CDLP. */
        public static final int KERNEL_CDLP = 3;
        /** kernel: SSSP. */
        public static final int KERNEL_SSSP = 4;
        /** kernel: LCC. */
        public static final int KERNEL_LCC = 5;
        /** kernel: PageRank. */
        public static final int KERNEL_PAGERANK = 6;
        /** kernel: GraphX PageRank. */
        public static final int KERNEL_GRAPHX_PAGERANK = 7;
        /** kernel: SCC. */
        public static final int KERNEL_SCC = 8;
        /** kernel: shortest paths to landmarks. */
        public static final int KERNEL_SHORTEST_PATHS = 9;
        /** kernel: triangle count. */
        public static final int KERNEL_TRIANGLES = 10;
        /** kernel: k-core. */
        public static final int KERNEL_KCORE = 11;
        /** kernel: maximal independent set. */
        public static final int KERNEL_MIS = 12;
        /** kernel: BFS paths (GraphFrames' bfs). */
        public static final int KERNEL_BFS_PATHS = 13;
        /** id kind: i64. */
        public static final int INTEGRAL_IDS = 1;
        /** id kind: byte strings (u32 length, bytes). */
        public static final int STRING_IDS = 2;
        /** flag: a source follows the refusal. */
        public static final int FLAG_SOURCE = 1;
        /** flags: the exchange code's shift (bits 1-2). */
        public static final int EXCHANGE_SHIFT = 1;
        /** flag: keep the loaded graph under the graph id. */
        public static final int FLAG_KEEP = 8;
        /** flag: run on the graph kept under the graph id. */
        public static final int FLAG_USE = 16;
        /** flag: the edges carry weights. */
        public static final int FLAG_WEIGHTS = 32;
        /** flag: a source list follows the refusal. */
        public static final int FLAG_SOURCES = 64;
        /** flag: labels as vertex numbers (WCC, CDLP, SCC). */
        public static final int FLAG_NUMBERS = 128;
        /** flag: the vertex ids are distinct over all processes. */
        public static final int FLAG_UNIQUE = 256;
        /** flag: one rank per source (GraphX PageRank). */
        public static final int FLAG_VECTOR = 512;
        /** flag: the edges both ways (shortest paths). */
        public static final int FLAG_UNDIRECTED = 1024;
        /** flag: a mark per vertex id follows the vertex ids. */
        public static final int FLAG_MARKS = 2048;
    }

    /** graph-call's result header (native/lpf-jni/src/graph_call.rs, LPFGCR01). */
    public static final class GraphCallReply {
        private GraphCallReply() {}

        public static final String MAGIC = "LPFGCR01";
        /** Offset of the magic: 8 ASCII bytes. */
        public static final int MAGIC_AT = 0;
        /** Offset of n: u64 (putLong/getLong). */
        public static final int VERTICES = 8;
        /** Offset of the edges: u64 (putLong/getLong). */
        public static final int EDGES = 16;
        /** Offset of the rounds: u64 (putLong/getLong). */
        public static final int ROUNDS = 24;
        /** Offset of the load seconds: f64 (putDouble/getDouble). */
        public static final int LOAD_SECONDS = 32;
        /** Offset of the compute seconds: f64 (putDouble/getDouble). */
        public static final int COMPUTE_SECONDS = 40;
        /** Offset of the residual: f64 (putDouble/getDouble). */
        public static final int RESIDUAL = 48;
        /** Offset of the flags: u32 (putInt/getInt). */
        public static final int FLAGS = 56;
        /** Offset of the value kind: u32 (putInt/getInt). */
        public static final int VALUE_KIND = 60;
        /** Offset of the id seconds: f64 (putDouble/getDouble). */
        public static final int ID_SECONDS = 64;
        /** Offset of the vertices in the reply: u64 (putLong/getLong). */
        public static final int COUNT = 72;
        /** Offset of the bytes kept: u64 (putLong/getLong). */
        public static final int KEPT_BYTES = 80;
        /** Bytes of the header. */
        public static final int SIZE = 88;
        /** flag: converged. */
        public static final int FLAG_CONVERGED = 1;
        /** flags: the exchange code's shift (bits 1-2). */
        public static final int EXCHANGE_SHIFT = 1;
        /** flag: BFS paths found a path. */
        public static final int FLAG_FOUND = 8;
        /** value kind: an i64 per vertex. */
        public static final int VALUES_I64 = 1;
        /** value kind: an f64 per vertex. */
        public static final int VALUES_F64 = 2;
        /** value kind: an id per vertex (the ids' encoding). */
        public static final int VALUES_ID = 3;
        /** value kind: w i64 per vertex. */
        public static final int VALUES_I64_PER_SOURCE = 4;
        /** value kind: w f64 per vertex. */
        public static final int VALUES_F64_PER_SOURCE = 5;
    }

    /** graph-call's refusal (the text follows the header); a kept graph missing: MISSING_MAGIC alone. */
    public static final class GraphCallRefused {
        private GraphCallRefused() {}

        public static final String MAGIC = "LPFGCE01";
        public static final String MISSING_MAGIC = "LPFGCM01";
        /** Offset of the magic: 8 ASCII bytes. */
        public static final int MAGIC_AT = 0;
        /** Offset of the text's length: u32 (putInt/getInt). */
        public static final int LENGTH = 8;
        /** Bytes of the header. */
        public static final int SIZE = 12;
    }

    /** pagerank's request header (native/lpf-jni/src/pagerank.rs, "Request"); the source follows. */
    public static final class PageRankRequest {
        private PageRankRequest() {}

        public static final String MAGIC = "LPFPRQ01";
        /** Offset of the magic: 8 ASCII bytes. */
        public static final int MAGIC_AT = 0;
        /** Offset of alpha: f64 (putDouble/getDouble). */
        public static final int ALPHA = 8;
        /** Offset of tol: f64 (putDouble/getDouble). */
        public static final int TOL = 16;
        /** Offset of max_iters: u64 (putLong/getLong). */
        public static final int MAX_ITERS = 24;
        /** Offset of threads: u32 (putInt/getInt). */
        public static final int THREADS = 32;
        /** Offset of source: u32 (putInt/getInt). */
        public static final int SOURCE = 36;
        /** Offset of flags: u32 (putInt/getInt). */
        public static final int FLAGS = 40;
        /** Offset of reserved: u32 (putInt/getInt). */
        public static final int RESERVED = 44;
        /** Bytes of the header. */
        public static final int SIZE = 48;
        /** source: a file (u32 format, u32 length, path). */
        public static final int SOURCE_FILE = 1;
        /** source: Graph500 R-MAT parameters. */
        public static final int SOURCE_RMAT = 2;
        /** flag: progress lines on process 0's stderr. */
        public static final int FLAG_PROGRESS = 1;
        /** flags: the exchange code's shift (bits 1-2). */
        public static final int EXCHANGE_SHIFT = 1;
        /** file format: by extension. */
        public static final int FORMAT_AUTO = 0;
        /** file format: MatrixMarket. */
        public static final int FORMAT_MTX = 1;
        /** file format: edge list. */
        public static final int FORMAT_EDGES = 2;
        /** file format: binary. */
        public static final int FORMAT_BIN = 3;
    }

    /** pagerank's reply header (native/lpf-jni/src/pagerank.rs, "Reply"); (u64 id, f64 rank) pairs follow. */
    public static final class PageRankReply {
        private PageRankReply() {}

        public static final String MAGIC = "LPFPRR01";
        /** Offset of the magic: 8 ASCII bytes. */
        public static final int MAGIC_AT = 0;
        /** Offset of n: u64 (putLong/getLong). */
        public static final int VERTICES = 8;
        /** Offset of the edges: u64 (putLong/getLong). */
        public static final int EDGES = 16;
        /** Offset of the iterations: u64 (putLong/getLong). */
        public static final int ITERATIONS = 24;
        /** Offset of the residual: f64 (putDouble/getDouble). */
        public static final int RESIDUAL = 32;
        /** Offset of the load seconds: f64 (putDouble/getDouble). */
        public static final int LOAD_SECONDS = 40;
        /** Offset of the iteration seconds: f64 (putDouble/getDouble). */
        public static final int ITERATION_SECONDS = 48;
        /** Offset of converged: u32 (putInt/getInt). */
        public static final int CONVERGED = 56;
        /** Offset of the exchange: u32 (putInt/getInt). */
        public static final int EXCHANGE = 60;
        /** Offset of the vertices owned: u64 (putLong/getLong). */
        public static final int COUNT = 64;
        /** Bytes of the header. */
        public static final int SIZE = 72;
    }
}
