"""A GraphFrame example run with the installed wheel (tests/pyspark/suite.sh runs it with no
Rust toolchain on PATH): python wheel_example.py VENV

Checks that lpf_spark is the one installed in VENV (not the repository's python/), that its
jar carries the native library, and that a GraphFrame's algorithms run on
local-cluster[2,1,1024] with the results of GraphFrames' user guide (the friends graph)."""
import os
import sys
import zipfile

from pyspark.sql import SparkSession

import lpf_spark
from lpf_spark.graphframes import GraphFrame

venv = os.path.realpath(sys.argv[1])
where = os.path.realpath(lpf_spark.__file__)
assert where.startswith(venv + os.sep), f"lpf_spark imported from {where}, not from the wheel installed in {venv}"
jar = lpf_spark.jar_path()
assert "native/linux-x86_64/liblpf_jni.so" in zipfile.ZipFile(jar).namelist(), jar
print("package", where, "version", lpf_spark.__version__, "jar", os.path.basename(jar))

builder = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("lpf-wheel-example")
           .config("spark.ui.enabled", "false").config("spark.executor.memory", "512m"))
spark = lpf_spark.configure(builder, barrier_sync_timeout="120s").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
v = spark.createDataFrame([("a", "Alice", 34), ("b", "Bob", 36), ("c", "Charlie", 30), ("d", "David", 29),
                           ("e", "Esther", 32), ("f", "Fanny", 36), ("g", "Gabby", 60)], ["id", "name", "age"])
e = spark.createDataFrame([("a", "b", "friend"), ("b", "c", "follow"), ("c", "b", "follow"), ("f", "c", "follow"),
                           ("e", "f", "follow"), ("e", "d", "friend"), ("d", "a", "friend"), ("a", "e", "friend")],
                          ["src", "dst", "relationship"])
g = GraphFrame(v, e)
components = {r.name: r.component for r in g.connectedComponents(useLabelsAsComponents=True).collect()}
print("components", sorted(components.items()))
assert components == {"Alice": "a", "Bob": "a", "Charlie": "a", "David": "a", "Esther": "a", "Fanny": "a",
                      "Gabby": "g"}, components
assert g.lpfGraph.last_run is not None and g.lpfGraph.last_run.processes == 2, g.lpfGraph.last_run
in_degrees = {r.id: r.inDegree for r in g.inDegrees.collect()}
assert in_degrees == {"a": 1, "b": 2, "c": 2, "d": 1, "e": 1, "f": 1}, in_degrees
spark.stop()
print("graphframe example ok")
