"""Committed offsets of one group: validation of commits, fetches, retention (Kafka's
GroupMetadataManager and the offset parts of GroupMetadata).

Every change to a group's offsets goes through `store` or `remove`, which add
the offsets-log record of each change to `records`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from kafka_shim.protocol.errors import NO_ERROR, ErrorCode
from kafka_shim.protocol.offsets_records import OffsetsRecord, OffsetValue
from kafka_shim.protocol.tuples import fields_given, new_tuple
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.records import offset_record, offset_tombstone
from kafka_shim.shim.coordinator.state import EMPTY, GroupState
from kafka_shim.shim.coordinator.types import (
    UNKNOWN_MEMBER_ID,
    FetchedOffset,
    OffsetCommit,
    TopicPartition,
)

fields_given(OffsetValue, "offset", "leader_epoch", "metadata", "commit_timestamp", "expire_timestamp")


def validate_member(group: Group, member_id: str, group_instance_id: str | None) -> ErrorCode | None:
    """Kafka's validateCurrentMember: a static id must map to this member id; the member must exist."""
    if group_instance_id is not None:
        current = group.static_members.get(group_instance_id)
        if current is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if current != member_id:
            return ErrorCode.FENCED_INSTANCE_ID
    if member_id not in group.members:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return None


def validate_commit(
    group: Group,
    generation_id: int,
    member_id: str,
    group_instance_id: str | None,
    *,
    transactional: bool = False,
) -> ErrorCode | None:
    empty = group.state is EMPTY  # not group.is_: a frame less on every commit
    if generation_id < 0 and empty:
        # Standalone consumers and admin tools commit without a generation into empty groups.
        return None
    if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
        error = validate_member(group, member_id, group_instance_id)
        if error is None and generation_id != group.generation_id:
            error = ErrorCode.ILLEGAL_GENERATION
        return error
    if not transactional and not empty:
        # Only members commit into a group that has some. TxnOffsetCommit v0-2 carry no
        # member at all, so Kafka lets transactional commits through.
        return ErrorCode.UNKNOWN_MEMBER_ID
    return None


def accept(
    offsets: Mapping[TopicPartition, OffsetCommit], now: int, metadata_max_bytes: int
) -> tuple[dict[TopicPartition, OffsetValue], dict[TopicPartition, ErrorCode]]:
    """The commits to keep, stamped `now`, and every partition's answer."""
    accepted: dict[TopicPartition, OffsetValue] = {}
    errors: dict[TopicPartition, ErrorCode] = {}
    for tp, commit in offsets.items():
        metadata = commit.metadata or ""
        # Encoded only when it might be too long (UTF-8 takes at most 4 bytes a character).
        if len(metadata) * 4 > metadata_max_bytes and len(metadata.encode("utf-8")) > metadata_max_bytes:
            errors[tp] = ErrorCode.OFFSET_METADATA_TOO_LARGE
            continue
        # OffsetValue(...) without its Python __new__ (protocol.tuples): on every commit.
        value = (commit.offset, commit.leader_epoch, metadata, now, commit.expire_timestamp)
        accepted[tp] = new_tuple(OffsetValue, value)
        errors[tp] = NO_ERROR
    return accepted, errors


def store(group: Group, accepted: Mapping[TopicPartition, OffsetValue], records: list[OffsetsRecord]) -> None:
    for tp, committed in accepted.items():
        group.offsets[tp] = committed
        records.append(offset_record(group.group_id, tp, committed))


def fetch(
    group: Group | None,
    partitions: Iterable[TopicPartition] | None,
    unstable: Callable[[TopicPartition], bool] = lambda tp: False,
) -> dict[TopicPartition, FetchedOffset]:
    """Offsets regardless of the group's state: standalone consumers have no membership.

    `partitions` None means every committed partition. An `unstable` partition (one
    with a transactional offset pending, when require_stable asks) answers
    UNSTABLE_OFFSET_COMMIT without an offset, as Kafka does.
    """
    committed = {} if group is None else group.offsets
    wanted = committed.keys() if partitions is None else partitions
    result: dict[TopicPartition, FetchedOffset] = {}
    for tp in wanted:
        offset = committed.get(tp)
        if unstable(tp):
            result[tp] = FetchedOffset(error=ErrorCode.UNSTABLE_OFFSET_COMMIT)
        elif offset is None:
            result[tp] = FetchedOffset()
        else:
            result[tp] = FetchedOffset(offset.offset, offset.leader_epoch, offset.metadata)
    return result


def remove(group: Group, partitions: Iterable[TopicPartition], records: list[OffsetsRecord]) -> None:
    for tp in partitions:
        if group.offsets.pop(tp, None) is not None:
            records.append(offset_tombstone(group.group_id, tp))


def expired(
    group: Group,
    now: int,
    retention_ms: int,
    pending: Callable[[TopicPartition], bool],
    consumer_group_topics: frozenset[str] | None = None,
) -> list[TopicPartition]:
    """Kafka's offset expiration conditions, by what the group is. A `pending` partition
    (a transaction may still commit an offset for it) keeps its offset for now.
    `consumer_group_topics`: when a KIP-848 consumer group of this id keeps its offsets in
    this (empty) entry, the topics its members subscribe to."""
    return [tp for tp in _expired(group, now, retention_ms, consumer_group_topics) if not pending(tp)]


def _expired(
    group: Group, now: int, retention_ms: int, consumer_group_topics: frozenset[str] | None
) -> list[TopicPartition]:

    def older_than_retention(base: int, offset: OffsetValue) -> bool:
        if offset.expire_timestamp is not None:  # OffsetCommit v2-4 asked for its own retention
            return now >= offset.expire_timestamp
        return now - base >= retention_ms

    if consumer_group_topics is not None:
        # Kafka's ConsumerGroup: offsets of topics a member subscribes to stay, whatever their
        # age; the others age from their commit (all of them once the group has no members).
        return [
            tp
            for tp, o in group.offsets.items()
            if tp.topic not in consumer_group_topics and older_than_retention(o.commit_timestamp, o)
        ]
    if group.protocol_type is not None and group.is_(GroupState.EMPTY):
        # Nobody consumes: the clock runs from when the group became empty.
        return [tp for tp, o in group.offsets.items() if older_than_retention(group.state_since_ms, o)]
    if (
        group.protocol_type == "consumer"
        and group.subscribed_topics is not None
        and group.is_(GroupState.STABLE)
    ):
        # A live consumer group loses only offsets of topics it no longer subscribes to.
        return [
            tp
            for tp, o in group.offsets.items()
            if tp.topic not in group.subscribed_topics and older_than_retention(o.commit_timestamp, o)
        ]
    if group.protocol_type is None:
        # Only ever used to store offsets (no membership): each offset ages from its commit.
        return [tp for tp, o in group.offsets.items() if older_than_retention(o.commit_timestamp, o)]
    return []
