"""What a request handler sees: the broker, the request's metadata, time, and
the two ways to wait (for a deferred answer, for appended data).

Handlers are `async def handle(ctx, request) -> response | None` and never
import Trio: the server implements the waiting primitives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.shim.security.sasl import SaslSession
    from kafka_shim.storage.log import PartitionLog

# Kafka's KafkaPrincipal.ANONYMOUS: whoever connected without authenticating.
ANONYMOUS = "User:ANONYMOUS"

T = TypeVar("T")

Respond = Callable[[T], None]


class RequestContext(ABC):
    broker: Broker
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    # Who sent the request, in Kafka's form (`User:name`): what authorization is decided on.
    principal: str = ANONYMOUS
    # The connection's SASL session on a SASL listener (SaslHandshake / SaslAuthenticate).
    sasl: SaslSession | None = None
    # Set by a handler whose answer must be the connection's last (failed authentication).
    close_reason: str | None = None

    def now_ms(self) -> int:
        return self.broker.clock()

    def advertised_address(self) -> tuple[str, int]:
        """Where this client is told to connect: the advertised address of the listener its
        request arrived on (the server's contexts), else the broker's first listener's."""
        return self.broker.advertised_host, self.broker.advertised_port

    @abstractmethod
    async def deferred(self, start: Callable[[Respond[T]], None]) -> T:
        """Call `start(respond)` and wait until something calls `respond(value)`.

        The coordinator answers JoinGroup and SyncGroup this way: at once, or
        later from another member's request or from a timer.
        """

    @abstractmethod
    async def wait_for_append(self, logs: Collection[PartitionLog], timeout_ms: int) -> None:
        """Return when one of `logs` is appended to, or after `timeout_ms`."""
