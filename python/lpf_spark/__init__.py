"""LPF on Spark from PySpark: native SPMD algorithms run inside the executors' JVMs.

>>> from pyspark.sql import SparkSession
>>> from lpf_spark import LpfGraph, configure
>>> spark = configure(SparkSession.builder.master("local[2]")).getOrCreate()
>>> edges = spark.createDataFrame([("a", "b"), ("b", "c"), ("c", "a")], ["src", "dst"])
>>> ranks = LpfGraph(edges).pageRank(alpha=0.85, tol=1e-9, maxIter=100)   # DataFrame (id, pagerank)

The work runs in the JVM and native code: executors need no Python beyond what
PySpark itself needs. Failures raise :class:`LpfError` (pid, host, phase, message); bad
arguments :class:`LpfValueError` (an LpfError that is also a ValueError).

GraphFrames' API: ``from lpf_spark.graphframes import GraphFrame`` (docs/graphframes.md).
"""
from importlib import metadata as _metadata

from .errors import LpfError, LpfValueError
from .graph import GraphRun, LpfGraph, PageRankRun
from .session import configure, jar_path, scala_version

__all__ = ["GraphRun", "LpfGraph", "PageRankRun", "LpfError", "LpfValueError", "configure", "jar_path", "scala_version"]
try:  # the installed distribution's version: pyproject.toml's, also the jars'
    __version__ = _metadata.version("lpf-spark")
except _metadata.PackageNotFoundError:  # imported from the source tree, not installed
    __version__ = "unknown"
