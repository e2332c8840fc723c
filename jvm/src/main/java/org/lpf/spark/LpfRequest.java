package org.lpf.spark;

/**
 * One LPF process's request in native memory, any size (a direct {@code ByteBuffer} stops
 * at 2 GiB), in four sections that grow on their own: {@link #HEAD} (the parameters),
 * {@link #EDGES} (the edges' ids), {@link #WEIGHTS}, {@link #VERTICES} (vertex ids). A task
 * appends each piece of its rows to its section as it reads it, so the JVM heap holds one
 * piece at a time, and the head last, when the counts are known; a bundled algorithm
 * reads the sections in place ({@link LpfGroup#produce(LpfProgram, LpfRequest, String, int,
 * String)}) and frees them as soon as it has read them (graph-call: before building the
 * graph). Native memory is not counted against {@code spark.executor.memory}. Used by one
 * thread; {@link #close} frees the memory (idempotent). The layouts are in
 * native/lpf-jni/src/request.rs and graph_call.rs.
 */
public final class LpfRequest implements AutoCloseable {
    // The sections' numbers: LpfLayout's, generated from native/lpf-jni/src/layout.rs.
    public static final int HEAD = LpfLayout.SECTION_HEAD;
    public static final int EDGES = LpfLayout.SECTION_EDGES;
    public static final int WEIGHTS = LpfLayout.SECTION_WEIGHTS;
    public static final int VERTICES = LpfLayout.SECTION_VERTICES;

    private long handle;
    private long bytes;

    public LpfRequest() {
        this.handle = LpfNative.requestOpen();
    }

    /** Bytes appended so far, all sections. */
    public long bytes() {
        return bytes;
    }

    public LpfRequest put(int section, byte[] b) {
        return put(section, b, 0, b.length);
    }

    /** Appends {@code b[from, from + count)} to {@code section}; memory that cannot be had is an LpfException naming the bytes. */
    public LpfRequest put(int section, byte[] b, int from, int count) {
        LpfNative.requestAppend(live(), section, b, from, count);
        bytes += count;
        return this;
    }

    /** Frees every section appended so far and starts again empty (a refused input keeps only its head). */
    public void discard() {
        long h = live();
        handle = 0;
        bytes = 0;
        LpfNative.requestFree(h);
        handle = LpfNative.requestOpen();
    }

    /**
     * The handle, handed over to native code, which frees it: this object forgets it (a
     * later {@link #close} does nothing).
     */
    long handOver() {
        long h = live();
        handle = 0;
        return h;
    }

    private long live() {
        if (handle == 0) {
            throw new IllegalStateException("the request was freed or handed over");
        }
        return handle;
    }

    @Override
    public void close() {
        if (handle != 0) {
            long h = handle;
            handle = 0;
            LpfNative.requestFree(h);
        }
    }
}
