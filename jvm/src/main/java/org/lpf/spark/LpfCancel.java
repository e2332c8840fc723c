package org.lpf.spark;

/**
 * A cancellation token for LPF processes (the native library's {@code lpf::Cancel}).
 * Give it to {@link LpfGroup#shm(String, int, int, long, String, LpfCancel)} or
 * {@link LpfGroup#tcp(String, int, int, int, long, String, int, String, String, LpfCancel)};
 * {@link #cancel} (from any thread) then makes the group's join, and every wait and
 * sync of its hooks, fail with an {@link LpfException} naming the reason: within
 * milliseconds where the process waits for its peers, at its next superstep where it
 * computes. Its peers fail as when any process leaves its section (the process left).
 * The Spark entry points use one per task and set it when Spark kills the task.
 * Close it after the groups made with it (they keep what they need).
 */
public final class LpfCancel implements AutoCloseable {
    private long handle;
    private volatile String reason;

    public LpfCancel() {
        this.handle = LpfNative.newCancel();
    }

    /** Cancels the processes that carry this token; the first reason stays. */
    public synchronized void cancel(String reason) {
        if (this.reason != null) return;
        this.reason = reason == null ? "" : reason;
        if (handle != 0) LpfNative.cancel(handle, this.reason);
    }

    public boolean isCancelled() {
        return reason != null;
    }

    /** The native handle for the group constructors (0 once closed). */
    synchronized long handle() {
        return handle;
    }

    @Override
    public synchronized void close() {
        if (handle != 0) {
            long h = handle;
            handle = 0;
            LpfNative.freeCancel(h);
        }
    }
}
