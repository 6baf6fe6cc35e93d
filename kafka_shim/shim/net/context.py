"""The request context of a connection served on Trio (shim.context.RequestContext)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Protocol, TypeVar

import trio

from kafka_shim.shim.broker import Broker
from kafka_shim.shim.context import RequestContext, Respond
from kafka_shim.shim.net.waiting import AppendWaiters
from kafka_shim.storage.log import PartitionLog

if TYPE_CHECKING:
    from kafka_shim.shim.net.listening import BoundListener

T = TypeVar("T")


class Serving(Protocol):
    """What a request context needs of the server it came in on (shim.net.server.Server)."""

    broker: Broker
    appended: AppendWaiters
    derivations: trio.CapacityLimiter

    def wake_timers_if_sooner(self) -> None: ...


class TrioRequestContext(RequestContext):
    def __init__(self, server: Serving, client_host: str, peer: str, listener: BoundListener) -> None:
        self.broker = server.broker
        self._server = server
        self.client_host = client_host
        self.peer = peer
        self.listener = listener
        self.listener_name = listener.name
        self.security_protocol = "PLAINTEXT" if listener.security is None else listener.security.protocol
        self.zero_copy = listener.security is None
        self.api_version = 0
        self.correlation_id = 0
        self.client_id = None
        self.failure_delayed = False  # connection.failed.authentication.delay.ms, once

    async def deferred(self, start: Callable[[Respond[T]], None]) -> T:
        done = trio.Event()
        box: list[T] = []

        def respond(value: T) -> None:
            if not box:
                box.append(value)
                done.set()

        start(respond)
        self._server.wake_timers_if_sooner()
        await done.wait()
        return box[0]

    async def off_loop(self, work: Callable[[], None]) -> None:
        await trio.to_thread.run_sync(work, limiter=self._server.derivations)

    async def wait_for_append(self, logs: Collection[PartitionLog], timeout_ms: float) -> None:
        await self._server.appended.wait(logs, timeout_ms / 1000)

    def advertised_address(self) -> tuple[str, int]:
        return self.listener.advertised

    @property
    def node_id(self) -> int:
        return self.listener.node_id
