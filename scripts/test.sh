#!/usr/bin/env bash
# Full test run: set-up, the Rust test suites of the workspace, then the script suites
# (C ABI harness, multi-host namespaces, Spark bridge, ...), each of which ends with
# a line "N passed, M failed". The last line here is the combined count; the exit
# status is non-zero if anything failed.
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

summary=()
passed=0
failed=0

# count NAME PASSED FAILED: adds a suite's counts to the totals.
count() {
    summary+=("$1: $2 passed, $3 failed")
    passed=$((passed + $2))
    failed=$((failed + $3))
}

echo "=== cargo test --workspace --release"
cargo test --workspace --release --no-fail-fast 2>&1 | tee "$work/cargo.log"
cargo_rc=${PIPESTATUS[0]}
read -r cargo_passed cargo_failed < <(
    strip_ansi <"$work/cargo.log" |
        sed -nE 's/^test result: [A-Za-z]+\. ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/p' |
        awk '{ p += $1; f += $2 } END { print p + 0, f + 0 }'
)
if [ "$cargo_rc" != 0 ] && [ "$cargo_failed" = 0 ]; then
    echo "cargo test exited with status $cargo_rc without a failing test (build error?)"
    cargo_failed=1
fi
count cargo "$cargo_passed" "$cargo_failed"

# suite NAME SCRIPT: runs a script suite and counts what its last line says.
suite() {
    local name=$1 script=$2 log="$work/$1.log" last rc
    echo "=== $script"
    bash "$script" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    last=$(strip_ansi <"$log" | tail -n 1)
    if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        local p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
        if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
            echo "$script exited with status $rc"
            f=1
        fi
        count "$name" "$p" "$f"
    else
        echo "$script did not end with a summary line (exit status $rc)"
        count "$name" 0 1
    fi
}

suite "C ABI" tests/c/run.sh
suite "multi-host (netns)" tests/netns/run.sh
suite "MPI engines" tests/mpi/run.sh
suite "Spark bridge" tests/spark/run.sh

echo "=== summary"
strip_ansi <"$work/cargo.log" | grep -E '^test result: ' | sed 's/^/cargo: /'
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
