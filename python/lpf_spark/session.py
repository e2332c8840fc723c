"""Where the bridge's jar is, and a SparkSession builder that uses it."""
import os
from typing import Sequence

from pyspark.sql import SparkSession

JAR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars", "lpf-spark.jar")


def jar_path() -> str:
    """The bridge's jar carried by this package (classes + native library), for
    ``spark.jars`` or ``spark-submit --jars``."""
    if not os.path.isfile(JAR):
        raise FileNotFoundError(f"the lpf-spark jar is missing from the package ({JAR}): reinstall lpf-spark")
    return JAR


def configure(builder: SparkSession.Builder, jars: Sequence[str] = (),
              barrier_sync_timeout: str = "300s") -> SparkSession.Builder:
    """Sets what an LPF job needs on a SparkSession builder that has not started its JVM
    yet: ``spark.jars`` = this package's jar (plus ``jars``; the driver and every
    executor get them) and ``spark.barrier.sync.timeout`` (a bound on how long the
    tasks of a job wait for each other; the bridge refuses to run without one).
    Returns the builder. A session whose JVM already runs without the jar cannot load
    it: pass ``--jars`` with :func:`jar_path` to spark-submit or pyspark instead.
    """
    return (builder.config("spark.jars", ",".join([jar_path(), *jars]))
            .config("spark.barrier.sync.timeout", barrier_sync_timeout))
