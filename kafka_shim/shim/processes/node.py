"""One broker process of `--brokers N --process-per-broker` (started by shim.processes.supervisor):
the whole broker, serving only its own node's listeners (inherited, already bound), with its own
data directory, Trio loop and core. Clients route each request to the broker that leads its
partition or coordinates its group (Metadata, FindCoordinator), as they do with the emulated
brokers of one process; a transaction's markers and checks go to the process concerned
(shim.processes.marker_sender, shim.processes.verification); what would cross processes
otherwise is refused (shim.processes.refusals)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import trio

from kafka_shim.protocol.messages.end_txn import API as END_TXN
from kafka_shim.protocol.messages.produce import API as PRODUCE
from kafka_shim.protocol.messages.txn_offset_commit import API as TXN_OFFSET_COMMIT
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.net.dispatch import Dispatch, route_for
from kafka_shim.shim.net.listening import BoundListener, security_of
from kafka_shim.shim.net.server import Server
from kafka_shim.shim.processes.catalog_follower import CatalogFollower
from kafka_shim.shim.processes.cluster_metadata import ClusterMetadata, broker_metadata
from kafka_shim.shim.processes.forwarding import AutoCreateForwarder
from kafka_shim.shim.processes.marker_sender import MarkerSender
from kafka_shim.shim.processes.peer import Peer, PeerConnections
from kafka_shim.shim.processes.peer_route import peer_route
from kafka_shim.shim.processes.refusals import Wrap, process_handlers
from kafka_shim.shim.processes.spec import NodeSpec
from kafka_shim.shim.processes.transaction_ends import TransactionEnds
from kafka_shim.shim.processes.verification import CoordinatorChecks
from kafka_shim.shim.transactions.pending_markers import PendingMarkers

log = logging.getLogger("kafka_shim.processes")

# How often a process looks at the controller's catalog (a non-controller) and at the
# cluster's metadata files (every process).
FOLLOW_INTERVAL_S = 0.05
ORPHAN_CHECK_S = 1.0


class ProcessDispatch(Dispatch):
    """The dispatch step with some handlers wrapped: their routes looked up now, once."""

    def __init__(self, broker: Broker, wraps: dict[int, Wrap]) -> None:
        super().__init__(broker)
        for api_key, wrap in wraps.items():
            low, high = broker.served.ranges.get(api_key, (0, -1))
            for version in range(low, high + 1):
                route = route_for(api_key, version, broker.served)
                if route is not None:
                    self._routes[api_key, version] = replace(route, handler=wrap(route.handler))


class NodeServer(Server):
    """The server of one broker process: its own node's listeners, the others' addresses."""

    def __init__(self, broker: Broker, spec: NodeSpec, wraps: dict[int, Wrap]) -> None:
        super().__init__(broker)
        self.spec = spec
        self.dispatch = ProcessDispatch(broker, wraps)
        if spec.registry_fd is not None:  # the controller's: it serves the schema registry
            self.schema_registry_socket = socket.socket(fileno=spec.registry_fd)
            self.schema_registry_socket.setblocking(False)

    async def bind(self) -> list[BoundListener]:
        spec, cluster = self.spec, self.broker.cluster
        for node_id, endpoints in spec.endpoints.items():
            cluster.nodes[node_id].endpoints.update(endpoints)
        own = []
        for listener in self.broker.listeners:
            sock = socket.socket(fileno=spec.fds[listener.name])
            sock.setblocking(False)
            own.append(
                BoundListener(
                    listener.name,
                    [trio.SocketListener(trio.socket.from_stdlib_socket(sock))],
                    spec.bound[listener.name],
                    spec.endpoints[spec.node_id][listener.name],
                    # Built by each process from the same settings and key files, so every
                    # broker presents the same certificate and mechanisms on a listener.
                    security_of(self.broker.config, listener),
                    spec.node_id,
                )
            )
        self._node_listeners[spec.node_id] = own
        self.broker.advertised_host, self.broker.advertised_port = own[0].advertised
        return own


async def serve(
    broker: Broker, spec: NodeSpec, follower: CatalogFollower | None, metadata: ClusterMetadata
) -> None:
    route = peer_route(broker.config, broker.listeners)

    def peer(node_id: int) -> Peer | None:
        """How this process reaches broker `node_id` (None: no listener lets it in)."""
        address = None if route is None else spec.endpoints.get(node_id, {}).get(route.listener)
        return None if address is None or route is None else (address, route)

    before_metadata, follow_unknown = _nothing, _ignore
    if follower is not None:
        follow_unknown = follower.sync_if_unknown
        controller = peer(min(spec.endpoints))
        if controller is None:
            _say_no_forwarding(spec)
        forwarder = AutoCreateForwarder(broker.topics, follower, controller, broker.config.auto_create_topics)
        before_metadata = forwarder.before_metadata
    wraps = process_handlers(follower is None, before_metadata, follow_unknown, metadata)

    connections = PeerConnections()  # markers and checks to the other processes, kept
    checks = CoordinatorChecks(peer, connections)
    ends = TransactionEnds(lambda: broker.transactions)
    steps = ((PRODUCE, checks.produce), (TXN_OFFSET_COMMIT, checks.txn_offset_commit), (END_TXN, ends.wrap))
    for api, wrap in steps:
        wraps[api.key] = _then(wraps[api.key], wrap) if api.key in wraps else wrap
    server = NodeServer(broker, spec, wraps)
    listeners = await server.bind()
    async with connections, trio.open_nursery() as nursery:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            await nursery.start(server.serve, listeners)
            if broker.markers_elsewhere is not None:

                def answered() -> None:
                    server.wake_timers_if_sooner()
                    ends.markers_answered()

                sender = MarkerSender(
                    broker.markers_elsewhere,
                    lambda: broker.transactions,
                    peer,
                    broker.clock,
                    answered,
                    connections,
                )
                nursery.start_soon(sender.run)
            follows: list[Callable[[], None]] = [metadata.sync]
            if follower is not None:
                follows.insert(0, follower.sync)
            nursery.start_soon(_follow, follows)
            nursery.start_soon(_stop_when_orphaned, nursery.cancel_scope, os.getppid())
            if spec.views_fd is not None:  # the console is on: the supervisor asks here
                from kafka_shim.shim.processes.view_service import serve_views

                views = socket.socket(fileno=spec.views_fd)
                nursery.start_soon(serve_views, broker, spec.node_id, views, follows)
            os.write(spec.ready_fd, b"ready\n")
            os.close(spec.ready_fd)
            async for _ in signals:
                nursery.cancel_scope.cancel()
                break


def _say_no_forwarding(spec: NodeSpec) -> None:
    """Once, at start: no listener lets a broker process in, so topics are not forwarded."""
    log.warning(
        "no listener a broker process can use (PLAINTEXT; SSL without ssl.client.auth=required; "
        "SASL with a --user and SCRAM or PLAIN enabled): broker %d does not forward the topics "
        "a Metadata would auto-create to the controller (broker %d), which creates them when a "
        "client's Metadata reaches it (or on CreateTopics)",
        spec.node_id,
        min(spec.endpoints),
    )


def _then(first: Wrap, second: Wrap) -> Wrap:
    """`first`'s step, then `second`'s, then the handler."""
    return lambda handler: first(second(handler))


async def _nothing(body: Any) -> None:
    pass


def _ignore(entries: Any) -> None:
    pass


async def _stop_when_orphaned(scope: trio.CancelScope, supervisor: int) -> None:
    """A supervisor killed without a word (SIGKILL) leaves no process behind for long."""
    while os.getppid() == supervisor:
        await trio.sleep(ORPHAN_CHECK_S)
    log.error("the supervisor (pid %d) is gone: stopping", supervisor)
    scope.cancel()


async def _follow(syncs: list[Callable[[], None]]) -> None:
    while True:
        await trio.sleep(FOLLOW_INTERVAL_S)
        for sync in syncs:
            sync()


def process_config(config: BrokerConfig, spec: NodeSpec) -> BrokerConfig:
    """A broker process's settings: its own data directory, no console (the supervisor serves
    the cluster's, asking each process over spec.views_fd), the schema registry only in the
    process handed its socket (the controller's: it creates `_schemas` and leads it), and the
    `__consumer_offsets` and `__transaction_state` partition counts the supervisor chose for
    every process."""
    return replace(
        config,
        data_dir=Path(spec.data_dir),
        console_listener=None,
        schema_registry_listener=config.schema_registry_listener if spec.registry_fd is not None else None,
        offsets_topic_num_partitions=spec.offsets_partitions,
        transaction_state_log_num_partitions=spec.transaction_partitions,
    )


def main() -> int:
    from kafka_shim.shim.cli.main import build_parser, config_from_args
    from kafka_shim.storage.errors import StorageStartupError

    spec = NodeSpec.from_env()
    config = process_config(config_from_args(build_parser().parse_args(spec.argv)), spec)
    logging.basicConfig(
        level=config.log_level,
        format=f"%(asctime)s %(levelname)s broker {spec.node_id} %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        # The cluster's metadata is the controller's (shim.processes.cluster_metadata).
        broker = Broker(config, metadata_dir=Path(spec.controller_dir))
    except StorageStartupError as exc:
        print(f"kafka-shim broker {spec.node_id}: {exc}", file=sys.stderr)
        return 1
    broker.local_node = spec.node_id  # the registry's `_schemas` is written only where it leads
    # Set before the transaction coordinator loads (the server loads it once it serves): a
    # transaction found preparing to commit or abort has its markers sent to their leaders.
    broker.markers_elsewhere = PendingMarkers(
        spec.node_id, lambda tp: broker.cluster.leader(tp.topic, tp.partition)
    )
    metadata = broker_metadata(broker)
    try:
        if spec.position == 0 and config.users:
            # --user's credentials, set anew at every start as one process sets them: by the
            # controller alone, under the lock (the others read them from the file).
            with metadata.held():
                for name, password in config.users:
                    broker.credentials.set_password(name, password)
        # Each process hands out producer ids of its own residue: none is given twice.
        broker.producer_ids.interleave(spec.position, config.brokers)
        follower = None
        if spec.position != 0:
            follower = CatalogFollower(broker.topics, Path(spec.controller_dir))
            broker.topics.auto_create_enabled = False  # topics are made by the controller
            follower.sync()
        trio.run(serve, broker, spec, follower, metadata)
    finally:
        metadata.close()
        broker.close()
    return 0


def _run(*_: Any) -> None:
    sys.exit(main())


if __name__ == "__main__":
    _run()
