# Sourced by the Spark benchmarks (run.sh, calls.sh, kernels.sh) from their own directory:
# the repository and results directories, the build, and the one way they start an
# example class in local-cluster[2,1,MEM] (two executor JVMs) with the bridge's jar.
# Sets root (the repository, also the working directory), out (bench/results),
# SPARK_HOME (the pyspark installation unless given) and SPARK_LOCAL_IP.
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$bench_dir/../.." && pwd)
cd "$root"
out=$bench_dir/results
mkdir -p "$out" "$root/build/bench-logs"
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

# bench_build [CARGO ARGS...]: unless BENCH_SKIP_BUILD=1, the set-up, the Scala 2.13 jars
# and, given CARGO ARGS, the native program the benchmark compares with.
bench_build() {
    [ "${BENCH_SKIP_BUILD:-0}" = 1 ] && return 0
    bash scripts/setup.sh
    bash scripts/build-jar.sh --scala 2.13
    if [ $# -gt 0 ]; then cargo build --release "$@"; fi
}

export SPARK_HOME=${SPARK_HOME:-$(python3 -c 'import pyspark,os;print(os.path.dirname(pyspark.__file__))')}
export SPARK_LOCAL_IP=127.0.0.1

# lpf_submit MEM CLASS [ARGS...]: runs org.lpf.spark.examples.CLASS with ARGS, executors
# of MEM MiB (and spark.executor.memoryOverhead of BENCH_EXEC_OVERHEAD MiB when set: the
# room resident graphs may take in native memory); generous timeouts because a benchmark's GraphX side can run for minutes
# between heartbeats on a loaded machine.
lpf_submit() {
    local mem=$1 class=$2
    shift 2
    local log4j="-Dlog4j2.configurationFile=file:$root/tests/spark/log4j2.properties"
    "$SPARK_HOME/bin/spark-submit" \
        --master "local-cluster[2,1,$mem]" \
        --conf "spark.executor.memory=${mem}m" \
        ${BENCH_EXEC_OVERHEAD:+--conf "spark.executor.memoryOverhead=${BENCH_EXEC_OVERHEAD}m"} \
        --driver-memory 4g \
        --jars "$root/build/libs/lpf-spark_2.13-$(bash "$root/scripts/spark-version.sh").jar" \
        --driver-java-options "$log4j" \
        --conf "spark.executor.extraJavaOptions=$log4j" \
        --conf spark.ui.enabled=false \
        --conf spark.barrier.sync.timeout=600s \
        --conf spark.network.timeout=600s \
        --conf spark.executor.heartbeatInterval=60s \
        --class "org.lpf.spark.examples.$class" "$root/build/libs/lpf-spark-examples_2.13.jar" \
        "$@"
}

# bench_scale_settings CUT: what the scale benchmarks (scale.sh, graphframes.sh) read
# from the environment: mem (BENCH_EXEC_MEM, default 4096 MiB), the native overhead
# (BENCH_EXEC_OVERHEAD, default 6144 MiB: room for our graph, exported for lpf_submit),
# data (DATA, default /work/data/scale, created) and cut (BENCH_CUT_MINUTES, default
# CUT); lpf_submit and root exported, for the children `timeout` starts.
bench_scale_settings() {
    mem=${BENCH_EXEC_MEM:-4096}
    export BENCH_EXEC_OVERHEAD=${BENCH_EXEC_OVERHEAD:-6144}
    data=${DATA:-/work/data/scale}
    cut=${BENCH_CUT_MINUTES:-$1}
    mkdir -p "$data"
    export -f lpf_submit
    export root
}
