"""The test broker's Python front end: fault rules, the broker's clock, recorded requests and the
emulated brokers (stop, start, move a leader or a coordinator), as
methods of an in-process broker (shim.net.running.BrokerThread) and of the pytest fixture's object.

    shim.add_fault(api="OffsetCommit", group="g", error="REBALANCE_IN_PROGRESS", times=1)
    shim.advance_clock(46)            # every session of 45 s expires now
    shim.requests(api="OffsetCommit", group="g")[-1].request.topics

Every call runs on the broker's thread between requests (`call`), so it is safe while clients
are connected. The rule specs and match keys are the control endpoint's (shim.testbroker.faults). This
module imports nothing beyond the standard library when loaded: the pytest plugin uses it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.shim.net.server import Server
    from kafka_shim.shim.testbroker.recording import RecordedRequest

T = TypeVar("T")


class BrokerControls(ABC):
    @abstractmethod
    def controlled(self) -> Broker:
        """The broker these controls act on."""

    @abstractmethod
    def controlled_server(self) -> Server:
        """Its server: what stops and starts the emulated brokers' listeners."""

    @abstractmethod
    def call(self, fn: Callable[[], T], timeout_s: float = 10.0) -> T:
        """fn() on the broker's thread, between requests."""

    # -- fault rules ----------------------------------------------------------------------

    def add_fault(self, **spec: Any) -> int:
        """Add a fault rule (keys as in shim.testbroker.faults: api, group, topic..., error, times, delay_ms,
        action...); returns its id. FaultSpecError names a bad key or value."""
        return self.call(lambda: self.controlled().faults.add(spec).id)

    def faults(self) -> list[dict[str, Any]]:
        """The rules as the control endpoint lists them, with how often each fired."""
        return self.call(lambda: [rule.to_json() for rule in self.controlled().faults.rules()])

    def clear_faults(self, rule_id: int | None = None) -> int:
        """Clear one rule, or all of them; how many went."""
        return self.call(lambda: self.controlled().faults.clear(rule_id))

    def fault_firings(self) -> list[dict[str, Any]]:
        return self.call(lambda: [firing.to_json() for firing in self.controlled().faults.firings])

    # -- the broker's clock ----------------------------------------------------------------

    def advance_clock(self, seconds: float) -> int:
        """Move the broker's clock on (clients keep theirs); what falls due has fired when this
        returns (sessions expired, transactions aborted, logs retained). The new now (epoch ms)."""
        return self.call(lambda: self.controlled().timers.advance_clock(seconds))

    def freeze_clock(self) -> int:
        return self.call(self.controlled().broker_clock.freeze)

    def resume_clock(self) -> int:
        return self.call(self.controlled().broker_clock.resume)

    # -- recorded requests -----------------------------------------------------------------

    def requests(self, **match: Any) -> list[RecordedRequest]:
        """Recorded requests that `match` (a rule's match keys: api, group, client_id, topic...)
        matches, oldest first; each has .request and .response as parsed."""

        def query() -> list[RecordedRequest]:
            recorder = self.controlled().recorder
            if recorder is None:
                raise RuntimeError("requests are not recorded: start the broker with record_requests=N")
            return recorder.query(match, self.controlled().topic_name)

        return self.call(query)

    # -- several brokers (--brokers N, brokers=N; shim.testbroker.cluster, docs/cluster.md) ---------------

    def stop_broker(self, node_id: int) -> None:
        """Stop broker `node_id`: its connections close, its ports refuse connections, and each
        partition it led (coordinators with them) moves to a running broker in a new epoch."""
        self.call(lambda: self.controlled_server().stop_node(node_id))

    def start_broker(self, node_id: int) -> None:
        """Start a stopped broker again on its ports; it rejoins every ISR."""
        self.call(lambda: self.controlled_server().start_node(node_id))

    def move_leader(self, topic: str, partition: int, node_id: int) -> int:
        """Make `node_id` the partition's leader; returns the new leader epoch. Clients still
        sending to the old leader get NOT_LEADER_OR_FOLLOWER."""
        return self.call(lambda: self.controlled().cluster.move_leader(topic, partition, node_id))

    def move_coordinator(
        self, node_id: int, *, group: str | None = None, transactional_id: str | None = None
    ) -> None:
        """Make `node_id` the coordinator of a group or a transactional id (with the others of
        its internal topic partition): requests to the old one get NOT_COORDINATOR."""
        from kafka_shim.shim.testbroker.cluster import coordinator_key

        key_type, key = coordinator_key(group, transactional_id)
        self.call(lambda: self.controlled().cluster.move_coordinator(key_type, key, node_id))

    def leader(self, topic: str, partition: int) -> int:
        """The partition's current leader (-1: no replica running)."""
        return self.call(lambda: self.controlled().cluster.leader(topic, partition))

    def coordinator(self, *, group: str | None = None, transactional_id: str | None = None) -> int:
        """The broker coordinating a group or a transactional id."""
        from kafka_shim.shim.testbroker.cluster import coordinator_key

        key_type, key = coordinator_key(group, transactional_id)
        return self.call(lambda: self.controlled().cluster.coordinator(key_type, key))

    def address(self, node_id: int) -> str:
        """Broker `node_id`'s first listener, "host:port"."""
        broker = self.controlled()
        host, port = broker.cluster.nodes[node_id].endpoints[broker.listeners[0].name]
        return f"{host}:{port}"
