#!/usr/bin/env bash
# Spark bridge tests: real Spark (pyspark's spark-submit), no mocks.
#
# Builds the bridge jar, the examples jar and the test applications (scripts/build-jar.sh
# --tests), the native `pagerank` CLI (the reference
# for LPF PageRank's ranks), compiles tests/spark/spmd.c into a user SPMD library, and
# runs two test applications (jvm/src/test/scala/.../BridgeTests.scala, PageRankTests.scala)
# under
#   local[4]                 four task threads in one JVM (shared-memory engine)
#   local-cluster[2,1,1024]  two executor JVMs (TCP engine)
#   standalone               a Spark standalone master and two workers (1 core, 1 GiB each)
#                            started here with spark-daemon.sh, stopped by pid at the end
#                            (also on failure)
# then (with local[4]) the concurrent-jobs case under local[6] (jobs of sizes 1+2+3 at
# once), and (with standalone, as root) standalone-netns: worker 2 in a network
# namespace whose link is cut for good mid-run (the bridge must cancel the rerun).
# PageRankTests runs in two submissions per master: "no-retries" with
# spark.task.maxFailures=1 (a failed task fails the job at once, so a flaky hook cannot
# pass by being retried) and, on masters with executor JVMs, "retries" with 4 (the cases
# that need Spark to rerun a stage: executors killed, a host lost, a permanent error
# that must not be rerun); the application checks that the scheduler has the setting
# its group needs. BridgeTests always runs with 1. With local-cluster[2,1,1024]:
# DataFrameTests (the DataFrame API, LpfGraph), KernelTests (its graph kernels), ResidentTests (LpfGraph.cache), ProgressTests (PageRank's per-iteration
# progress in the driver's log) and the PySpark package's pytest suite
# (tests/pyspark/suite.sh: pip install ./python into a fresh venv, pytest), and the
# snippets of README.md, docs/spark.md and docs/graphframes.md (tests/spark/doc-snippets.sh),
# a Scala and a Java application against GraphFrame built without sbt
# (tests/spark/graphframes-app.sh); then Spark 3.5
# (Scala 2.12, its own pyspark installation): the core cases with the 2.12 jars, every
# graph kernel from Scala and from PySpark. With local[4]: a spark-shell session
# (tests/spark/spark_shell_session.scala) whose closures capture the bridge's objects.
# Each case prints "ok NAME", "FAIL NAME" or "skip NAME (why)"; build steps print
# "built NAME" and count only when they fail. The last line is "N passed, M failed",
# or "N passed, M failed, K skipped (NAME, ...)" when something was skipped. Nothing
# that the test command installs or builds is a skip: its absence is a failure. Exit
# status non-zero on any failure.
#
# Environment (optional):
#   LPF_SKIP_BUILD=1      use the jars already in build/libs
#   LPF_SPARK_MASTERS     masters to run (default "local[4] local-cluster[2,1,1024] standalone")
#   LPF_SPARK_TIMEOUT     seconds per spark-submit before it counts as hung (default 360)
#   LPF_SPARK_WORKER_WAIT seconds a standalone cluster's two workers may take to register (default 180)
#   LPF_PAGERANK_CLI      a built `pagerank` CLI to use instead of building it
#   LPF_SPARK_TESTS       run only the cases whose names contain one of these (comma-separated);
#                         "doc", "graphframes-app", "spark3.5" and "spark-shell" run the docs'
#                         snippets, the user applications, the Spark 3.5 block and the
#                         spark-shell session (also with LPF_SPARK_MASTERS=" ", no other master)
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
skipped=()

pass() { passed=$((passed + 1)); echo "ok $1"; }
fail() {
    failed=$((failed + 1))
    echo "FAIL $1"
    if [ -n "${2:-}" ] && [ -f "$2" ]; then tail -n 30 "$2" | sed 's/^/    /'; fi
}
# skip NAME WHY: a case that could not run here, named in the summary line.
skip() { skipped+=("$1"); echo "skip $1 ($2)"; }
# built NAME: a build or set-up step that worked (not a check: it counts nothing).
built() { echo "built $1"; }
finish() {
    if [ ${#skipped[@]} -gt 0 ]; then
        local names
        names=$(printf '%s, ' "${skipped[@]}")
        echo "$passed passed, $failed failed, ${#skipped[@]} skipped (${names%, })"
    else
        echo "$passed passed, $failed failed"
    fi
    [ "$failed" = 0 ]
    exit $?
}

# --- build ------------------------------------------------------------------------
if [ "${LPF_SKIP_BUILD:-0}" != 1 ]; then
    if bash scripts/build-jar.sh --tests >"$build/build.log" 2>&1; then
        built build-jar
    else
        fail build-jar "$build/build.log"
        finish
    fi
fi
version=$(bash scripts/spark-version.sh) || { fail spark-version; finish; }
# jars_for SCALA: sets jar, examples_jar, tests_jar to those of Scala version SCALA.
jars_for() {
    jar=$root/build/libs/lpf-spark_$1-$version.jar
    examples_jar=$root/build/libs/lpf-spark-examples_$1.jar
    tests_jar=$root/build/libs/lpf-spark-tests_$1.jar
}
for sv in 2.12 2.13; do
    jars_for "$sv"
    for j in "$jar" "$examples_jar" "$tests_jar" "${jar%.jar}-sources.jar" "${jar%.jar}.pom"; do
        [ -f "$j" ] || { fail "missing-$(basename "$j")"; finish; }
    done
    # The published artifacts: a POM whose every dependency is `provided` (Spark, Scala,
    # SLF4J come with the running Spark) and names this Scala version's Spark; a sources
    # jar with the Scala and Java sources the jar was compiled from.
    if python3 - "${jar%.jar}.pom" "$sv" "$version" >"$build/pom-$sv.log" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
pom, sv, version = sys.argv[1:]
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
root = ET.parse(pom).getroot()
text = lambda e, tag: e.findtext(f"m:{tag}", namespaces=ns)
assert text(root, "artifactId") == f"lpf-spark_{sv}", text(root, "artifactId")
assert text(root, "version") == version, text(root, "version")
deps = {text(d, "artifactId"): (text(d, "version"), text(d, "scope")) for d in root.iterfind("m:dependencies/m:dependency", ns)}
print(deps)
assert {f"spark-core_{sv}", f"spark-sql_{sv}", "scala-library"} <= set(deps), deps
assert all(scope == "provided" and v for v, scope in deps.values()), deps
assert deps["scala-library"][0].startswith(sv + "."), deps
PY
    then
        pass "pom-$sv-names-spark-and-scala-as-provided"
    else
        fail "pom-$sv-names-spark-and-scala-as-provided" "$build/pom-$sv.log"
    fi
    sources=$(unzip -Z1 "${jar%.jar}-sources.jar" 2>&1)
    classes=$(unzip -Z1 "$jar" 2>&1)
    if grep -qx 'org/lpf/spark/LpfPageRank.scala' <<<"$sources" && grep -qx 'org/lpf/spark/LpfNative.java' <<<"$sources" &&
        grep -qx 'org/lpf/spark/LpfPageRank.class' <<<"$classes"; then
        pass "sources-jar-$sv-has-the-jars-sources"
    else
        fail "sources-jar-$sv-has-the-jars-sources"
    fi
done
jars_for 2.13
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
    built compile-user-spmd-library
else
    fail compile-user-spmd-library "$build/cc.log"
    finish
fi

# The reference for LPF PageRank's ranks: the graphblas-pagerank crate's own CLI.
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
cli_target=${CARGO_TARGET_DIR:-$root/target}
cli=${LPF_PAGERANK_CLI:-$cli_target/release/pagerank}
if [ -n "${LPF_PAGERANK_CLI:-}" ]; then
    [ -x "$cli" ] || { fail "pagerank-cli-exists ($cli)"; finish; }
elif cargo build --release -j "${CARGO_JOBS:-2}" -p graphblas-pagerank --bin pagerank >"$build/cli.log" 2>&1 && [ -x "$cli" ]; then
    built build-pagerank-cli
else
    fail build-pagerank-cli "$build/cli.log"
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
masters=${LPF_SPARK_MASTERS:-"local[4] local-cluster[2,1,1024] standalone"}
limit=${LPF_SPARK_TIMEOUT:-360}

# --- a standalone cluster (started on demand, stopped by pid on exit) ---------------
daemons=$build/standalone
stop_standalone() {
    local f pid
    for f in "$daemons"/pids/*.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -9 "$pid" 2>/dev/null
        rm -f "$f"
    done
}
trap stop_standalone EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
start_standalone() { # prints the master URL
    mkdir -p "$daemons/pids" "$daemons/logs" "$daemons/work"
    local port webui
    port=$(free_port); webui=$(free_port)
    export SPARK_PID_DIR=$daemons/pids SPARK_LOG_DIR=$daemons/logs SPARK_WORKER_DIR=$daemons/work
    "$SPARK_HOME/sbin/spark-daemon.sh" start org.apache.spark.deploy.master.Master 1 \
        --host 127.0.0.1 --port "$port" --webui-port "$webui" >"$daemons/start.log" 2>&1 || return 1
    for i in 1 2; do
        "$SPARK_HOME/sbin/spark-daemon.sh" start org.apache.spark.deploy.worker.Worker "$i" \
            --host 127.0.0.1 --webui-port "$(free_port)" --cores 1 --memory 1g "spark://127.0.0.1:$port" \
            >>"$daemons/start.log" 2>&1 || return 1
    done
    await_workers "$daemons" && echo "spark://127.0.0.1:$port"
}
# await_workers DIR: waits until both workers whose logs are in DIR/logs have registered
# with their master, at most LPF_SPARK_WORKER_WAIT seconds (default 180: three JVMs
# starting on a loaded 2-core machine took over 30 s).
await_workers() {
    local deadline=$(($(date +%s) + ${LPF_SPARK_WORKER_WAIT:-180}))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        [ "$(cat "$1"/logs/*Worker*.out 2>/dev/null | grep -c 'Successfully registered with master')" = 2 ] && return 0
        sleep 0.5
    done
    return 1
}

# submit TAG MASTER CLASS LOG [spark-submit options...] -- [application args...]
# graphframe_graphs DIR: networkx's classic graphs as edge lists for GraphFrameTests
# (tests/spark/networkx_graphs.py; networkx from scripts/setup.sh); a failure counts.
graphframe_graphs() {
    if python3 "$here/networkx_graphs.py" "$1" >"$build/networkx.log" 2>&1; then
        return 0
    fi
    fail "graphframe/networkx-graphs-written (python3 tests/spark/networkx_graphs.py)" "$build/networkx.log"
    return 1
}

submit() {
    local tag=$1 master=$2 class=$3 log=$4
    shift 4
    local opts=() extra=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    local start rc
    start=$(date +%s)
    timeout -k 10 "$limit" "$SPARK_HOME/bin/spark-submit" \
        --master "$master" \
        --class "$class" \
        --jars "$jar,$examples_jar" \
        --driver-memory 1g \
        --conf spark.ui.enabled=false \
        --conf spark.barrier.sync.timeout=120s \
        --conf spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures=3 \
        "${opts[@]}" \
        "$tests_jar" "$@" >"$log" 2>&1
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
                skip "$tag/$name" "${why%%  (*}"
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
}

for master in $masters; do
    tag=${master%%[*}
    url=$master
    cluster_opts=()
    if [ "$master" = standalone ]; then
        echo "--- standalone cluster: a master and two workers (spark-daemon.sh)"
        if url=$(start_standalone); then
            built standalone/cluster-started
        else
            fail standalone/cluster-started "$daemons/start.log"
            tail -n 20 "$daemons"/logs/* 2>/dev/null | sed 's/^/    /'
            stop_standalone
            continue
        fi
        cluster_opts=(--total-executor-cores 2 --executor-cores 1 --executor-memory 1g)
    fi
    echo "--- spark-submit --master $url (bridge tests)"
    submit "$tag" "$url" org.lpf.spark.tests.BridgeTests "$build/$tag.log" \
        "${cluster_opts[@]}" \
        --driver-java-options "$log4j" \
        --conf "spark.executor.extraJavaOptions=$log4j" \
        --conf spark.task.maxFailures=1 \
        --conf spark.stage.maxConsecutiveAttempts=1 \
        -- "$clib"
    # PageRank: heaps are committed up front (-Xms = -Xmx, pre-touched) so RSS changes
    # are native memory, not heap growth. First the cases where no task may fail; then,
    # with executor JVMs, the cases where Spark must be able to retry (local[N] never
    # retries a task whatever spark.task.maxFailures says).
    echo "--- spark-submit --master $url (PageRank tests, no retries)"
    submit "$tag" "$url" org.lpf.spark.tests.PageRankTests "$build/$tag-pagerank.log" \
        "${cluster_opts[@]}" \
        --driver-java-options "$log4j -Xms1g -XX:+AlwaysPreTouch" \
        --conf "spark.executor.extraJavaOptions=$log4j -Xms1g -XX:+AlwaysPreTouch" \
        --conf spark.task.maxFailures=1 \
        --conf spark.stage.maxConsecutiveAttempts=1 \
        -- "$cli" "$build/pagerank-$tag" no-retries
    if [ "$tag" != local ]; then
        echo "--- spark-submit --master $url (PageRank tests with retries: executors killed)"
        submit "$tag" "$url" org.lpf.spark.tests.PageRankTests "$build/$tag-pagerank-retries.log" \
            "${cluster_opts[@]}" \
            --driver-java-options "$log4j" \
            --conf "spark.executor.extraJavaOptions=$log4j" \
            --conf spark.task.maxFailures=4 \
            --conf spark.stage.maxConsecutiveAttempts=4 \
            -- "$cli" "$build/pagerank-$tag-retries" retries
    fi
    [ "$master" = standalone ] && stop_standalone
done

# Item 1 in full: three concurrent jobs of sizes 1, 2 and 3 in one JVM need 6 task slots.
if [[ " $masters " == *" local[4] "* ]]; then
    echo "--- spark-submit --master local[6] (concurrent jobs of sizes 1+2+3 in one JVM)"
    LPF_SPARK_TESTS=concurrent-jobs submit local6 "local[6]" org.lpf.spark.tests.BridgeTests "$build/local6.log" \
        --driver-java-options "$log4j" --conf spark.task.maxFailures=1 --conf spark.stage.maxConsecutiveAttempts=1 \
        -- "$clib"
fi

# --- the DataFrame API (LpfGraph, DataFrameTests) and the PySpark package (python/,
# tests/pyspark under pytest), on local-cluster[2,1,1024]
if [[ " $masters " == *" local-cluster[2,1,1024] "* ]]; then
    echo "--- spark-submit --master local-cluster[2,1,1024] (DataFrame API tests)"
    submit dataframe "local-cluster[2,1,1024]" org.lpf.spark.tests.DataFrameTests "$build/dataframe.log" \
        --driver-java-options "$log4j" --conf "spark.executor.extraJavaOptions=$log4j" \
        --conf spark.task.maxFailures=1 --conf spark.stage.maxConsecutiveAttempts=1 --
    echo "--- spark-submit --master local-cluster[2,1,1024] (graph kernels of the DataFrame API)"
    submit kernels "local-cluster[2,1,1024]" org.lpf.spark.tests.KernelTests "$build/kernels.log" \
        --driver-java-options "$log4j" --conf "spark.executor.extraJavaOptions=$log4j" \
        --conf spark.task.maxFailures=1 --conf spark.stage.maxConsecutiveAttempts=1 --
    echo "--- spark-submit --master local-cluster[2,1,1024] (resident graphs: LpfGraph.cache)"
    submit resident "local-cluster[2,1,1024]" org.lpf.spark.tests.ResidentTests "$build/resident.log" \
        --driver-java-options "$log4j" --conf "spark.executor.extraJavaOptions=$log4j" --
    echo "--- spark-submit --master local-cluster[2,1,1024] (GraphFrame API: org.lpf.spark.graphframes)"
    graphframe_graphs "$build/networkx" &&
        submit graphframe "local-cluster[2,1,1024]" org.lpf.spark.tests.GraphFrameTests "$build/graphframe.log" \
            --driver-java-options "$log4j" --conf "spark.executor.extraJavaOptions=$log4j" \
            --conf spark.task.maxFailures=1 --conf spark.stage.maxConsecutiveAttempts=1 -- "$build/networkx"
    echo "--- spark-submit --master local-cluster[2,1,1024] (PageRank progress in the driver's log)"
    submit progress "local-cluster[2,1,1024]" org.lpf.spark.tests.ProgressTests "$build/progress.log" \
        --driver-java-options "$log4j" --conf "spark.executor.extraJavaOptions=$log4j" \
        --conf spark.task.maxFailures=1 --conf spark.stage.maxConsecutiveAttempts=1 --
    if [ -z "${LPF_SPARK_TESTS:-}" ] || [[ ",$LPF_SPARK_TESTS," == *,pyspark,* ]]; then
        echo "--- pytest tests/pyspark (pip install ./python; local-cluster[2,1,1024])"
        source "$root/tests/pyspark/suite.sh"
        pyspark_suite "$jar" "$build/pyspark"
    fi
fi

# The snippets of README.md, docs/spark.md and docs/graphframes.md (Python ones with the package that
# the PySpark suite installed, else with one installed here).
if { [[ " $masters " == *" local-cluster[2,1,1024] "* ]] && [ -z "${LPF_SPARK_TESTS:-}" ]; } ||
    [[ ",${LPF_SPARK_TESTS:-}," == *,doc,* ]]; then
    echo "--- the snippets of README.md, docs/spark.md and docs/graphframes.md (tests/spark/doc-snippets.sh)"
    doc_python=$build/pyspark/venv/bin/python
    if ! "$doc_python" -c 'import lpf_spark' 2>/dev/null; then
        doc_python=$build/doc-venv/bin/python
        rm -rf "$build/doc-venv"
        python3 -m venv --system-site-packages "$build/doc-venv" >"$build/doc-venv.log" 2>&1 &&
            LPF_SPARK_JAR_DIR=$(dirname "$jar") "$doc_python" -m pip install -q --no-cache-dir "$root/python" \
                >>"$build/doc-venv.log" 2>&1 || fail doc/pip-install-python-package "$build/doc-venv.log"
    fi
    source "$here/doc-snippets.sh"
    doc_snippets_suite "$build/doc-snippets" "$jar" "$doc_python"
fi

# A user's Scala and Java applications using org.lpf.spark.graphframes.GraphFrame, their
# sources taken from docs/graphframes.md, compiled in an empty directory with the Scala
# compiler Spark ships and javac (no sbt, no Maven), packaged and spark-submitted with the jar.
if { [[ " $masters " == *" local-cluster[2,1,1024] "* ]] && [ -z "${LPF_SPARK_TESTS:-}" ]; } ||
    [[ ",${LPF_SPARK_TESTS:-}," == *,graphframes-app,* ]]; then
    echo "--- a Scala and a Java application against the jar (tests/spark/graphframes-app.sh)"
    source "$here/graphframes-app.sh"
    graphframes_app_suite "$build/graphframes-app" "$jar" "${jar%.jar}.pom"
fi

# --- Spark 3.5 (Scala 2.12) from its own pyspark installation (scripts/setup.sh's
# virtual environment): the core cases on local-cluster[2,1,1024] with the 2.12 jars (a
# user C function, a fatal error in it, a bad input, RDD PageRank against the power
# iteration and the CLI, DataFrame PageRank with string and 64-bit ids, a bad column, a
# malformed graph), every graph kernel against its reference and the exact source check
# (Spark 3.5 runs with ANSI off by default) from Scala (KernelTests) and from PySpark
# (tests/pyspark's kernel cases, with Spark 3.5's python and its pytest), and the Python
# package picking the 2.12 jar by itself. Runs unless LPF_SPARK_TESTS is set without
# "spark3.5".
if { [[ " $masters " == *" local-cluster[2,1,1024] "* ]] && [ -z "${LPF_SPARK_TESTS:-}" ]; } ||
    [[ ",${LPF_SPARK_TESTS:-}," == *,spark3.5,* ]]; then
    spark35_python=${LPF_SPARK35_PYTHON:-/opt/lpf-pyspark-3.5/bin/python}
    if spark35_home=$("$spark35_python" -c 'import pyspark,os;print(os.path.dirname(pyspark.__file__))' 2>"$build/spark35.log") &&
        [[ $("$spark35_python" -c 'import pyspark; print(pyspark.__version__)') == 3.5.* ]]; then
        saved_home=$SPARK_HOME
        export SPARK_HOME=$spark35_home
        jars_for 2.12
        c35="local-cluster[2,1,1024]"
        opts35=(--driver-java-options "$log4j" --conf "spark.executor.extraJavaOptions=$log4j"
            --conf spark.task.maxFailures=1 --conf spark.stage.maxConsecutiveAttempts=1)
        echo "--- Spark 3.5 ($SPARK_HOME): spark-submit --master $c35 (user C function, bad input)"
        LPF_SPARK_TESTS=c-library-spmd,c-library-fatal-error,unequal-inputs \
            submit spark3.5 "$c35" org.lpf.spark.tests.BridgeTests "$build/spark35-bridge.log" "${opts35[@]}" -- "$clib"
        # The spark-submit these cases ran is Spark 3.5's with Scala 2.12.
        if "$SPARK_HOME/bin/spark-submit" --version >"$build/spark35-version.log" 2>&1 &&
            grep -q 'version 3\.5\.' "$build/spark35-version.log" && grep -q 'Scala version 2\.12\.' "$build/spark35-version.log"; then
            pass spark3.5/runs-on-spark-3.5-scala-2.12
        else
            fail spark3.5/runs-on-spark-3.5-scala-2.12 "$build/spark35-version.log"
        fi
        echo "--- Spark 3.5: spark-submit --master $c35 (RDD PageRank)"
        LPF_SPARK_TESTS=ranks-equal-a-power-iteration \
            submit spark3.5 "$c35" org.lpf.spark.tests.PageRankTests "$build/spark35-pagerank.log" "${opts35[@]}" \
            -- "$cli" "$build/pagerank-spark35" no-retries
        echo "--- Spark 3.5: spark-submit --master $c35 (DataFrame PageRank)"
        LPF_SPARK_TESTS=dataframe-string-ids,dataframe-64-bit-ids,dataframe-bad-column-name,dataframe-malformed-graph \
            submit spark3.5 "$c35" org.lpf.spark.tests.DataFrameTests "$build/spark35-dataframe.log" "${opts35[@]}" --
        # Every kernel (the kernel objects travel in the tasks' closures: Java serialization
        # under Scala 2.12 needs their base class Serializable), and the source check.
        echo "--- Spark 3.5: spark-submit --master $c35 (graph kernels)"
        LPF_SPARK_TESTS=kernels-string-ids,kernels-a-source-not-exactly-an-id \
            submit spark3.5 "$c35" org.lpf.spark.tests.KernelTests "$build/spark35-kernels.log" "${opts35[@]}" --
        # The GraphFrame API under Scala 2.12 (its builders and ml Vectors, GraphX as reference).
        echo "--- Spark 3.5: spark-submit --master $c35 (GraphFrame API)"
        graphframe_graphs "$build/networkx35" &&
            LPF_SPARK_TESTS=graphframe-friends,graphframe-vs-graphx-karate,graphframe-null-and-duplicate-ids \
            submit spark3.5 "$c35" org.lpf.spark.tests.GraphFrameTests "$build/spark35-graphframe.log" "${opts35[@]}" \
            -- "$build/networkx35"
        echo "--- Spark 3.5: pytest tests/pyspark's kernel cases (Spark 3.5's python; $c35)"
        source "$root/tests/pyspark/suite.sh"
        pyspark_suite_on "$spark35_python" "$jar" "$build/spark35-pyspark" spark3.5/pyspark \
            -k 'test_kernels and (equals or (exactly_an_id and ansi_off))'
        echo "--- Spark 3.5: the Python package picks the 2.12 jar (pip install --target, Spark 3.5's python)"
        rm -rf "$build/spark35-site"
        if "$spark35_python" -m pip install -q --no-cache-dir --target "$build/spark35-site" "$root/python" \
            >"$build/spark35-pip.log" 2>&1; then
            if PYTHONPATH=$build/spark35-site timeout -k 10 "$limit" "$spark35_python" "$here/pick_jar.py" 2.12 \
                >"$build/spark35-pick.log" 2>&1; then
                pass spark3.5/python-package-picks-the-2.12-jar
                grep -E '^(picked|ranks) ' "$build/spark35-pick.log" | sed 's/^/    /'
            else
                fail spark3.5/python-package-picks-the-2.12-jar "$build/spark35-pick.log"
            fi
        else
            fail spark3.5/pip-install-python-package "$build/spark35-pip.log"
        fi
        export SPARK_HOME=$saved_home
        jars_for 2.13
    else
        fail "spark3.5/pyspark-3.5-installed ($spark35_python: run scripts/setup.sh)" "$build/spark35.log"
    fi
fi

# --- spark-shell, as a user types it (issue 24 item 15): lines holding an LpfGraph,
# PageRank results, settings and a kernel's DataFrame, then closures over REPL variables
# (which capture those lines) and closures using the objects; each must ship and run.
if { [[ " $masters " == *" local[4] "* ]] && [ -z "${LPF_SPARK_TESTS:-}" ]; } ||
    [[ ",${LPF_SPARK_TESTS:-}," == *,spark-shell,* ]]; then
    echo "--- spark-shell --master local[2] (tests/spark/spark_shell_session.scala on stdin)"
    timeout -k 10 "$limit" "$SPARK_HOME/bin/spark-shell" --master "local[2]" --jars "$jar" \
        --driver-java-options "$log4j" --conf spark.ui.enabled=false --conf spark.ui.showConsoleProgress=false \
        --conf spark.barrier.sync.timeout=120s <"$here/spark_shell_session.scala" >"$build/spark-shell.log" 2>&1
    echo "    (exit $?; log $build/spark-shell.log)"
    for check in closure-after-a-line-holding-an-LpfGraph=30 closure-over-a-value-of-a-line-holding-an-LpfGraph=50 \
        closure-after-lines-holding-results-and-settings=30 \
        closure-using-the-objects=10 results-are-whole=4,4,2; do
        # The REPL prints its prompt before a line's output: "scala> SHELL name value".
        if grep -qE "(^|> )SHELL ${check%%=*} ${check#*=}\$" "$build/spark-shell.log"; then
            pass "spark-shell/${check%%=*}"
        else
            fail "spark-shell/${check%%=*}"
            grep -E "SHELL ${check%%=*} |Exception|error:" "$build/spark-shell.log" | head -n 5 | cut -c1-400 | sed 's/^/    /'
        fi
    done
fi

# --- a host lost for good (item 17): standalone master + 2 workers, worker 2 in a network
# namespace whose link is cut for good while an LPF PageRank runs. LPF fails the stage,
# Spark resubmits it, the rerun can never get its 2 slots: the bridge must cancel it after
# slotWaitMs with an LpfException (phase slots). Needs root (ip netns); the app signals
# the moment to cut through a file, this script cuts (host side of the veth down).
netns_case() {
    local ns=lpfspark hv=lpfsp-h host_ip=10.79.0.1 ns_ip=10.79.0.2 port webui url cutf
    ip netns del "$ns" 2>/dev/null
    ip link del "$hv" 2>/dev/null
    ip netns add "$ns" && ip link add "$hv" type veth peer name eth0 netns "$ns" &&
        ip addr add "$host_ip/24" dev "$hv" && ip link set "$hv" up &&
        ip -n "$ns" addr add "$ns_ip/24" dev eth0 && ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up || return 1
    daemons=$build/standalone-netns
    mkdir -p "$daemons/pids" "$daemons/logs" "$daemons/work"
    port=$(free_port); webui=$(free_port)
    export SPARK_PID_DIR=$daemons/pids SPARK_LOG_DIR=$daemons/logs SPARK_WORKER_DIR=$daemons/work
    SPARK_LOCAL_IP=$host_ip "$SPARK_HOME/sbin/spark-daemon.sh" start org.apache.spark.deploy.master.Master 1 \
        --host "$host_ip" --port "$port" --webui-port "$webui" >"$daemons/start.log" 2>&1 || return 1
    url=spark://$host_ip:$port
    SPARK_LOCAL_IP=$host_ip "$SPARK_HOME/sbin/spark-daemon.sh" start org.apache.spark.deploy.worker.Worker 1 \
        --host "$host_ip" --webui-port "$(free_port)" --cores 1 --memory 1g "$url" >>"$daemons/start.log" 2>&1 || return 1
    ip netns exec "$ns" env SPARK_LOCAL_IP=$ns_ip "$SPARK_HOME/sbin/spark-daemon.sh" start \
        org.apache.spark.deploy.worker.Worker 2 --host "$ns_ip" --webui-port 18081 --cores 1 --memory 1g "$url" \
        >>"$daemons/start.log" 2>&1 || return 1
    await_workers "$daemons" || return 1
    built standalone-netns/cluster-started
    cutf=$build/netns-cut
    rm -f "$cutf" "$cutf.done"
    # The cut, when the application asks for it: the host side of the veth goes down for good.
    ( for _ in $(seq 1 1200); do
          if [ -f "$cutf" ]; then ip link set "$hv" down; date +%s.%N >"$cutf.done"; exit 0; fi
          sleep 0.1
      done ) &
    local cutter=$!
    echo "--- spark-submit --master $url (worker 2 in netns $ns, link cut for good mid-run)"
    SPARK_LOCAL_IP=$host_ip LPF_SPARK_NETNS_CUT=$cutf LPF_SPARK_TESTS=host-lost-for-good \
    submit standalone-netns "$url" org.lpf.spark.tests.PageRankTests "$build/standalone-netns.log" \
        --total-executor-cores 2 --executor-cores 1 --executor-memory 1g \
        --driver-java-options "$log4j" \
        --conf "spark.executor.extraJavaOptions=$log4j" \
        --conf spark.task.maxFailures=4 --conf spark.stage.maxConsecutiveAttempts=4 \
        --conf spark.network.timeout=15s --conf spark.network.timeoutInterval=2s \
        --conf spark.executor.heartbeatInterval=2s \
        -- /bin/false "$build/pagerank-netns" retries
    kill "$cutter" 2>/dev/null
    return 0
}
netns_cleanup() { ip netns del lpfspark 2>/dev/null; ip link del lpfsp-h 2>/dev/null; }
if [[ " $masters " == *" standalone "* ]] || [ -n "${LPF_SPARK_NETNS:-}" ]; then
    # The test command runs as root and its set-up installs iproute2: not a skip.
    if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
        fail "standalone-netns (needs root and ip netns: run as root after scripts/setup.sh)"
    else
        trap 'stop_standalone; netns_cleanup' EXIT
        if ! netns_case; then
            fail standalone-netns/cluster-started "$daemons/start.log"
            tail -n 20 "$daemons"/logs/* 2>/dev/null | sed 's/^/    /'
        fi
        stop_standalone
        netns_cleanup
    fi
fi

finish
