"""Incremental fetch sessions (KIP-227): the broker remembers what a fetcher reads, so its
next Fetch names only what changed and the answer carries only partitions with news.

Pure and clock-free, as Kafka's FetchSession.scala behaves: `now` is an argument and
session ids come from the `ids` generator given. A request becomes one of four contexts
(Kafka's FetchContext variants):

- `SessionError`: an incremental fetch of an unknown session (FETCH_SESSION_ID_NOT_FOUND),
  at the wrong epoch (INVALID_FETCH_SESSION_EPOCH) or at a version whose topic naming (ids
  from v13, names before) differs from the session's (FETCH_SESSION_TOPIC_ID_ERROR);
- `Sessionless`: epoch FINAL_EPOCH (-1), or an incremental fetch that forgot every
  partition: the partitions asked for, answered with session id 0;
- `Full`: epoch INITIAL_EPOCH (0): a full answer, and a new session when the cache has or
  can make room (session id 0 when not; `max.incremental.fetch.session.cache.slots=0`
  disables sessions);
- `Incremental`: the session's partitions with the request's changes; the answer holds
  only partitions with records, errors, or a changed high watermark or log start offset, as
  Kafka's (the last stable offset moves only with an append, which moves the high
  watermark too).

A full request that names a session closes it first. Kafka 3.9 splits its cache into
shards by session id to spread lock contention; one Python thread serves every request
here, so there is one cache with every slot.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from kafka_shim.protocol.errors import ErrorCode

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0  # a full fetch that asks for a session
FINAL_EPOCH = -1  # a full fetch without a session (and closing one it names)
# Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: a session unused this long is stale,
# and a younger one may not be evicted for a larger one.
EVICTION_MS = 120_000
_MAX_ID = 2**31 - 1

# A partition as a session knows it: topic name (Fetch v4-12) or topic id (v13+), index.
TopicKey = str | uuid.UUID
PartitionKey = tuple[TopicKey, int]


def next_epoch(epoch: int) -> int:
    """The epoch after `epoch`: FINAL stays FINAL, and the sequence wraps to 1, never 0."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_ID else epoch + 1


class Wanted(NamedTuple):
    """What to read of a partition: from where, at most how much, and the topic's name when
    the partition was first asked for (None: an unknown topic id). A session keeps that
    name: a topic deleted while in a v13+ session is then reported by name
    (UNKNOWN_TOPIC_OR_PARTITION, or INCONSISTENT_TOPIC_ID once the name is reused), as
    Kafka's sessions do. A tuple: one is made per partition of every Fetch, and a frozen
    dataclass sets each field through `object.__setattr__`."""

    fetch_offset: int
    max_bytes: int
    topic_name: str | None


class Served(NamedTuple):
    """What an answer said of a partition, as far as a session compares it (a tuple, as Wanted)."""

    error_code: int
    high_watermark: int
    log_start_offset: int
    has_records: bool


@dataclass(slots=True)
class CachedPartition:
    wanted: Wanted
    high_watermark: int = -1
    log_start_offset: int = -1

    def unchanged(self, high_watermark: int, log_start_offset: int) -> bool:
        """Whether these are the offsets last reported (the partition's answer could be
        left out)."""
        return high_watermark == self.high_watermark and log_start_offset == self.log_start_offset

    def must_respond(self, served: Served) -> bool:
        """Whether an incremental answer includes the partition; remembers what it reports.
        After an error the cached high watermark is -1, so the partition is sent again once
        the error is gone."""
        changed = not self.unchanged(served.high_watermark, served.log_start_offset)
        self.high_watermark, self.log_start_offset = served.high_watermark, served.log_start_offset
        if served.error_code != ErrorCode.NONE:
            self.high_watermark = -1
            return True
        return changed or served.has_records


@dataclass(eq=False)
class FetchSession:
    id: int
    privileged: bool  # a follower's: never evicted by a consumer's while young
    uses_topic_ids: bool  # created by Fetch v13+
    created_ms: int
    epoch: int  # what the next incremental request must carry
    # In answer order: a partition that returns records moves to the end, so a response
    # cut short by max_bytes serves the others first next time.
    partitions: dict[PartitionKey, CachedPartition]
    last_used_ms: int = 0
    # As of the last touch, as Kafka keeps its eviction trees:
    size: int = 0
    evictable_by_all: bool = False
    evictable_by_privileged: bool = False

    def update(self, wanted: Mapping[PartitionKey, Wanted], forgotten: Iterable[PartitionKey]) -> None:
        for key, want in wanted.items():
            cached = self.partitions.get(key)
            if cached is None:
                self.partitions[key] = CachedPartition(want)
            else:
                name = cached.wanted.topic_name or want.topic_name
                cached.wanted = Wanted(want.fetch_offset, want.max_bytes, name)
        for key in forgotten:
            self.partitions.pop(key, None)


@dataclass(frozen=True)
class SessionError:
    """Answer `error` with session id 0 and no partitions."""

    error: ErrorCode


class Answer(NamedTuple):  # a tuple, as Wanted: one per Fetch
    error: ErrorCode
    session_id: int
    partitions: list[PartitionKey]  # those to include, in order


# What a sessionless or full fetch has reported before: nothing.
_NOTHING_REPORTED: Mapping[PartitionKey, CachedPartition] = MappingProxyType({})


@dataclass
class Sessionless:
    wanted: Mapping[PartitionKey, Wanted]
    reported = _NOTHING_REPORTED

    def answer(self, served: Mapping[PartitionKey, Served], now: int) -> Answer:
        return Answer(ErrorCode.NONE, INVALID_SESSION_ID, list(served))


@dataclass
class Full:
    wanted: Mapping[PartitionKey, Wanted]
    cache: FetchSessionCache
    privileged: bool
    uses_topic_ids: bool
    reported = _NOTHING_REPORTED

    def answer(self, served: Mapping[PartitionKey, Served], now: int) -> Answer:
        cached = {
            key: CachedPartition(self.wanted[key], s.high_watermark, s.log_start_offset)
            for key, s in served.items()
        }
        session_id = self.cache.maybe_create(now, self.privileged, self.uses_topic_ids, cached)
        return Answer(ErrorCode.NONE, session_id, list(served))


@dataclass
class Incremental:
    session: FetchSession
    expected_epoch: int  # the session's epoch once this request is answered

    @property
    def wanted(self) -> dict[PartitionKey, Wanted]:
        return {key: cached.wanted for key, cached in self.session.partitions.items()}

    @property
    def reported(self) -> Mapping[PartitionKey, CachedPartition]:
        """What the session's answers reported of each partition: a partition with nothing
        to read and these offsets unchanged is left out of the answer (served need not
        name it)."""
        return self.session.partitions

    def answer(self, served: Mapping[PartitionKey, Served], now: int) -> Answer:
        session = self.session
        if session.epoch != self.expected_epoch:
            # Another request of the session arrived while this one waited (a duplicate).
            return Answer(ErrorCode.INVALID_FETCH_SESSION_EPOCH, session.id, [])
        included = []
        for key, s in served.items():
            cached = session.partitions.get(key)
            if cached is None or not cached.must_respond(s):
                continue
            included.append(key)
            if s.has_records:
                session.partitions[key] = session.partitions.pop(key)
        return Answer(ErrorCode.NONE, session.id, included)


FetchContext = SessionError | Sessionless | Full | Incremental


@dataclass
class FetchSessionCache:
    """At most `max_entries` sessions; Kafka's eviction rules when full (see `_try_evict`)."""

    max_entries: int
    eviction_ms: int = EVICTION_MS
    ids: random.Random = field(default_factory=random.Random)
    sessions: dict[int, FetchSession] = field(default_factory=dict)

    def new_context(
        self,
        *,
        session_id: int,
        epoch: int,
        uses_topic_ids: bool,
        wanted: Mapping[PartitionKey, Wanted],
        forgotten: Iterable[PartitionKey],
        privileged: bool,
        now: int,
    ) -> FetchContext:
        """The context a Fetch with this session id and epoch is answered in."""
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                self.remove(session_id)
            if epoch == FINAL_EPOCH:
                return Sessionless(wanted)
            return Full(wanted, self, privileged, uses_topic_ids)
        session = self.sessions.get(session_id)
        if session is None:
            return SessionError(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return SessionError(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return SessionError(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        session.update(wanted, forgotten)
        if not session.partitions:
            self.remove(session_id)
            return Sessionless(wanted)
        self._touch(session, now)
        session.epoch = next_epoch(session.epoch)
        return Incremental(session, session.epoch)

    def maybe_create(
        self,
        now: int,
        privileged: bool,
        uses_topic_ids: bool,
        partitions: dict[PartitionKey, CachedPartition],
    ) -> int:
        """A new session's id, or INVALID_SESSION_ID when there is no room."""
        if len(self.sessions) >= self.max_entries and not self._try_evict(privileged, len(partitions), now):
            return INVALID_SESSION_ID
        session_id = self._new_id()
        session = FetchSession(
            session_id, privileged, uses_topic_ids, now, next_epoch(INITIAL_EPOCH), partitions
        )
        self.sessions[session_id] = session
        self._touch(session, now)
        return session_id

    def remove(self, session_id: int) -> None:
        self.sessions.pop(session_id, None)

    def _new_id(self) -> int:
        while True:
            session_id = self.ids.randrange(1, _MAX_ID)
            if session_id not in self.sessions:
                return session_id

    def _touch(self, session: FetchSession, now: int) -> None:
        session.last_used_ms = now
        session.size = len(session.partitions)
        old = now - session.created_ms > self.eviction_ms
        session.evictable_by_privileged = old or not session.privileged
        session.evictable_by_all = old

    def _try_evict(self, privileged: bool, size: int, now: int) -> bool:
        """Make room for a new session of `size` partitions by evicting, in Kafka's order:
        the least recently used session if it is stale (unused for eviction_ms); else the
        least valuable evictable one (unprivileged before privileged, then fewer partitions,
        then lower id) if the new one is worth at least as much. A privileged newcomer may
        evict any unprivileged session, others only sessions older than eviction_ms."""
        if not self.sessions:
            return False
        least_recent = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now - least_recent.last_used_ms > self.eviction_ms:
            self.remove(least_recent.id)
            return True
        candidates = [
            s
            for s in self.sessions.values()
            if (s.evictable_by_privileged if privileged else s.evictable_by_all)
        ]
        if not candidates:
            return False
        cheapest = min(candidates, key=lambda s: (s.privileged, s.size, s.id))
        if (privileged, size, INVALID_SESSION_ID) < (cheapest.privileged, cheapest.size, cheapest.id):
            return False
        self.remove(cheapest.id)
        return True
