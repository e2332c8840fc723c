#!/usr/bin/env bash
# The graph kernels from Spark, LPF beside GraphX, end to end (issue 15's Spark
# benchmark; not a timed test): org.lpf.spark.examples.KernelBenchmark on generated
# Graph500 R-MAT graphs in local-cluster[2,1,M] (two executor JVMs). Per kernel (BFS,
# WCC, CDLP, LCC, SSSP, PR) one edge DataFrame (src, dst, weight) in, the result
# DataFrame out, persisted: LpfGraph's median of BENCH_CALLS calls after a warm-up,
# GraphX's counterpart once; each LPF result checked against GraphX's where the
# semantics agree (the application exits 1 on a disagreement, after writing its
# results). The `graph` CLI's native compute on the same edges gives each LPF call's
# overhead. Results (CSV, PNG) in spark-examples/bench/results/kernels.*; the full logs
# in build/bench-logs/kernels-kronS.log.
#
# Environment (optional):
#   BENCH_SCALES       graphs to run (default "16")
#   BENCH_KERNELS      kernels to run (default bfs,wcc,cdlp,lcc,sssp,pr)
#   BENCH_CALLS        timed calls per LPF kernel, the median reported (default 3)
#   BENCH_EXEC_MEM     executor memory in MiB (default 3072)
#   BENCH_SKIP_BUILD=1 use the jars in build/libs and target/release/graph
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/submit.sh"
bench_build -p graphblas --bin graph
cli=${CARGO_TARGET_DIR:-$root/target}/release/graph
mem=${BENCH_EXEC_MEM:-3072}
append=
status=0
for s in ${BENCH_SCALES:-16}; do
    log=$root/build/bench-logs/kernels-kron$s.log
    echo "=== kron$s in local-cluster[2,1,$mem] (log $log), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    lpf_submit "$mem" KernelBenchmark \
        --scale "$s" --partitions 2 --tol 1e-7 --kernels "${BENCH_KERNELS:-bfs,wcc,cdlp,lcc,sssp,pr}" \
        --calls "${BENCH_CALLS:-3}" --cli "$cli" --out "$out" $append 2>&1 | tee "$log" | grep -E '^kernelbench' \
        || status=1
    echo "=== kron$s done, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    append=--append
done
echo "=== results: $out/kernels.csv, $out/kernels.png"
cat "$out/kernels.csv"
exit $status
