#!/usr/bin/env bash
# Full test run: set-up, the Rust test suites of the workspace, the C ABI
# harness (tests/c/run.sh), then the Spark bridge tests (tests/spark/run.sh,
# real spark-submit runs). The last line is the combined count,
# "N passed, M failed"; the exit status is non-zero if anything failed.
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
cargo_summary=$(strip_ansi <"$work/cargo.log" | grep -E '^test result: ')

echo "=== tests/c/run.sh"
bash tests/c/run.sh 2>&1 | tee "$work/c.log"
c_rc=${PIPESTATUS[0]}
c_last=$(strip_ansi <"$work/c.log" | tail -n 1)
if [[ $c_last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    c_passed=${BASH_REMATCH[1]}
    c_failed=${BASH_REMATCH[2]}
else
    echo "tests/c/run.sh did not end with a summary line"
    c_passed=0
    c_failed=1
fi
if [ "$c_rc" != 0 ] && [ "$c_failed" = 0 ]; then
    echo "tests/c/run.sh exited with status $c_rc"
    c_failed=1
fi

echo "=== tests/spark/run.sh"
bash tests/spark/run.sh 2>&1 | tee "$work/spark.log"
spark_rc=${PIPESTATUS[0]}
spark_last=$(strip_ansi <"$work/spark.log" | tail -n 1)
if [[ $spark_last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    spark_passed=${BASH_REMATCH[1]}
    spark_failed=${BASH_REMATCH[2]}
else
    echo "tests/spark/run.sh did not end with a summary line"
    spark_passed=0
    spark_failed=1
fi
if [ "$spark_rc" != 0 ] && [ "$spark_failed" = 0 ]; then
    echo "tests/spark/run.sh exited with status $spark_rc"
    spark_failed=1
fi

echo "=== summary"
if [ -n "$cargo_summary" ]; then
    echo "$cargo_summary" | sed 's/^/cargo: /'
fi
echo "cargo: $cargo_passed passed, $cargo_failed failed"
echo "C ABI: $c_passed passed, $c_failed failed"
echo "Spark bridge: $spark_passed passed, $spark_failed failed"
passed=$((cargo_passed + c_passed + spark_passed))
failed=$((cargo_failed + c_failed + spark_failed))
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
