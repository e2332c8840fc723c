# The PySpark package's tests (sourced by tests/spark/run.sh, which defines pass/fail/built):
#   pyspark_suite JAR WORKDIR
# installs python/ with pip into a fresh virtual environment that sees the system's
# pyspark (pip install of the repository's python/ directory, the jars taken from JAR's
# directory; the package must pick JAR, the system Spark's Scala version),
# installs pytest if the system has none, then runs tests/pyspark under pytest, bounded
# by LPF_PYSPARK_TIMEOUT seconds (default 600). Every pytest case counts as "ok
# pyspark/NAME" or "FAIL pyspark/NAME".
pyspark_suite() {
    local jar=$1 work=$2 root here venv py rc
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    root=$(cd "$here/../.." && pwd)
    venv=$work/venv
    rm -rf "$work"
    mkdir -p "$work"
    if ! python3 -m venv --system-site-packages "$venv" >"$work/venv.log" 2>&1; then
        fail pyspark/virtual-environment "$work/venv.log"
        return
    fi
    py=$venv/bin/python
    # What a user does: pip install ./python (here with the jars this run built).
    if LPF_SPARK_JAR_DIR=$(dirname "$jar") "$py" -m pip install --no-cache-dir "$root/python" >"$work/pip.log" 2>&1; then
        built pyspark/pip-install-python-package
    else
        fail pyspark/pip-install-python-package "$work/pip.log"
        return
    fi
    if "$py" -c 'import lpf_spark, sys, filecmp; sys.exit(0 if filecmp.cmp(lpf_spark.jar_path(), sys.argv[1], shallow=False) else 1)' \
        "$jar" >"$work/jar.log" 2>&1; then
        pass pyspark/package-carries-and-picks-the-jar
    else
        fail pyspark/package-carries-and-picks-the-jar "$work/jar.log"
    fi
    if ! "$py" -c 'import pytest' 2>/dev/null; then
        "$py" -m pip install -q pytest >"$work/pytest-install.log" 2>&1 || {
            fail pyspark/pytest-installed "$work/pytest-install.log"
            return
        }
    fi
    # From the work dir, so that `import lpf_spark` is the installed package, not python/.
    (cd "$work" && timeout -k 10 "${LPF_PYSPARK_TIMEOUT:-600}" "$py" -m pytest -v -p no:cacheprovider \
        --rootdir "$here" "$here") >"$work/pytest.log" 2>&1
    rc=$?
    local line name verdict seen=0
    while IFS= read -r line; do
        name=${line%% *}
        name=${name##*::}
        verdict=${line##* }
        seen=$((seen + 1))
        case $verdict in
            PASSED) pass "pyspark/$name" ;;
            *) fail "pyspark/$name" ;;
        esac
    done < <(sed -n 's/^\(\S*::\S*\) \(PASSED\|FAILED\|ERROR\).*/\1 \2/p' "$work/pytest.log")
    if [ "$rc" != 0 ] || [ "$seen" = 0 ]; then
        echo "    pytest exited with $rc; log $work/pytest.log"
        grep -E '^(E |FAILED|ERROR)' "$work/pytest.log" | head -n 30 | cut -c1-400 | sed 's/^/    /'
        [ "$rc" = 1 ] && [ "$seen" -gt 0 ] || fail pyspark/pytest-finished "$work/pytest.log"
    fi
}
