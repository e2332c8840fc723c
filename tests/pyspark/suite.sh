# The PySpark package's tests (sourced by tests/spark/run.sh, which defines pass/fail/built):
#   pyspark_suite JAR WORKDIR
# builds the wheel of python/ (pip wheel, the jars taken from JAR's directory) and installs
# it into a fresh virtual environment that sees the system's pyspark, with no Rust
# toolchain on PATH and javac/scalac shadowed by stubs that record a call; runs
# tests/pyspark/wheel_example.py (a GraphFrame on local-cluster[2,1,1024]) the same way
# (neither may call a compiler); checks that the package picks JAR (the system Spark's
# Scala version); installs pytest and numpy if the system has none, then runs
# tests/pyspark under pytest, bounded
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
    # The package as it is shipped: a wheel built from ./python (pip wheel, here with the jars
    # this run built; the jars carry the native library) ...
    local wheel
    if LPF_SPARK_JAR_DIR=$(dirname "$jar") "$py" -m pip wheel --no-deps --no-cache-dir -w "$work/wheel" "$root/python" \
        >"$work/wheel.log" 2>&1 && wheel=$(ls "$work"/wheel/lpf_spark-*.whl 2>>"$work/wheel.log"); then
        built pyspark/pip-wheel-python-package
    else
        fail pyspark/pip-wheel-python-package "$work/wheel.log"
        return
    fi
    # ... installed and used where no Rust toolchain and no Java compiler are: PATH without
    # cargo and rustc (checked), javac and scalac shadowed by stubs that record a call.
    local bare=$work/bare-bin
    mkdir -p "$bare"
    for tool in javac scalac; do
        printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$tool" "$work/compilers-called" >"$bare/$tool"
        chmod +x "$bare/$tool"
    done
    local user_env=(env "PATH=$bare:$venv/bin:/usr/local/bin:/usr/bin:/bin" "CARGO_HOME=$work/no-cargo"
        "RUSTUP_HOME=$work/no-rustup")
    if "${user_env[@]}" sh -c 'command -v cargo || command -v rustc' >"$work/toolchain.log" 2>&1; then
        fail "pyspark/no-rust-toolchain-on-the-users-path (found: $(tr '\n' ' ' <"$work/toolchain.log"))"
        return
    fi
    if "${user_env[@]}" "$py" -m pip install --no-cache-dir --no-deps "$wheel" >"$work/pip.log" 2>&1; then
        pass pyspark/pip-install-the-wheel-without-a-rust-toolchain
    else
        fail pyspark/pip-install-the-wheel-without-a-rust-toolchain "$work/pip.log"
        return
    fi
    if (cd "$work" && "${user_env[@]}" timeout -k 10 "${LPF_PYSPARK_TIMEOUT:-600}" "$py" "$here/wheel_example.py" "$venv") \
        >"$work/wheel-example.log" 2>&1 && [ ! -e "$work/compilers-called" ]; then
        pass pyspark/wheel-runs-a-graphframe-example-without-a-rust-toolchain
    else
        [ -e "$work/compilers-called" ] && sed 's/^/    called: /' "$work/compilers-called"
        fail pyspark/wheel-runs-a-graphframe-example-without-a-rust-toolchain "$work/wheel-example.log"
    fi
    if "$py" -c 'import lpf_spark, sys, filecmp; sys.exit(0 if filecmp.cmp(lpf_spark.jar_path(), sys.argv[1], shallow=False) else 1)' \
        "$jar" >"$work/jar.log" 2>&1; then
        pass pyspark/package-carries-and-picks-the-jar
    else
        fail pyspark/package-carries-and-picks-the-jar "$work/jar.log"
    fi
    # pytest, and numpy for pyspark.ml's vectors (parallelPersonalizedPageRank's column).
    local module
    for module in pytest numpy; do
        if ! "$py" -c "import $module" 2>/dev/null; then
            "$py" -m pip install -q "$module" >"$work/$module-install.log" 2>&1 || {
                fail "pyspark/$module-installed" "$work/$module-install.log"
                return
            }
        fi
    done
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
