#!/usr/bin/env bash
# The scale benchmark (issue 25, item 5; not a timed test): Graph500 Kronecker graphs
# (edge factor 16, integer weights 1..63 in column w) written once per scale as Parquet
# (src, dst: bigint, w: double) by a Spark job from the native generator
# (KronParquet, LpfNative.rmatEdges), then, per scale, read with spark.read.parquet by
# org.lpf.spark.examples.ScaleBenchmark in local-cluster[2,1,M] (two executor JVMs of
# one core):
#   - lpf: one application, one resident LpfGraph (cache()): "load" (loaded, no weights),
#     PageRank (20 iterations), BFS, WCC, CDLP (10 iterations) and, at the scales of
#     LCC_SCALES, LCC on it; "load-w" (loaded again with the weights w), SSSP;
#   - lpf-df: one application, the same kernels on an LpfGraph that is not cached (every
#     call reads the Parquet DataFrame and loads the graph in its one barrier stage);
#   - one application per GraphX kernel (a failure, an OOM or a lost executor must not
#     spoil the next run): staticPageRank(20), ShortestPaths from the same source (BFS),
#     connectedComponents, LabelPropagation(10), and triangleCount where LCC runs.
# Each call is cut after BENCH_CUT_MINUTES (outcome "cut"); a failure is recorded as
# "oom", "lost executor: ..." or "error: ...", and the benchmark goes on. Per call: wall
# seconds, native compute (for a load: the native load), Spark-side seconds (wall - compute), the Spark stages of the
# call, the peak RSS of each executor JVM (VmHWM, reset before the call), native bytes per
# edge (empty until resident graphs report it), outcome, load average at the start.
# Results: spark-examples/bench/results/scale.csv and scale.png (rows of other scales
# and contenders kept); logs: build/bench-logs/scale-kronS-CONTENDER[-KERNEL].log.
#
# M = 4096 MiB per executor (BENCH_EXEC_MEM) and spark.executor.memoryOverhead = 6144 MiB
# (BENCH_EXEC_OVERHEAD): the room a resident graph's part may take in an executor's native
# memory (LpfSettings.residentBytes' default). Two executors of 10 GiB leave about 4 GiB
# of the machine's 24 GiB for the driver (4 GiB heap at most, little used) and the page
# cache of the Parquet files. GraphX gets the same executors (its work is on the heap).
#
# Environment (optional):
#   SCALES             scales to run (default "20 22 24")
#   LCC_SCALES         scales where LCC and GraphX's triangleCount run (default "20")
#   CONTENDERS         some of "lpf lpf-df graphx" (the default: all three)
#   GRAPHX_KERNELS     GraphX's kernels to run (default "pr bfs wcc cdlp", and lcc where
#                      LCC runs)
#   DATA               the Parquet directory (default /work/data/scale; kronS.parquet
#                      is generated when absent)
#   BENCH_EXEC_MEM     executor memory in MiB (default 4096)
#   BENCH_EXEC_OVERHEAD executor memory overhead in MiB (default 6144)
#   BENCH_CUT_MINUTES  minutes before a call is cut (default 30)
#   BENCH_SKIP_BUILD=1 use the jars in build/libs
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/submit.sh"
bench_build
bench_scale_settings 30
status=0

# run SCALE CONTENDER KERNELS: one application; its rows are in the CSV whatever happens
# (the application writes "ended during this run" rows first), the exit status in the log.
run() {
    local s=$1 contender=$2 kernels=$3 tag log rc
    tag=$contender
    [ "$contender" = graphx ] && tag=$contender-$kernels
    log=$root/build/bench-logs/scale-kron$s-$tag.log
    echo "=== kron$s $contender $kernels (log $log), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    # A last resort beyond the per-call cut (a call that ignores its cancellation).
    local n=$(($(tr -cd , <<<"$kernels" | wc -c) + 1))
    rc=0
    timeout -k 30 $(((cut + 10) * 60 * n + 1200)) bash -c 'lpf_submit "$@"' lpf_submit "$mem" ScaleBenchmark \
        --scale "$s" --contender "$contender" --kernels "$kernels" --data "$data" --cut-minutes "$cut" --out "$out" \
        >"$log" 2>&1 || rc=$?
    grep -E '^scalebench' "$log" || true
    echo "=== kron$s $contender $kernels: exit $rc" | tee -a "$log"
    [ "$rc" = 0 ] || status=1
}

for s in ${SCALES:-20 22 24}; do
    lcc=0
    for l in ${LCC_SCALES:-20}; do [ "$l" = "$s" ] && lcc=1; done
    for contender in ${CONTENDERS:-lpf lpf-df graphx}; do
        case $contender in
            lpf | lpf-df) run "$s" "$contender" "pr,bfs,wcc,sssp,cdlp$([ $lcc = 1 ] && echo ,lcc)" ;;
            graphx) for k in ${GRAPHX_KERNELS:-pr bfs wcc cdlp $([ $lcc = 1 ] && echo lcc)}; do run "$s" graphx "$k"; done ;;
            *) echo "scale.sh: unknown contender '$contender' (lpf, lpf-df, graphx)" >&2; exit 2 ;;
        esac
    done
done
echo "=== results: $out/scale.csv, $out/scale.png"
cat "$out/scale.csv"
exit $status
