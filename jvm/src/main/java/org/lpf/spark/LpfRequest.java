package org.lpf.spark;

import java.nio.ByteBuffer;

/**
 * One LPF process's request in native memory: its length declared first, its bytes
 * appended in order (the header, then the pieces a task read from its rows), then read in place
 * by a bundled algorithm ({@link LpfGroup#produce(LpfProgram, LpfRequest, String, int, String)}), which
 * frees it as soon as it has read it (graph-call: before building the graph).
 * Unlike a direct {@code ByteBuffer} it has no 2 GiB limit; unlike the JVM heap it is not
 * counted against {@code spark.executor.memory}. Used by one thread; {@link #close} frees
 * the memory (idempotent). The Spark bridge puts every kernel's request here; a user's
 * bundled-algorithm run may too.
 */
public final class LpfRequest implements AutoCloseable {
    private final long length;
    private long handle;
    private long written;

    public LpfRequest(long length) {
        if (length < 0) {
            throw new IllegalArgumentException("a request of " + length + " bytes");
        }
        this.length = length;
        this.handle = LpfNative.requestAllocate(length);
    }

    public long length() {
        return length;
    }

    public LpfRequest put(byte[] bytes) {
        return put(bytes, 0, bytes.length);
    }

    public LpfRequest put(byte[] bytes, int from, int count) {
        LpfNative.requestAppend(live(), bytes, from, count);
        written += count;
        return this;
    }

    /** Appends the bytes of a heap buffer from 0 to its position. */
    public LpfRequest put(ByteBuffer heap) {
        return put(heap.array(), heap.arrayOffset(), heap.position());
    }

    /** Whether every declared byte was appended. */
    public boolean complete() {
        return written == length;
    }

    /**
     * The handle of the complete request, handed over to native code, which frees it: this
     * object forgets it (a later {@link #close} does nothing).
     */
    long handOver() {
        if (written != length) {
            throw new IllegalStateException("the request holds " + written + " of its " + length + " bytes");
        }
        long h = live();
        handle = 0;
        return h;
    }

    private long live() {
        if (handle == 0) {
            throw new IllegalStateException("the request was freed");
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
