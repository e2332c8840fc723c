package org.lpf.spark;

import java.io.Serializable;

/**
 * What an LPF hook runs: a bundled algorithm by name, or an {@code lpf_spmd_t} function
 * exported by a shared library present on every executor (built against lpf/core.h with
 * {@code cc -shared -fPIC}, not linked to liblpf_core: its lpf_* calls resolve to the
 * bridge's own C ABI).
 */
public final class LpfProgram implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String algorithm;
    private final String library;
    private final String symbol;

    private LpfProgram(String algorithm, String library, String symbol) {
        this.algorithm = algorithm;
        this.library = library;
        this.symbol = symbol;
    }

    /** A bundled algorithm, e.g. {@code allreduce-sum-i64}, {@code ring-shift} or {@code pagerank}. */
    public static LpfProgram bundled(String name) {
        if (name == null || name.isEmpty()) throw new IllegalArgumentException("algorithm name is empty");
        return new LpfProgram(name, null, null);
    }

    /** The SPMD function {@code symbol} of the shared library at {@code path} (same path on every executor). */
    public static LpfProgram library(String path, String symbol) {
        if (path == null || symbol == null) throw new IllegalArgumentException("library path and symbol are required");
        return new LpfProgram(null, path, symbol);
    }

    public String algorithm() { return algorithm; }
    public String library() { return library; }
    public String symbol() { return symbol; }

    /**
     * Output bytes of a bundled algorithm for an input length; -1 for library programs
     * (the caller knows) and for bundled algorithms that produce their output (its size
     * is known only after the run).
     */
    public long outputLength(long inputLength) {
        return algorithm == null ? -1 : LpfNative.outputLength(algorithm, inputLength);
    }

    @Override
    public String toString() {
        return algorithm != null ? "bundled:" + algorithm : symbol + "@" + library;
    }
}
