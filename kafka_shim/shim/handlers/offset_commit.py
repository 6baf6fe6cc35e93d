"""OffsetCommit: offsets of a group member (fenced by generation) or of a standalone consumer.

As in Kafka, a partition that does not exist is answered UNKNOWN_TOPIC_OR_PARTITION here,
before the coordinator sees the request; the others in the same request still commit, and a
request naming none that exists never reaches the coordinator. From v10 (Kafka 4.2) topics are
named by id: an id the broker does not know is UNKNOWN_TOPIC_ID, before authorization."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.messages.offset_commit import API
from kafka_shim.protocol.tuples import fields_given, new_tuple
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import CommitRequest, OffsetCommit, TopicPartition, by_topic
from kafka_shim.shim.security.authorization import GROUP, READ, TOPIC  # enum members read once

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.offset_commit import OffsetCommitRequestData

__all__ = ["API", "handle"]

DEFAULT_RETENTION = -1
INT64_SPAN = 1 << 64


# Built without their NamedTuple's Python __new__ (protocol.tuples): three per committed partition.
fields_given(TopicPartition, "topic", "partition")
fields_given(OffsetCommit, "offset", "leader_epoch", "metadata", "expire_timestamp")
fields_given(CommitRequest, "group_id", "offsets", "generation_id", "member_id", "group_instance_id")


async def handle(ctx: RequestContext, request: OffsetCommitRequestData) -> dict[str, Any]:
    now = ctx.now_ms()
    broker = ctx.broker
    version = ctx.api_version
    group_id = request.group_id
    topics = request.topics
    # Each topic's name; from v10 it is named by id (None: an id the broker does not know).
    # Loops, not comprehensions, here and for the answer: on 3.11 a comprehension is a call.
    names: list[str | None] = []
    known_names: list[str] = []
    for t in topics:
        name = t.name if version < 10 else broker.topic_name(t.topic_id)
        names.append(name)
        if name is not None:
            known_names.append(name)
    # v2-4 may name a retention of their own; from v5 only the broker's retention applies.
    retention = request.retention_time_ms
    expire_at = None
    if 2 <= version <= 4 and retention != DEFAULT_RETENTION:
        # Kafka adds them as Java longs: a huge retention wraps around instead of failing.
        expire_at = (now + retention + INT64_SPAN // 2) % INT64_SPAN - INT64_SPAN // 2
    errors: dict[TopicPartition, ErrorCode] = {}
    commits: dict[TopicPartition, OffsetCommit] = {}
    # READ on the group, then on each topic (before its existence), as Kafka checks them.
    group_denial = ctx.denial(READ, GROUP, group_id)
    readable = ctx.authorized_names(READ, TOPIC, known_names) if group_denial is None else set()
    unknown_ids: list[dict[str, Any]] = []
    known = broker.topics.get
    for topic, name in zip(topics, names, strict=True):
        if name is None:
            code = group_denial or ErrorCode.UNKNOWN_TOPIC_ID
            partitions = [
                {"partition_index": p.partition_index, "error_code": code} for p in topic.partitions
            ]
            unknown_ids.append({"topic_id": topic.topic_id, "partitions": partitions})
            continue
        found = known(name)  # once per topic, not per partition
        count = len(found.partitions) if found is not None else 0
        for p in topic.partitions:
            tp = new_tuple(TopicPartition, (name, p.partition_index))
            if group_denial is not None:
                errors[tp] = group_denial
            elif name not in readable:
                errors[tp] = ctx.refusal(READ, TOPIC)
            elif not 0 <= tp.partition < count:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                commits[tp] = new_tuple(
                    OffsetCommit,
                    (p.committed_offset, p.committed_leader_epoch, p.committed_metadata, expire_at),
                )
    if commits and not ctx.coordinates(GROUP_KEY_TYPE, group_id):
        errors.update(dict.fromkeys(commits, ErrorCode.NOT_COORDINATOR))
    elif commits:
        commit = new_tuple(
            CommitRequest,
            (
                group_id,
                commits,
                request.generation_id_or_member_epoch,
                request.member_id,
                request.group_instance_id,
            ),
        )
        errors.update(broker.group_service.commit_offsets(commit, version, now))
    # v10 answers ids (older versions have no such field: their ids are not looked up).
    ids: dict[str, Any] = {}
    if version >= 10:
        ids = {name: t.topic_id for t, name in zip(topics, names, strict=True) if name is not None}
    answer: list[dict[str, Any]] = []
    for answered_name, grouped in by_topic(errors).items():
        answered: list[dict[str, Any]] = []
        for index, error in grouped:
            answered.append({"partition_index": index, "error_code": error})
        topic_id = ids.get(answered_name, ZERO_UUID)
        answer.append({"name": answered_name, "topic_id": topic_id, "partitions": answered})
    return {"throttle_time_ms": 0, "topics": answer + unknown_ids}
