"""Share sessions (KIP-932's fetch sessions for share groups): which partitions a member
fetches, and the epoch its next ShareFetch or ShareAcknowledge must carry. Pure.

A request at epoch 0 opens a session (a member's earlier one is replaced); its next request
carries 1, then 2, ... (after 2**31-1 comes 1); -1 closes it. A request at another epoch is
INVALID_SHARE_SESSION_EPOCH, one for a member without a session SHARE_SESSION_NOT_FOUND.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.share_fetch import CLOSE_SESSION_EPOCH, OPEN_SESSION_EPOCH

TopicPartition = tuple[uuid.UUID, int]
MAX_EPOCH = 2**31 - 1


def next_epoch(epoch: int) -> int:
    return 1 if epoch == MAX_EPOCH else epoch + 1


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    epoch: int  # the epoch the member's next request must carry
    partitions: list[TopicPartition] = field(default_factory=list)

    def add(self, partitions: list[TopicPartition]) -> None:
        self.partitions += [p for p in partitions if p not in self.partitions]

    def forget(self, partitions: list[TopicPartition]) -> None:
        self.partitions = [p for p in self.partitions if p not in partitions]


class ShareSessions:
    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str], ShareSession] = {}

    def enter(self, group_id: str, member_id: str, epoch: int) -> ShareSession | ErrorCode:
        """The member's session for a request at `epoch`: a new one at 0; else its own,
        advanced to the next epoch; -1 ends it (the request is served, then it is gone)."""
        key = (group_id, member_id)
        if epoch == OPEN_SESSION_EPOCH:
            opened = self._sessions[key] = ShareSession(group_id, member_id, next_epoch(epoch))
            return opened
        session = self._sessions.get(key)
        if session is None:
            return ErrorCode.SHARE_SESSION_NOT_FOUND
        if epoch == CLOSE_SESSION_EPOCH:
            del self._sessions[key]
            return session
        if epoch != session.epoch:
            return ErrorCode.INVALID_SHARE_SESSION_EPOCH
        session.epoch = next_epoch(epoch)
        return session

    def drop_member(self, group_id: str, member_id: str) -> None:
        """A member that left its group loses its session."""
        self._sessions.pop((group_id, member_id), None)
