package org.lpf.spark;

/**
 * An LPF failure, on the JVM side: which process (pid, -1 if not known yet), on which
 * host, in which phase ({@code bootstrap}, {@code load}, {@code hook}, {@code finalize},
 * {@code argument}, {@code check}, {@code native-library}; on the driver also {@code slots}),
 * and the native message.
 * Thrown by every native call of {@link LpfNative} and by the bridge's own checks, and on
 * the driver by the entry points that run the stage themselves ({@code LpfHook.runStage},
 * {@code runWithoutBarrier}, {@code LpfPageRank.*}): there it is the failure a task
 * reported (the first permanent one, else the last one), with Spark's own exception as
 * its cause.
 */
public class LpfException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int pid;
    private final String host;
    private final String phase;
    private final String detail;
    private final boolean permanent;

    public LpfException(int pid, String host, String phase, String message) {
        this(pid, host, phase, message, false, null);
    }

    /** As thrown by the native library: {@code permanent} as {@link #permanent()}. */
    public LpfException(int pid, String host, String phase, String message, boolean permanent) {
        this(pid, host, phase, message, permanent, null);
    }

    public LpfException(int pid, String host, String phase, String message, Throwable cause) {
        this(pid, host, phase, message, false, cause);
    }

    public LpfException(int pid, String host, String phase, String message, boolean permanent, Throwable cause) {
        super(format(pid, host, phase, message), cause);
        this.pid = pid;
        this.host = host;
        this.phase = phase;
        this.detail = message;
        this.permanent = permanent;
    }

    /**
     * The host an exception found on the driver names (not the driver's host name: what a
     * user reads is where the check ran, the same word for every driver-side check).
     */
    public static final String DRIVER = "driver";

    /** A bad argument found on the driver before any Spark job: pid -1, host {@link #DRIVER}, phase argument, permanent. */
    public static LpfException argument(String message) {
        return new LpfException(-1, DRIVER, "argument", message, true);
    }

    private static String format(int pid, String host, String phase, String message) {
        String who = pid >= 0 ? "LPF process " + pid : "LPF";
        return who + " on " + host + " failed in phase " + phase + ": " + message;
    }

    /** The LPF pid of the failing process, or -1. */
    public int pid() { return pid; }

    /** The host the failing process ran on. */
    public String host() { return host; }

    /** Where it failed: bootstrap, load, hook, finalize, argument, check, native-library or slots. */
    public String phase() { return phase; }

    /** The native (or check's) message alone. */
    public String detail() { return detail; }

    /**
     * True when running again on the same input must fail the same way (a bad argument, a
     * library or symbol that does not load, an error the program reported with its group
     * intact, such as a malformed input file or an id out of range). The driver-side entry
     * points cancel the job at the first such failure instead of letting Spark retry it;
     * a lost peer or a bootstrap failure is not permanent (a rerun may succeed).
     */
    public boolean permanent() { return permanent; }
}
