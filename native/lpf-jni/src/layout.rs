//! The byte layouts that cross the JNI boundary, written on one side and read on the
//! other: the fixed fields of the bundled algorithms' requests and replies (graph-call's
//! and pagerank's), their magics, flags and codes, and the sections of a request. This
//! module is their one definition. Native code reads and writes every field at the
//! offset given here; the JVM's constants, `org.lpf.spark.LpfLayout`
//! (jvm/src/main/java/org/lpf/spark/LpfLayout.java, which the Scala writers and readers
//! use), are generated from the same tables ([`java_source`]), and the test
//! `the_jvm_constants_are_generated_from_these_tables` fails when that file is not what
//! the tables give. After a change here:
//!
//! ```text
//! WRITE_JVM_LAYOUT=1 cargo test --release -p lpf-jni layout
//! ```
//!
//! writes it. Each header's offsets follow from the order and types of its fields
//! ([`Field::after`]), so a field is added, moved or resized in one place. The variable
//! parts after the headers (ids, source lists, pagerank's sources) and what each field
//! means are documented in graph_call.rs and pagerank.rs.

/// The type of a fixed field, little-endian.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Type {
    /// 8 ASCII bytes naming the layout.
    Magic,
    U32,
    I64,
    U64,
    F64,
    /// 16 opaque bytes (a graph id).
    Bytes16,
}

impl Type {
    pub(crate) const fn size(self) -> usize {
        match self {
            Type::U32 => 4,
            Type::Magic | Type::I64 | Type::U64 | Type::F64 => 8,
            Type::Bytes16 => 16,
        }
    }

}

/// A fixed field of a header: its JVM constant's name, its offset and type, and what the
/// native reader's messages call it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Field {
    /// Read by the generator of the JVM's constants ([`jvm`]), which the tests run.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) name: &'static str,
    pub(crate) at: usize,
    pub(crate) ty: Type,
    pub(crate) what: &'static str,
}

impl Field {
    /// The magic, at offset 0 of every header.
    const MAGIC: Field = Field { name: "MAGIC_AT", at: 0, ty: Type::Magic, what: "the magic" };

    /// The field right after `prev`.
    const fn after(prev: Field, name: &'static str, ty: Type, what: &'static str) -> Field {
        Field { name, at: prev.end(), ty, what }
    }

    /// The offset after the field.
    pub(crate) const fn end(self) -> usize {
        self.at + self.ty.size()
    }

    /// Writes `bytes` (the field's size) at the field's offset of a header.
    pub(crate) fn put(self, header: &mut [u8], bytes: &[u8]) {
        assert_eq!(bytes.len(), self.ty.size(), "{}", self.name);
        header[self.at..self.end()].copy_from_slice(bytes);
    }
}

/// The sections of a request, in the order of its contiguous form (see
/// [`crate::request`]).
pub(crate) mod sections {
    pub(crate) const HEAD: usize = 0;
    pub(crate) const EDGES: usize = 1;
    pub(crate) const WEIGHTS: usize = 2;
    pub(crate) const VERTICES: usize = 3;
    pub(crate) const SECTIONS: usize = 4;
}

/// The exchange codes of PageRank's flags (both requests) and of graph-call's reply.
pub(crate) mod exchange {
    pub(crate) const AUTO: u32 = 0;
    pub(crate) const ALLGATHER: u32 = 1;
    pub(crate) const PLAN: u32 = 2;
    /// The exchange code's place in a flags word: bits 1-2.
    pub(crate) const SHIFT: u32 = 1;

    use graphblas::dist::Exchange;

    /// The exchange a request's flags word asks for, or what is wrong with its code.
    pub(crate) fn from_flags(flags: u32) -> Result<Exchange, String> {
        match (flags >> SHIFT) & 3 {
            AUTO => Ok(Exchange::Auto),
            ALLGATHER => Ok(Exchange::Allgather),
            PLAN => Ok(Exchange::Plan),
            x => Err(format!("exchange code {x} in the flags is not 0 (auto), 1 (allgather) or 2 (plan)")),
        }
    }

    /// The code of the exchange that ran, as replies carry it.
    pub(crate) fn code(e: Exchange) -> u32 {
        match e {
            Exchange::Auto => AUTO,
            Exchange::Allgather => ALLGATHER,
            Exchange::Plan => PLAN,
        }
    }
}

/// graph-call's request header (graph_call.rs: "Request").
pub(crate) mod gc_request {
    use super::{Field, Type};

    pub(crate) const MAGIC: &[u8; 8] = b"LPFGCQ01";
    pub(crate) const KERNEL: Field = Field::after(Field::MAGIC, "KERNEL", Type::U32, "the kernel");
    pub(crate) const THREADS: Field = Field::after(KERNEL, "THREADS", Type::U32, "threads");
    pub(crate) const ID_KIND: Field = Field::after(THREADS, "ID_KIND", Type::U32, "the id kind");
    pub(crate) const FLAGS: Field = Field::after(ID_KIND, "FLAGS", Type::U32, "the flags");
    pub(crate) const ITERATIONS: Field = Field::after(FLAGS, "ITERATIONS", Type::I64, "the iterations");
    pub(crate) const ALPHA: Field = Field::after(ITERATIONS, "ALPHA", Type::F64, "alpha");
    pub(crate) const TOL: Field = Field::after(ALPHA, "TOL", Type::F64, "tol");
    pub(crate) const EDGE_COUNT: Field = Field::after(TOL, "EDGE_COUNT", Type::U64, "the edge count");
    pub(crate) const VERTEX_COUNT: Field = Field::after(EDGE_COUNT, "VERTEX_COUNT", Type::U64, "the vertex count");
    pub(crate) const GRAPH_ID: Field = Field::after(VERTEX_COUNT, "GRAPH_ID", Type::Bytes16, "the graph id");
    pub(crate) const MEMORY_LIMIT: Field = Field::after(GRAPH_ID, "MEMORY_LIMIT", Type::U64, "the memory limit");
    pub(crate) const KEPT_BYTES: Field = Field::after(MEMORY_LIMIT, "KEPT_BYTES", Type::U64, "the bytes kept");
    pub(crate) const REFUSAL_LENGTH: Field = Field::after(KEPT_BYTES, "REFUSAL_LENGTH", Type::U32, "the refusal length");
    #[cfg(test)]
    pub(crate) const FIELDS: &[Field] =
        &[Field::MAGIC, KERNEL, THREADS, ID_KIND, FLAGS, ITERATIONS, ALPHA, TOL, EDGE_COUNT, VERTEX_COUNT, GRAPH_ID, MEMORY_LIMIT, KEPT_BYTES, REFUSAL_LENGTH];
    /// Bytes 8..48 (the parameters) must agree between processes; the counts after them
    /// are each process's own.
    pub(crate) const AGREED: std::ops::Range<usize> = KERNEL.at..EDGE_COUNT.at;

    pub(crate) const LOAD: u32 = 0;
    pub(crate) const BFS: u32 = 1;
    pub(crate) const WCC: u32 = 2;
    pub(crate) const CDLP: u32 = 3;
    pub(crate) const SSSP: u32 = 4;
    pub(crate) const LCC: u32 = 5;
    pub(crate) const PAGERANK: u32 = 6;
    pub(crate) const GRAPHX_PAGERANK: u32 = 7;
    pub(crate) const SCC: u32 = 8;
    pub(crate) const SHORTEST_PATHS: u32 = 9;
    pub(crate) const TRIANGLES: u32 = 10;
    pub(crate) const KCORE: u32 = 11;
    pub(crate) const MIS: u32 = 12;
    pub(crate) const BFS_PATHS: u32 = 13;

    pub(crate) const INTEGRAL_IDS: u32 = 1;
    pub(crate) const STRING_IDS: u32 = 2;

    /// Flags: a source follows the refusal; the exchange code (bits 1-2); keep the loaded
    /// graph; run on the kept graph; the edges carry weights; a source list follows the
    /// refusal; labels as vertex numbers (WCC, CDLP, SCC); the vertex ids are distinct;
    /// one value per source (GraphX PageRank); edges both ways (shortest paths); marks
    /// follow the vertex ids.
    pub(crate) const HAS_SOURCE: u32 = 1;
    pub(crate) const EXCHANGE: u32 = 3 << super::exchange::SHIFT;
    pub(crate) const KEEP: u32 = 8;
    pub(crate) const USE: u32 = 16;
    pub(crate) const WEIGHTS: u32 = 32;
    pub(crate) const SOURCES: u32 = 64;
    pub(crate) const NUMBERS: u32 = 128;
    pub(crate) const UNIQUE: u32 = 256;
    pub(crate) const VECTOR: u32 = 512;
    pub(crate) const UNDIRECTED: u32 = 1024;
    pub(crate) const MARKS: u32 = 2048;
}

/// graph-call's result reply header (graph_call.rs: the `LPFGCR01` table).
pub(crate) mod gc_reply {
    use super::{Field, Type};

    pub(crate) const MAGIC: &[u8; 8] = b"LPFGCR01";
    pub(crate) const VERTICES: Field = Field::after(Field::MAGIC, "VERTICES", Type::U64, "n");
    pub(crate) const EDGES: Field = Field::after(VERTICES, "EDGES", Type::U64, "the edges");
    pub(crate) const ROUNDS: Field = Field::after(EDGES, "ROUNDS", Type::U64, "the rounds");
    pub(crate) const LOAD_SECONDS: Field = Field::after(ROUNDS, "LOAD_SECONDS", Type::F64, "the load seconds");
    pub(crate) const COMPUTE_SECONDS: Field = Field::after(LOAD_SECONDS, "COMPUTE_SECONDS", Type::F64, "the compute seconds");
    pub(crate) const RESIDUAL: Field = Field::after(COMPUTE_SECONDS, "RESIDUAL", Type::F64, "the residual");
    pub(crate) const FLAGS: Field = Field::after(RESIDUAL, "FLAGS", Type::U32, "the flags");
    pub(crate) const VALUE_KIND: Field = Field::after(FLAGS, "VALUE_KIND", Type::U32, "the value kind");
    pub(crate) const ID_SECONDS: Field = Field::after(VALUE_KIND, "ID_SECONDS", Type::F64, "the id seconds");
    pub(crate) const COUNT: Field = Field::after(ID_SECONDS, "COUNT", Type::U64, "the vertices in the reply");
    pub(crate) const KEPT_BYTES: Field = Field::after(COUNT, "KEPT_BYTES", Type::U64, "the bytes kept");
    #[cfg(test)]
    pub(crate) const FIELDS: &[Field] =
        &[Field::MAGIC, VERTICES, EDGES, ROUNDS, LOAD_SECONDS, COMPUTE_SECONDS, RESIDUAL, FLAGS, VALUE_KIND, ID_SECONDS, COUNT, KEPT_BYTES];

    /// Flags: converged (PageRank, GraphX PageRank); the exchange that ran (bits 1-2);
    /// BFS paths found a path.
    pub(crate) const CONVERGED: u32 = 1;
    pub(crate) const FOUND: u32 = 8;

    /// Value kinds: i64, f64, an id (the ids' encoding), w i64 per vertex, w f64 per
    /// vertex (w: the source list's length).
    pub(crate) const I64S: u32 = 1;
    pub(crate) const F64S: u32 = 2;
    pub(crate) const IDS: u32 = 3;
    pub(crate) const I64S_PER_SOURCE: u32 = 4;
    pub(crate) const F64S_PER_SOURCE: u32 = 5;
}

/// graph-call's other replies: every process refuses the input (`LPFGCE01`, u32 length,
/// the text), or a kept graph is missing (`LPFGCM01` alone).
pub(crate) mod gc_refused {
    use super::{Field, Type};

    pub(crate) const MAGIC: &[u8; 8] = b"LPFGCE01";
    pub(crate) const MISSING_MAGIC: &[u8; 8] = b"LPFGCM01";
    pub(crate) const LENGTH: Field = Field::after(Field::MAGIC, "LENGTH", Type::U32, "the text's length");
    #[cfg(test)]
    pub(crate) const FIELDS: &[Field] = &[Field::MAGIC, LENGTH];
}

/// pagerank's request header (pagerank.rs: "Request").
pub(crate) mod pr_request {
    use super::{Field, Type};

    pub(crate) const MAGIC: &[u8; 8] = b"LPFPRQ01";
    pub(crate) const ALPHA: Field = Field::after(Field::MAGIC, "ALPHA", Type::F64, "alpha");
    pub(crate) const TOL: Field = Field::after(ALPHA, "TOL", Type::F64, "tol");
    pub(crate) const MAX_ITERS: Field = Field::after(TOL, "MAX_ITERS", Type::U64, "max_iters");
    pub(crate) const THREADS: Field = Field::after(MAX_ITERS, "THREADS", Type::U32, "threads");
    pub(crate) const SOURCE: Field = Field::after(THREADS, "SOURCE", Type::U32, "source");
    pub(crate) const FLAGS: Field = Field::after(SOURCE, "FLAGS", Type::U32, "flags");
    pub(crate) const RESERVED: Field = Field::after(FLAGS, "RESERVED", Type::U32, "reserved");
    #[cfg(test)]
    pub(crate) const FIELDS: &[Field] = &[Field::MAGIC, ALPHA, TOL, MAX_ITERS, THREADS, SOURCE, FLAGS, RESERVED];

    pub(crate) const FILE: u32 = 1;
    pub(crate) const RMAT: u32 = 2;
    /// Flag bit 0: progress lines on process 0's stderr.
    pub(crate) const PROGRESS: u32 = 1;
    pub(crate) const FORMAT_AUTO: u32 = 0;
    pub(crate) const FORMAT_MTX: u32 = 1;
    pub(crate) const FORMAT_EDGES: u32 = 2;
    pub(crate) const FORMAT_BIN: u32 = 3;
}

/// pagerank's reply header (pagerank.rs: "Reply").
pub(crate) mod pr_reply {
    use super::{Field, Type};

    pub(crate) const MAGIC: &[u8; 8] = b"LPFPRR01";
    pub(crate) const VERTICES: Field = Field::after(Field::MAGIC, "VERTICES", Type::U64, "n");
    pub(crate) const EDGES: Field = Field::after(VERTICES, "EDGES", Type::U64, "the edges");
    pub(crate) const ITERATIONS: Field = Field::after(EDGES, "ITERATIONS", Type::U64, "the iterations");
    pub(crate) const RESIDUAL: Field = Field::after(ITERATIONS, "RESIDUAL", Type::F64, "the residual");
    pub(crate) const LOAD_SECONDS: Field = Field::after(RESIDUAL, "LOAD_SECONDS", Type::F64, "the load seconds");
    pub(crate) const ITERATION_SECONDS: Field = Field::after(LOAD_SECONDS, "ITERATION_SECONDS", Type::F64, "the iteration seconds");
    pub(crate) const CONVERGED: Field = Field::after(ITERATION_SECONDS, "CONVERGED", Type::U32, "converged");
    pub(crate) const EXCHANGE: Field = Field::after(CONVERGED, "EXCHANGE", Type::U32, "the exchange");
    pub(crate) const COUNT: Field = Field::after(EXCHANGE, "COUNT", Type::U64, "the vertices owned");
    #[cfg(test)]
    pub(crate) const FIELDS: &[Field] =
        &[Field::MAGIC, VERTICES, EDGES, ITERATIONS, RESIDUAL, LOAD_SECONDS, ITERATION_SECONDS, CONVERGED, EXCHANGE, COUNT];
}

/// The generator of the JVM's constants (`org.lpf.spark.LpfLayout`) and the tests that
/// hold the committed Java file to it.
#[cfg(test)]
mod jvm {
    use super::*;

    /// A named integer the JVM writes or reads (a flag bit, a code), with what it means.
    type Constant = (&'static str, u32, &'static str);
    
    /// One header as the JVM sees it: a nested class of `LpfLayout`.
    struct Layout {
        class: &'static str,
        doc: &'static str,
        magic: &'static [u8; 8],
        fields: &'static [Field],
        constants: &'static [Constant],
    }
    
    impl Layout {
        /// Bytes of the header: the end of its last field.
        const fn size(&self) -> usize {
            self.fields[self.fields.len() - 1].end()
        }
    }

    impl Type {
        /// How the JVM writes and reads it (for the generated constant's comment).
        fn on_the_jvm(self) -> &'static str {
            match self {
                Type::Magic => "8 ASCII bytes",
                Type::U32 => "u32 (putInt/getInt)",
                Type::I64 => "i64 (putLong/getLong)",
                Type::U64 => "u64 (putLong/getLong)",
                Type::F64 => "f64 (putDouble/getDouble)",
                Type::Bytes16 => "16 bytes",
            }
        }
    }

    /// The headers as the JVM sees them, each a nested class of `LpfLayout`, with the codes
    /// and flags it writes or reads.
    const LAYOUTS: &[Layout] = &[
        Layout {
            class: "GraphCallRequest",
            doc: "graph-call's request header (native/lpf-jni/src/graph_call.rs, \"Request\").",
            magic: gc_request::MAGIC,
            fields: gc_request::FIELDS,
            constants: &[
                ("KERNEL_LOAD", gc_request::LOAD, "kernel: load the graph and keep it (needs FLAG_KEEP)"),
                ("KERNEL_BFS", gc_request::BFS, "kernel: BFS"),
                ("KERNEL_WCC", gc_request::WCC, "kernel: WCC"),
                ("KERNEL_CDLP", gc_request::CDLP, "kernel: CDLP"),
                ("KERNEL_SSSP", gc_request::SSSP, "kernel: SSSP"),
                ("KERNEL_LCC", gc_request::LCC, "kernel: LCC"),
                ("KERNEL_PAGERANK", gc_request::PAGERANK, "kernel: PageRank"),
                ("KERNEL_GRAPHX_PAGERANK", gc_request::GRAPHX_PAGERANK, "kernel: GraphX PageRank"),
                ("KERNEL_SCC", gc_request::SCC, "kernel: SCC"),
                ("KERNEL_SHORTEST_PATHS", gc_request::SHORTEST_PATHS, "kernel: shortest paths to landmarks"),
                ("KERNEL_TRIANGLES", gc_request::TRIANGLES, "kernel: triangle count"),
                ("KERNEL_KCORE", gc_request::KCORE, "kernel: k-core"),
                ("KERNEL_MIS", gc_request::MIS, "kernel: maximal independent set"),
                ("KERNEL_BFS_PATHS", gc_request::BFS_PATHS, "kernel: BFS paths (GraphFrames' bfs)"),
                ("INTEGRAL_IDS", gc_request::INTEGRAL_IDS, "id kind: i64"),
                ("STRING_IDS", gc_request::STRING_IDS, "id kind: byte strings (u32 length, bytes)"),
                ("FLAG_SOURCE", gc_request::HAS_SOURCE, "flag: a source follows the refusal"),
                ("EXCHANGE_SHIFT", exchange::SHIFT, "flags: the exchange code's shift (bits 1-2)"),
                ("FLAG_KEEP", gc_request::KEEP, "flag: keep the loaded graph under the graph id"),
                ("FLAG_USE", gc_request::USE, "flag: run on the graph kept under the graph id"),
                ("FLAG_WEIGHTS", gc_request::WEIGHTS, "flag: the edges carry weights"),
                ("FLAG_SOURCES", gc_request::SOURCES, "flag: a source list follows the refusal"),
                ("FLAG_NUMBERS", gc_request::NUMBERS, "flag: labels as vertex numbers (WCC, CDLP, SCC)"),
                ("FLAG_UNIQUE", gc_request::UNIQUE, "flag: the vertex ids are distinct over all processes"),
                ("FLAG_VECTOR", gc_request::VECTOR, "flag: one rank per source (GraphX PageRank)"),
                ("FLAG_UNDIRECTED", gc_request::UNDIRECTED, "flag: the edges both ways (shortest paths)"),
                ("FLAG_MARKS", gc_request::MARKS, "flag: a mark per vertex id follows the vertex ids"),
            ],
        },
        Layout {
            class: "GraphCallReply",
            doc: "graph-call's result header (native/lpf-jni/src/graph_call.rs, LPFGCR01).",
            magic: gc_reply::MAGIC,
            fields: gc_reply::FIELDS,
            constants: &[
                ("FLAG_CONVERGED", gc_reply::CONVERGED, "flag: converged"),
                ("EXCHANGE_SHIFT", exchange::SHIFT, "flags: the exchange code's shift (bits 1-2)"),
                ("FLAG_FOUND", gc_reply::FOUND, "flag: BFS paths found a path"),
                ("VALUES_I64", gc_reply::I64S, "value kind: an i64 per vertex"),
                ("VALUES_F64", gc_reply::F64S, "value kind: an f64 per vertex"),
                ("VALUES_ID", gc_reply::IDS, "value kind: an id per vertex (the ids' encoding)"),
                ("VALUES_I64_PER_SOURCE", gc_reply::I64S_PER_SOURCE, "value kind: w i64 per vertex"),
                ("VALUES_F64_PER_SOURCE", gc_reply::F64S_PER_SOURCE, "value kind: w f64 per vertex"),
            ],
        },
        Layout {
            class: "GraphCallRefused",
            doc: "graph-call's refusal (the text follows the header); a kept graph missing: MISSING_MAGIC alone.",
            magic: gc_refused::MAGIC,
            fields: gc_refused::FIELDS,
            constants: &[],
        },
        Layout {
            class: "PageRankRequest",
            doc: "pagerank's request header (native/lpf-jni/src/pagerank.rs, \"Request\"); the source follows.",
            magic: pr_request::MAGIC,
            fields: pr_request::FIELDS,
            constants: &[
                ("SOURCE_FILE", pr_request::FILE, "source: a file (u32 format, u32 length, path)"),
                ("SOURCE_RMAT", pr_request::RMAT, "source: Graph500 R-MAT parameters"),
                ("FLAG_PROGRESS", pr_request::PROGRESS, "flag: progress lines on process 0's stderr"),
                ("EXCHANGE_SHIFT", exchange::SHIFT, "flags: the exchange code's shift (bits 1-2)"),
                ("FORMAT_AUTO", pr_request::FORMAT_AUTO, "file format: by extension"),
                ("FORMAT_MTX", pr_request::FORMAT_MTX, "file format: MatrixMarket"),
                ("FORMAT_EDGES", pr_request::FORMAT_EDGES, "file format: edge list"),
                ("FORMAT_BIN", pr_request::FORMAT_BIN, "file format: binary"),
            ],
        },
        Layout {
            class: "PageRankReply",
            doc: "pagerank's reply header (native/lpf-jni/src/pagerank.rs, \"Reply\"); (u64 id, f64 rank) pairs follow.",
            magic: pr_reply::MAGIC,
            fields: pr_reply::FIELDS,
            constants: &[],
        },
    ];

    /// Constants of `LpfLayout` itself: the request's sections and the exchange codes.
    const TOP: &[Constant] = &[
        ("SECTION_HEAD", sections::HEAD as u32, "request section: the head (header, refusal, source)"),
        ("SECTION_EDGES", sections::EDGES as u32, "request section: the edges' ids"),
        ("SECTION_WEIGHTS", sections::WEIGHTS as u32, "request section: the edges' weights"),
        ("SECTION_VERTICES", sections::VERTICES as u32, "request section: the vertex ids (and marks)"),
        ("SECTIONS", sections::SECTIONS as u32, "the number of request sections"),
        ("EXCHANGE_AUTO", exchange::AUTO, "exchange code: auto"),
        ("EXCHANGE_ALLGATHER", exchange::ALLGATHER, "exchange code: allgather"),
        ("EXCHANGE_PLAN", exchange::PLAN, "exchange code: plan"),
    ];

    fn constant(out: &mut String, indent: &str, (name, value, doc): &Constant) {
        out.push_str(&format!("{indent}/** {doc}. */\n{indent}public static final int {name} = {value};\n"));
    }

    /// The Java source of `org.lpf.spark.LpfLayout`: every layout's magic, field offsets,
    /// size and constants.
    fn java_source() -> String {
        let mut out = String::from(
            "// Generated from native/lpf-jni/src/layout.rs, the one definition of these layouts: do not edit.\n\
             // After a change there: WRITE_JVM_LAYOUT=1 cargo test --release -p lpf-jni layout\n\
             package org.lpf.spark;\n\n\
             /**\n * The byte layouts the JVM writes and native code reads (and back), little-endian: the\n\
             \x20* offsets of the fixed fields of the bundled algorithms' requests and replies, their\n\
             \x20* magics, sizes, flags and codes.\n */\n\
             public final class LpfLayout {\n    private LpfLayout() {}\n\n",
        );
        for c in TOP {
            constant(&mut out, "    ", c);
        }
        for l in LAYOUTS {
            out.push_str(&format!("\n    /** {} */\n    public static final class {} {{\n        private {}() {{}}\n\n", l.doc, l.class, l.class));
            let magic = std::str::from_utf8(l.magic).expect("ASCII magic");
            out.push_str(&format!("        public static final String MAGIC = \"{magic}\";\n"));
            if l.class == "GraphCallRefused" {
                let missing = std::str::from_utf8(gc_refused::MISSING_MAGIC).expect("ASCII magic");
                out.push_str(&format!("        public static final String MISSING_MAGIC = \"{missing}\";\n"));
            }
            for f in l.fields {
                out.push_str(&format!("        /** Offset of {}: {}. */\n        public static final int {} = {};\n", f.what, f.ty.on_the_jvm(), f.name, f.at));
            }
            out.push_str(&format!("        /** Bytes of the header. */\n        public static final int SIZE = {};\n", l.size()));
            for c in l.constants {
                constant(&mut out, "        ", c);
            }
            out.push_str("    }\n");
        }
        out.push_str("}\n");
        out
    }

    #[cfg(test)]
    mod tests {
        use super::super::{gc_reply, gc_request, pr_reply, pr_request};
        use super::*;

        const JAVA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../jvm/src/main/java/org/lpf/spark/LpfLayout.java");

        /// The JVM's constants are these tables': the committed LpfLayout.java is what
        /// [`java_source`] gives (WRITE_JVM_LAYOUT=1 writes it: a developer's switch, not an
        /// LPF_* variable, which are the library's settings and read in lpf's config.rs only).
        #[test]
        fn the_jvm_constants_are_generated_from_these_tables() {
            let want = java_source();
            if std::env::var_os("WRITE_JVM_LAYOUT").is_some() {
                std::fs::write(JAVA, &want).unwrap();
            }
            let have = std::fs::read_to_string(JAVA).unwrap_or_default();
            assert!(
                have == want,
                "{JAVA} is not what native/lpf-jni/src/layout.rs gives: run WRITE_JVM_LAYOUT=1 cargo test --release -p lpf-jni layout"
            );
        }

        /// The headers' sizes and fields as graph_call.rs and pagerank.rs document them.
        #[test]
        fn the_headers_are_the_documented_ones() {
            let sizes: Vec<(&str, usize)> = LAYOUTS.iter().map(|l| (l.class, l.size())).collect();
            assert_eq!(sizes, [("GraphCallRequest", 100), ("GraphCallReply", 88), ("GraphCallRefused", 12), ("PageRankRequest", 48), ("PageRankReply", 72)]);
            let at = |fields: &[Field]| fields.iter().map(|f| f.at).collect::<Vec<_>>();
            assert_eq!(at(gc_request::FIELDS), [0, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64, 80, 88, 96]);
            assert_eq!(at(gc_reply::FIELDS), [0, 8, 16, 24, 32, 40, 48, 56, 60, 64, 72, 80]);
            assert_eq!(at(pr_request::FIELDS), [0, 8, 16, 24, 32, 36, 40, 44]);
            assert_eq!(at(pr_reply::FIELDS), [0, 8, 16, 24, 32, 40, 48, 56, 60, 64]);
            assert_eq!(gc_request::AGREED, 8..48);
            for l in LAYOUTS {
                // Each field right after the one before, and every name once.
                assert!(l.fields.windows(2).all(|w| w[1].at == w[0].end()), "{}", l.class);
                let mut names: Vec<&str> = l.fields.iter().map(|f| f.name).chain(l.constants.iter().map(|c| c.0)).collect();
                names.sort();
                assert!(names.windows(2).all(|w| w[0] != w[1]), "{}: {names:?}", l.class);
            }
        }
    }
}
