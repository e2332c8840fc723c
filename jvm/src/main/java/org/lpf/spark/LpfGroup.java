package org.lpf.spark;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * This process's membership of an LPF group (owns the native handle). Not thread-safe:
 * one task thread uses it. Close it (try-with-resources) to leave the group.
 */
public final class LpfGroup implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LpfGroup.class);

    private long handle;
    private final int pid;
    private final int nprocs;
    private final String host;

    private LpfGroup(long handle, int pid, int nprocs, String host) {
        this.handle = handle;
        this.pid = pid;
        this.nprocs = nprocs;
        this.host = host;
    }

    /**
     * Joins the group {@code key} of {@code nprocs} task threads of this JVM (shared-memory
     * engine): {@code key} names the job, so jobs running at once in one JVM never mix;
     * waits at most {@code timeoutMs} for the other threads.
     */
    public static LpfGroup shm(String key, int pid, int nprocs, long timeoutMs, String host) {
        return shm(key, pid, nprocs, timeoutMs, host, null);
    }

    /**
     * {@link #shm(String, int, int, long, String)} stopped by {@code cancel} (null: none):
     * once it is set, the join and every hook of the group fail (see {@link LpfCancel}).
     */
    public static LpfGroup shm(String key, int pid, int nprocs, long timeoutMs, String host, LpfCancel cancel) {
        long h = LpfNative.initShm(key, pid, nprocs, timeoutMs, host, cancel == null ? 0 : cancel.handle());
        LOG.debug("LPF pid {}/{} joined the shared-memory group {} on {}", pid, nprocs, key, host);
        return new LpfGroup(h, pid, nprocs, host);
    }

    /**
     * Step 1 of joining a TCP group (see {@link LpfNative#initTcp}): pid 0 has bound its
     * port ({@link #boundPort}) when this returns; {@link #join} is step 2.
     */
    public static LpfGroup tcp(String master, int port, int pid, int nprocs, long timeoutMs, String secret,
                               int threads, String job, String host) {
        return tcp(master, port, pid, nprocs, timeoutMs, secret, threads, job, host, null);
    }

    /**
     * {@link #tcp(String, int, int, int, long, String, int, String, String)} stopped by
     * {@code cancel} (null: none): once it is set, the join and every hook of the group
     * fail (see {@link LpfCancel}).
     */
    public static LpfGroup tcp(String master, int port, int pid, int nprocs, long timeoutMs, String secret,
                               int threads, String job, String host, LpfCancel cancel) {
        long h = LpfNative.initTcp(master, port, pid, nprocs, timeoutMs, secret, threads, job, host,
                cancel == null ? 0 : cancel.handle());
        LOG.debug("LPF pid {}/{} prepared a TCP group (master {}:{}) on {}", pid, nprocs, master, port, host);
        return new LpfGroup(h, pid, nprocs, host);
    }

    /** Step 2 of a TCP group: waits for every process (at most the timeout); a no-op otherwise. */
    public LpfGroup join() {
        LpfNative.join(live());
        return this;
    }

    public int pid() { return pid; }
    public int nprocs() { return nprocs; }
    public String host() { return host; }

    private long live() {
        if (handle == 0) throw new LpfException(pid, host, "argument", "the LPF group was already closed");
        return handle;
    }

    /** The port the master listens on (TCP, pid 0), else 0. */
    public int boundPort() { return LpfNative.boundPort(live()); }

    public String engine() { return LpfNative.engine(live()); }

    /** Runs the program on this process's input; returns its output of {@code outputLength} bytes. */
    public byte[] hook(LpfProgram program, byte[] input, int outputLength) {
        return LpfNative.hookArrays(live(), program.algorithm(), program.library(), program.symbol(), input, outputLength);
    }

    /**
     * Runs the program reading {@code input} and writing {@code output} in place, both
     * direct buffers, from their positions to their limits.
     */
    public void hook(LpfProgram program, ByteBuffer input, ByteBuffer output) {
        if ((input != null && !input.isDirect()) || (output != null && !output.isDirect())) {
            throw new LpfException(pid, host, "argument", "hook(ByteBuffer, ByteBuffer) needs direct buffers "
                    + "(ByteBuffer.allocateDirect); use hook(byte[], int) for heap data");
        }
        LpfNative.hookDirect(live(), program.algorithm(), program.library(), program.symbol(),
                input == null ? null : input.slice(), output == null ? null : output.slice());
    }

    /**
     * Runs a bundled algorithm that produces its output (e.g. {@code pagerank}) on
     * {@code input}, a direct buffer read in place from its position to its limit
     * (large inputs are not copied); returns the output.
     */
    public byte[] produce(LpfProgram program, ByteBuffer input) {
        return produce(program, input, null, 0, null);
    }

    /**
     * As {@link #produce(LpfProgram, ByteBuffer)}, sending the algorithm's per-round
     * progress to {@code progressHost:progressPort} (the driver's listener, which expects
     * {@code progressHello} first); progress that cannot be sent is dropped, never fails
     * the run.
     */
    public byte[] produce(LpfProgram program, ByteBuffer input, String progressHost, int progressPort,
                          String progressHello) {
        if (program.algorithm() == null) {
            throw new LpfException(pid, host, "argument", "produce runs bundled algorithms only, not " + program);
        }
        if (input == null || !input.isDirect()) {
            throw new LpfException(pid, host, "argument", "produce needs a direct buffer (ByteBuffer.allocateDirect)");
        }
        return LpfNative.hookProduceDirect(live(), program.algorithm(), input.slice(), progressHost, progressPort,
                progressHello);
    }

    /**
     * As {@link #produce(LpfProgram, ByteBuffer, String, int, String)}, on a request in
     * native memory (any size), read in place and freed by the run (the request is handed
     * over: closing it after does nothing); {@code progressHost} null: no progress.
     */
    public byte[] produce(LpfProgram program, LpfRequest input, String progressHost, int progressPort, String progressHello) {
        if (program.algorithm() == null) {
            throw new LpfException(pid, host, "argument", "produce runs bundled algorithms only, not " + program);
        }
        return LpfNative.hookProduceRequest(live(), program.algorithm(), input.handOver(), progressHost, progressPort,
                progressHello);
    }

    @Override
    public void close() {
        if (handle != 0) {
            long h = handle;
            handle = 0;
            LpfNative.finalizeInit(h);
        }
    }
}
