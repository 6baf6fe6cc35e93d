"""The test broker's Python front end: fault rules, the broker's clock and recorded requests, as
methods of an in-process broker (shim.server.BrokerThread) and of the pytest fixture's object.

    shim.add_fault(api="OffsetCommit", group="g", error="REBALANCE_IN_PROGRESS", times=1)
    shim.advance_clock(46)            # every session of 45 s expires now
    shim.requests(api="OffsetCommit", group="g")[-1].request.topics

Every call runs on the broker's thread between requests (`call`), so it is safe while clients
are connected. The rule specs and match keys are the control endpoint's (shim.faults). This
module imports nothing beyond the standard library when loaded: the pytest plugin uses it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.shim.recording import RecordedRequest

T = TypeVar("T")


class BrokerControls(ABC):
    @abstractmethod
    def controlled(self) -> Broker:
        """The broker these controls act on."""

    @abstractmethod
    def call(self, fn: Callable[[], T], timeout_s: float = 10.0) -> T:
        """fn() on the broker's thread, between requests."""

    # -- fault rules ----------------------------------------------------------------------

    def add_fault(self, **spec: Any) -> int:
        """Add a fault rule (keys as in shim.faults: api, group, topic..., error, times, delay_ms,
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
        """Move the broker's clock on (clients keep theirs); deadlines it passes fire at once.
        Returns the broker's new now (epoch ms)."""
        return self.call(lambda: self.controlled().broker_clock.advance(seconds))

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
