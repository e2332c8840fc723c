#!/usr/bin/env bash
# Builds the Spark bridge jars (the one build path: the README's commands, the tests and
# the install all use it):
#   build/libs/lpf-spark.jar           classes of jvm/src/main + native/linux-x86_64/liblpf_jni.so
#   build/libs/lpf-spark-examples.jar  the example applications (spark-examples/src/main/scala:
#                                      LpfPageRankApp, SparkPageRank, GraphXPageRank, Benchmark)
#   build/libs/lpf-spark-tests.jar     the Spark test applications (jvm/src/test), with --tests
#
# Steps: cargo builds native/lpf-jni (release, unwinder linked statically so the library
# needs only glibc), javac the Java sources, the Scala compiler that pyspark ships
# (scala.tools.nsc.Main) the Scala sources, `jar` packs them.
#
# Environment (optional):
#   PYSPARK_JARS        pyspark's jars directory (default: asked from python3)
#   LPF_JNI_TARGET_DIR  cargo target dir for the native library
#                       (default: ${CARGO_TARGET_DIR:-<repo>/target}/jni)
#   LPF_SKIP_NATIVE=1   reuse the native library already built (JVM-only changes)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
with_tests=0
[ "${1:-}" = --tests ] && with_tests=1

log() { echo "build-jar: $*"; }
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

jars=${PYSPARK_JARS:-$(python3 -c 'import pyspark,os;print(os.path.join(os.path.dirname(pyspark.__file__),"jars"))')}
[ -d "$jars" ] || { log "no pyspark jars directory ($jars): run scripts/setup.sh" >&2; exit 1; }
scalac_cp=$(ls "$jars"/scala-compiler-2.13*.jar "$jars"/scala-library-2.13*.jar "$jars"/scala-reflect-2.13*.jar | paste -sd: -)

target=${LPF_JNI_TARGET_DIR:-${CARGO_TARGET_DIR:-$root/target}/jni}

so=$target/release/liblpf_jni.so
if [ "${LPF_SKIP_NATIVE:-0}" = 1 ] && [ -f "$so" ]; then
    log "LPF_SKIP_NATIVE=1: using the native library already built ($so)"
else
    log "cargo build -p lpf-jni into $target"
    CARGO_TARGET_DIR=$target \
    CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=$root/scripts/cc-static-unwind.sh \
        cargo build --release -j "${CARGO_JOBS:-2}" -p lpf-jni
fi

# The library must need nothing beyond glibc.
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in $needed; do
    case $lib in
        libc.so.6 | libm.so.6 | ld-linux-x86-64.so.2) ;;
        *) log "liblpf_jni.so needs $lib (only glibc allowed)" >&2; exit 1 ;;
    esac
done

out=$root/build
classes=$out/classes/main
rm -rf "$classes"
mkdir -p "$classes/native/linux-x86_64" "$out/libs"
log "javac + scalac (main)"
javac -nowarn -d "$classes" -cp "$jars/*" $(find jvm/src/main/java -name '*.java')
java -cp "$scalac_cp" scala.tools.nsc.Main -deprecation -classpath "$jars/*:$classes" -d "$classes" \
    $(find jvm/src/main/scala -name '*.scala')
# Without debug info in the jar (the library in the cargo target dir keeps it).
objcopy --strip-debug "$so" "$classes/native/linux-x86_64/liblpf_jni.so"
rm -f "$out/libs/lpf-spark.jar"
jar cf "$out/libs/lpf-spark.jar" -C "$classes" .
log "wrote $out/libs/lpf-spark.jar"

eclasses=$out/classes/examples
rm -rf "$eclasses"
mkdir -p "$eclasses"
log "scalac (examples)"
java -cp "$scalac_cp" scala.tools.nsc.Main -deprecation -classpath "$jars/*:$classes" -d "$eclasses" \
    $(find spark-examples/src/main/scala -name '*.scala')
rm -f "$out/libs/lpf-spark-examples.jar"
jar cf "$out/libs/lpf-spark-examples.jar" -C "$eclasses" .
log "wrote $out/libs/lpf-spark-examples.jar"

if [ "$with_tests" = 1 ]; then
    tclasses=$out/classes/test
    rm -rf "$tclasses"
    mkdir -p "$tclasses"
    log "scalac (test application)"
    java -cp "$scalac_cp" scala.tools.nsc.Main -deprecation -classpath "$jars/*:$classes:$eclasses" -d "$tclasses" \
        $(find jvm/src/test/scala -name '*.scala')
    rm -f "$out/libs/lpf-spark-tests.jar"
    jar cf "$out/libs/lpf-spark-tests.jar" -C "$tclasses" .
    log "wrote $out/libs/lpf-spark-tests.jar"
fi
