package org.lpf.spark;

/**
 * An LPF failure, on the JVM side: which process (pid, -1 if not known yet), on which
 * host, in which phase ({@code bootstrap}, {@code load}, {@code hook}, {@code finalize},
 * {@code argument}, {@code check}, {@code native-library}), and the native message.
 * Thrown by every native call of {@link LpfNative} and by the bridge's own checks.
 */
public class LpfException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int pid;
    private final String host;
    private final String phase;
    private final String detail;

    public LpfException(int pid, String host, String phase, String message) {
        this(pid, host, phase, message, null);
    }

    public LpfException(int pid, String host, String phase, String message, Throwable cause) {
        super(format(pid, host, phase, message), cause);
        this.pid = pid;
        this.host = host;
        this.phase = phase;
        this.detail = message;
    }

    private static String format(int pid, String host, String phase, String message) {
        String who = pid >= 0 ? "LPF process " + pid : "LPF";
        return who + " on " + host + " failed in phase " + phase + ": " + message;
    }

    /** The LPF pid of the failing process, or -1. */
    public int pid() { return pid; }

    /** The host the failing process ran on. */
    public String host() { return host; }

    /** Where it failed: bootstrap, load, hook, finalize, argument, check or native-library. */
    public String phase() { return phase; }

    /** The native (or check's) message alone. */
    public String detail() { return detail; }
}
