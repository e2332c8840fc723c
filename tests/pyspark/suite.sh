# The PySpark package's tests (sourced by tests/spark/run.sh, which defines pass/fail/built):
#   pyspark_suite JAR WORKDIR
# installs python/ with pip into a fresh virtual environment that sees the system's
# pyspark (pip install of the repository's python/ directory, the jars taken from JAR's
# directory; the package must pick JAR, the system Spark's Scala version),
# installs pytest if the system has none, then runs tests/pyspark under pytest, bounded
# by LPF_PYSPARK_TIMEOUT seconds (default 600). Every pytest case counts as "ok
# pyspark/NAME" or "FAIL pyspark/NAME".
#   pyspark_suite_on PYTHON JAR WORKDIR TAG [PYTEST ARGS...]
# the same with another Spark installation's own python (Spark 3.5's virtual environment,
# which has pytest: scripts/setup.sh): python/ installed with pip --target into WORKDIR
# (a virtual environment made from a virtual environment would see the base python's
# site-packages, not PYTHON's pyspark), the cases chosen by PYTEST ARGS (e.g. -k), each
# counting as "ok TAG/NAME" or "FAIL TAG/NAME". The caller sets SPARK_HOME to PYTHON's
# Spark, so that the package picks the jar of its Scala version.
pyspark_suite() {
    local jar=$1 work=$2 root here venv py
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
    pytest_cases "$py" "$work" pyspark
}

pyspark_suite_on() {
    local py=$1 jar=$2 work=$3 tag=$4 root here
    shift 4
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    root=$(cd "$here/../.." && pwd)
    rm -rf "$work"
    mkdir -p "$work"
    if ! "$py" -c 'import pytest' >"$work/pytest.log" 2>&1; then
        fail "$tag/pytest-installed ($py: run scripts/setup.sh)" "$work/pytest.log"
        return
    fi
    if LPF_SPARK_JAR_DIR=$(dirname "$jar") "$py" -m pip install -q --no-cache-dir --target "$work/site" "$root/python" \
        >"$work/pip.log" 2>&1; then
        built "$tag/pip-install-python-package"
    else
        fail "$tag/pip-install-python-package" "$work/pip.log"
        return
    fi
    PYTHONPATH=$work/site pytest_cases "$py" "$work" "$tag" "$@"
}

# pytest_cases PYTHON WORKDIR TAG [PYTEST ARGS...]: tests/pyspark under PYTHON's pytest,
# run from WORKDIR (so that `import lpf_spark` is the installed package, not python/);
# every case counts as "ok TAG/NAME" or "FAIL TAG/NAME".
pytest_cases() {
    local py=$1 work=$2 tag=$3 here rc
    shift 3
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    (cd "$work" && timeout -k 10 "${LPF_PYSPARK_TIMEOUT:-600}" "$py" -m pytest -v -p no:cacheprovider \
        --rootdir "$here" "$here" "$@") >"$work/pytest.log" 2>&1
    rc=$?
    local line name verdict seen=0
    while IFS= read -r line; do
        name=${line%% *}
        name=${name##*::}
        verdict=${line##* }
        seen=$((seen + 1))
        case $verdict in
            PASSED) pass "$tag/$name" ;;
            *) fail "$tag/$name" ;;
        esac
    done < <(sed -n 's/^\(\S*::\S*\) \(PASSED\|FAILED\|ERROR\).*/\1 \2/p' "$work/pytest.log")
    if [ "$rc" != 0 ] || [ "$seen" = 0 ]; then
        echo "    pytest exited with $rc; log $work/pytest.log"
        grep -E '^(E |FAILED|ERROR)' "$work/pytest.log" | head -n 30 | cut -c1-400 | sed 's/^/    /'
        [ "$rc" = 1 ] && [ "$seen" -gt 0 ] || fail "$tag/pytest-finished" "$work/pytest.log"
    fi
}
