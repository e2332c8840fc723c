#!/usr/bin/env bash
# Per-call cost of PageRank through the bridge (issue 14's benchmark; not a timed test):
# org.lpf.spark.examples.CallBenchmark on generated Graph500 R-MAT graphs (kron16, kron18)
# in local-cluster[2,1,M] (two executor JVMs): for the RDD and the DataFrame paths and a
# cached (resident) graph, per call (interleaved rounds, the median), total wall, driver set-up, ingest, group bootstrap, native load and compute,
# result conversion, overhead (wall - native compute); beside a barrier job of p tasks
# that do nothing (Spark's floor for any one-stage call) and GraphFrames-style GraphX
# PageRank (pageRank(tol)) on the same DataFrame; and the `pagerank` CLI's native load of
# the same edges. Results (CSV, PNG chart) in spark-examples/bench/results/calls.*; the
# full logs in build/bench-logs/calls-kronS.log.
#
# Environment (optional):
#   BENCH_SCALES       graphs to run (default "16 18")
#   BENCH_PATHS        what to run (default rdd,dataframe,cached,spark-job,graphx)
#   BENCH_CALLS        timed rounds (one call per path each), the median reported (default 3)
#   BENCH_EXEC_MEM     executor memory in MiB (default 3072)
#   BENCH_SKIP_BUILD=1 use the jars in build/libs and target/release/pagerank
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/submit.sh"
bench_build -p graphblas-pagerank --bin pagerank
cli=${CARGO_TARGET_DIR:-$root/target}/release/pagerank
mem=${BENCH_EXEC_MEM:-3072}
append=
for s in ${BENCH_SCALES:-16 18}; do
    log=$root/build/bench-logs/calls-kron$s.log
    echo "=== kron$s in local-cluster[2,1,$mem] (log $log)"
    lpf_submit "$mem" CallBenchmark \
        --scale "$s" --partitions 2 --tol 1e-7 --paths "${BENCH_PATHS:-rdd,dataframe,cached,spark-job,graphx}" \
        --calls "${BENCH_CALLS:-3}" --cli "$cli" --out "$out" $append 2>&1 | tee "$log" | grep -E '^callbench'
    append=--append
done
echo "=== results: $out/calls.csv, $out/calls.png"
cat "$out/calls.csv"
