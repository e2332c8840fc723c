#!/usr/bin/env bash
# The main job, end to end: set-up, release build, LPF at work on this machine (the
# probe of the shared-memory engine and example programs in Rust and C), then the Spark
# bridge: the jars (bridge + examples), and one Spark application in local-cluster mode
# (two executor JVMs) that runs LPF's PageRank (native, inside the executors) and pure
# Spark's (Spark's example algorithm, a correct RDD version, GraphX) on the same
# generated Graph500 R-MAT graph and prints the comparison table (the LPF paper's
# Table 4 layout). Results also in build/main/ (pagerank.md, .csv, .png).
#
# Environment (optional): MAIN_SCALE (R-MAT scale, default 16), MAIN_IMPLS (default
# lpf,canonical,correct,graphx), MAIN_EXEC_MEM (MiB per executor, default 2048).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/setup.sh
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

echo "=== build (release)"
# --lib too: the C example links liblpf_core (the cdylib of lpf-capi), which a
# bins-and-examples build does not produce.
cargo build --release --workspace --lib --bins --examples

if [ -x target/release/lpfprobe ]; then
    echo "=== lpfprobe (shared-memory engine, p = 2, quick)"
    ./target/release/lpfprobe --engine shm -p 2 --quick
fi

echo "=== C example: hello world through liblpf_core"
inc=native/lpf-capi/include
mkdir -p target/c-examples
cc -std=c99 -O2 -I"$inc" -Itests/c tests/c/hello.c -o target/c-examples/hello \
    -Ltarget/release -llpf_core -Wl,-rpath,"$root/target/release" -lpthread
LPF_MAX_PROCS=2 ./target/c-examples/hello

echo "=== Spark bridge (Spark 4, Scala 2.13): build/libs/lpf-spark_2.13-<version>.jar and lpf-spark-examples_2.13.jar"
bash scripts/build-jar.sh --scala 2.13
version=$(bash scripts/spark-version.sh)

scale=${MAIN_SCALE:-16}
impls=${MAIN_IMPLS:-lpf,canonical,correct,graphx}
mem=${MAIN_EXEC_MEM:-2048}
export SPARK_HOME=${SPARK_HOME:-$(python3 -c 'import pyspark,os;print(os.path.dirname(pyspark.__file__))')}
export SPARK_LOCAL_IP=127.0.0.1
log4j="-Dlog4j2.configurationFile=file:$root/tests/spark/log4j2.properties"
out=$root/build/main
mkdir -p "$out"
echo "=== Spark: PageRank on kron$scale, LPF vs Spark ($impls), local-cluster[2,1,$mem]"
"$SPARK_HOME/bin/spark-submit" \
    --master "local-cluster[2,1,$mem]" \
    --conf "spark.executor.memory=${mem}m" \
    --driver-memory 2g \
    --jars "build/libs/lpf-spark_2.13-$version.jar" \
    --driver-java-options "$log4j" \
    --conf "spark.executor.extraJavaOptions=$log4j" \
    --conf spark.ui.enabled=false \
    --conf spark.barrier.sync.timeout=300s \
    --class org.lpf.spark.examples.Benchmark build/libs/lpf-spark-examples_2.13.jar \
    --scale "$scale" --partitions 2 --tol 1e-7 --impls "$impls" \
    --checkpoint-dir "$out/checkpoints" --out "$out" 2>&1 | tee "$out/spark.log" | grep -E '^(benchmark|\||- )'
echo "=== results: $out/pagerank.md, $out/pagerank.csv, $out/pagerank.png"
