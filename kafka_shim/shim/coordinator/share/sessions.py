"""Share sessions (KIP-932's fetch sessions for share groups), as Kafka 4.2's ShareSessionCache
keeps them: which partitions a member fetches, and the epoch its next ShareFetch or
ShareAcknowledge must carry. Pure.

| session  | request (epoch)                   | answer / next                                         |
|----------|-----------------------------------|-------------------------------------------------------|
| any      | ShareFetch 0                      | the old one removed; a new one at epoch 1, or         |
|          |                                   | SHARE_SESSION_LIMIT_REACHED when the broker has       |
|          |                                   | group.share.max.share.sessions                        |
| none     | any other epoch                   | SHARE_SESSION_NOT_FOUND                               |
| epoch E  | E                                 | served; next E + 1 (after 2**31-1 comes 1)            |
| epoch E  | another epoch > 0                 | INVALID_SHARE_SESSION_EPOCH                           |
| epoch E  | -1                                | served (acknowledgements applied), then removed and   |
|          |                                   | the member's records given back                       |
| any      | its connection closes             | removed, the member's records given back              |

A member leaving its share group (or timed out by it) keeps its share session, as in Kafka:
sessions belong to the broker's fetch path, not to the group coordinator, so acknowledgements
a closing client sends after its leave heartbeat still find their session.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.share_fetch import CLOSE_SESSION_EPOCH, OPEN_SESSION_EPOCH

TopicPartition = tuple[uuid.UUID, int]
SessionKey = tuple[str, str]  # (group id, member id): Kafka's ShareSessionKey
MAX_EPOCH = 2**31 - 1
DEFAULT_MAX_SESSIONS = 2000  # group.share.max.share.sessions


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
    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        self.max_sessions = max_sessions
        self._sessions: dict[SessionKey, ShareSession] = {}
        # The session each connection opened last (Kafka's connectionIdToSessionMap).
        self._by_connection: dict[str, SessionKey] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self._sessions.get((group_id, member_id))

    def enter(
        self, group_id: str, member_id: str, epoch: int, connection: str = ""
    ) -> ShareSession | ErrorCode:
        """The member's session for a request at `epoch`: a new one at 0 (opened on
        `connection`); else its own, advanced to the next epoch; at -1 its own as it is (the
        caller ends it with `end` once the request's acknowledgements are applied)."""
        key = (group_id, member_id)
        if epoch == OPEN_SESSION_EPOCH:
            self._sessions.pop(key, None)
            if len(self._sessions) >= self.max_sessions:
                return ErrorCode.SHARE_SESSION_LIMIT_REACHED
            opened = self._sessions[key] = ShareSession(group_id, member_id, next_epoch(epoch))
            self._by_connection[connection] = key
            return opened
        session = self._sessions.get(key)
        if session is None:
            return ErrorCode.SHARE_SESSION_NOT_FOUND
        if epoch == CLOSE_SESSION_EPOCH:
            return session
        if epoch != session.epoch:
            return ErrorCode.INVALID_SHARE_SESSION_EPOCH
        session.epoch = next_epoch(epoch)
        return session

    def end(self, group_id: str, member_id: str) -> bool:
        """The session is over (its final epoch was served); whether it was still open."""
        return self._sessions.pop((group_id, member_id), None) is not None

    def disconnected(self, connection: str) -> SessionKey | None:
        """The connection closed: the session it opened last ends (if still open), whose member
        then gives back its records. Its key, or None."""
        key = self._by_connection.pop(connection, None)
        if key is None or self._sessions.pop(key, None) is None:
            return None
        return key
