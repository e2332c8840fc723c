#!/usr/bin/env bash
# The reference LPF's own functional tests, unmodified, against this LPF:
#
#   tests/reference/run.sh REF_DIR
#
# REF_DIR is a checkout of the reference LPF (github.com/Algebraic-Programming/LPF).
# Its tests/functional (core and bsplib tests, debug/, collectives/) are built with
# this project's installed lpfcxx (scripts/install.sh, with --mpi when Open MPI is
# there) and Debian's GoogleTest, and run as the reference's harness runs them
# (its CMakeLists.txt and test_launcher.py): every test of the CMake lists, the
# engine-specific ones (NAME.ENGINE.cpp) on their engine only; each test compiled
# with the debug layer (lpfcxx -llpf_debug, as the reference builds every test);
# `lpfrun -engine E [-probe S] -np P exe` for each P of the test's range ("\pre P >= a",
# "\pre P <= b" in its comment, default 1..5, capped at LPF_REFERENCE_MAXP as the
# reference caps at the processor count), and a run passes when its exit status is the
# declared one ("Exit code: N", default 0). A test passes on an engine when every P
# does; as the reference's launcher, its runs stop at the first P that fails.
#
# Engines: shm (the reference's pthread: the engine registry's alias, as lpfrun
# takes it), tcp, hybrid, mpimsg, mpirma (those two only when Open MPI is there).
# The tests that test the macro LPF_CORE_IMPL_ID get the reference's engine id: the
# registry's alias for the engine if it has one the tests know (pthread), the
# engine's own name if the tests know it (hybrid, mpimsg, mpirma), else mpimsg (tcp:
# a distributed engine with nested lpf_exec, as mpimsg).
#
# Settings (environment): LPF_REFERENCE_ENGINES (default "shm tcp hybrid mpimsg
# mpirma"), LPF_REFERENCE_MAXP (4), LPF_REFERENCE_JOBS (runs at a time, 2),
# LPF_REFERENCE_TIMEOUT (seconds per run, 120), LPF_REFERENCE_TESTS (an extended
# regular expression on the test names; default all), LPF_REFERENCE_BUILD (build
# directory, default target/reference; kept, so that a second run builds only what
# changed), LPF_REFERENCE_PREFIX (an installation to use instead of installing one).
#
# Output: one line per failing test and engine (the first P that failed, the status,
# and the log), a table of passed/failed per engine and group (core, bsplib, collectives,
# debug), then "N passed, M failed" (", K skipped (...)" when tests were excluded).
# Exit status non-zero when a test failed or nothing could be built.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

if [ $# -ne 1 ] || [ ! -f "$1/tests/functional/CMakeLists.txt" ]; then
    echo "usage: tests/reference/run.sh REF_DIR   (a checkout of the reference LPF, with tests/functional)" >&2
    echo "0 passed, 1 failed"
    exit 2
fi
ref=$(cd "$1" && pwd)
functional=$ref/tests/functional

engines=${LPF_REFERENCE_ENGINES:-shm tcp hybrid mpimsg mpirma}
maxp=${LPF_REFERENCE_MAXP:-4}
jobs=${LPF_REFERENCE_JOBS:-2}
run_timeout=${LPF_REFERENCE_TIMEOUT:-120}
only=${LPF_REFERENCE_TESTS:-}
build=${LPF_REFERENCE_BUILD:-$root/target/reference}
mkdir -p "$build"
build=$(cd "$build" && pwd)

# Tests left out, by name, and why.
declare -A excluded=(
    [func_lpf_put_parallel_huge]="each of its 2 processes allocates two arrays of INT_MAX + 10 ints: about 34 GB"
    [func_lpf_get_parallel_huge]="each of its 2 processes allocates two arrays of INT_MAX + 10 ints: about 34 GB"
)

abort() {
    echo "reference: $*"
    echo "0 passed, 1 failed"
    exit 1
}

# ---- this LPF, installed ------------------------------------------------------
have_mpi=
command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1 && have_mpi=yes
if [ -n "${LPF_REFERENCE_PREFIX:-}" ]; then
    prefix=$(cd "$LPF_REFERENCE_PREFIX" && pwd) || abort "LPF_REFERENCE_PREFIX=$LPF_REFERENCE_PREFIX: no such directory"
else
    prefix=$build/prefix
    echo "=== scripts/install.sh --prefix $prefix ${have_mpi:+--mpi}"
    bash "$root/scripts/install.sh" --prefix "$prefix" ${have_mpi:+--mpi} >"$build/install.log" 2>&1 ||
        { tail -n 30 "$build/install.log"; abort "scripts/install.sh failed (log: $build/install.log)"; }
fi
lpfrun=$prefix/bin/lpfrun
lpfcxx=$prefix/bin/lpfcxx
registry=$("$lpfrun" --list-engines) || abort "$lpfrun --list-engines failed"

# engine_field ENGINE COLUMN: a column of the engine's registry line (2: feature).
engine_field() { awk -v e="$1" -v c="$2" '$1 == e { print $c }' <<<"$registry"; }
# The reference's names of an engine: its registry name and aliases.
engine_names() { awk -v e="$1" '$1 == e { $2 = ""; $3 = ""; print }' <<<"$registry"; }

skipped_names=()
skipped=0
run_engines=()
for e in $engines; do
    feature=$(engine_field "$e" 2)
    if [ -z "$feature" ]; then
        abort "LPF_REFERENCE_ENGINES: no engine $e in the registry ($(awk '{ print $1 }' <<<"$registry" | tr '\n' ' '))"
    elif ! why=$("$lpfcxx" -engine "$e" -show x.cpp 2>&1 >/dev/null); then
        # lpfcxx knows where the installation keeps each engine's library.
        echo "skip engine $e: $why"
        skipped_names+=("engine $e")
    else
        run_engines+=("$e")
    fi
done
[ ${#run_engines[@]} -gt 0 ] || abort "no engine to run on"

# The reference's engine id (LPF_CORE_IMPL_ID) for an engine of ours.
reference_id() {
    local n
    for n in $(engine_names "$1"); do
        case $n in pthread | hybrid | mpimsg | mpirma | ibverbs) echo "$n"; return ;; esac
    done
    echo mpimsg
}

# ---- the tests: the reference's CMake lists -----------------------------------
# group DIR-relative-path: core, bsplib, collectives or debug.
group_of() {
    case $1 in
        collectives/*) echo collectives ;;
        debug/*) echo debug ;;
        func_bsplib_*) echo bsplib ;;
        *) echo core ;;
    esac
}

# Lines "SOURCE ENGINE": ENGINE is "-" for a test of every engine, else the
# reference's engine id of an engine-specific test (NAME.ID.cpp named in the CMake
# file, literally or as NAME.${LPF_IMPL_ID}.cpp).
tests_of_dir() {
    local dir=$1 rel=$2 f name base id
    awk '/^ *set\( *[A-Za-z0-9_]*sources/ { on = 1; next } on && /\)/ { on = 0 } on && NF { print $1 }' \
        "$dir/CMakeLists.txt" | while read -r name; do echo "$rel$name -"; done
    for f in "$dir"/*.*.cpp; do
        [ -e "$f" ] || continue
        name=$(basename "$f")
        base=${name%%.*}
        id=${name#"$base".}
        id=${id%.cpp}
        if grep -qF -e "$name" -e "$base.\${LPF_IMPL_ID}.cpp" "$dir/CMakeLists.txt"; then
            echo "$rel$name $id"
        fi
    done
}
all_tests=$(
    tests_of_dir "$functional" ""
    tests_of_dir "$functional/debug" "debug/"
    tests_of_dir "$functional/collectives" "collectives/"
)

# meta SOURCE: "min max exit probe" from the test's comment, as the reference's CMake.
meta() {
    local text min max code probe
    text=$(cat "$functional/$1")
    min=$(grep -oE 'pre P >= [0-9]+' <<<"$text" | head -n 1 | grep -oE '[0-9]+$')
    max=$(grep -oE 'pre P <= [0-9]+' <<<"$text" | head -n 1 | grep -oE '[0-9]+$')
    code=$(grep -oE 'Exit code: [0-9]+' <<<"$text" | head -n 1 | grep -oE '[0-9]+$')
    probe=$(grep -oE -- '-probe [0-9]+.[0-9]+' <<<"$text" | head -n 1 | grep -oE '[0-9.]+$')
    min=${min:-1} max=${max:-5}
    [ "$min" -gt "$maxp" ] && min=$maxp
    [ "$max" -gt "$maxp" ] && max=$maxp
    echo "$min $max ${code:-0} ${probe:-0.0}"
}

# ---- build: one Makefile, objects shared between engines ----------------------
# An object is compiled once; a test that tests LPF_CORE_IMPL_ID (or is engine-
# specific) once per engine. An executable is linked once per library (the
# engine's cargo feature: "-" or mpi), with an engine of that library.
mk=$build/Makefile
plan=$build/plan            # lines: engine group test exe min max code probe
: >"$plan"
{
    echo "# generated by tests/reference/run.sh"
    echo "LPFCXX := $lpfcxx"
    echo "FLAGS := -llpf_debug -I$functional -O2 -Wno-unused-result"
    echo "all:"
} >"$mk"
declare -A rule_done=()
add_rule() { # TARGET DEPS... -- COMMAND
    local target=$1
    shift
    [ -n "${rule_done[$target]:-}" ] && return
    rule_done[$target]=1
    local deps=() cmd
    while [ "$1" != -- ]; do deps+=("$1"); shift; done
    shift
    cmd=$*
    printf '%s: %s\n\t@mkdir -p $(@D)\n\t%s\n' "$target" "${deps[*]}" "$cmd" >>"$mk"
    echo "all: $target" >>"$mk"
}
# The installed headers and wrapper, hashed: objects are rebuilt when they change,
# not each time scripts/install.sh copies them again.
stamp=$build/headers.stamp
hash=$(cd "$prefix" && find include bin/lpfcxx -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum)
[ "$(cat "$stamp" 2>/dev/null)" = "$hash" ] || echo "$hash" >"$stamp"

while read -r src only_id; do
    name=$(basename "$src" .cpp)
    name=${name%%.*}
    group=$(group_of "$src")
    if [ -n "$only" ] && ! [[ $name =~ $only ]]; then continue; fi
    if [ -n "${excluded[$name]:-}" ]; then
        echo "excluded: $name (${excluded[$name]})"
        skipped_names+=("$name")
        skipped=$((skipped + ${#run_engines[@]}))
        continue
    fi
    read -r min max code probe < <(meta "$src")
    per_engine=
    grep -q LPF_CORE_IMPL_ID "$functional/$src" && per_engine=yes
    for e in "${run_engines[@]}"; do
        id=$(reference_id "$e")
        if [ "$only_id" != - ]; then
            [[ " $(engine_names "$e") " == *" $only_id "* ]] || continue
        fi
        feature=$(engine_field "$e" 2)
        defs="-DLPF_CORE_IMPL_ID=$id -DLPF_CORE_MPI_USES_$id"
        if [ -n "$per_engine" ] || [ "$only_id" != - ]; then
            obj=$build/obj/$e/${src%.cpp}.o
            exe=$build/bin/$e/$name
            add_rule "$obj" "$functional/$src" "$stamp" -- "\$(LPFCXX) -engine $e \$(FLAGS) $defs -c $functional/$src -o \$@"
        else
            # Every engine's object is the same; compiled with an engine of the MPI
            # library when there is one, so that <mpi.h>'s path is there.
            obj=$build/obj/${src%.cpp}.o
            exe=$build/bin/lib-${feature/#-/default}/$name
            add_rule "$obj" "$functional/$src" "$stamp" -- "\$(LPFCXX) -engine $e \$(FLAGS) $defs -c $functional/$src -o \$@"
        fi
        add_rule "$exe" "$obj" -- "\$(LPFCXX) -engine $e \$(FLAGS) $obj -o \$@ -lgtest_main -lgtest -pthread"
        echo "$e $group $name $exe $min $max $code $probe" >>"$plan"
    done
done <<<"$all_tests"
[ -s "$plan" ] || abort "no test selected (LPF_REFERENCE_TESTS=$only)"

echo "=== building $(awk '{ print $3 }' "$plan" | sort -u | wc -l) tests with $lpfcxx (make -j$jobs -k; log: $build/build.log)"
build_start=$SECONDS
make -k -j"$jobs" -f "$mk" all >"$build/build.log" 2>&1
echo "built in $((SECONDS - build_start)) s"

# ---- runs ---------------------------------------------------------------------
results=$build/results
rm -rf "$results"
mkdir -p "$results"
export lpfrun results run_timeout
# run_test ENGINE NAME EXE MIN MAX CODE PROBE: the test's runs at P = MIN..MAX in turn,
# each status in results/ENGINE/NAME.pP.rc (its output in .log); as the reference's
# launcher, it stops at the first P whose status is not CODE.
run_test() {
    local e=$1 name=$2 exe=$3 min=$4 max=$5 code=$6 probe=$7 p out args rc
    mkdir -p "$results/$e"
    for ((p = min; p <= max; p++)); do
        out=$results/$e/$name.p$p
        args=(-engine "$e")
        [ "$probe" != 0.0 ] && args+=(-probe "$probe")
        args+=(-np "$p")
        echo "$lpfrun ${args[*]} $exe" >"$out.log"
        timeout -k 10 "$run_timeout" "$lpfrun" "${args[@]}" "$exe" </dev/null >>"$out.log" 2>&1
        rc=$?
        echo "$rc" >"$out.rc"
        [ "$rc" = "$code" ] || return 0
    done
}
export -f run_test

jobs_file=$build/jobs
: >"$jobs_file"
while read -r e group name exe min max code probe; do
    if [ -x "$exe" ]; then
        echo "$e $name $exe $min $max $code $probe" >>"$jobs_file"
    else
        echo "build" >"$results/$e.$name.nobuild"
    fi
done <"$plan"
echo "=== $(wc -l <"$jobs_file") tests on ${run_engines[*]} (P <= $maxp, $jobs at a time, ${run_timeout} s per run)"
run_start=$SECONDS
xargs -P "$jobs" -L 1 bash -c 'run_test "$@"' _ <"$jobs_file"
echo "ran in $((SECONDS - run_start)) s"

# ---- verdicts -----------------------------------------------------------------
declare -A pass=() fail=()
passed=0
failed=0
while read -r e group name exe min max code probe; do
    why=
    if [ -e "$results/$e.$name.nobuild" ]; then
        why="did not build (log: $build/build.log)"
    else
        for ((p = min; p <= max; p++)); do
            rc=$(cat "$results/$e/$name.p$p.rc" 2>/dev/null || echo none)
            if [ "$rc" != "$code" ]; then
                case $rc in
                    124 | 137) what="timed out after ${run_timeout} s" ;;
                    none) what="not run" ;;
                    *) what="exit status $rc, expected $code" ;;
                esac
                why="P=$p: $what (log: $results/$e/$name.p$p.log)"
                break
            fi
        done
    fi
    if [ -z "$why" ]; then
        pass[$e.$group]=$((${pass[$e.$group]:-0} + 1))
        passed=$((passed + 1))
    else
        fail[$e.$group]=$((${fail[$e.$group]:-0} + 1))
        failed=$((failed + 1))
        echo "FAIL $e $group $name: $why"
    fi
done <"$plan"

echo "=== passed/failed per engine and group"
groups=(core bsplib collectives debug)
printf '%-8s' engine
for g in "${groups[@]}"; do printf ' %13s' "$g"; done
printf ' %13s\n' all
for e in "${run_engines[@]}"; do
    printf '%-8s' "$e"
    ep=0 ef=0
    for g in "${groups[@]}"; do
        p=${pass[$e.$g]:-0} f=${fail[$e.$g]:-0}
        ep=$((ep + p)) ef=$((ef + f))
        printf ' %13s' "$p/$f"
    done
    printf ' %13s\n' "$ep/$ef"
done
if [ ${#skipped_names[@]} -gt 0 ]; then
    names=$(printf '%s, ' "${skipped_names[@]}")
    echo "$passed passed, $failed failed, $((skipped + $(printf '%s\n' "${skipped_names[@]}" | grep -c '^engine '))) skipped (${names%, })"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
