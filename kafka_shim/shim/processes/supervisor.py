"""`kafka-shim --brokers N --process-per-broker`: one OS process per emulated broker.

The supervisor binds every broker's listeners itself (so port 0 works and a busy port is
reported before anything starts), starts one process per broker (shim.processes.node) with its
sockets, its own data directory (DATA_DIR/broker-<id>) and every broker's advertised address,
prints the listening line once all serve, and stops them all on SIGINT/SIGTERM or when one
exits. It holds no broker state. With the console on, it serves it for the whole cluster
(shim.processes.cluster_console) on a thread of its own, once every broker serves, asking each
process over a private socket bound here beside its data.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_shim.shim.config.broker_config import BrokerConfig, ConfigError
from kafka_shim.shim.processes.spec import SPEC_ENV, Address, NodeSpec
from kafka_shim.shim.processes.view_wire import Channel
from kafka_shim.storage.errors import StorageStartupError

if TYPE_CHECKING:
    from kafka_shim.shim.processes import cluster_console

log = logging.getLogger("kafka_shim.processes")

FLAG = "--process-per-broker"
OFFSETS_PARTITIONS = "offsets.topic.num.partitions"
TRANSACTION_PARTITIONS = "transaction.state.log.num.partitions"
START_TIMEOUT_S = 120.0  # a loaded 2-core machine was seen taking 30 s to start one broker
STOP_TIMEOUT_S = 15.0


def check(config: BrokerConfig) -> None:
    """ConfigError for what the processes cannot serve yet (docs/performance.md)."""
    refused = [
        (config.brokers < 2, f"{FLAG} needs --brokers N of 2 or more"),
        (config.data_dir is None, f"{FLAG} keeps each broker's data on disk: --memory is not supported"),
        (config.control_listener is not None, f"{FLAG} has no control endpoint yet (--control)"),
        (config.fault_rules_file is not None, f"{FLAG} has no fault rules yet (--fault-rules)"),
    ]
    for failed, reason in refused:
        if failed:
            raise ConfigError(reason)


def bind(config: BrokerConfig) -> tuple[list[dict[str, socket.socket]], dict[int, dict[str, Address]]]:
    """Every broker's listening sockets (by position) and advertised addresses (by node id);
    OSError naming the listener for a busy port."""
    sockets: list[dict[str, socket.socket]] = []
    advertised: dict[int, dict[str, Address]] = {}
    try:
        for position in range(config.brokers):
            own: dict[str, socket.socket] = {}
            sockets.append(own)
            for listener in (each.for_node(position) for each in config.listener_endpoints()):
                host = listener.bind.host or "0.0.0.0"
                try:
                    own[listener.name] = socket.create_server(
                        (host, listener.bind.port), backlog=socket.SOMAXCONN
                    )
                except OSError as exc:
                    where = f"{host}:{listener.bind.port} (listener {listener.name})"
                    raise OSError(exc.errno, exc.strerror, where) from exc
                port = own[listener.name].getsockname()[1]
                advertised.setdefault(config.node_id + position, {})[listener.name] = (
                    listener.advertised_address(port)
                )
    except BaseException:
        for own in sockets:
            for sock in own.values():
                sock.close()
        raise
    return sockets, advertised


def supervise(config: BrokerConfig, argv: list[str], storage: str) -> int:
    """Run the broker processes until a signal or until one exits; the command's exit code."""
    try:
        check(config)
        share_cluster_id(config)
        offsets = offsets_partitions(config)
        transactions = transaction_partitions(config)
        sockets, advertised = bind(config)
    except ConfigError as exc:
        print(f"kafka-shim: {exc}", file=sys.stderr)
        return 2
    except StorageStartupError as exc:
        print(f"kafka-shim: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"kafka-shim: cannot listen on {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    assert config.data_dir is not None
    registry = _registry_socket(config)
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    children: list[subprocess.Popen[bytes]] = []
    channels: list[Channel] = []
    console = None
    try:
        if config.console_listener is not None:
            channels = _channels(config)
        ready = [
            _start(
                config,
                argv,
                position,
                own,
                advertised,
                (offsets, transactions),
                children,
                channels,
                registry if position == 0 else None,
            )
            for position, own in enumerate(sockets)
        ]
        for own in sockets:
            for sock in own.values():
                sock.close()  # the processes hold them now
        if registry is not None:
            registry.close()
        for channel in channels:
            channel.sock.close()
        if not _wait_ready(ready, children, stopping):
            return 1
        print(
            f"kafka-shim listening on {listening(advertised)} (storage: {storage}; one process per broker)",
            flush=True,
        )
        if channels:
            console = _console(config, channels, advertised)
        while not stopping.wait(0.2):
            exited = [child for child in children if child.poll() is not None]
            if exited:
                log.error("a broker process exited (code %s): stopping the others", exited[0].returncode)
                return 1
        return 0
    finally:
        if console is not None:
            console.stop()
        _stop(children)
        for channel in channels:
            channel.remove()


def _registry_socket(config: BrokerConfig) -> socket.socket | None:
    """The schema registry's listening socket, bound here as the Kafka listeners are and handed
    to the controller's process, which serves the registry (docs/schema-registry.md). A busy
    port is one warning, as with one process: the brokers serve Kafka without a registry."""
    address = config.schema_registry_listener
    if address is None:
        return None
    from kafka_shim.shim.web.deferred_http import bound

    try:
        return bound(address)
    except OSError as exc:
        log.warning("schema registry not served: cannot listen on %s: %s", address, exc.strerror or exc)
        return None


def _channels(config: BrokerConfig) -> list[Channel]:
    """Each broker's private console socket; none (and one warning) where one cannot be bound:
    the brokers serve Kafka without a console rather than not at all."""
    channels: list[Channel] = []
    try:
        for position in range(config.brokers):
            channels.append(Channel.bind(broker_dir(config, position)))
    except OSError as exc:
        log.warning("console not served: cannot bind its private socket: %s", exc)
        for channel in channels:
            channel.sock.close()
            channel.remove()
        return []
    return channels


def _console(
    config: BrokerConfig, channels: list[Channel], advertised: dict[int, dict[str, Address]]
) -> cluster_console.ConsoleThread:
    """The whole cluster's console, started (its web stack loads now, on its own thread)."""
    from kafka_shim.shim.processes import cluster_console

    bootstrap = [
        f"{host}:{port}"
        for node_id in sorted(advertised)
        for host, port in [next(iter(advertised[node_id].values()))]
    ]
    by_node = {config.node_id + position: channel.path for position, channel in enumerate(channels)}
    return cluster_console.start(config, by_node, bootstrap, broker_dir(config, 0))


def listening(advertised: dict[int, dict[str, Address]]) -> str:
    """Where each broker is advertised, for the listening line: `host:port (broker N)`, or with
    several listeners each one's `host:port (NAME, broker N)`."""
    named = any(len(listeners) > 1 for listeners in advertised.values())
    return ", ".join(
        f"{host}:{port} ({f'{name}, ' if named else ''}broker {node_id})"
        for node_id, listeners in advertised.items()
        for name, (host, port) in listeners.items()
    )


def broker_argv(argv: list[str]) -> list[str]:
    """A broker process's command line: the supervisor's, without --process-per-broker. Each
    busy-polls as one process does: a process whose core is shared stops polling
    (shim.net.polling), so processes spinning on shared cores do not take them from each other
    and from the clients (docs/performance.md measures it)."""
    return [arg for arg in argv if arg != FLAG]


def broker_dir(config: BrokerConfig, position: int) -> Path:
    """Where broker `position` keeps its data: DATA_DIR/broker-<node id>."""
    assert config.data_dir is not None
    return config.data_dir / f"broker-{config.node_id + position}"


def share_cluster_id(config: BrokerConfig) -> None:
    """Every broker's meta.properties names the controller's cluster id (the first start
    draws it): a client refuses brokers of different clusters."""
    from kafka_shim.storage.data_dir import DataDir, new_cluster_id

    directories = [broker_dir(config, position) for position in range(config.brokers)]
    for directory in directories:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    cluster_id = DataDir(directories[0]).cluster_id(new_cluster_id)
    for directory in directories[1:]:
        found = DataDir(directory).cluster_id(lambda: cluster_id)
        if found != cluster_id:
            raise ConfigError(f"{directory} belongs to cluster {found}, the controller's is {cluster_id}")


def offsets_partitions(config: BrokerConfig) -> int:
    """The `__consumer_offsets` partition count every broker process places groups by. Each
    process keeps its own copy of the topic, and a copy keeps the count it was created with,
    so all must agree: the count a broker's copy already has, else the one set, else one per
    broker. kafka-shim's one-broker default of one partition would put every group on the
    process leading it while the others idle; with one per broker each leads one and groups
    spread by their hash (as evenly as any multiple of the brokers, docs/performance.md)."""
    from kafka_shim.protocol.internal_topics import OFFSETS_TOPIC

    return _agreed_partitions(config, OFFSETS_TOPIC, OFFSETS_PARTITIONS, config.offsets_topic_num_partitions)


def transaction_partitions(config: BrokerConfig) -> int:
    """The `__transaction_state` partition count every broker process places transactional ids
    by, chosen as `offsets_partitions` chooses: with one per broker, the transactions'
    coordinators spread over the processes as the groups' do, where one partition put every
    transaction on one process."""
    from kafka_shim.protocol.internal_topics import TRANSACTION_TOPIC

    return _agreed_partitions(
        config, TRANSACTION_TOPIC, TRANSACTION_PARTITIONS, config.transaction_state_log_num_partitions
    )


def _agreed_partitions(config: BrokerConfig, topic: str, key: str, value: int) -> int:
    """The count a broker's copy of internal `topic` already has, else `key`'s if set, else one
    per broker."""
    from kafka_shim.storage.data_dir import DataDir

    for position in range(config.brokers):
        for record in DataDir(broker_dir(config, position)).read_catalog():
            if record.name == topic:
                return record.partitions
    return value if config.is_set(key) else config.brokers


def _start(
    config: BrokerConfig,
    argv: list[str],
    position: int,
    own: dict[str, socket.socket],
    advertised: dict[int, dict[str, Address]],
    partitions: tuple[int, int],
    children: list[subprocess.Popen[bytes]],
    channels: list[Channel],
    registry: socket.socket | None,
) -> int:
    """Start broker `position`'s process (with `registry`, the schema registry's socket); the
    read end of its readiness pipe."""
    assert config.data_dir is not None
    node_id = config.node_id + position
    read_end, write_end = os.pipe()
    spec = NodeSpec(
        argv=broker_argv(argv),
        position=position,
        node_id=node_id,
        data_dir=str(broker_dir(config, position)),
        controller_dir=str(broker_dir(config, 0)),
        fds={name: sock.fileno() for name, sock in own.items()},
        bound={name: sock.getsockname()[:2] for name, sock in own.items()},
        endpoints=advertised,
        ready_fd=write_end,
        offsets_partitions=partitions[0],
        transaction_partitions=partitions[1],
        views_fd=channels[position].sock.fileno() if channels else None,
        registry_fd=None if registry is None else registry.fileno(),
    )
    inherited = [*spec.fds.values(), write_end]
    inherited += [fd for fd in (spec.views_fd, spec.registry_fd) if fd is not None]
    children.append(
        subprocess.Popen(
            [sys.executable, "-m", "kafka_shim.shim.processes.node"],
            pass_fds=inherited,
            env={**os.environ, SPEC_ENV: spec.to_env()},
            stdin=subprocess.DEVNULL,
        )
    )
    os.close(write_end)
    return read_end


def _wait_ready(ready: list[int], children: list[subprocess.Popen[bytes]], stopping: threading.Event) -> bool:
    """Whether every process said it serves before the timeout (False: one exited, or a signal)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    waiting = set(ready)
    try:
        while waiting and not stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                print(
                    f"kafka-shim: the broker processes did not start within {START_TIMEOUT_S:.0f} s",
                    file=sys.stderr,
                )
                return False
            readable, _, _ = select.select(list(waiting), [], [], min(left, 0.2))
            for fd in readable:
                if not os.read(fd, 64):  # closed without a word: that process exited
                    print("kafka-shim: a broker process failed to start", file=sys.stderr)
                    return False
                waiting.discard(fd)
        return not waiting
    finally:
        for fd in ready:
            os.close(fd)


def _stop(children: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to every process still running, then wait (SIGKILL after STOP_TIMEOUT_S)."""
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for child in children:
        try:
            child.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            log.error("broker process %d did not stop in %.0f s: killed", child.pid, STOP_TIMEOUT_S)
            child.kill()
            child.wait()
