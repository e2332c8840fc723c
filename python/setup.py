"""Build hook: the package carries the bridge's jars, one per Scala version
(lpf_spark/jars/lpf-spark_2.12-<version>.jar and lpf-spark_2.13-<version>.jar, the same
files as the repository's build/libs; lpf_spark.jar_path() picks the one the running
Spark needs).

The jars are taken from the directory LPF_SPARK_JAR_DIR, else from the repository's
build/libs (built by `bash scripts/build-jar.sh`), and copied into the package when it
is built (wheel, or sdist: both carry them).
"""
import os
import re
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
SCALA_VERSIONS = ("2.12", "2.13")


def version() -> str:
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        found = re.search(r'^version = "([^"]+)"$', f.read(), re.M)
    if found is None:
        raise SystemExit("lpf-spark: no version line in pyproject.toml")
    return found.group(1)


def jar_names() -> list:
    return [f"lpf-spark_{scala}-{version()}.jar" for scala in SCALA_VERSIONS]


def copy_jars(package_dir: str) -> None:
    """Copies the jars into package_dir/jars; from an sdist they are there already."""
    target = os.path.join(package_dir, "jars")
    carried = os.path.join(HERE, "lpf_spark", "jars")
    source = os.environ.get("LPF_SPARK_JAR_DIR") or os.path.join(HERE, "..", "build", "libs")
    os.makedirs(target, exist_ok=True)
    for name in jar_names():
        for where in (source, carried):
            path = os.path.join(where, name)
            if os.path.isfile(path):
                if os.path.abspath(path) != os.path.abspath(os.path.join(target, name)):
                    shutil.copyfile(path, os.path.join(target, name))
                break
        else:
            raise SystemExit(
                f"lpf-spark: the bridge jar {name} is in neither {os.path.abspath(source)} nor {carried}; "
                "build it first (bash scripts/build-jar.sh in the repository builds both Scala versions) "
                "or set LPF_SPARK_JAR_DIR to the directory holding "
                + " and ".join(jar_names())
            )


class BuildWithJars(build_py):
    def run(self) -> None:
        super().run()
        copy_jars(os.path.join(self.build_lib, "lpf_spark"))


class SdistWithJars(sdist):
    def run(self) -> None:
        copy_jars(os.path.join(HERE, "lpf_spark"))
        super().run()


setup(cmdclass={"build_py": BuildWithJars, "sdist": SdistWithJars})
