#!/usr/bin/env bash
# Builds the Spark bridge's jars (the one build path: the README's commands, the tests and
# the install all use it), one set per Scala version, from the same sources:
#   build/libs/lpf-spark_<scala>-<version>.jar          classes of jvm/src/main +
#                                                       native/linux-x86_64/liblpf_jni.so
#   build/libs/lpf-spark_<scala>-<version>-sources.jar  jvm/src/main's sources
#   build/libs/lpf-spark_<scala>-<version>.pom          Maven POM: Spark, Scala, SLF4J as
#                                                       `provided` (the running Spark has them)
#   build/libs/lpf-spark-examples_<scala>.jar           the example applications
#                                                       (spark-examples/src/main/scala)
#   build/libs/lpf-spark-tests_<scala>.jar              the Spark test applications
#                                                       (jvm/src/test), with --tests
# <scala> is 2.13 (compiled against Spark 4.3, pyspark in python3) and 2.12 (Spark 3.5,
# the pyspark in the virtual environment scripts/setup.sh makes); <version> is
# scripts/spark-version.sh's (python/pyproject.toml's, the Python package's too).
#
# Steps: cargo builds native/lpf-jni once (release, unwinder linked statically so the
# library needs only glibc); per Scala version javac the Java sources, the Scala compiler
# that the pyspark installation ships (scala.tools.nsc.Main) the Scala sources, `jar`
# packs them. No Maven repository is used: the compile classpath is the installation's
# jars directory.
#
# Usage: build-jar.sh [--tests] [--scala 2.12|2.13|all]   (default all)
# Environment (optional):
#   PYSPARK_JARS        Spark 4.3's jars directory (default: asked from python3)
#   LPF_SPARK35_PYTHON  python of the Spark 3.5 installation
#                       (default /opt/lpf-pyspark-3.5/bin/python, made by scripts/setup.sh)
#   LPF_JNI_TARGET_DIR  cargo target dir for the native library
#                       (default: ${CARGO_TARGET_DIR:-<repo>/target}/jni)
#   LPF_SKIP_NATIVE=1   reuse the native library already built (JVM-only changes)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
with_tests=0
scalas="2.13 2.12"
while [ $# -gt 0 ]; do
    case $1 in
        --tests) with_tests=1 ;;
        --scala)
            shift
            case ${1:-} in
                2.12 | 2.13) scalas=$1 ;;
                all) ;;
                *) echo "build-jar: --scala takes 2.12, 2.13 or all, not '${1:-}'" >&2; exit 2 ;;
            esac
            ;;
        *) echo "build-jar: unknown argument '$1' (usage: build-jar.sh [--tests] [--scala 2.12|2.13|all])" >&2; exit 2 ;;
    esac
    shift
done

log() { echo "build-jar: $*"; }
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
version=$(bash "$root/scripts/spark-version.sh")

# jars_of SCALA: the jars directory of the Spark installation compiled against.
pyspark_jars_of() { "$1" -c 'import pyspark,os;print(os.path.join(os.path.dirname(pyspark.__file__),"jars"))'; }
jars_of() {
    case $1 in
        2.13) echo "${PYSPARK_JARS:-$(pyspark_jars_of python3)}" ;;
        2.12) pyspark_jars_of "${LPF_SPARK35_PYTHON:-/opt/lpf-pyspark-3.5/bin/python}" ;;
    esac
}

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

# jar_version JARS NAME: the version in the file name of JARS/NAME-<version>.jar.
jar_version() {
    local f
    f=$(ls "$1"/"$2"-[0-9]*.jar 2>/dev/null | head -n 1)
    [ -n "$f" ] || { log "no $2-*.jar in $1" >&2; return 1; }
    f=${f##*/}
    f=${f#"$2"-}
    echo "${f%.jar}"
}

# pom SCALA JARS: the POM of lpf-spark_SCALA, its dependencies as the installation has them.
pom() {
    local sv=$1 jars=$2 spark scala slf4j compat=""
    spark=$(jar_version "$jars" "spark-core_$sv")
    scala=$(jar_version "$jars" scala-library)
    slf4j=$(jar_version "$jars" slf4j-api)
    dep() { printf '    <dependency>\n      <groupId>%s</groupId>\n      <artifactId>%s</artifactId>\n      <version>%s</version>\n      <scope>provided</scope>\n    </dependency>\n' "$1" "$2" "$3"; }
    # scala.jdk.CollectionConverters is in Scala 2.13's library; on 2.12 it comes from
    # scala-collection-compat, which Spark 3.5 itself depends on.
    [ "$sv" = 2.12 ] && compat=$(dep org.scala-lang.modules "scala-collection-compat_$sv" "$(jar_version "$jars" "scala-collection-compat_$sv")")
    cat <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.lpf</groupId>
  <artifactId>lpf-spark_$sv</artifactId>
  <version>$version</version>
  <packaging>jar</packaging>
  <name>lpf-spark</name>
  <description>LPF (Lightweight Parallel Foundations) SPMD programs inside Spark executors; native library for linux-x86_64 (glibc) inside</description>
  <dependencies>
$(dep org.apache.spark "spark-core_$sv" "$spark")
$(dep org.apache.spark "spark-sql_$sv" "$spark")
$(dep org.apache.spark "spark-mllib_$sv" "$spark")
$(dep org.apache.spark "spark-graphx_$sv" "$spark")
$(dep org.scala-lang scala-library "$scala")
$(dep org.slf4j slf4j-api "$slf4j")
${compat}
  </dependencies>
</project>
POM
}

out=$root/build
mkdir -p "$out/libs"
for sv in $scalas; do
    jars=$(jars_of "$sv") || { log "no Spark installation for Scala $sv: run scripts/setup.sh" >&2; exit 1; }
    [ -d "$jars" ] || { log "no pyspark jars directory ($jars) for Scala $sv: run scripts/setup.sh" >&2; exit 1; }
    scala=$(jar_version "$jars" scala-library)
    case $scala in
        "$sv".*) ;;
        *) log "$jars has Scala $scala, not $sv" >&2; exit 1 ;;
    esac
    scalac_cp=$(ls "$jars/scala-compiler-$scala.jar" "$jars/scala-library-$scala.jar" "$jars/scala-reflect-$scala.jar" | paste -sd: -)
    scalac() { java -cp "$scalac_cp" scala.tools.nsc.Main -deprecation "$@"; }
    name=lpf-spark_$sv-$version

    classes=$out/classes/$sv/main
    rm -rf "$classes"
    mkdir -p "$classes/native/linux-x86_64"
    log "javac + scalac $scala (main, against $jars)"
    javac -nowarn -d "$classes" -cp "$jars/*" $(find jvm/src/main/java -name '*.java')
    scalac -classpath "$jars/*:$classes" -d "$classes" $(find jvm/src/main/scala -name '*.scala')
    # Without debug info in the jar (the library in the cargo target dir keeps it).
    objcopy --strip-debug "$so" "$classes/native/linux-x86_64/liblpf_jni.so"
    rm -f "$out/libs"/lpf-spark_"$sv"-*
    jar cf "$out/libs/$name.jar" -C "$classes" .
    jar cf "$out/libs/$name-sources.jar" -C jvm/src/main/java . -C jvm/src/main/scala .
    pom "$sv" "$jars" >"$out/libs/$name.pom"
    log "wrote $out/libs/$name.jar, $name-sources.jar, $name.pom"

    eclasses=$out/classes/$sv/examples
    rm -rf "$eclasses"
    mkdir -p "$eclasses"
    log "scalac $scala (examples)"
    scalac -classpath "$jars/*:$classes" -d "$eclasses" $(find spark-examples/src/main/scala -name '*.scala')
    rm -f "$out/libs/lpf-spark-examples_$sv.jar"
    jar cf "$out/libs/lpf-spark-examples_$sv.jar" -C "$eclasses" .
    log "wrote $out/libs/lpf-spark-examples_$sv.jar"

    if [ "$with_tests" = 1 ]; then
        tclasses=$out/classes/$sv/test
        rm -rf "$tclasses"
        mkdir -p "$tclasses"
        log "scalac $scala (test applications)"
        scalac -classpath "$jars/*:$classes:$eclasses" -d "$tclasses" $(find jvm/src/test/scala -name '*.scala')
        rm -f "$out/libs/lpf-spark-tests_$sv.jar"
        jar cf "$out/libs/lpf-spark-tests_$sv.jar" -C "$tclasses" .
        log "wrote $out/libs/lpf-spark-tests_$sv.jar"
    fi
done
