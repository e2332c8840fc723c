#!/usr/bin/env bash
# The one version of the Spark bridge's artifacts (the jars lpf-spark_<scala>-<version>.jar
# and the Python package lpf-spark): python/pyproject.toml's `version`. Prints it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$root/python/pyproject.toml")
[ -n "$version" ] || { echo "spark-version: no version line in $root/python/pyproject.toml" >&2; exit 1; }
echo "$version"
