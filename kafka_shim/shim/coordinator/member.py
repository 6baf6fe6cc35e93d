"""One member of a classic group, and what it is waiting for.

Once made, its fields are written only through its group's `changing(member)`, which keeps
them for the undo of a step whose records are not written (group.SavedGroup); the coordinator
tests fail a write that skips it (tests/shim/coordinator/conftest.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_shim.shim.coordinator.outcome import Waiter
from kafka_shim.shim.coordinator.types import JoinedMember, Protocol


@dataclass(eq=False)
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[Protocol, ...]
    assignment: bytes = b""
    # The JoinGroup / SyncGroup request waiting for its answer.
    awaiting_join: Waiter | None = None
    awaiting_sync: Waiter | None = None
    # Joined but not yet part of a completed generation: expires on a fixed join timeout.
    is_new: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    def protocol_names(self) -> set[str]:
        return {p.name for p in self.protocols}

    def matches(self, protocols: tuple[Protocol, ...]) -> bool:
        """Same protocols, same order, same metadata: a retry rather than a change."""
        return self.protocols == protocols

    def metadata(self, protocol_name: str) -> bytes:
        for protocol in self.protocols:
            if protocol.name == protocol_name:
                return protocol.metadata
        raise KeyError(f"member {self.member_id} does not support {protocol_name}")

    def vote(self, candidates: set[str]) -> str:
        """The member's most preferred protocol among those every member supports."""
        for protocol in self.protocols:
            if protocol.name in candidates:
                return protocol.name
        raise KeyError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def joined(self, protocol_name: str) -> JoinedMember:
        return JoinedMember(self.member_id, self.group_instance_id, self.metadata(protocol_name))
