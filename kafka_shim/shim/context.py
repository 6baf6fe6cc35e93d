"""What a request handler sees: the broker, the request's metadata and principal, time,
the two ways to wait (for a deferred answer, for appended data), and the one place that
asks the authorizer (`denial`, `authorize`, `authorized_names`, `authorize_any`,
`authorized_operations`), within what the request's row of `shim.security.authorization` declares.

Handlers are `async def handle(ctx, request) -> response | None` and never
import Trio: the server implements the waiting primitives.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.security.authorization import Check, Rule, UndeclaredCheck
from kafka_shim.shim.security.authorizer import (
    ANONYMOUS,
    AclOperation,
    ResourceType,
    operations_bitfield,
    supported_operations,
)

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.shim.coordinator.types import TopicPartition
    from kafka_shim.shim.security.sasl import SaslSession
    from kafka_shim.storage.log import PartitionLog

T = TypeVar("T")

# Kafka's authorizer logger: explicit denials at INFO, as Kafka logs them.
audit = logging.getLogger("kafka_shim.authorizer")

Respond = Callable[[T], None]


def leader_endpoints(ctx: RequestContext, responses: Iterable[Any], partitions: str) -> list[dict[str, Any]]:
    """KIP-951's node_endpoints of a Produce or Fetch answer: the address of each leader named
    in a NOT_LEADER_OR_FOLLOWER partition's current_leader, so the client moves without a
    Metadata round trip."""
    leaders = {
        p["current_leader"]["leader_id"]
        for topic in responses
        for p in topic[partitions]
        if "current_leader" in p and p["current_leader"]["leader_id"] >= 0
    }
    endpoints = []
    for node_id in sorted(leaders):
        host, port = ctx.broker_address(node_id)
        endpoints.append(
            {"node_id": node_id, "host": host, "port": port, "rack": ctx.broker.cluster.nodes[node_id].rack}
        )
    return endpoints


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
    # The listener the request arrived on ("": none, as in tests that call handlers directly).
    listener_name: str = ""
    # Its security protocol (Kafka's SecurityProtocol name): PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL.
    security_protocol: str = "PLAINTEXT"
    # Set by a handler whose request went over a client quota (shim.quotas.throttling): the server
    # stops reading the connection this long after answering (KIP-219), then resets it.
    throttle_ms: int = 0
    # Whether a response may carry records left in their files (protocol.file_records): the
    # server sends them with sendfile. Only on a plaintext socket; TLS copies through Python.
    zero_copy: bool = False
    # The authorization row of the API being served, set by the dispatcher for each request.
    rule: Rule | None = None
    # A broker process's Produce of a transaction another process coordinates: that
    # coordinator's answer for each transactional partition, asked before the handler runs
    # (shim.processes.verification). None: the broker's own coordinator is asked.
    transaction_checks: Mapping[TopicPartition, ErrorCode] | None = None

    def now_ms(self) -> int:
        return self.broker.clock()

    def wall_ms(self) -> float:
        """Monotonic wall time, for waits the client times itself (a Fetch long poll), which
        the broker's clock (now_ms) must not stretch or cut short: see shim.testbroker.clock."""
        return time.monotonic() * 1000

    def advertised_address(self) -> tuple[str, int]:
        """Where this client is told to connect: the advertised address of the listener its
        request arrived on (the server's contexts), else the broker's first listener's."""
        return self.broker.advertised_host, self.broker.advertised_port

    # -- the emulated brokers (shim.testbroker.cluster) ------------------------------------------------

    @property
    def node_id(self) -> int:
        """The broker this request was sent to (one of --brokers)."""
        return self.broker.node_id

    def broker_address(self, node_id: int) -> tuple[str, int]:
        """Where this client reaches broker `node_id`: its advertised address on the listener
        this request arrived on, as Kafka answers Metadata and FindCoordinator."""
        if node_id == self.node_id:
            return self.advertised_address()
        return self.broker.cluster.nodes[node_id].endpoints[self.listener_name]

    def coordinates(self, key_type: int, key: str) -> bool:
        """Whether this broker coordinates the group or transactional id (else NOT_COORDINATOR)."""
        return self.broker.cluster.coordinates(self.node_id, key_type, key)

    def leader_error(self, topic: str, index: int, current_leader_epoch: int, log: PartitionLog) -> ErrorCode:
        """Whether this broker may serve a client's request for the partition: the client's
        leader epoch is checked, then the leadership, as Kafka checks them."""
        return self.broker.cluster.leader_error(self.node_id, topic, index, current_leader_epoch, log)

    # -- authorization: every handler asks here (shim.security.authorization has the table) ------------

    def declared(self, operation: AclOperation, resource_type: ResourceType) -> Check:
        """The row's check for `operation` on `resource_type`; UndeclaredCheck if there is none."""
        if self.rule is None:
            raise UndeclaredCheck("authorization asked outside a dispatched request")
        return self.rule.check(operation, resource_type)

    def refusal(self, operation: AclOperation, resource_type: ResourceType) -> ErrorCode:
        """The error the row declares for a refused `operation` on `resource_type`."""
        refusal = self.declared(operation, resource_type).refusal
        if refusal is None:
            raise UndeclaredCheck(f"{operation.name} on {resource_type.name} refuses nothing: it hides")
        return refusal

    def denial(self, operation: AclOperation, resource_type: ResourceType, name: str) -> ErrorCode | None:
        """None when this principal may `operation` the resource, else the row's refusal."""
        refusal = self.refusal(operation, resource_type)
        if self.broker.authorizer is None:  # declared: refusal has looked the check up
            return None
        return None if self.authorize(operation, resource_type, name) else refusal

    def authorize(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        """Whether this request's principal may `operation` the resource; True without an
        authorizer. A denial is logged (INFO), as Kafka logs one the client asked for."""
        if self.broker.authorizer is None:  # most brokers, on nearly every request: no set built
            self.declared(operation, resource_type)
            return True
        return name in self.authorized_names(operation, resource_type, (name,))

    def authorized_names(
        self,
        operation: AclOperation,
        resource_type: ResourceType,
        names: Iterable[str],
        log_denied: bool = True,
    ) -> set[str]:
        """Those of `names` this principal may `operation`. Listings that hide what is not
        allowed (Metadata of all topics, ListGroups) pass log_denied=False, as Kafka does."""
        self.declared(operation, resource_type)
        authorizer = self.broker.authorizer
        if authorizer is None:
            return set(names)
        allowed = set()
        for name in set(names):
            if authorizer.authorize(self.principal, self.client_host, operation, resource_type, name):
                allowed.add(name)
            elif log_denied:
                audit.info(
                    "Principal = %s is Denied operation = %s from host = %s on resource = %s:%s",
                    self.principal,
                    operation.name,
                    self.client_host,
                    resource_type.name,
                    name,
                )
        return allowed

    def authorize_any(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        """Whether some resource of the type may be `operation`-ed (Kafka's authorizeByResourceType)."""
        self.declared(operation, resource_type)
        authorizer = self.broker.authorizer
        return authorizer is None or authorizer.authorize_any(
            self.principal, self.client_host, operation, resource_type
        )

    def authorized_operations(self, resource_type: ResourceType, name: str) -> int:
        """The `*_authorized_operations` bit field of a resource for this principal."""
        authorizer = self.broker.authorizer
        group_configs = self.broker.config.release.group_configs
        if authorizer is None:
            return operations_bitfield(supported_operations(resource_type, group_configs))
        return authorizer.authorized_operations(
            self.principal, self.client_host, resource_type, name, group_configs
        )

    @abstractmethod
    async def deferred(self, start: Callable[[Respond[T]], None]) -> T:
        """Call `start(respond)` and wait until something calls `respond(value)`.

        The coordinator answers JoinGroup and SyncGroup this way: at once, or
        later from another member's request or from a timer.
        """

    @abstractmethod
    async def off_loop(self, work: Callable[[], None]) -> None:
        """Run `work` (thread-safe: a login's key derivation, the making of new partitions'
        logs) away from the event loop, at most a few at once broker-wide, and return when
        it is done."""

    @abstractmethod
    async def wait_for_append(self, logs: Collection[PartitionLog], timeout_ms: float) -> None:
        """Return when one of `logs` is appended to, or after `timeout_ms`."""
