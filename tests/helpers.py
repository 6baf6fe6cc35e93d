"""What tests across the tree share: one fake clock, one fake request context, and a
driver for request handlers that goes through the wire schemas without sockets.

Requests are built with the project's schemas and parsed back, as the server does;
responses are built at the request's version and parsed back, so every answer is also
checked to be encodable. A Fetch long poll "waits" by advancing the fake clock, or by
running a callback that appends.
"""

from __future__ import annotations

import json
import struct
import subprocess
import time
from collections.abc import Callable, Collection, Coroutine
from dataclasses import replace
from types import ModuleType
from typing import Any, TypeVar, cast

from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.context import RequestContext, Respond
from kafka_shim.shim.handlers import handler_for
from kafka_shim.shim.security.authorization import RULES
from kafka_shim.shim.security.authorizer import ANONYMOUS
from kafka_shim.storage.log import PartitionLog

T = TypeVar("T")


class FakeClock:
    """Milliseconds since the epoch, moved only by the test."""

    def __init__(self, now: int = 1_700_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0: version, topics, null user data."""
    out = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        out += struct.pack(">h", len(topic)) + topic.encode()
    return out + struct.pack(">i", -1)


def fetch_from_start(topic: str, max_bytes: int = 1 << 24) -> dict[str, Any]:
    """A Fetch body (v4-v12) for partition 0 of `topic` from offset 0, answered at once."""
    partition = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": max_bytes}
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": max_bytes,
        "topics": [{"topic": topic, "partitions": [partition]}],
    }


class FakeRequestContext(RequestContext):
    """The server's contract, answered at once: a deferred answer must already be there."""

    def __init__(self, broker: Broker, clock: FakeClock, version: int, principal: str = ANONYMOUS) -> None:
        self.broker = broker
        self.principal = principal
        self.clock = clock
        self.api_version = version
        self.correlation_id = 1
        self.client_id = "handler-test"
        self.client_host = "127.0.0.1"
        self.waits: list[float] = []
        self.waited_on: list[list[PartitionLog]] = []
        # Called instead of letting the whole timeout pass, once per wait.
        self.during_wait: list[Callable[[], None]] = []

    async def deferred(self, start: Callable[[Respond[T]], None]) -> T:
        box: list[T] = []
        start(box.append)
        assert box, "the coordinator did not answer yet"
        return box[0]

    def wall_ms(self) -> float:
        return self.clock.now

    async def off_loop(self, work: Callable[[], None]) -> None:
        work()  # no loop to keep free here

    async def wait_for_append(self, logs: Collection[PartitionLog], timeout_ms: float) -> None:
        self.waits.append(timeout_ms)
        self.waited_on.append(list(logs))
        if self.during_wait:
            self.clock.now += 1
            self.during_wait.pop(0)()
        else:
            self.clock.now += round(timeout_ms)  # the fetch long poll waits whole ms here (wall_ms)


def java_driver(command: dict[str, object], kafka_clients: str | None = None) -> list[dict[str, Any]]:
    """Run the compiled Java driver (compat/java) on one command, on the installed kafka-clients
    or an older release of it (compat/java_build.OLDER_KAFKA_CLIENTS); its events, in order."""
    from compat import java_build

    try:
        command_line = java_build.driver_command_line(
            json.dumps(command), kafka_clients or java_build.KAFKA_CLIENTS
        )
    except java_build.JavaDriverUnavailable as exc:
        raise AssertionError(f"the Java driver is needed (bash .ci/run builds it): {exc}") from exc
    done = subprocess.run(command_line, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def wait_until(
    condition: Callable[[], bool],
    what: str,
    *,
    deadline_s: float,
    error: type[AssertionError] = AssertionError,
) -> None:
    """Poll `condition` every 50 ms until it holds; `error` if it does not within `deadline_s`."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > deadline:
            raise error(f"not within {deadline_s}s: {what}")
        time.sleep(0.05)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a handler coroutine that never suspends on a real event loop."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    raise AssertionError("handler suspended outside the fake context")


class Harness:
    """A broker on a fake clock, its handlers called as the server calls them."""

    def __init__(self, **config: Any) -> None:
        self.clock = FakeClock()
        self.broker = Broker(replace(BrokerConfig(), **config), clock=self.clock)
        self.broker.cluster_id = "test-cluster"
        self.broker.advertised_port = 19092
        self.last: FakeRequestContext | None = None

    def context(self, version: int, principal: str = ANONYMOUS) -> FakeRequestContext:
        self.last = FakeRequestContext(self.broker, self.clock, version, principal)
        return self.last

    def call(
        self,
        handler: ModuleType | int,
        version: int,
        request: dict[str, Any],
        ctx: FakeRequestContext | None = None,
    ) -> Any:
        """Call a handler module (or the one serving an API key) with `request`: the parsed
        response, or None where the API sends none (Produce with acks=0)."""
        if isinstance(handler, int):
            found = handler_for(handler)
            assert found is not None, f"no handler for API key {handler}"
            api, handle, rule = found.api, found.handle, found.rule
        else:
            api, handle, rule = handler.API, handler.handle, RULES[handler.__name__.rsplit(".", 1)[1]]
        parsed = api.request.parse(api.request.build(request, version), version)
        ctx = ctx or self.context(version)
        ctx.rule = rule  # as the server's dispatcher sets it
        result = run(cast(Coroutine[Any, Any, Any], handle(ctx, parsed)))
        if result is None:
            return None
        return api.response.parse(api.response.build(result, version), version)
