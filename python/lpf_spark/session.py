"""Where the bridge's jars are, which one the running Spark needs, and a SparkSession
builder that uses it."""
import glob
import os
import re
from typing import Optional, Sequence

from pyspark.sql import SparkSession

JARS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars")
SCALA_VERSIONS = ("2.12", "2.13")


def _spark_home() -> str:
    """The Spark installation a session started from this Python runs: SPARK_HOME, else
    the pyspark package's own directory (pip's pyspark), as pyspark's launcher does."""
    import pyspark

    return os.environ.get("SPARK_HOME") or os.path.dirname(os.path.abspath(pyspark.__file__))


def scala_version(spark_home: Optional[str] = None) -> str:
    """The Scala version ("2.12" or "2.13") of the Spark installation at ``spark_home``
    (default: the one this Python starts), read from its ``jars/scala-library-*.jar``.
    Spark 3.5 from PyPI is built with 2.12, Spark 4 with 2.13."""
    home = spark_home or _spark_home()
    found = glob.glob(os.path.join(home, "jars", "scala-library-*.jar"))
    versions = sorted({m.group(1) for f in found
                       for m in [re.match(r"scala-library-(\d+\.\d+)\.", os.path.basename(f))] if m})
    if len(versions) != 1:
        raise FileNotFoundError(
            f"lpf-spark: cannot tell the Scala version of the Spark installation {home}: "
            f"expected one jars/scala-library-<version>.jar, found {found or 'none'}; "
            "pass scala='2.12' or '2.13' to jar_path()")
    return versions[0]


def jar_path(scala: Optional[str] = None) -> str:
    """The bridge's jar carried by this package (classes + native library) for the Scala
    version ``scala`` ("2.12": Spark 3.5; "2.13": Spark 4), by default the one of the
    Spark installation this Python starts (:func:`scala_version`); for ``spark.jars`` or
    ``spark-submit --jars``."""
    scala = scala or scala_version()
    if scala not in SCALA_VERSIONS:
        raise ValueError(f"lpf-spark: no jar for Scala {scala}; this package carries {', '.join(SCALA_VERSIONS)}")
    found = glob.glob(os.path.join(JARS_DIR, f"lpf-spark_{scala}-*.jar"))
    jars = [f for f in found if not f.endswith("-sources.jar")]
    if len(jars) != 1:
        raise FileNotFoundError(
            f"lpf-spark: expected one lpf-spark_{scala}-<version>.jar in the package ({JARS_DIR}), "
            f"found {jars or 'none'}: reinstall lpf-spark")
    return jars[0]


def configure(builder: SparkSession.Builder, jars: Sequence[str] = (),
              barrier_sync_timeout: str = "300s") -> SparkSession.Builder:
    """Sets what an LPF job needs on a SparkSession builder that has not started its JVM
    yet: ``spark.jars`` = this package's jar for the Spark installation this Python
    starts (:func:`jar_path`; plus ``jars``; the driver and every executor get them) and
    ``spark.barrier.sync.timeout`` (a bound on how long the tasks of a job wait for each
    other; the bridge refuses to run without one). Returns the builder. A session whose
    JVM already runs without the jar cannot load it: pass ``--jars`` with
    :func:`jar_path` to spark-submit or pyspark instead.
    """
    return (builder.config("spark.jars", ",".join([jar_path(), *jars]))
            .config("spark.barrier.sync.timeout", barrier_sync_timeout))
