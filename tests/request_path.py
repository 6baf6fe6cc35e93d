"""The path a request takes through the broker's modules, from its socket to the log and back,
as a profiler sees it: the modules of `kafka_shim` each call enters, in order, and how often the
path climbs back (a module calls one of a layer above its own: storage calling the shim, a
coordinator calling its service, a service calling a handler).

    python -m tests.request_path            # a JoinGroup (a new member's two) and a Fetch

A broker on a free port in this process (BrokerThread); the profiler is set on the broker's
thread only, and the client's frames are encoded before it is, so every module counted is the
broker's. docs/architecture.md quotes what this prints; tests/test_request_path.py holds the
rules it shows."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from bench.request_cpu import FETCH, JOIN_GROUP, PRODUCE, fetch_body, join_request, produce_body, subscription
from kafka_shim.protocol.messages import APIS
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.net.running import BrokerThread
from tests.wire import WireClient, encode_request

PACKAGE = "kafka_shim."
TRACING = "kafka_shim.shim.net.running"  # BrokerThread.call, which sets and clears the profiler
# Layers from the socket down: a call from a module to one of a lower number climbs back. The
# services' layer names no prefix: it holds every module of kafka_shim the others do not.
LAYERS = (
    ("network", ("kafka_shim.shim.net", "kafka_shim.shim.server")),
    ("handlers", ("kafka_shim.shim.handlers", "kafka_shim.shim.context")),
    ("services", ()),
    ("coordinators", ("kafka_shim.shim.coordinator", "kafka_shim.shim.transactions.coordinator")),
    ("protocol and storage", ("kafka_shim.protocol", "kafka_shim.storage")),
)
_SERVICES = next(depth for depth, (_, prefixes) in enumerate(LAYERS) if not prefixes)
TOPIC, GROUP = "request-path", "request-path-group"
CREATE_TOPICS = 19


def layer(module: str) -> tuple[int, str]:
    """(depth, name) of a module's layer: 0 is the socket's side."""
    for depth, (name, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return depth, name
    return _SERVICES, LAYERS[_SERVICES][0]


@dataclass
class Path:
    modules: list[str] = field(default_factory=list)  # in the order first entered
    entries: int = 0  # calls from one of the broker's modules into another
    climbs: dict[tuple[str, str], int] = field(default_factory=dict)  # (caller, callee) -> calls

    def observe(self, caller: str, callee: str) -> None:
        if callee not in self.modules:
            self.modules.append(callee)
        if caller == callee or not caller.startswith(PACKAGE):
            return
        self.entries += 1
        if layer(callee)[0] < layer(caller)[0]:
            self.climbs[caller, callee] = self.climbs.get((caller, callee), 0) + 1


@contextmanager
def traced(broker: BrokerThread) -> Iterator[Path]:
    """The path of what the broker's thread runs inside the block."""
    path = Path()

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        if callee.startswith(PACKAGE) and callee != TRACING:
            back = frame.f_back
            path.observe(back.f_globals.get("__name__", "") if back else "", callee)

    broker.call(lambda: sys.setprofile(profile))
    try:
        yield path
    finally:
        broker.call(lambda: sys.setprofile(None))


def exchange(client: WireClient, frame: bytes) -> bytes:
    """The answer to `frame`, a request encoded beforehand (tests.wire.encode_request)."""
    client.send_raw(frame)
    return client.receive_frame()


def member_id(answer: bytes, version: int) -> str:
    api = APIS[JOIN_GROUP]
    header = 5 if api.response_header_flexible(version) else 4  # the correlation id (and tags)
    return str(api.response.parse(answer[header:], version).member_id)


def paths() -> dict[str, Path]:
    """The traced paths of a new member's two JoinGroups (the second waits for the rebalance)
    and of a Fetch of one batch, on a running broker keeping its data in memory."""
    config = BrokerConfig(port=0, initial_rebalance_delay_ms=0, console_listener=None, num_partitions=1)
    broker = BrokerThread(config).start()
    try:
        with WireClient(broker.bootstrap, timeout_s=10) as client:
            topic = {"name": TOPIC, "num_partitions": 1, "replication_factor": 1}
            created = client.request(CREATE_TOPICS, 5, {"topics": [topic]})
            assert created.topics[0].error_code == 0, created  # Produce creates no topic, as in Kafka
            exchange(client, encode_request(PRODUCE, 7, 1, produce_body(TOPIC)))
            fetch = encode_request(FETCH, 11, 2, fetch_body(TOPIC, 0))
            # The group service loads on first use, the other coordinators once the listener has
            # answered (shim.coordinator_loading): a first JoinGroup of another group, then loading
            # them all, so that the paths traced are a running broker's, not its loading's.
            exchange(
                client, encode_request(JOIN_GROUP, 5, 0, join_request(f"{GROUP}-first", subscription(TOPIC)))
            )
            broker.call(broker.broker.coordinators.load)
            join = join_request(GROUP, subscription(TOPIC))
            first = encode_request(JOIN_GROUP, 5, 3, join)
            found: dict[str, Path] = {}
            with traced(broker) as found["JoinGroup (MEMBER_ID_REQUIRED)"]:
                answer = exchange(client, first)
            second = encode_request(JOIN_GROUP, 5, 4, {**join, "member_id": member_id(answer, 5)})
            with traced(broker) as found["JoinGroup (the member's, answered when the group forms)"]:
                exchange(client, second)
            with traced(broker) as found["Fetch (one batch)"]:
                exchange(client, fetch)
            return found
    finally:
        broker.stop()


def main() -> None:
    for name, path in paths().items():
        layers = sorted({layer(m) for m in path.modules})
        print(
            f"{name}: {len(path.modules)} modules, {path.entries} calls between modules, "
            f"{sum(path.climbs.values())} climbing back"
        )
        print("  layers: " + " > ".join(n for _, n in layers))
        print("  modules: " + ", ".join(m.removeprefix(PACKAGE) for m in path.modules))
        for (caller, callee), calls in sorted(path.climbs.items()):
            print(f"  climbs: {caller.removeprefix(PACKAGE)} -> {callee.removeprefix(PACKAGE)} ({calls}x)")


if __name__ == "__main__":
    main()
