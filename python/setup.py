"""Build hook: the package carries the bridge's jar (lpf_spark/jars/lpf-spark.jar).

The jar is taken from LPF_SPARK_JAR, else from the repository's build/libs/lpf-spark.jar
(built by `bash scripts/build-jar.sh`), and copied into the package when it is built.
"""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
JAR_NAME = "lpf-spark.jar"


class BuildWithJar(build_py):
    def run(self) -> None:
        super().run()
        source = os.environ.get("LPF_SPARK_JAR") or os.path.join(HERE, "..", "build", "libs", JAR_NAME)
        if not os.path.isfile(source):
            raise SystemExit(
                f"lpf-spark: the bridge jar {os.path.abspath(source)} does not exist; build it first "
                "(bash scripts/build-jar.sh in the repository) or set LPF_SPARK_JAR to it"
            )
        target = os.path.join(self.build_lib, "lpf_spark", "jars")
        os.makedirs(target, exist_ok=True)
        shutil.copyfile(source, os.path.join(target, JAR_NAME))


setup(cmdclass={"build_py": BuildWithJar})
