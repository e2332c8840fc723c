#!/usr/bin/env bash
# GraphFrames' algorithms, ours (org.lpf.spark.graphframes.GraphFrame) beside GraphX's,
# end to end (issue 26's benchmark; not a timed test): org.lpf.spark.examples.
# GraphFrameBenchmark in local-cluster[2,1,M] (two executor JVMs of one core), per
# algorithm the edges of kronS read from Parquet (made by KronParquet, as scale.sh does:
# generated into DATA when absent), the vertices GraphFrames' fromEdges, the result
# DataFrame with the vertex columns written to Spark's noop sink (every row computed).
# Ours and GraphX get the same executors and memory; GraphX's side converts the
# DataFrames to a Graph as GraphFrames does (counted) and runs GraphX's library
# algorithm, or for k-core, MIS and BFS supersteps of aggregateMessages written the way
# GraphFrames' Pregel versions work (GraphXGraphFrames documents each).
#
# One application per (contender, algorithm, round): a failure, an OOM or a lost
# executor spoils nothing else. Rounds interleave the contenders (odd rounds ours first,
# even rounds GraphX first); the load average is printed before each run and recorded in
# the CSV. A run is cut after BENCH_CUT_MINUTES (outcome "cut", its wall recorded); a
# GraphX algorithm that did not end ok at a scale is not run again there (its cut or
# failure stands, the ratio in graphframes-median.csv a lower bound ">=").
# Results: spark-examples/bench/results/graphframes.csv (every run),
# graphframes-median.csv (medians of the rounds that ended ok; GraphX / ours) and
# graphframes.png; logs: build/bench-logs/graphframes-kronS-CONTENDER-ALGORITHM-rR.log.
#
# Environment (optional):
#   SCALES             scales to run (default "18 22")
#   ALGORITHMS         some of pr-tol pr-iter ppr pppr cc scc lpa sp tc kcore mis bfs
#                      (default: all)
#   CONTENDERS         some of "ours graphx" (default both)
#   BENCH_ROUNDS       rounds per scale (default 3); the median is reported
#   BENCH_CUT_MINUTES  minutes before a run is cut (default 10)
#   BENCH_NICE         niceness of the runs (default 10: the machine is shared)
#   DATA               the Parquet directory (default /work/data/scale)
#   BENCH_EXEC_MEM     executor memory in MiB (default 4096)
#   BENCH_EXEC_OVERHEAD executor memory overhead in MiB (default 6144: native memory for
#                      our graph, as scale.sh)
#   BENCH_SKIP_BUILD=1 use the jars in build/libs
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/submit.sh"
bench_build
bench_scale_settings 10
rounds=${BENCH_ROUNDS:-3}
status=0

# run SCALE CONTENDER ALGORITHM ROUND: one application; its row is in the CSV whatever
# happens (written first as "the application ended during this run"). Fails (status 1)
# unless the run ended ok.
run() {
    local s=$1 contender=$2 algorithm=$3 round=$4 log rc
    log=$root/build/bench-logs/graphframes-kron$s-$contender-$algorithm-r$round.log
    echo "=== kron$s $contender $algorithm round $round (log $log), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    rc=0
    # A last resort beyond the in-application cut (a call that ignores its cancellation).
    timeout -k 30 $(((cut + 5) * 60)) nice -n "${BENCH_NICE:-10}" bash -c 'lpf_submit "$@"' lpf_submit "$mem" \
        GraphFrameBenchmark --scale "$s" --contender "$contender" --algorithms "$algorithm" --round "$round" \
        --data "$data" --cut-minutes "$cut" --out "$out" >"$log" 2>&1 || rc=$?
    grep -E '^gfbench: .*round' "$log" | tail -1 || true
    echo "=== kron$s $contender $algorithm round $round: exit $rc" | tee -a "$log"
    [ "$rc" = 0 ] && grep -qE "^gfbench: kron$s $contender $algorithm round $round: ok," "$log"
}

for s in ${SCALES:-18 22}; do
    declare -A given_up=()
    for round in $(seq 1 "$rounds"); do
        for algorithm in ${ALGORITHMS:-pr-tol pr-iter ppr pppr cc scc lpa sp tc kcore mis bfs}; do
            order=${CONTENDERS:-ours graphx}
            # Interleaved: even rounds run the contenders in the reverse order.
            [ $((round % 2)) = 0 ] && order=$(tr ' ' '\n' <<<"$order" | tac | tr '\n' ' ')
            for contender in $order; do
                case $contender in ours | graphx) ;; *) echo "graphframes.sh: unknown contender '$contender'" >&2; exit 2 ;; esac
                if [ -n "${given_up[$contender-$algorithm]:-}" ]; then
                    echo "=== kron$s $contender $algorithm round $round: not run (${given_up[$contender-$algorithm]})"
                    continue
                fi
                if ! run "$s" "$contender" "$algorithm" "$round"; then
                    status=1
                    [ "$contender" = graphx ] && given_up[$contender-$algorithm]="did not end ok in round $round"
                fi
            done
        done
    done
    unset given_up
done
echo "=== results: $out/graphframes.csv, $out/graphframes-median.csv, $out/graphframes.png"
cat "$out/graphframes-median.csv"
exit $status
