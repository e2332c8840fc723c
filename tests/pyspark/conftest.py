"""pytest fixtures for the PySpark package (python/, installed with pip by run.sh).

The Spark session runs on LPF_PYSPARK_MASTER (default local-cluster[2,1,1024]: two
executor JVMs); every test is bounded by LPF_PYSPARK_TEST_TIMEOUT seconds (default 180):
a test still running then fails with TimeoutError and its Spark jobs are cancelled.
"""
import os
import signal
from typing import Iterator

import pytest
from pyspark.sql import SparkSession

import lpf_spark

MASTER = os.environ.get("LPF_PYSPARK_MASTER", "local-cluster[2,1,1024]")
TEST_TIMEOUT = int(os.environ.get("LPF_PYSPARK_TEST_TIMEOUT", "180"))


class TestTimedOut(Exception):
    pass


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    builder = (SparkSession.builder.master(MASTER).appName("lpf-pyspark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.task.maxFailures", "1")
               .config("spark.stage.maxConsecutiveAttempts", "1")
               .config("spark.executor.memory", "512m"))
    session = lpf_spark.configure(builder, barrier_sync_timeout="120s").getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def bounded(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails the test after TEST_TIMEOUT seconds instead of letting it hang."""
    def expired(signum: int, frame: object) -> None:
        raise TestTimedOut(f"{request.node.name} still running after {TEST_TIMEOUT} s (a hang)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_TIMEOUT)
    try:
        yield
    except TestTimedOut:
        raise
    finally:
        left = signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        if left == 0 and "spark" in request.fixturenames:
            request.getfixturevalue("spark").sparkContext.cancelAllJobs()
