package org.lpf.spark;

import java.nio.ByteBuffer;

/**
 * The native methods of liblpf_jni.so (crate native/lpf-jni). Every method throws
 * {@link LpfException} on failure. Prefer {@link LpfGroup}, which owns the handle.
 */
public final class LpfNative {
    private LpfNative() {}

    static {
        NativeLoader.load();
    }

    /** Makes sure the library is loaded (the class initialiser does it). */
    public static void ensureLoaded() {}

    public static native String version();

    /** Bundled algorithm names, comma-separated. */
    public static native String algorithms();

    /**
     * Output bytes the bundled {@code algorithm} writes for {@code inputLength} input
     * bytes; -1 for one that produces its output (size known only after the run; pass
     * output length -1 to {@link #hookArrays}).
     */
    public static native long outputLength(String algorithm, long inputLength);

    /**
     * PageRank's parameter check, the one the native side and the {@code pagerank} CLI
     * make: throws {@link LpfException} (phase {@code argument}) naming the parameter.
     */
    public static native void checkPageRank(double alpha, double tol, long maxIter);

    /**
     * The request of the bundled {@code pagerank} or {@code graph-call} (a direct
     * buffer) as the native side reads it, every field on one line; throws
     * {@link LpfException} (pid -1, host {@code driver}, phase {@code argument}) with
     * the parse error. The JVM's encoders are tested against it; the driver checks a
     * graph kernel's parameters with it.
     */
    public static native String describeRequest(String algorithm, ByteBuffer request);

    /**
     * Drops every part of the resident graph {@code graphId} (32 hex digits) that this JVM
     * keeps (see {@code LpfGraph.cache}); returns the native bytes released (0: none kept).
     */
    public static native long dropGraph(String graphId);

    /**
     * The resident graphs' parts this JVM keeps, one line each: graph id (hex), pid, p,
     * native bytes.
     */
    public static native String keptGraphs();

    /**
     * Part {@code part} of {@code parts} of the Graph500 Kronecker (R-MAT) graph of
     * 2^{@code scale} vertices and {@code edgeFactor}·2^{@code scale} generated edges
     * (A = 0.57, B = C = 0.19), the project's one generator (graphblas::kron, as the
     * native CLIs' {@code --rmat}): the part's edges relabelled, self-loops dropped
     * (duplicates kept), each as 24 little-endian bytes: long source, long target, double
     * weight (an integer in 1..63 from the edge's global index). The union of the parts
     * is the same graph, weights included, for every {@code parts}. Throws
     * {@link LpfException} (phase {@code argument}) naming a bad parameter, or a part
     * too large for one array.
     */
    public static native byte[] rmatEdges(int scale, int edgeFactor, long seed, int part, int parts);

    /** A cancellation token (see {@link LpfCancel}, which owns it); freed by {@link #freeCancel}. */
    public static native long newCancel();

    /** Sets the token {@code token} (any thread): the groups made with it fail, naming {@code reason}. */
    public static native void cancel(long token, String reason);

    /** Frees a token of {@link #newCancel} (the groups made with it keep their own reference). */
    public static native void freeCancel(long token);

    /**
     * Joins the group named {@code key} of {@code nprocs} threads of this JVM as {@code pid};
     * returns a handle once all have joined. {@code key} names the job (threads of different
     * jobs never form one group, whatever their sizes); fails after {@code timeoutMs} naming
     * the pids that never joined, at once when a pid joins twice or nprocs differ, or when
     * the token {@code cancel} (0: none) is set, which also stops the group's hooks.
     */
    public static native long initShm(String key, int pid, int nprocs, long timeoutMs, String host, long cancel);

    /**
     * Step 1 of joining a group of {@code nprocs} processes over TCP as {@code pid}: pid 0
     * binds {@code master:port} at once (0 = the OS chooses: read {@link #boundPort} and
     * publish it), the others only check their arguments. {@code secret} and {@code job}
     * must be the same everywhere; {@code secret} is at least 16 bytes, or null for a
     * group without authentication (an empty one is refused, phase bootstrap);
     * {@code threads} = 0 for one thread per process.
     * Step 2 is {@link #join}. The token {@code cancel} (0: none) stops the join and
     * the group's hooks once set.
     */
    public static native long initTcp(String master, int port, int pid, int nprocs, long timeoutMs,
                                      String secret, int threads, String job, String host, long cancel);

    /** Step 2 of a TCP init: waits (at most the timeout) for the group to form. */
    public static native void join(long group);

    /** The port the master listens on (0 where not applicable). */
    public static native int boundPort(long group);

    /** "shm" or "tcp". */
    public static native String engine(long group);

    /**
     * Runs a bundled algorithm (library and symbol null) or {@code symbol} of the shared
     * library {@code library} (algorithm null) on this process; returns the output.
     * {@code outputLength} -1 (bundled algorithms only): the algorithm's own output.
     */
    public static native byte[] hookArrays(long group, String algorithm, String library, String symbol,
                                           byte[] input, int outputLength);

    /** As hookArrays, on direct buffers (whole capacity), without copies. */
    public static native void hookDirect(long group, String algorithm, String library, String symbol,
                                         ByteBuffer input, ByteBuffer output);

    /**
     * Runs a bundled algorithm that produces its output (its size is known only after
     * the run, e.g. {@code pagerank}) on the direct buffer {@code input} (whole
     * capacity, read in place) and returns the output. With {@code progressHost} not
     * null, the process sends its per-iteration progress to
     * {@code progressHost:progressPort}, after the line {@code progressHello}
     * (native/lpf-jni/src/progress.rs; the driver's end is LpfProgress).
     */
    public static native byte[] hookProduceDirect(long group, String algorithm, ByteBuffer input,
                                                  String progressHost, int progressPort, String progressHello);

    /** An empty request in native memory, in sections; see {@link LpfRequest}. */
    static native long requestOpen();

    /** Appends {@code bytes[from, from + length)} to a section of the request (memory that cannot be had: an error naming the bytes). */
    static native void requestAppend(long request, int section, byte[] bytes, int from, int length);

    /** Frees a request (0: nothing). */
    static native void requestFree(long request);

    /** As hookProduceDirect, on a complete request in native memory, read in place; the request is handed over (freed here). */
    static native byte[] hookProduceRequest(long group, String algorithm, long request,
                                            String progressHost, int progressPort, String progressHello);

    /** Leaves the group and frees the handle. */
    public static native void finalizeInit(long group);
}
