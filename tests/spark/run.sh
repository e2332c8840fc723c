#!/usr/bin/env bash
# Spark bridge tests: real Spark (pyspark's spark-submit), no mocks.
#
# Builds the bridge jar and the test application (scripts/build-jar.sh --tests, or
# gradle when LPF_BUILD=gradle), compiles tests/spark/spmd.c into a user SPMD library,
# and runs the test application (jvm/src/test/scala/.../BridgeTests.scala) under
#   local[2]                 two task threads in one JVM (shared-memory engine)
#   local-cluster[2,1,1024]  two executor JVMs (TCP engine)
# Each case prints "ok NAME", "FAIL NAME" or "skip NAME (why)"; the last line is
# "N passed, M failed" (skips count in neither). Exit status non-zero on any failure.
#
# Environment (optional):
#   LPF_SKIP_BUILD=1      use the jars already in build/libs
#   LPF_BUILD=gradle      build with gradle instead of scripts/build-jar.sh
#   LPF_SPARK_MASTERS     masters to run (default "local[2] local-cluster[2,1,1024]")
#   LPF_SPARK_TIMEOUT     seconds per spark-submit before it counts as hung (default 240)
set -u
set -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2

build=$root/build/spark-tests
rm -rf "$build"
mkdir -p "$build"
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok $1"; }
fail() {
    failed=$((failed + 1))
    echo "FAIL $1"
    if [ -n "${2:-}" ] && [ -f "$2" ]; then tail -n 30 "$2" | sed 's/^/    /'; fi
}
finish() { echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }

# --- build ------------------------------------------------------------------------
if [ "${LPF_SKIP_BUILD:-0}" != 1 ]; then
    if [ "${LPF_BUILD:-script}" = gradle ]; then
        build_cmd=(gradle --offline -q testJar)
    else
        build_cmd=(bash scripts/build-jar.sh --tests)
    fi
    if "${build_cmd[@]}" >"$build/build.log" 2>&1; then
        pass build-jar
    else
        fail build-jar "$build/build.log"
        finish
    fi
fi
jar=$root/build/libs/lpf-spark.jar
tests_jar=$root/build/libs/lpf-spark-tests.jar
for j in "$jar" "$tests_jar"; do
    [ -f "$j" ] || { fail "missing-$(basename "$j")"; finish; }
done

listing=$(unzip -l "$jar" 2>&1)
if grep -q 'native/linux-x86_64/liblpf_jni.so' <<<"$listing"; then
    pass jar-contains-native-library
else
    fail jar-contains-native-library
fi

so=$build/liblpf_jni.so
unzip -p "$jar" native/linux-x86_64/liblpf_jni.so >"$so"
extra=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -vxE 'libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2')
if [ -z "$extra" ]; then
    pass native-library-needs-only-glibc
else
    echo "    needs: $extra"
    fail native-library-needs-only-glibc
fi

clib=$build/libspmd_test.so
if cc -std=c99 -O2 -Wall -Wextra -shared -fPIC -I"$root/native/lpf-capi/include" \
    "$here/spmd.c" -o "$clib" >"$build/cc.log" 2>&1; then
    pass compile-user-spmd-library
else
    fail compile-user-spmd-library "$build/cc.log"
    finish
fi

# --- Spark ------------------------------------------------------------------------
pyspark_dir=$(python3 -c 'import pyspark,os;print(os.path.dirname(pyspark.__file__))' 2>/dev/null) || {
    fail pyspark-installed
    finish
}
export SPARK_HOME=${SPARK_HOME:-$pyspark_dir}
export SPARK_LOCAL_IP=127.0.0.1
log4j="-Dlog4j2.configurationFile=file:$here/log4j2.properties"
masters=${LPF_SPARK_MASTERS:-"local[2] local-cluster[2,1,1024]"}
limit=${LPF_SPARK_TIMEOUT:-240}

for master in $masters; do
    tag=${master%%[*}
    log=$build/$tag.log
    echo "--- spark-submit --master $master"
    start=$(date +%s)
    timeout -k 10 "$limit" "$SPARK_HOME/bin/spark-submit" \
        --master "$master" \
        --class org.lpf.spark.tests.BridgeTests \
        --jars "$jar" \
        --driver-memory 1g \
        --driver-java-options "$log4j" \
        --conf "spark.executor.extraJavaOptions=$log4j" \
        --conf spark.ui.enabled=false \
        --conf spark.barrier.sync.timeout=120s \
        --conf spark.task.maxFailures=1 \
        --conf spark.stage.maxConsecutiveAttempts=1 \
        --conf spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures=3 \
        "$tests_jar" "$clib" >"$log" 2>&1
    rc=$?
    echo "    (exit $rc after $(($(date +%s) - start)) s; log $log)"
    grep '^RESULT info' "$log" | sed 's/^RESULT info /    /'
    while IFS= read -r line; do
        rest=${line#RESULT }
        verdict=${rest%% *}
        rest=${rest#* }
        name=${rest%%:*}
        name=${name%%  (*}
        case $verdict in
            ok) pass "$tag/$name" ;;
            skip)
                why=${rest#*: }
                echo "skip $tag/$name (${why%%  (*})"
                ;;
            FAIL)
                fail "$tag/$name"
                echo "    ${rest#*: }" | cut -c1-1200
                ;;
        esac
    done < <(grep -E '^RESULT (ok|FAIL|skip) ' "$log")
    if ! grep -q '^RESULT done' "$log"; then
        fail "$tag/application-finished" "$log"
    fi
done

finish
