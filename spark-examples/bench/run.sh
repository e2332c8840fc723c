#!/usr/bin/env bash
# PageRank benchmark (not a timed test): org.lpf.spark.examples.Benchmark on generated
# Graph500 R-MAT graphs (kron18, kron20) in local-cluster mode (two executor JVMs):
# LPF PageRank vs Spark's example algorithm (SparkPageRank canonical) vs GraphX
# pageRank(tol), plus SparkPageRank correct on kron18. Results (markdown table, CSV,
# PNG chart) in spark-examples/bench/results/.
#
# Environment (optional):
#   BENCH_SCALES       graphs to run (default "18 20")
#   BENCH_IMPLS_<S>    implementations for scale S (default: 18 -> lpf,canonical,correct,graphx;
#                      others -> lpf,canonical,graphx)
#   BENCH_EXEC_MEM_<S> executor memory in MiB for scale S (default 18 -> 3072, 20 -> 6144)
#   BENCH_SKIP_BUILD=1 use the jars in build/libs
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/submit.sh"
bench_build
scales=${BENCH_SCALES:-"18 20"}
append=
for s in $scales; do
    impls_var=BENCH_IMPLS_$s
    mem_var=BENCH_EXEC_MEM_$s
    case $s in
        18) d_impls=lpf,canonical,correct,graphx; d_mem=3072 ;;
        20) d_impls=lpf,canonical,graphx; d_mem=6144 ;;
        *) d_impls=lpf,canonical,graphx; d_mem=4096 ;;
    esac
    impls=${!impls_var:-$d_impls}
    mem=${!mem_var:-$d_mem}
    log=$root/build/bench-logs/kron$s.log
    echo "=== kron$s: $impls in local-cluster[2,1,$mem] (log $log)"
    lpf_submit "$mem" Benchmark \
        --scale "$s" --partitions 2 --tol 1e-7 --impls "$impls" \
        --checkpoint-dir "$root/build/bench-checkpoints" \
        --out "$out" $append 2>&1 | tee "$log" | grep -E '^(benchmark|\||- )'
    append=--append
done
echo "=== results: $out/pagerank.md, $out/pagerank.csv, $out/pagerank.png"
cat "$out/pagerank.md"
