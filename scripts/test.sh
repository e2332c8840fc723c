#!/usr/bin/env bash
# Full test run: set-up, the Rust test suites of the workspace, then the script suites
# (C ABI harness, multi-host namespaces, Spark bridge, ...), each of which ends with
# a line "N passed, M failed" (or "N passed, M failed, K skipped (NAME, ...)"). The
# last line here is the combined count; the exit status is non-zero if anything failed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

strip_ansi() { sed -E 's/\x1b\[[0-9;]*[A-Za-z]//g'; }

echo "=== setup"
if ! bash scripts/setup.sh; then
    echo "setup failed"
    echo "0 passed, 1 failed"
    exit 1
fi
if [ -d "$HOME/.cargo/bin" ]; then
    case ":$PATH:" in
        *":$HOME/.cargo/bin:"*) ;;
        *) export PATH="$HOME/.cargo/bin:$PATH" ;;
    esac
fi

setup_seconds=$SECONDS
summary=()
passed=0
failed=0

skipped=0

# Each summary line says how long its part took (from the previous part's end), so
# that the suite's time can be followed part by part.
part_start=$SECONDS

# count NAME PASSED FAILED [SKIPPED [WHY]]: adds a suite's counts to the totals.
count() {
    local line="$1: $2 passed, $3 failed" skips=${4:-0}
    skips=${skips%% *}
    if [ "$skips" != 0 ]; then
        line+=", $4 skipped"
        skipped=$((skipped + skips))
    fi
    summary+=("$line [$((SECONDS - part_start)) s]")
    part_start=$SECONDS
    passed=$((passed + $2))
    failed=$((failed + $3))
}

# The Rust tests run under cargo nextest: each test in its own process with a time
# bound (.config/nextest.toml), so a deadlock is a failed test, not a hung suite. The
# whole step has a bound too (the build included), as do the doc tests.
echo "=== cargo nextest run --workspace --release --features graphblas/full-sweep"
timeout -k 60 "${LPF_CARGO_TIMEOUT:-3000}" \
    cargo nextest run --workspace --release --no-fail-fast --features graphblas/full-sweep 2>&1 | tee "$work/cargo.log"
cargo_rc=${PIPESTATUS[0]}
# "Summary [ 45s] 307 tests run: 305 passed (1 slow), 1 failed, 1 timed out, 2 skipped"
cargo_line=$(strip_ansi <"$work/cargo.log" | grep -E '^ *Summary \[' | tail -n 1)
nx() { sed -nE "s/.* ([0-9]+) $1.*/\1/p" <<<"$cargo_line" | head -n 1; }
cargo_passed=$(nx passed); cargo_passed=${cargo_passed:-0}
cargo_failed=$(nx failed); cargo_timed_out=$(nx 'timed out')
cargo_failed=$(( ${cargo_failed:-0} + ${cargo_timed_out:-0} ))
cargo_skipped=$(nx skipped); cargo_skipped=${cargo_skipped:-0}
if [ "$cargo_rc" = 124 ] || [ "$cargo_rc" = 137 ]; then
    echo "cargo nextest did not finish within ${LPF_CARGO_TIMEOUT:-3000} s"
    cargo_failed=$((cargo_failed + 1))
elif [ "$cargo_rc" != 0 ] && [ "$cargo_failed" = 0 ]; then
    echo "cargo nextest exited with status $cargo_rc without a failing test (build error?)"
    cargo_failed=1
fi
count cargo "$cargo_passed" "$cargo_failed" "$cargo_skipped (#[ignore]d: child-process entry points other tests start)"

# Every unsafe block states the invariant that makes it sound in a "// SAFETY:" comment;
# clippy denies a block without one. All features: the MPI and ibverbs code of every
# crate is checked too (set-up installs their libraries).
echo "=== cargo clippy --release --workspace --all-targets --all-features (undocumented unsafe blocks)"
timeout -k 30 "${LPF_CLIPPY_TIMEOUT:-1800}" \
    cargo clippy --release --workspace --all-targets --all-features -- -A clippy::all -D clippy::undocumented_unsafe_blocks 2>&1 |
    tee "$work/clippy.log"
if [ "${PIPESTATUS[0]}" = 0 ]; then
    count "unsafe documented (clippy)" 1 0
else
    echo "clippy found unsafe blocks without a SAFETY comment (or did not finish): see above"
    count "unsafe documented (clippy)" 0 1
fi

echo "=== cargo test --doc --workspace --release"
timeout -k 30 600 cargo test --doc --workspace --release 2>&1 | tee "$work/doc.log"
doc_rc=${PIPESTATUS[0]}
read -r doc_passed doc_failed < <(
    strip_ansi <"$work/doc.log" |
        sed -nE 's/^test result: [A-Za-z]+\. ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/p' |
        awk '{ p += $1; f += $2 } END { print p + 0, f + 0 }'
)
if [ "$doc_rc" != 0 ] && [ "$doc_failed" = 0 ]; then
    echo "cargo test --doc exited with status $doc_rc without a failing test"
    doc_failed=1
fi
count "doc tests" "$doc_passed" "$doc_failed"

# suite NAME SCRIPT [ARG...]: runs a script suite and counts what its last line says.
suite() {
    local name=$1 script=$2 log="$work/$1.log" last rc
    shift 2
    echo "=== $script $*"
    bash "$script" "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    last=$(strip_ansi <"$log" | tail -n 1)
    if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped\ (\(.*\)))?$ ]]; then
        local p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} k=${BASH_REMATCH[4]:-0} names=${BASH_REMATCH[5]:-}
        if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
            echo "$script exited with status $rc"
            f=1
        fi
        count "$name" "$p" "$f" "$k $names"
    else
        echo "$script did not end with a summary line (exit status $rc)"
        count "$name" 0 1
    fi
}

suite "C ABI" tests/c/run.sh
suite "multi-host (netns)" tests/netns/run.sh
suite "MPI engines" tests/mpi/run.sh
suite "Spark bridge" tests/spark/run.sh
# The reference LPF's own functional tests need its source: LPF_REFERENCE_DIR, a
# checkout of it (github.com/Algebraic-Programming/LPF).
if [ -n "${LPF_REFERENCE_DIR:-}" ]; then
    suite "reference tests" tests/reference/run.sh "$LPF_REFERENCE_DIR"
else
    echo "=== tests/reference/run.sh: skipped (LPF_REFERENCE_DIR, a checkout of the reference LPF, is not set)"
    count "reference tests" 0 0 "1 (reference tests: LPF_REFERENCE_DIR not set)"
fi

echo "=== summary"
echo "set-up: [$setup_seconds s]"
printf '%s\n' "${summary[@]}"
if [ "$skipped" != 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
