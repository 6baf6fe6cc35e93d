"""`kafka-shim container [ARGS...]`: the image's entrypoint, configured as apache/kafka's is.

Every `KAFKA_*` environment variable is a broker config, named by the official image's rule
(drop `KAFKA_`, lower-case, then `_` -> `.`, `___` -> `-`, `__` -> `_`: KAFKA_LOG_RETENTION_HOURS
is log.retention.hours), except the JVM and logging ones the image also leaves out. As in the
official image, `listeners` left unset is derived from `advertised.listeners` with every host
replaced by 0.0.0.0. With neither set, the container's defaults apply: PLAINTEXT on 9092
(advertised as localhost:9092) and DOCKER on 19092 for other containers (advertised as the
container's host name), both on every interface; data in /data; the console on every
interface's port 8080 (`-p 8080:8080` publishes it), the schema registry on 8081. The
`SCHEMA_REGISTRY_*` variables of Confluent's registry image that mean something here are read:
SCHEMA_REGISTRY_LISTENERS (its first http://HOST:PORT), SCHEMA_REGISTRY_KAFKASTORE_TOPIC and
SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL. ARGS come after all that (a
flag beats the environment), so `docker run kafka-shim --config num.partitions=3` adds to the
defaults instead of replacing them.

`kafka-shim healthcheck [HOST:PORT]` (the image's HEALTHCHECK) asks the broker for its API
versions and exits 0 once it answers; by default it asks the first listener the container
configuration names, on the loopback address.
"""

from __future__ import annotations

import os
import re
import socket
import struct
import sys
from collections.abc import Mapping

DATA_DIR = "/data"
DEFAULT_LISTENERS = "PLAINTEXT://:9092,DOCKER://:19092"
DEFAULT_ADVERTISED = "PLAINTEXT://localhost:9092,DOCKER://:19092"
DEFAULT_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,DOCKER:PLAINTEXT"
# The console on every interface of the container: its loopback is unreachable from the host.
CONSOLE = "0.0.0.0:8080"
SCHEMA_REGISTRY = "0.0.0.0:8081"  # Confluent's port, as its image serves it
# Confluent's registry image's variables and the broker settings they set here.
SCHEMA_REGISTRY_VARIABLES = {
    "SCHEMA_REGISTRY_KAFKASTORE_TOPIC": "schema.registry.topic",
    "SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL": "schema.registry.compatibility.level",
}
# The official image's ExcludeServerPropsEnv: settings of its JVM and scripts, not broker configs.
NOT_BROKER_CONFIGS = frozenset(
    {
        "KAFKA_VERSION",
        "KAFKA_HEAP_OPTS",
        "KAFKA_LOG4J_OPTS",
        "KAFKA_OPTS",
        "KAFKA_JMX_OPTS",
        "KAFKA_JVM_PERFORMANCE_OPTS",
        "KAFKA_GC_LOG_OPTS",
        "KAFKA_LOG4J_ROOT_LOGLEVEL",
        "KAFKA_LOG4J_LOGGERS",
        "KAFKA_TOOLS_LOG4J_LOGLEVEL",
        "KAFKA_JMX_HOSTNAME",
        "KAFKA_JMX_PORT",
    }
)
SHIM_PREFIX = "KAFKA_SHIM_"  # this project's own variables (KAFKA_SHIM_IMAGE, ...)
LOG_LEVELS = {"TRACE": "DEBUG", "DEBUG": "DEBUG", "INFO": "INFO", "WARN": "WARNING", "ERROR": "ERROR"}
# Flags that say where to listen or what to advertise: given, the container's defaults step aside.
_LISTENER_FLAGS = ("--listeners", "--advertised-listeners", "--host", "--port", "--advertised-host")
_LISTENER_CONFIGS = ("listeners", "advertised.listeners", "listener.security.protocol.map")


def config_name(variable: str) -> str:
    """The broker config an environment variable names, by the official image's rule."""
    name = variable.removeprefix("KAFKA_").lower().replace("_", ".")
    return name.replace("...", "-").replace("..", "_")


def env_configs(environ: Mapping[str, str]) -> dict[str, str]:
    """The broker configs set by `KAFKA_*` variables (Kafka's listeners rule applied)."""
    pairs = {
        config_name(variable): value
        for variable, value in sorted(environ.items())
        if variable.startswith("KAFKA_")
        and variable not in NOT_BROKER_CONFIGS
        and not variable.startswith(SHIM_PREFIX)
    }
    if "advertised.listeners" in pairs and "listeners" not in pairs:
        pairs["listeners"] = re.sub(r"://[^:]*:", "://0.0.0.0:", pairs["advertised.listeners"])
    return pairs


def ignored_variables(environ: Mapping[str, str]) -> list[str]:
    """The official image's JVM and logging variables set here, which mean nothing to kafka-shim,
    and its CLUSTER_ID (KRaft's storage format: kafka-shim keeps its own id in the data directory)."""
    ignored = {v for v in environ if v in NOT_BROKER_CONFIGS and v != "KAFKA_LOG4J_ROOT_LOGLEVEL"}
    return sorted(ignored | ({"CLUSTER_ID"} & environ.keys()))


def _names_a_listener(args: list[str]) -> bool:
    flags = any(arg.split("=", 1)[0] in _LISTENER_FLAGS for arg in args)
    configs = any(arg.split("=", 1)[0] in _LISTENER_CONFIGS for arg in args)
    return flags or configs


def container_argv(environ: Mapping[str, str], args: list[str]) -> list[str]:
    """The broker's command line: the container's defaults, the environment, then `args`."""
    pairs = env_configs(environ)
    argv: list[str] = ["--console", CONSOLE]  # a later --console in `args` wins
    argv += ["--schema-registry", _schema_registry_address(environ)]
    if not any(arg.split("=", 1)[0] in ("--data-dir", "--memory") for arg in args) and not (
        {"log.dirs", "log.dir"} & pairs.keys()
    ):
        argv += ["--data-dir", DATA_DIR]
    if not (set(_LISTENER_CONFIGS) & pairs.keys()) and not _names_a_listener(args):
        argv += [
            "--listeners",
            DEFAULT_LISTENERS,
            "--advertised-listeners",
            DEFAULT_ADVERTISED,
            "--config",
            f"listener.security.protocol.map={DEFAULT_PROTOCOL_MAP}",
        ]
    elif "--port" in args and "--host" not in args:
        argv += ["--host", "0.0.0.0", "--advertised-host", "localhost"]  # every interface of the container
    level = LOG_LEVELS.get(environ.get("KAFKA_LOG4J_ROOT_LOGLEVEL", "").upper())
    if level is not None:
        argv += ["--log-level", level]
    for name, value in pairs.items():
        argv += ["--config", f"{name}={value}"]
    for variable, name in SCHEMA_REGISTRY_VARIABLES.items():
        if variable in environ:
            value = environ[variable]
            # Confluent's image takes the level in any case; the setting's choices are upper case.
            argv += ["--config", f"{name}={value.upper() if name.endswith('level') else value}"]
    return argv + args


def _schema_registry_address(environ: Mapping[str, str]) -> str:
    """SCHEMA_REGISTRY_LISTENERS' first http:// listener as HOST:PORT (https is the broker's
    TLS listener's business: the registry is served over TLS where a listener is)."""
    for listener in environ.get("SCHEMA_REGISTRY_LISTENERS", "").split(","):
        scheme, _, address = listener.strip().partition("://")
        if address and scheme in ("http", "https"):
            return address.rstrip("/")
    return SCHEMA_REGISTRY


def main(args: list[str]) -> int:
    from kafka_shim.shim.cli.main import main as broker_main

    ignored = ignored_variables(os.environ)
    if ignored:
        print(f"kafka-shim: ignored (settings of Kafka's JVM image): {', '.join(ignored)}", file=sys.stderr)
    return broker_main(container_argv(os.environ, args))


def first_listener_port(environ: Mapping[str, str]) -> int:
    """The port of the first listener the container configuration binds."""
    pairs = env_configs(environ)
    listeners = pairs.get("listeners", DEFAULT_LISTENERS)
    match = re.search(r":(\d+)\s*(?:,|$)", listeners)
    return int(match.group(1)) if match else 9092


def healthcheck(args: list[str]) -> int:
    """Exit 0 when the broker answers ApiVersions (v0: no body, any broker answers it)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="kafka-shim healthcheck",
        description="Exit 0 once a Kafka broker answers ApiVersions, 1 otherwise (the image's HEALTHCHECK).",
    )
    parser.add_argument(
        "address",
        nargs="?",
        metavar="[HOST]:PORT",
        help="the broker (default: the container configuration's first listener, on 127.0.0.1)",
    )
    given = parser.parse_args(args).address
    if given is not None:
        host, _, port_text = given.rpartition(":")
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            parser.error(f"{given!r} is not [HOST]:PORT")
        address = (host or "127.0.0.1", int(port_text))
    else:
        address = ("127.0.0.1", first_listener_port(os.environ))
    request = struct.pack(">hhih", 18, 0, 1, -1)  # api key, version, correlation id, null client id
    try:
        with socket.create_connection(address, timeout=3) as sock:
            sock.sendall(struct.pack(">i", len(request)) + request)
            header = sock.recv(10, socket.MSG_WAITALL)
    except OSError as exc:
        print(f"kafka-shim healthcheck: {address[0]}:{address[1]}: {exc}", file=sys.stderr)
        return 1
    healthy = len(header) == 10 and struct.unpack(">ih", header[4:10]) == (1, 0)  # correlation id, error
    return 0 if healthy else 1
