#!/usr/bin/env bash
# lpfprobe's l and g before and after the #16 redesign (one sync driver, one network
# engine, typed configuration and errors), side by side in one run: the tree at OLD_REV
# (default 295ad25, the last commit before it) against this tree, at p = 2 on
#   shm     lpfprobe --engine shm -p 2
#   tcp     lpfrun -n 2 --engine tcp -- lpfprobe --engine env   (each build's own lpfrun)
#   mpimsg  mpirun -n 2 lpfprobe --engine env, LPF_ENGINE=mpimsg (lpfprobe built with
#   mpirma  the cargo feature mpi; OMPI_MCA_osc=^ucx for Open MPI's one-sided component)
# ROUNDS rounds (default 9; with 5, one slow spell moved a median by 30%); in each,
# every engine runs old then new (new first in even rounds), so that a slow spell of
# the shared machine falls on both builds alike.
# l is the 8-byte-word row's l [s], g the 1 MiB-word row's g [s/byte] (as mpi_probe.sh);
# l_min the smallest l of the four word sizes (8 B, 64 B, 1 KiB, 1 MiB); on the MPI
# engines l_mpi is the probe's own reference, a 1-byte MPI_Alltoall sampled between the
# probe's samples of the same run. The 8-byte row is measured first, and this VM
# switches between a fast and a slow state of small messages (a 2-rank alltoall of
# about 0.2 or 0.5 us), sometimes within a run: l_min and l / l_mpi show a change of
# LPF's own cost apart from the state a run happened to start in.
# lpfprobe runs with --total-mib TOTAL_MIB (32) --samples SAMPLES (8), and with HOME,
# XDG_CACHE_HOME and LPF_PROBE_DIR in a temporary directory, so that no stored cost
# table of the user is read or written.
#
# ENGINES picks engines (default "shm tcp mpimsg mpirma"). Writes probe_compare.csv
# beside this script (OUT: another file):
#   engine,build,round,l_s,l_min_s,g_s_per_byte,l_mpi_s,load1   (l_mpi_s empty on shm
#   and tcp; load1: the 1-minute load average when the run started)
# then prints the medians per engine and build, their ratio new/old, and the median of
# the per-round ratios new/old (the two runs of a round are next to each other in time).
# A run that fails, outlasts RUN_TIMEOUT seconds (300) or prints no table is a row
# without l and g (the summary names it).
# `probe_compare.sh --summary` prints that summary of the existing CSV only.
#
# OLD_TREE: a checkout of OLD_REV (default <repo>/target/probe-old, made with
# `git worktree add --detach` when missing). Both trees are built here (release, nice
# 19; the MPI build in <tree>/target/mpi-features) unless LPF_SKIP_BUILD=1; the
# binaries are copied before the first run, so a rebuild meanwhile changes nothing.
# Needs Open MPI (mpirun) and python3. Run on a quiet machine: it measures time.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
csv=${OUT:-$here/probe_compare.csv}

summary() {
    python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
engines = list(dict.fromkeys(r["engine"] for r in rows))
if not rows:
    sys.exit(f"{sys.argv[1]}: no runs")
measured = [r for r in rows if r["l_s"]]
def median(engine, build, col):
    return statistics.median(float(r[col]) for r in measured if r["engine"] == engine and r["build"] == build)
loads = [float(r["load1"]) for r in rows]
failed = [f"{r['engine']} {r['build']} round {r['round']}" for r in rows if not r["l_s"]]
print(f"{len(rows)} runs, {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}; "
      f"load average (1 min) {min(loads):.2f}-{max(loads):.2f}; medians:")
def paired(engine, col):
    # new/old of the same round (the two runs next to each other in time), median.
    by = {(r["build"], r["round"]): float(r[col]) for r in measured if r["engine"] == engine}
    return statistics.median(by[("new", k)] / by[("old", k)] for (b, k) in by if b == "old" and ("new", k) in by)
for r in measured:
    r["l_per_l_mpi"] = str(float(r["l_s"]) / float(r["l_mpi_s"])) if r["l_mpi_s"] else ""
print(f"{'engine':8} {'what':12} {'old':>10} {'new':>10} {'new/old':>7} {'paired':>6}")
for e in engines:
    for col, what in [("l_s", "l [s]"), ("l_min_s", "l_min [s]"), ("l_per_l_mpi", "l / l_mpi"),
                      ("g_s_per_byte", "g [s/B]")]:
        if not all(r[col] for r in measured if r["engine"] == e):
            continue
        o, n = median(e, "old", col), median(e, "new", col)
        print(f"{e:8} {what:12} {o:10.3e} {n:10.3e} {n / o:7.2f} {paired(e, col):6.2f}")
print("new/old: ratio of the medians; paired: median over rounds of new/old within the round")
PY
}
if [ "${1:-}" = --summary ]; then
    # OUT names the CSV to summarise, as for a run.
    summary
    exit 0
fi

old_rev=${OLD_REV:-295ad25}
old_tree=${OLD_TREE:-$root/target/probe-old}
rounds=${ROUNDS:-9}
probe_args=(--total-mib "${TOTAL_MIB:-32}" --samples "${SAMPLES:-8}")
export OMPI_MCA_osc=^ucx
mpirun_opts=(--oversubscribe)
[ "$(id -u)" = 0 ] && mpirun_opts+=(--allow-run-as-root)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -d "$old_tree" ] || git -C "$root" worktree add --detach "$old_tree" "$old_rev"
for build in old new; do
    if [ $build = old ]; then tree=$old_tree; else tree=$root; fi
    # lpfprobe is a binary of the lpf crate up to 295ad25's successors, later a crate of
    # its own (native/lpfprobe, with the same mpi feature).
    probe_pkg=(-p lpf --bin lpfprobe)
    [ -f "$tree/native/lpfprobe/Cargo.toml" ] && probe_pkg=(-p lpfprobe --bin lpfprobe)
    if [ "${LPF_SKIP_BUILD:-0}" != 1 ]; then
        (cd "$tree" && CARGO_TARGET_DIR=$tree/target nice -n 19 cargo build --release -q -j2 "${probe_pkg[@]}" -p lpf --bin lpfrun &&
            CARGO_TARGET_DIR=$tree/target/mpi-features nice -n 19 cargo build --release -q -j2 "${probe_pkg[@]}" --features mpi)
    fi
    mkdir -p "$work/$build"
    cp "$tree/target/release/lpfprobe" "$tree/target/release/lpfrun" "$work/$build/"
    cp "$tree/target/mpi-features/release/lpfprobe" "$work/$build/lpfprobe-mpi"
done

# From here on (not for cargo, which finds its toolchain through HOME) no stored
# cost table of the user is in reach.
export HOME=$work/home XDG_CACHE_HOME=$work/home/.cache LPF_PROBE_DIR=$work/home/probe
mkdir -p "$HOME"

# run ENGINE BUILD: lpfprobe's output on ENGINE with BUILD's binaries.
run() {
    local bin=$work/$2
    case $1 in
        shm) timeout ${RUN_TIMEOUT:-300} "$bin/lpfprobe" --engine shm -p 2 "${probe_args[@]}" ;;
        tcp) timeout ${RUN_TIMEOUT:-300} "$bin/lpfrun" -n 2 --engine tcp -- "$bin/lpfprobe" --engine env "${probe_args[@]}" ;;
        *) LPF_ENGINE=$1 timeout ${RUN_TIMEOUT:-300} mpirun "${mpirun_opts[@]}" -n 2 -x LPF_ENGINE -x OMPI_MCA_osc -x HOME \
            -x XDG_CACHE_HOME -x LPF_PROBE_DIR "$bin/lpfprobe-mpi" --engine env "${probe_args[@]}" ;;
    esac
}

echo "engine,build,round,l_s,l_min_s,g_s_per_byte,l_mpi_s,load1" >"$csv"
for round in $(seq 1 "$rounds"); do
    order="old new"
    [ $((round % 2)) = 0 ] && order="new old"
    for engine in ${ENGINES:-shm tcp mpimsg mpirma}; do
        for build in $order; do
            log=$work/$engine-$build-$round.txt
            load=$(cut -d' ' -f1 /proc/loadavg)
            if ! run "$engine" "$build" >"$log" 2>&1; then
                # Kept as a row without figures (the summary counts it), so that one
                # failed or timed-out run does not lose the others.
                echo "probe_compare: $engine ($build build, round $round) failed:" >&2
                tail -n 5 "$log" >&2
                echo "$engine,$build,$round,,,,,$load" | tee -a "$csv"
                continue
            fi
            python3 - "$log" "$engine" "$build" "$round" "$load" >>"$csv" <<'PY'
import re, sys
log, engine, build, rnd, load = sys.argv[1:]
text = open(log).read()
# The fit's g or l may come out negative on a noisy machine: the sign is kept.
f = r"(-?[0-9.]+(?:e[-+]?[0-9]+)?)"
def num(pattern):
    m = re.search(pattern, text, re.M)
    if not m:
        sys.stderr.write(f"{log}: no match for {pattern!r}:\n{text[-2000:]}\n")
        print(f"{engine},{build},{rnd},,,,,{load}")   # a row without figures, as a failed run
        sys.exit(0)
    return float(m.group(1))
def l_of(w):                                                  # l [s], last column of the w-byte row
    return num(rf"^\s+{w} \|.*\|\s+" + f + r" ± \S+\s*$")
l = l_of(8)
l_min = min(l_of(w) for w in (8, 64, 1024, 1048576))
g = num(r"^\s+1048576 \|(?:[^|]*\|){3}\s+" + f + r" ±")     # g [s/byte] of the 1 MiB row
l_mpi = f"{num(r'l_mpi = ' + f + ' us') * 1e-6:.4e}" if engine.startswith("mpi") else ""
print(f"{engine},{build},{rnd},{l:.4e},{l_min:.4e},{g:.4e},{l_mpi},{load}")
PY
            tail -n 1 "$csv"
        done
    done
done
summary
