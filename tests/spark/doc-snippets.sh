# The snippets of README.md, docs/spark.md and docs/graphframes.md, run as they are written (sourced by
# tests/spark/run.sh, which defines pass/fail/built, SPARK_HOME, $log4j and $limit):
#   doc_snippets_suite WORKDIR JAR PYTHON
# tests/spark/doc_snippets.py takes the fenced blocks out of the documents (so a doc edit
# is what gets tested); then every ```scala block runs in one spark-shell on
# local-cluster[2,1,1024] with JAR (each block wrapped in { } so that their names do not
# meet, followed by a marker line that only a block run to its end prints), every
# ```python block in its own PYTHON process (one that has the lpf_spark package
# installed), every ```rust block compiled with rustc against the lpf crate and run,
# and every ```sh run block with bash in WORKDIR (which sees the repository's build/ and
# native/, and holds the blocks marked file=NAME). Each counts as "ok doc/DOC:LINE" or
# "FAIL doc/DOC:LINE".
doc_snippets_suite() {
    local work=$1 jar=$2 py=$3 here root n kind file where log shell_script rlib
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    root=$(cd "$here/../.." && pwd)
    rm -rf "$work"
    mkdir -p "$work"
    if ! python3 "$here/doc_snippets.py" "$work" "$root/README.md" "$root/docs/spark.md" "$root/docs/graphframes.md" >"$work/manifest" 2>"$work/extract.log"; then
        fail doc/extract-snippets "$work/extract.log"
        return
    fi
    ln -s "$root/build" "$work/build"
    ln -s "$root/native" "$work/native"
    # A runtime error or a compile error in the shell's output (the shell itself goes on).
    shell_failed() { grep -qE '(^|[[:space:]])error:|^[a-z][A-Za-z0-9_.$]*(Exception|Error)(:|$)' "$1"; }

    # All Scala blocks in one shell.
    shell_script=$work/all-scala.scala
    : >"$shell_script"
    while read -r n kind file where; do
        [ "$kind" = scala ] || continue
        { echo "{"; cat "$work/$file"; echo "println(\"SNIPPET ok $n\")"; echo "}"; } >>"$shell_script"
    done <"$work/manifest"
    echo 'System.exit(0)' >>"$shell_script"
    if grep -q ' scala ' "$work/manifest"; then
        # One shell runs them all: twice the time of one submission.
        (cd "$work" && timeout -k 10 $((2 * limit)) "$SPARK_HOME/bin/spark-shell" --master "local-cluster[2,1,1024]" \
            --jars "$jar" --conf spark.ui.enabled=false --conf spark.ui.showConsoleProgress=false \
            --conf spark.barrier.sync.timeout=120s \
            --driver-java-options "$log4j" --conf "spark.executor.extraJavaOptions=$log4j" \
            -i "$shell_script" </dev/null) >"$work/scala.log" 2>&1
    fi

    if grep -q ' rust ' "$work/manifest"; then
        [ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
        rlib=${CARGO_TARGET_DIR:-$root/target}/release
        cargo build --release -j "${CARGO_JOBS:-2}" -p lpf --lib >"$work/cargo.log" 2>&1 ||
            fail doc/build-lpf-crate "$work/cargo.log"
    fi

    while read -r n kind file where; do
        log=$work/$n.log
        case $kind in
            scala)
                if grep -qx "SNIPPET ok $n" "$work/scala.log"; then
                    pass "doc/$where"
                else
                    fail "doc/$where (spark-shell log $work/scala.log)"
                    grep -nE '(^|[[:space:]])error:|(Exception|Error)(:|$)' "$work/scala.log" | head -n 8 | cut -c1-300 | sed 's/^/    /'
                fi
                ;;
            python)
                if (cd "$work" && timeout -k 10 "$limit" "$py" "$file") >"$log" 2>&1; then
                    pass "doc/$where"
                else
                    fail "doc/$where" "$log"
                fi
                ;;
            rust)
                # The block's `use` lines stay at the top; the rest is main's body.
                { grep -E '^use ' "$work/$file"; echo 'fn main() {'; grep -vE '^use ' "$work/$file"; echo '}'; } >"$work/$n-main.rs"
                if rustc --edition 2021 -O "$work/$n-main.rs" -o "$work/$n-bin" --extern "lpf=$rlib/liblpf.rlib" \
                    -L "dependency=$rlib/deps" >"$log" 2>&1 && timeout -k 5 120 "$work/$n-bin" >>"$log" 2>&1; then
                    pass "doc/$where"
                else
                    fail "doc/$where" "$log"
                fi
                ;;
            sh)
                if (cd "$work" && PATH="$SPARK_HOME/bin:$PATH" timeout -k 10 "$limit" bash -e "$file" </dev/null) >"$log" 2>&1 &&
                    ! shell_failed "$log"; then
                    pass "doc/$where"
                else
                    fail "doc/$where" "$log"
                fi
                ;;
        esac
    done <"$work/manifest"
}
