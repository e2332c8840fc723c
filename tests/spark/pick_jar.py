"""Run by tests/spark/run.sh with a Spark installation's own python and the lpf-spark
package on PYTHONPATH: the package must pick the jar of that Spark's Scala version
(argv[1]) by itself, and a DataFrame PageRank through configure() must work with it.
Prints "picked <jar>" and "ranks <n> <sum>"; exits non-zero on any mismatch."""
import os
import sys

from pyspark.sql import SparkSession

import lpf_spark

want = sys.argv[1]
picked = lpf_spark.jar_path()
print("picked", picked, "scala", lpf_spark.scala_version(), flush=True)
assert os.path.basename(picked).startswith(f"lpf-spark_{want}-"), (picked, want)
spark = lpf_spark.configure(SparkSession.builder.master("local[2]").appName("pick-jar")
                            .config("spark.ui.enabled", "false")
                            .config("spark.ui.showConsoleProgress", "false")).getOrCreate()
try:
    edges = spark.createDataFrame([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")], ["src", "dst"])
    rows = lpf_spark.LpfGraph(edges).pageRank(alpha=0.85, tol=1e-9, maxIter=100).collect()
    total = sum(r["pagerank"] for r in rows)
    print("ranks", len(rows), total, flush=True)
    assert sorted(r["id"] for r in rows) == ["a", "b", "c", "d"], rows
    assert abs(total - 1.0) < 1e-9, total
finally:
    spark.stop()
