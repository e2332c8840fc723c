#!/usr/bin/env bash
# MPI engine tests (docs/mpi.md), everything under real mpirun:
#
#   - the conformance suite (lpf-mpi-conformance) on mpimsg and mpirma at
#     mpirun -n 1..4 (each case runs its sections at every p <= n), one line per
#     case and engine and n;
#   - the same on the hybrid engine (LPF_ENGINE=hybrid, LPF_HYBRID_NET=mpimsg|mpirma,
#     LPF_THREADS=2) at mpirun -n 1..3, and with unequal thread counts (1 + 3 + 2);
#   - the graphblas crate's distributed correctness checks (graphblas/tests/mpi_dist.rs) on
#     both engines at n = 2 and 4, and on hybrid over both at n = 2 x 2 threads and
#     1 + 2 threads;
#   - the graph kernels (graphblas/tests/mpi_kernels.rs: BFS, WCC, SSSP, CDLP, LCC, PR, an
#     absent source) on both engines at n = 2 and 4 and on hybrid over both at
#     n = 2 x 2 threads, every p up to the job's processes;
#   - a C program using only lpf/core.h + lpf/mpi.h (mpi_ring.c:
#     lpf_mpi_initialize_with_mpicomm + lpf_hook) on both engines at n = 1..4, on
#     hybrid over both at n = 1..3 x 2 threads, and the hybrid engine refusing an MPI
#     initialised without MPI_THREAD_SERIALIZED;
#   - Root::exec under mpirun (LPF_ENGINE=...): lpfprobe --quick at n = 2 (also
#     hybrid over mpimsg, 2 x 2 threads);
#   - a process killed with SIGKILL under mpirun (mpimsg, mpirma, hybrid over each):
#     the job ends within seconds;
#   - the conformance suite with errors agreed in every sync (LPF_MPI_AGREE_ERRORS=1),
#     both engines, n = 2, 3;
#   - long control messages (thousands of requests in one sync) cut into 4 KiB chunks
#     (LPF_MPI_BODY_CHUNK), on both engines;
#   - ibverbs selected on a machine without an RDMA device: init fails with a
#     message naming the missing device, no crash (Rust and C paths);
#   - the lpf crate's unit tests built with the mpi and ibverbs features (one line
#     per test);
#   - LPF_MPI_THREAD_LEVEL: single refuses the hybrid engine with 2 threads per rank,
#     an unknown value is refused, each with its reason;
#   - tests/c/root_context.c (LPF_ROOT as a context of one process on rank 0) and
#     tests/c/probe_nested.c (lpf_probe's p = the job's processes at every depth, the
#     engine's cost table) on mpimsg and mpirma, probe also on hybrid (#17 items 1, 2);
#   - tests/c/launched.c: only rank 0 runs main, the others serve its lpf_exec calls,
#     P below the ranks included (mpimsg, mpirma at n = 1, 3; hybrid over mpimsg
#     2 x 2 threads; #17 item 3); mpi_ring.c and mpi_errors.c define
#     LPF_MPI_AUTO_INITIALIZE as 0 and run main on every rank;
#   - tests/c/debug_misuse.c in debug mode: misuse and lpf_abort end the job with status
#     6 through MPI_Abort, a sync after a peer left returns LPF_ERR_FATAL; launched.c
#     built with the debug header (issue 28).
#
# Builds with --features mpi,ibverbs into $LPF_MPI_TARGET_DIR (default
# <repo>/target/mpi-features, apart from the feature-less build). Prints
# "ok <name>" / "FAIL <name>" lines and last "N passed, M failed"; exits
# non-zero if anything failed.
#
# Knobs: LPF_MPI_PROCS (default "1 2 3 4"), LPF_MPI_HYBRID_PROCS (default
# "1 2 3"), LPF_MPI_TIMEOUT (seconds per mpirun, default 300), LPF_SKIP_BUILD=1.

set -u
set -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2

export CARGO_TARGET_DIR=${LPF_MPI_TARGET_DIR:-$root/target/mpi-features}
rel=$CARGO_TARGET_DIR/release
build=$here/build
procs=${LPF_MPI_PROCS:-1 2 3 4}
hprocs=${LPF_MPI_HYBRID_PROCS:-1 2 3}
tmo=${LPF_MPI_TIMEOUT:-300}
# OpenMPI's UCX one-sided component needs devices this machine lacks.
export OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx}
mpirun_opts=(--oversubscribe)
[ "$(id -u)" = 0 ] && mpirun_opts+=(--allow-run-as-root)

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok $1"; }
fail() {
    failed=$((failed + 1))
    echo "FAIL $1"
    if [ -n "${2:-}" ] && [ -f "$2" ]; then tail -n 15 "$2" | sed 's/^/    /'; fi
}
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit $?
}

rm -rf "$build"
mkdir -p "$build"

if ! command -v mpirun >/dev/null 2>&1 || ! command -v mpicc >/dev/null 2>&1; then
    fail "mpi: mpirun/mpicc not found (scripts/setup.sh installs openmpi-bin libopenmpi-dev)"
    finish
fi

# ---- build ------------------------------------------------------------------
dist_bin=
if [ "${LPF_SKIP_BUILD:-0}" != 1 ]; then
    if ! cargo build --release -j2 -p lpf-conformance --features mpi,ibverbs --bin lpf-mpi-conformance \
        >"$build/cargo.log" 2>&1 ||
        ! cargo build --release -j2 -p lpf-capi --features mpi,ibverbs >>"$build/cargo.log" 2>&1 ||
        ! cargo build --release -j2 -p lpfprobe --features mpi,ibverbs >>"$build/cargo.log" 2>&1; then
        fail "build (cargo --features mpi,ibverbs)" "$build/cargo.log"
        finish
    fi
fi
if cargo test --release -j2 -p graphblas --features mpi --test mpi_dist --no-run >"$build/dist.log" 2>&1; then
    # cargo names the executable relative to the workspace when it lies inside it.
    dist_bin=$(grep -o '([^)]*mpi_dist-[0-9a-f]*)' "$build/dist.log" | tr -d '()' | tail -n 1)
    case $dist_bin in
        "" | /*) ;;
        *) dist_bin=$root/$dist_bin ;;
    esac
fi
if [ -z "$dist_bin" ] || [ ! -x "$dist_bin" ]; then
    fail "build graphblas mpi_dist" "$build/dist.log"
fi
kernels_bin=
if cargo test --release -j2 -p graphblas --features mpi --test mpi_kernels --no-run >"$build/kernels.log" 2>&1; then
    kernels_bin=$(grep -o '([^)]*mpi_kernels-[0-9a-f]*)' "$build/kernels.log" | tr -d '()' | tail -n 1)
    case $kernels_bin in
        "" | /*) ;;
        *) kernels_bin=$root/$kernels_bin ;;
    esac
fi
if [ -z "$kernels_bin" ] || [ ! -x "$kernels_bin" ]; then
    fail "build graphblas mpi_kernels" "$build/kernels.log"
    kernels_bin=
fi
conf=$rel/lpf-mpi-conformance
probe=$rel/lpfprobe

# run_cases NAME LOG: counts the ok/FAIL lines of a runner's output and checks
# that its summary line came and agrees.
run_cases() {
    local name=$1 log=$2 rc=$3 line
    while IFS= read -r line; do
        case $line in
            "ok "*) pass "${line#ok }" ;;
            "FAIL "*) failed=$((failed + 1)); echo "$line" ;;
        esac
    done < <(grep -E '^(ok|FAIL) ' "$log")
    if ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$log"; then
        fail "$name: no summary line (crashed, hung or killed: status $rc)" "$log"
    elif [ "$rc" != 0 ] && ! grep -q '^FAIL ' "$log"; then
        fail "$name: exit status $rc" "$log"
    fi
}

# ---- unit tests of the library built with the MPI and verbs features -----------
# (the feature-less `cargo test --workspace` of the cargo step does not compile them)
# Only the tests that exist with the features are counted here: the others ran in
# the cargo step already (same names, same code).
log=$build/unit.log
timeout "$tmo" cargo test --release -j2 -p lpf --lib -- --list 2>/dev/null |
    sed -n 's/: test$//p' | sort >"$build/unit-plain.list"
if timeout "$tmo" cargo test --release -j2 -p lpf --features mpi,ibverbs --lib >"$log" 2>&1; then
    while IFS= read -r name; do pass "unit (features mpi,ibverbs): $name"; done \
        < <(grep -E '^test .* \.\.\. ok$' "$log" | sed 's/^test //; s/ \.\.\. ok$//' | sort |
            comm -23 - "$build/unit-plain.list")
else
    fail "unit tests with features mpi,ibverbs" "$log"
fi

# ---- conformance suite ----------------------------------------------------------
for engine in mpimsg mpirma; do
    for n in $procs; do
        log=$build/conf-$engine-$n.log
        LPF_ENGINE=$engine timeout "$tmo" mpirun "${mpirun_opts[@]}" -n "$n" "$conf" >"$log" 2>&1
        run_cases "conformance $engine n=$n" "$log" $?
    done
done

# ---- the suite (or one case) with a setting, both engines, n = 2 and 3 ----------
# conf_variant LABEL VAR=VALUE [CASE]
conf_variant() {
    local label=$1 setting=$2 case=${3:-} engine n log
    for engine in mpimsg mpirma; do
        for n in 2 3; do
            log=$build/conf-${setting%%=*}-$engine-$n.log
            env "$setting" LPF_ENGINE="$engine" timeout "$tmo" mpirun "${mpirun_opts[@]}" -x "${setting%%=*}" \
                -n "$n" "$conf" ${case:+"$case"} >"$log" 2>&1
            run_cases "$label $engine n=$n" "$log" $?
        done
    done
}
# errors agreed in every sync
conf_variant "conformance with errors agreed in every sync:" LPF_MPI_AGREE_ERRORS=1
# long control messages cut into many chunks
conf_variant "long control messages in 4 KiB chunks:" LPF_MPI_BODY_CHUNK=4096 many_small_messages_in_one_sync

# ---- conformance suite on the hybrid engine over MPI ----------------------------
for net in mpimsg mpirma; do
    for n in $hprocs; do
        log=$build/conf-hybrid-$net-$n.log
        LPF_ENGINE=hybrid LPF_HYBRID_NET=$net LPF_THREADS=2 timeout "$tmo" mpirun "${mpirun_opts[@]}" -n "$n" "$conf" \
            >"$log" 2>&1
        run_cases "conformance hybrid-$net n=$n x 2 threads" "$log" $?
    done
    # Every rank its own thread count (MPMD app contexts): 1 + 3 + 2.
    log=$build/conf-hybrid-$net-uneven.log
    LPF_ENGINE=hybrid LPF_HYBRID_NET=$net timeout "$tmo" mpirun "${mpirun_opts[@]}" \
        -n 1 -x LPF_THREADS=1 "$conf" : -n 1 -x LPF_THREADS=3 "$conf" : -n 1 -x LPF_THREADS=2 "$conf" >"$log" 2>&1
    run_cases "conformance hybrid-$net threads 1+3+2" "$log" $?
done

# ---- graphblas distributed correctness -----------------------------------------
if [ -n "$dist_bin" ]; then
    for engine in mpimsg mpirma; do
        for n in 2 4; do
            log=$build/dist-$engine-$n.log
            LPF_ENGINE=$engine timeout "$tmo" mpirun "${mpirun_opts[@]}" -n "$n" "$dist_bin" >"$log" 2>&1
            run_cases "pagerank $engine n=$n" "$log" $?
        done
    done
    for net in mpimsg mpirma; do
        log=$build/dist-hybrid-$net-2x2.log
        LPF_ENGINE=hybrid LPF_HYBRID_NET=$net LPF_THREADS=2 timeout "$tmo" mpirun "${mpirun_opts[@]}" -n 2 "$dist_bin" \
            >"$log" 2>&1
        run_cases "pagerank hybrid-$net n=2 x 2 threads" "$log" $?
        log=$build/dist-hybrid-$net-1+2.log
        LPF_ENGINE=hybrid LPF_HYBRID_NET=$net timeout "$tmo" mpirun "${mpirun_opts[@]}" \
            -n 1 -x LPF_THREADS=1 "$dist_bin" : -n 1 -x LPF_THREADS=2 "$dist_bin" >"$log" 2>&1
        run_cases "pagerank hybrid-$net threads 1+2" "$log" $?
    done
fi

# ---- the graph kernels (BFS, WCC, SSSP, CDLP, LCC, PR) at small sizes ---------------
if [ -n "$kernels_bin" ]; then
    for engine in mpimsg mpirma; do
        for n in 2 4; do
            log=$build/kernels-$engine-$n.log
            LPF_ENGINE=$engine timeout "$tmo" mpirun "${mpirun_opts[@]}" -n "$n" "$kernels_bin" >"$log" 2>&1
            run_cases "graph kernels $engine n=$n" "$log" $?
        done
    done
    for net in mpimsg mpirma; do
        log=$build/kernels-hybrid-$net-2x2.log
        LPF_ENGINE=hybrid LPF_HYBRID_NET=$net LPF_THREADS=2 timeout "$tmo" mpirun "${mpirun_opts[@]}" -n 2 "$kernels_bin" \
            >"$log" 2>&1
        run_cases "graph kernels hybrid-$net n=2 x 2 threads" "$log" $?
    done
fi

# ---- C: lpf/core.h + lpf/mpi.h under mpirun -------------------------------------
inc=$root/native/lpf-capi/include
if mpicc -std=c99 -O2 -Wall -Wextra -Werror -I"$inc" "$here/mpi_ring.c" -L"$rel" -llpf_core \
    -Wl,-rpath,"$rel" -o "$build/mpi_ring" >"$build/cc.log" 2>&1; then
    echo "built C mpi_ring.c with mpicc against lpf/core.h + lpf/mpi.h"
    for engine in mpimsg mpirma; do
        for n in $procs; do
            log=$build/c-$engine-$n.log
            LPF_ENGINE=$engine timeout "$tmo" mpirun "${mpirun_opts[@]}" -x LPF_ENGINE -n "$n" "$build/mpi_ring" >"$log" 2>&1
            rc=$?
            if [ "$rc" = 0 ] && grep -q "^mpi_ring ok $n$" "$log"; then
                pass "C mpi_ring $engine n=$n"
            else
                fail "C mpi_ring $engine n=$n (status $rc)" "$log"
            fi
        done
    done
    for net in mpimsg mpirma; do
        for n in $hprocs; do
            log=$build/c-hybrid-$net-$n.log
            LPF_ENGINE=hybrid LPF_HYBRID_NET=$net LPF_THREADS=2 timeout "$tmo" mpirun "${mpirun_opts[@]}" \
                -x LPF_ENGINE -x LPF_HYBRID_NET -x LPF_THREADS -n "$n" "$build/mpi_ring" >"$log" 2>&1
            rc=$?
            # Threads other than a rank's first report mismatches on stderr only.
            if [ "$rc" = 0 ] && grep -q "^mpi_ring ok $n$" "$log" && ! grep -q FAIL "$log"; then
                pass "C mpi_ring hybrid-$net n=$n x 2 threads"
            else
                fail "C mpi_ring hybrid-$net n=$n x 2 threads (status $rc)" "$log"
            fi
        done
    done
else
    fail "C mpi_ring.c compiles" "$build/cc.log"
fi
# Several threads per rank need MPI_THREAD_SERIALIZED: plain MPI_Init is refused on
# every rank with the reason (the program then calls MPI_Abort).
if mpicc -std=c99 -O2 -Wall -Wextra -Werror -DRING_THREAD_SINGLE -I"$inc" "$here/mpi_ring.c" -L"$rel" -llpf_core \
    -Wl,-rpath,"$rel" -o "$build/mpi_ring_single" >"$build/cc-single.log" 2>&1; then
    log=$build/c-single.log
    LPF_ENGINE=mpimsg timeout "$tmo" mpirun "${mpirun_opts[@]}" -x LPF_ENGINE -n 2 "$build/mpi_ring_single" >"$log" 2>&1
    rc=$?
    if [ "$rc" = 0 ] && grep -q "^mpi_ring ok 2$" "$log"; then
        pass "C mpi_ring with plain MPI_Init mpimsg n=2"
    else
        fail "C mpi_ring with plain MPI_Init mpimsg n=2 (status $rc)" "$log"
    fi
    log=$build/c-hybrid-single.log
    LPF_ENGINE=hybrid LPF_HYBRID_NET=mpimsg LPF_THREADS=2 timeout 60 mpirun "${mpirun_opts[@]}" \
        -x LPF_ENGINE -x LPF_HYBRID_NET -x LPF_THREADS -n 2 "$build/mpi_ring_single" >"$log" 2>&1
    rc=$?
    if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q 'lpf_mpi_initialize_with_mpicomm: .*MPI_THREAD_SERIALIZED' "$log" &&
        ! grep -q '^mpi_ring ok' "$log"; then
        pass "C hybrid over MPI refuses MPI_Init without MPI_THREAD_SERIALIZED (status $rc)"
    else
        fail "C hybrid over MPI with MPI_Init (thread level single): status $rc" "$log"
    fi
else
    fail "C mpi_ring.c compiles with -DRING_THREAD_SINGLE" "$build/cc-single.log"
fi

# ---- LPF_MPI_THREAD_LEVEL: the level LPF asks for when it initialises MPI --------
# thread_level_refused LABEL PATTERN ENV...: the init fails on every rank, naming why.
thread_level_refused() {
    local label=$1 pattern=$2 log=$build/thread-level-$3.log
    shift 2
    env "$@" timeout 60 mpirun "${mpirun_opts[@]}" -n 2 "$conf" >"$log" 2>&1
    local rc=$?
    if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "$pattern" "$log" && ! grep -q '^ok ' "$log"; then
        pass "$label (status $rc)"
    else
        fail "$label: status $rc" "$log"
    fi
}
thread_level_refused "LPF_MPI_THREAD_LEVEL=single refuses the hybrid engine with 2 threads per rank" \
    'LPF_MPI_THREAD_LEVEL=single forbids it' \
    LPF_MPI_THREAD_LEVEL=single LPF_ENGINE=hybrid LPF_HYBRID_NET=mpimsg LPF_THREADS=2
thread_level_refused "LPF_MPI_THREAD_LEVEL=multiple is refused with the values it takes" \
    'LPF_MPI_THREAD_LEVEL="multiple": expected single or serialized' \
    LPF_MPI_THREAD_LEVEL=multiple LPF_ENGINE=mpimsg

# ---- Root::exec under mpirun: the probe tool ------------------------------------
for engine in mpimsg mpirma; do
    log=$build/probe-$engine.log
    timeout "$tmo" mpirun "${mpirun_opts[@]}" -n 2 -x LPF_ENGINE="$engine" "$probe" --engine env --quick >"$log" 2>&1
    rc=$?
    if [ "$rc" = 0 ] && grep -q "engine \`$engine\`, p = 2" "$log" && grep -q "^OpenMPI MPI_Alltoall" "$log"; then
        pass "Root::exec under mpirun: lpfprobe --quick $engine n=2"
    else
        fail "Root::exec under mpirun: lpfprobe --quick $engine n=2 (status $rc)" "$log"
    fi
done

log=$build/probe-hybrid.log
LPF_HYBRID_NET=mpimsg LPF_THREADS=2 timeout "$tmo" mpirun "${mpirun_opts[@]}" -n 2 -x LPF_ENGINE=hybrid -x LPF_HYBRID_NET \
    -x LPF_THREADS "$probe" --engine env --quick >"$log" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q "engine \`hybrid\`, p = 4" "$log"; then
    pass "Root::exec under mpirun: lpfprobe --quick hybrid-mpimsg n=2 x 2 threads"
else
    fail "Root::exec under mpirun: lpfprobe --quick hybrid-mpimsg n=2 x 2 threads (status $rc)" "$log"
fi

# ---- a killed process does not leave the others spinning ------------------------
# (hybrid: 3 ranks x 2 threads; the victim's OS process holds two LPF processes)
for engine in mpimsg mpirma hybrid-mpimsg hybrid-mpirma; do
    log=$build/kill-$engine.log
    : >"$log"
    case $engine in
        hybrid-*) envs=(LPF_ENGINE=hybrid "LPF_HYBRID_NET=${engine#hybrid-}" LPF_THREADS=2); ready=6 ;;
        *) envs=("LPF_ENGINE=$engine"); ready=3 ;;
    esac
    env "${envs[@]}" timeout 60 mpirun "${mpirun_opts[@]}" -n 3 "$conf" --spin >"$log" 2>&1 &
    job=$!
    victim=
    for _ in $(seq 1 300); do
        victim=$(awk '/^ready 2 /{print $3}' "$log")
        [ -n "$victim" ] && [ "$(grep -c '^ready ' "$log")" = "$ready" ] && break
        sleep 0.1
    done
    if [ -z "$victim" ]; then
        fail "kill -9 under mpirun ($engine): the processes never got ready" "$log"
        kill "$job" 2>/dev/null
        wait "$job" 2>/dev/null
        continue
    fi
    start=$(date +%s%N)
    kill -9 "$victim"
    wait "$job"
    rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$ms" -lt 10000 ]; then
        pass "kill -9 of one rank under mpirun ends the job ($engine, ${ms} ms, status $rc)"
    else
        fail "kill -9 of one rank under mpirun ($engine): status $rc after ${ms} ms" "$log"
    fi
done

# ---- ibverbs without a device fails cleanly ---------------------------------------
if ls /sys/class/infiniband/* >/dev/null 2>&1; then
    echo "note: this machine has an RDMA device; the no-device checks are skipped"
else
    log=$build/ibverbs-rust.log
    LPF_ENGINE=ibverbs timeout 60 mpirun "${mpirun_opts[@]}" -n 2 "$conf" --spin >"$log" 2>&1
    rc=$?
    if [ "$rc" != 0 ] && [ "$rc" -lt 128 ] && [ "$(grep -c 'exec returned Err.*no RDMA device found' "$log")" = 2 ]; then
        pass "ibverbs without a device: Root::exec fails on every rank naming the missing device"
    else
        fail "ibverbs without a device (Rust): status $rc" "$log"
    fi
    log=$build/ibverbs-c.log
    LPF_ENGINE=ibverbs timeout 60 mpirun "${mpirun_opts[@]}" -x LPF_ENGINE -n 2 "$build/mpi_ring" >"$log" 2>&1
    rc=$?
    if [ "$rc" != 0 ] && [ "$rc" -lt 128 ] && grep -q 'lpf_mpi_initialize_with_mpicomm: ibverbs engine: no RDMA device found' "$log" &&
        ! grep -qi 'segmentation\|core dumped\|signal 11' "$log"; then
        pass "ibverbs without a device: lpf_mpi_initialize_with_mpicomm returns LPF_ERR_FATAL with the reason"
    else
        fail "ibverbs without a device (C): status $rc" "$log"
    fi
fi

# ---- MPI failures are LPF errors; one-rank mpirma needs no window (#17 item 6) -------
# Without the osc override above: Open MPI 4.1's default one-sided component (UCX) cannot
# create a window on one rank here. Then with OMPI_MCA_osc=monitoring (no usable
# one-sided component: MPI_Win_create fails at n >= 2): the sync and lpf_hook return
# LPF_ERR_FATAL naming MPI_Win_create, MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL, and
# every rank reaches MPI_Finalize (tests/c/mpi_errors.c).
log=$build/conf-mpirma-1-default-osc.log
env -u OMPI_MCA_osc LPF_ENGINE=mpirma timeout "$tmo" mpirun "${mpirun_opts[@]}" -n 1 "$conf" >"$log" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -qE '^[0-9]+ passed, 0 failed$' "$log"; then
    pass "conformance mpirma n=1 with Open MPI's default one-sided component ($(tail -n 1 "$log"))"
else
    fail "conformance mpirma n=1 with Open MPI's default one-sided component (status $rc)" "$log"
fi
if mpicc -std=c99 -O2 -Wall -Wextra -Werror -I"$inc" "$root/tests/c/mpi_errors.c" -L"$rel" -llpf_core \
    -Wl,-rpath,"$rel" -o "$build/mpi_errors" >"$build/cc-mpi_errors.log" 2>&1; then
    log=$build/mpi_errors-1.log
    env -u OMPI_MCA_osc LPF_ENGINE=mpirma timeout 60 mpirun "${mpirun_opts[@]}" -x LPF_ENGINE -n 1 \
        "$build/mpi_errors" works >"$log" 2>&1
    rc=$?
    if [ "$rc" = 0 ] && grep -q '^mpi_errors ok 0: works$' "$log"; then
        pass "C mpi_errors mpirma n=1 (default one-sided component): put to self works"
    else
        fail "C mpi_errors mpirma n=1 (default one-sided component): status $rc" "$log"
    fi
    for n in 2 3; do
        log=$build/mpi_errors-$n.log
        OMPI_MCA_osc=monitoring LPF_ENGINE=mpirma timeout 60 mpirun "${mpirun_opts[@]}" -x LPF_ENGINE \
            -x OMPI_MCA_osc -n "$n" "$build/mpi_errors" >"$log" 2>&1
        rc=$?
        if [ "$rc" = 0 ] && [ "$(grep -c '^mpi_errors ok [0-9]*: .*MPI_Win_create failed' "$log")" = "$n" ]; then
            pass "C mpi_errors mpirma n=$n: MPI_Win_create failing is LPF_ERR_FATAL on every rank, MPI_Finalize reached"
        else
            fail "C mpi_errors mpirma n=$n (MPI_Win_create failing): status $rc" "$log"
        fi
    done
else
    fail "build C mpi_errors.c with mpicc" "$build/cc-mpi_errors.log"
fi

# ---- BSPlib and collectives programs under mpirun (#17 item 4) ------------------------
# tests/c/{collectives,bsplib_ctx,bsp_std,bsp_mcbsp}.c, written only against the published headers,
# with lpf_exec(LPF_ROOT, ...) / bsp_begin joining all ranks: mpimsg and mpirma at
# n = 1..4, hybrid over mpirma at n = 2 x 2 threads. Results are checked exactly inside.
for prog in collectives bsplib_ctx bsp_std bsp_mcbsp; do
    # mpicc: lpf/mpi.h (included by some) includes <mpi.h>, as the published header
    if ! mpicc -std=c99 -O2 -Wall -Wextra -Werror -I"$inc" "$root/tests/c/$prog.c" -L"$rel" -llpf_core \
        -Wl,-rpath,"$rel" -lpthread -o "$build/$prog" >"$build/cc-$prog.log" 2>&1; then
        fail "build C $prog.c against the MPI-enabled library" "$build/cc-$prog.log"
        continue
    fi
    for engine in mpimsg mpirma; do
        for n in $procs; do
            log=$build/$prog-$engine-$n.log
            LPF_LOG=quiet LPF_MAX_PROCS=$n timeout "$tmo" mpirun "${mpirun_opts[@]}" -x LPF_ENGINE="$engine" \
                -x LPF_LOG -x LPF_MAX_PROCS -n "$n" "$build/$prog" >"$log" 2>&1
            rc=$?
            if [ "$rc" = 0 ] && grep -q "^$prog: all checks passed" "$log"; then
                pass "C $prog $engine n=$n"
            else
                fail "C $prog $engine n=$n (status $rc)" "$log"
            fi
        done
    done
    log=$build/$prog-hybrid-mpirma.log
    LPF_LOG=quiet LPF_MAX_PROCS=4 LPF_HYBRID_NET=mpirma LPF_THREADS=2 timeout "$tmo" mpirun "${mpirun_opts[@]}" \
        -x LPF_ENGINE=hybrid -x LPF_HYBRID_NET -x LPF_THREADS -x LPF_LOG -x LPF_MAX_PROCS -n 2 "$build/$prog" >"$log" 2>&1
    rc=$?
    if [ "$rc" = 0 ] && grep -q "^$prog: all checks passed" "$log"; then
        pass "C $prog hybrid over mpirma n=2 x 2 threads"
    else
        fail "C $prog hybrid over mpirma n=2 x 2 threads (status $rc)" "$log"
    fi
done

# ---- the debug layer and lpf_abort under mpirun (issue 28) -----------------------------
# tests/c/debug_misuse.c on mpimsg, mpirma and hybrid over mpimsg at n = 2: misuse found
# in debug mode (at a call: queue-full; collectively at a sync: conflict, queue-incoming)
# and lpf_abort end the job through MPI_Abort with status 6, which mpirun exits with;
# a sync after a peer left returns LPF_ERR_FATAL in debug mode too (peer-left: exit 0).
if mpicc -std=c99 -O2 -Wall -Wextra -Werror -I"$inc" "$root/tests/c/debug_misuse.c" -L"$rel" -llpf_core \
    -Wl,-rpath,"$rel" -lpthread -o "$build/debug_misuse" >"$build/cc-debug_misuse.log" 2>&1; then
    for engine in mpimsg mpirma hybrid; do
        for mode in queue-full conflict queue-incoming lpf-abort peer-left; do
            log=$build/debug_misuse-$engine-$mode.log
            want=6
            [ "$mode" = peer-left ] && want=0
            LPF_DEBUG=1 LPF_LOG=quiet LPF_HYBRID_NET=mpimsg timeout 60 mpirun "${mpirun_opts[@]}" -x LPF_ENGINE="$engine" \
                -x LPF_DEBUG -x LPF_LOG -x LPF_HYBRID_NET -n 2 "$build/debug_misuse" "$mode" >"$log" 2>&1
            rc=$?
            if [ "$rc" = "$want" ]; then
                pass "C debug_misuse $mode $engine n=2 (LPF_DEBUG=1): exit status $want"
            else
                fail "C debug_misuse $mode $engine n=2 (LPF_DEBUG=1): status $rc, expected $want" "$log"
            fi
        done
    done
else
    fail "build C debug_misuse.c with mpicc" "$build/cc-debug_misuse.log"
fi

# ---- LPF_ROOT as a context and lpf_probe under mpirun (#17 items 1, 2) ---------------------
# tests/c/root_context.c: rank 0 (the only rank running main, #17 item 3) uses LPF_ROOT
# as a context of one process, then execs over all ranks. tests/c/probe_nested.c: p is the job's LPF processes on
# LPF_ROOT, in the section, in a rehook and in nested execs, with the cost table of
# the engine in use (distinct g per engine, tables made here).
probe_dir=$build/probe-tables
mkdir -p "$probe_dir"
g_of() { case $1 in shm) echo 1e-3 ;; mpimsg) echo 4e-3 ;; mpirma) echo 5e-3 ;; hybrid) echo 3e-3 ;; esac; }
for e in shm mpimsg mpirma hybrid; do
    printf '# test table: nprocs msg_size g l\n1 8 %s 1e-2\n' "$(g_of "$e")" >"$probe_dir/$e.txt"
done
for prog in root_context probe_nested; do
    if ! cc -std=c99 -O2 -Wall -Wextra -Werror -I"$inc" -I"$root/tests/c" "$root/tests/c/$prog.c" -L"$rel" \
        -llpf_core -Wl,-rpath,"$rel" -lpthread -o "$build/$prog" >"$build/cc-$prog.log" 2>&1; then
        fail "build C $prog.c against the MPI-enabled library" "$build/cc-$prog.log"
    fi
done
if [ -x "$build/root_context" ]; then
    for engine in mpimsg mpirma; do
        log=$build/root_context-$engine.log
        LPF_LOG=quiet timeout "$tmo" mpirun "${mpirun_opts[@]}" -x LPF_ENGINE="$engine" -x LPF_LOG -n 2 \
            "$build/root_context" >"$log" 2>&1
        rc=$?
        if [ "$rc" = 0 ] && [ "$(grep -c '^root_context: all checks passed' "$log")" = 1 ]; then
            pass "C root_context $engine n=2: LPF_ROOT as a context on rank 0, then an exec"
        else
            fail "C root_context $engine n=2 (status $rc)" "$log"
        fi
    done
fi
if [ -x "$build/probe_nested" ]; then
    for engine in mpimsg mpirma; do
        for n in 1 3; do
            log=$build/probe_nested-$engine-$n.log
            LPF_LOG=quiet LPF_PROBE_DIR=$probe_dir timeout "$tmo" mpirun "${mpirun_opts[@]}" \
                -x LPF_ENGINE="$engine" -x LPF_LOG -x LPF_PROBE_DIR -n "$n" \
                "$build/probe_nested" "$n" "$(g_of "$engine")" "$(g_of shm)" >"$log" 2>&1
            rc=$?
            if [ "$rc" = 0 ] && [ "$(grep -c '^probe_nested: all checks passed' "$log")" = 1 ]; then
                pass "C probe_nested $engine n=$n: p = $n at every depth, the $engine table"
            else
                fail "C probe_nested $engine n=$n (status $rc)" "$log"
            fi
        done
    done
    log=$build/probe_nested-hybrid.log
    LPF_LOG=quiet LPF_PROBE_DIR=$probe_dir LPF_HYBRID_NET=mpimsg LPF_THREADS=2 timeout "$tmo" mpirun \
        "${mpirun_opts[@]}" -x LPF_ENGINE=hybrid -x LPF_HYBRID_NET -x LPF_THREADS -x LPF_LOG -x LPF_PROBE_DIR -n 2 \
        "$build/probe_nested" 4 "$(g_of hybrid)" "$(g_of shm)" >"$log" 2>&1
    rc=$?
    if [ "$rc" = 0 ] && [ "$(grep -c '^probe_nested: all checks passed' "$log")" = 1 ]; then
        pass "C probe_nested hybrid over mpimsg n=2 x 2 threads: p = 4 at every depth, the hybrid table"
    else
        fail "C probe_nested hybrid over mpimsg n=2 x 2 threads (status $rc)" "$log"
    fi
fi

# ---- launched programs (#17 item 3) -------------------------------------------------
# tests/c/launched.c under mpirun: only rank 0 runs main; the other ranks serve its
# lpf_exec calls (on n - 1, n and n - 1 processes; args.output checked inside) and exit
# with it. Its line after the execs comes once, each section's once per process of it.
# (mpi_ring.c above defines LPF_MPI_AUTO_INITIALIZE as 0 and calls MPI_Init itself.)
launched_ok() { # launched_ok LOG N: main's line once, 3N - 2 section lines (3 if N = 1)
    local sections=$(( $2 > 1 ? 3 * $2 - 2 : 3 ))
    [ "$(grep -c "^launched: main after lpf_exec ($2 processes)$" "$1")" = 1 ] &&
        [ "$(grep -c '^launched: section of ' "$1")" = "$sections" ]
}
if mpicc -std=c99 -O2 -Wall -Wextra -Werror -I"$inc" "$root/tests/c/launched.c" -L"$rel" -llpf_core \
    -Wl,-rpath,"$rel" -o "$build/launched" >"$build/cc-launched.log" 2>&1; then
    for engine in mpimsg mpirma; do
        for n in 1 3; do
            log=$build/launched-$engine-$n.log
            LPF_LOG=quiet timeout 120 mpirun "${mpirun_opts[@]}" -x LPF_ENGINE="$engine" -x LPF_LOG -n "$n" \
                "$build/launched" >"$log" 2>&1
            rc=$?
            if [ "$rc" = 0 ] && launched_ok "$log" "$n"; then
                pass "C launched $engine n=$n: main on rank 0 only, execs on n - 1 and n ranks"
            else
                fail "C launched $engine n=$n (status $rc)" "$log"
            fi
        done
    done
    log=$build/launched-hybrid.log
    LPF_LOG=quiet LPF_HYBRID_NET=mpimsg LPF_THREADS=2 timeout 120 mpirun "${mpirun_opts[@]}" -x LPF_ENGINE=hybrid \
        -x LPF_HYBRID_NET -x LPF_THREADS -x LPF_LOG -n 2 "$build/launched" >"$log" 2>&1
    rc=$?
    if [ "$rc" = 0 ] && launched_ok "$log" 4; then
        pass "C launched hybrid over mpimsg n=2 x 2 threads: main on rank 0 only, execs on 3 and 4 processes"
    else
        fail "C launched hybrid over mpimsg n=2 x 2 threads (status $rc)" "$log"
    fi
else
    fail "build C launched.c against the MPI-enabled library" "$build/cc-launched.log"
fi
# Built with the debug layer's header: rank 0's lpf_exec puts the serving ranks in debug
# mode too (the checks at a sync are collective; issue 28).
if mpicc -std=c99 -O2 -Wall -Wextra -Werror -I"$inc" -include debug/lpf/core.h "$root/tests/c/launched.c" \
    -L"$rel" -llpf_core -Wl,-rpath,"$rel" -o "$build/launched_debug" >"$build/cc-launched_debug.log" 2>&1; then
    for engine in mpimsg mpirma; do
        log=$build/launched_debug-$engine-3.log
        LPF_LOG=quiet timeout 120 mpirun "${mpirun_opts[@]}" -x LPF_ENGINE="$engine" -x LPF_LOG -n 3 \
            "$build/launched_debug" >"$log" 2>&1
        rc=$?
        if [ "$rc" = 0 ] && launched_ok "$log" 3; then
            pass "C launched (debug header) $engine n=3: the serving ranks run the debug checks too"
        else
            fail "C launched (debug header) $engine n=3 (status $rc)" "$log"
        fi
    done
else
    fail "build C launched.c with the debug header against the MPI-enabled library" "$build/cc-launched_debug.log"
fi

finish
