package org.lpf.spark;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;

/**
 * Loads liblpf_jni.so once per JVM.
 *
 * <p>The library travels inside the bridge's jar as {@code native/<os>-<arch>/liblpf_jni.so}.
 * It is copied out to the working directory of a Spark executor (cleaned up with the
 * application), or to {@code java.io.tmpdir} in a driver (local mode) or where the work
 * dir is not writable, under a name that carries a hash of
 * its contents (two JVMs sharing a directory never overwrite each other's copy, and a new
 * jar never reuses an old copy), then {@code System.load}ed. The system property
 * {@code lpf.native.library} (a path to a .so) overrides all of this.
 */
public final class NativeLoader {
    public static final String PROPERTY = "lpf.native.library";
    static final String NAME = "liblpf_jni.so";
    private static final Logger LOG = LoggerFactory.getLogger(NativeLoader.class);
    private static volatile String loadedFrom;

    private NativeLoader() {}

    /** Where the library was loaded from (null before loading). */
    public static String loadedFrom() { return loadedFrom; }

    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String o = os.startsWith("linux") ? "linux" : os.replaceAll("[^a-z0-9]", "");
        String a = (arch.equals("amd64") || arch.equals("x86_64")) ? "x86_64"
                 : (arch.equals("aarch64") || arch.equals("arm64")) ? "aarch64" : arch;
        return o + "-" + a;
    }

    static String resourcePath() { return "/native/" + platform() + "/" + NAME; }

    private static String host() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown-host";
        }
    }

    private static LpfException failure(String message, Throwable cause) {
        return new LpfException(-1, host(), "native-library", message, cause);
    }

    public static synchronized void load() {
        if (loadedFrom != null) return;
        String override = System.getProperty(PROPERTY);
        Path path;
        if (override != null && !override.isEmpty()) {
            path = Paths.get(override).toAbsolutePath();
            if (!Files.isReadable(path)) {
                throw failure("-D" + PROPERTY + "=" + override + " names no readable file", null);
            }
        } else {
            path = extract();
        }
        try {
            System.load(path.toString());
        } catch (UnsatisfiedLinkError e) {
            throw failure("cannot load " + path + " (" + e.getMessage() + "); the bridge's native library is built "
                    + "for " + platform() + " with glibc >= 2.35; set -D" + PROPERTY + "=/path/to/" + NAME
                    + " to use another build", e);
        }
        loadedFrom = path.toString();
        LOG.info("LPF native library loaded from {}", loadedFrom);
    }

    private static Path extract() {
        String resource = resourcePath();
        byte[] bytes;
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw failure("the bridge jar has no native library for this platform (" + resource
                        + " is missing); supported: linux-x86_64. Set -D" + PROPERTY + "=/path/to/" + NAME
                        + " to use one built elsewhere", null);
            }
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw failure("cannot read " + resource + " from the bridge jar: " + e, e);
        }
        String name = "liblpf_jni-" + sha256(bytes).substring(0, 16) + ".so";
        IOException last = null;
        String workDir = inExecutor() ? System.getProperty("user.dir") : null;
        for (String dir : new String[] {workDir, System.getProperty("java.io.tmpdir")}) {
            if (dir == null) continue;
            Path target = Paths.get(dir, name).toAbsolutePath();
            try {
                if (Files.isRegularFile(target) && Files.size(target) == bytes.length) return target;
                Path tmp = Files.createTempFile(target.getParent(), ".liblpf_jni", ".tmp");
                Files.write(tmp, bytes);
                try {
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
                }
                return target;
            } catch (IOException e) {
                LOG.debug("cannot extract the LPF native library to {}: {}", dir, e.toString());
                last = e;
            }
        }
        throw failure("cannot copy the native library out of the jar into the working directory or java.io.tmpdir ("
                + last + "); make one writable or set -D" + PROPERTY, last);
    }

    /** In a Spark executor JVM (not the driver, not outside Spark)? */
    private static boolean inExecutor() {
        try {
            org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
            return env != null && !"driver".equals(env.executorId());
        } catch (Throwable t) { // Spark absent or not initialised
            return false;
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(bytes);
            StringBuilder s = new StringBuilder();
            for (byte b : d) s.append(String.format("%02x", b));
            return s.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
