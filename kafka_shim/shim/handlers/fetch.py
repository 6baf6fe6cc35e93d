"""Fetch: slices of stored batches, long-polled until min_bytes or max_wait_ms.

Incremental fetch sessions (KIP-227, shim.partitions.fetch_sessions): a full fetch at epoch 0 opens
a session; the session's next fetches name only partitions that changed or left it, and
are answered with only the partitions that have records, errors or new offsets. A long
poll reads every partition of the session and, when data arrives, still answers only
what changed.

Fetch v0-3 gets magic 0/1 message sets, down-converted from the stored batches
(control batches skipped, record headers dropped) as Kafka 3.x serves them; v0-2
never exceed a partition's max bytes for a first large batch (no KIP-74).

With several brokers (shim.testbroker.cluster) a partition led elsewhere is answered
NOT_LEADER_OR_FOLLOWER, and a current_leader_epoch (v9+) behind or ahead of the partition's
FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH, as Kafka answers them; from v16 with the
leader's id, epoch and address (KIP-951). A long poll ends when its partition's leader moves.

Under isolation_level read_committed a partition is served only below its last
stable offset, with the aborted transactions overlapping what is served: the
client drops their records (and skips control batches) itself, as with Kafka.

Reading a partition (isolation, zero-copy, down-conversion) is the partition service's
(shim.partitions.read); here are sessions, the long poll, budgets and leadership.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from kafka_shim.protocol.errors import NO_ERROR, ErrorCode
from kafka_shim.protocol.messages.fetch import API
from kafka_shim.protocol.tuples import fields_given, new_tuple
from kafka_shim.shim.context import RequestContext, leader_endpoints
from kafka_shim.shim.partitions.fetch_sessions import (
    CachedPartition,
    PartitionKey,
    Served,
    SessionError,
    TopicKey,
    Wanted,
)
from kafka_shim.shim.partitions.read import LAST_LEGACY_VERSION, aborted, down_converted, read, unservable
from kafka_shim.shim.quotas.throttling import fetch_byte_budget, throttle_fetch
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.topics import Topic

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.fetch import (
        FetchRequestData,
        FetchRequestForgottenTopicsData,
        FetchRequestTopics,
    )

__all__ = ["API", "handle"]

READ_COMMITTED = 1
FIRST_MIN_ONE_VERSION = 3  # KIP-74: the first batch is served even beyond the limits
FIRST_CURRENT_LEADER_VERSION = 16  # KIP-951: current_leader and node_endpoints filled in


# Wanted, Gathered and Served are built without their NamedTuple's Python `__new__`
# (protocol.tuples; a third of the cost): a Fetch makes one of each per partition.
fields_given(Wanted, "fetch_offset", "max_bytes", "topic_name")
fields_given(Served, "error_code", "high_watermark", "log_start_offset", "has_records")


class Gathered(NamedTuple):  # a tuple: one per Fetch (and per wake-up of a long poll)
    answers: dict[PartitionKey, dict[str, Any]]
    size: int
    must_answer: bool  # an error to report: Kafka answers at once
    logs: list[PartitionLog]  # what a long poll waits on


fields_given(Gathered, "answers", "size", "must_answer", "logs")


def _uses_topic_ids(ctx: RequestContext) -> bool:
    return ctx.api_version >= 13


def _topic_key(
    ctx: RequestContext, requested: FetchRequestTopics | FetchRequestForgottenTopicsData
) -> TopicKey:
    return requested.topic_id if _uses_topic_ids(ctx) else requested.topic


def _wanted(ctx: RequestContext, request: FetchRequestData) -> dict[PartitionKey, Wanted]:
    wanted = {}
    by_id = _uses_topic_ids(ctx)
    for t in request.topics:
        topic_key = t.topic_id if by_id else t.topic  # _topic_key, asked once per request
        name = _name(ctx, topic_key)
        for p in t.partitions:
            wanted[(topic_key, p.partition)] = new_tuple(
                Wanted, (p.fetch_offset, p.partition_max_bytes, name)
            )
    return wanted


def _forgotten(ctx: RequestContext, request: FetchRequestData) -> list[PartitionKey]:
    forgotten = request.forgotten_topics_data
    if not forgotten:  # nearly every request: no comprehension to call
        return []
    return [(_topic_key(ctx, t), index) for t in forgotten for index in t.partitions]


def _from_follower(request: FetchRequestData) -> bool:
    """A replica's fetch (Kafka's isFromFollower): its sessions are privileged."""
    state = request.replica_state
    return bool(request.replica_id >= 0 or (state is not None and state.replica_id >= 0))


def _name(ctx: RequestContext, key: TopicKey) -> str | None:
    if isinstance(key, str):
        return key
    topic = ctx.broker.topics.get_by_id(key)
    return None if topic is None else topic.name


def _topic(
    ctx: RequestContext, key: TopicKey, name: str | None, readable: set[str]
) -> tuple[Topic | None, ErrorCode]:
    """The topic to read, or None and the error of each of its partitions, as Kafka checks
    them: an unknown topic id first, then the READ permission (before the name's existence),
    then whether the topic named still has the id asked for (a session's topic deleted and
    created again under its name)."""
    if name is None:
        return None, ErrorCode.UNKNOWN_TOPIC_ID
    if name not in readable:
        return None, ctx.refusal(AclOperation.READ, ResourceType.TOPIC)
    topic = ctx.broker.topics.get(name)
    if topic is not None and isinstance(key, uuid.UUID) and topic.topic_id != key:
        return None, ErrorCode.INCONSISTENT_TOPIC_ID
    return topic, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def _readable(ctx: RequestContext, wanted: Mapping[PartitionKey, Wanted]) -> set[str]:
    names = {name for want in wanted.values() if (name := want.topic_name) is not None}
    return ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, names)


def _refused(index: int, error: ErrorCode, committed: bool) -> dict[str, Any]:
    return {
        "partition_index": index,
        "error_code": error,
        "high_watermark": -1,
        "last_stable_offset": -1,
        "log_start_offset": -1,
        # Null unless read_committed, as Kafka answers.
        "aborted_transactions": [] if committed else None,
        "records": b"",
    }


def _paused(log: PartitionLog, index: int, committed: bool) -> dict[str, Any]:
    """A partition whose fetches a fault rule pauses: its offsets as they are, no records."""
    return {
        "partition_index": index,
        "error_code": ErrorCode.NONE,
        "high_watermark": log.high_watermark,
        "last_stable_offset": log.last_stable_offset,
        "log_start_offset": log.log_start_offset,
        "aborted_transactions": [] if committed else None,
        "records": b"",
    }


def _read(
    ctx: RequestContext,
    log: PartitionLog,
    index: int,
    want: Wanted,
    limit: int,
    min_one: bool,
    committed: bool,
) -> tuple[dict[str, Any], int]:
    """The partition's answer from the partition service's read, and the bytes read (counted
    before down-conversion, as a budget and a quota count them)."""
    version = ctx.api_version
    code, records = read(
        log,
        want.fetch_offset,
        limit,
        min_one=min_one,
        committed=committed,
        zero_copy=ctx.zero_copy,
        version=version,
    )
    if code != NO_ERROR:
        # A read Kafka refuses (an offset out of range) answers -1 for every offset
        # (ReplicaManager's LogReadResult of an exception), not the log's.
        return _refused(index, code, committed), len(records)
    size = len(records)
    if version <= LAST_LEGACY_VERSION:
        code, records = down_converted(version, records, want.fetch_offset)
        if code != NO_ERROR:
            return _refused(index, code, committed), size
    answer = {
        "partition_index": index,
        "error_code": code,
        "high_watermark": log.high_watermark,
        "last_stable_offset": log.last_stable_offset,
        "log_start_offset": log.log_start_offset,
        "aborted_transactions": aborted(log, want.fetch_offset, records) if committed else None,
        "records": records,
    }
    return answer, size


def _gather(
    ctx: RequestContext,
    request: FetchRequestData,
    wanted: Mapping[PartitionKey, Wanted],
    reported: Mapping[PartitionKey, CachedPartition],
    readable: set[str],
    budget: int,
    epochs: Mapping[PartitionKey, int] | None,
) -> Gathered:
    """Read every wanted partition, except those of an incremental session with nothing to
    read and the offsets it last reported: its answer leaves them out (an idle session of
    many partitions costs a few attribute reads per partition)."""
    size = 0
    must_answer = False
    committed = request.isolation_level == READ_COMMITTED
    answers: dict[PartitionKey, dict[str, Any]] = {}
    logs: list[PartitionLog] = []
    faults = ctx.broker.faults
    pausing = faults.pausing  # a test broker's pause_fetch rule
    # Each topic looked up once: its name, what reading it finds, and whether this version
    # can be given its records (config lookups once per topic, not per partition).
    topics: dict[TopicKey, tuple[str | None, Topic | None, ErrorCode, ErrorCode]] = {}
    for key, want in wanted.items():
        topic_key, index = key
        found = topics.get(topic_key)
        if found is None or found[0] != want.topic_name:
            topic, missing = _topic(ctx, topic_key, want.topic_name, readable)
            refusal = (
                NO_ERROR
                if topic is None
                else unservable(topic, ctx.api_version, ctx.broker.config.kafka_value)
            )
            found = topics[topic_key] = (want.topic_name, topic, missing, refusal)
        _, topic, missing, refusal = found
        log = topic.partition(index) if topic is not None else None
        if log is None:
            must_answer = True
            answers[key] = _refused(index, missing, committed)
            continue
        if refusal != NO_ERROR:
            must_answer = True
            answers[key] = _refused(index, refusal, committed)
            continue
        if epochs is not None:  # several brokers: is this one the leader?
            assert want.topic_name is not None
            led = ctx.leader_error(want.topic_name, index, epochs.get(key, -1), log)
            if led != ErrorCode.NONE:
                must_answer = True
                answers[key] = _refused(index, led, committed)
                if ctx.api_version >= FIRST_CURRENT_LEADER_VERSION:
                    leader = ctx.broker.cluster.leader(want.topic_name, index)
                    answers[key]["current_leader"] = {"leader_id": leader, "leader_epoch": log.leader_epoch}
                continue
        logs.append(log)
        if pausing and topic is not None and faults.paused(topic.name, index, ctx.now_ms()):
            answers[key] = _paused(log, index, committed)
            continue
        prior = reported.get(key) if reported else None  # a full fetch's is empty: no lookup
        if prior is not None:
            end = log.last_stable_offset if committed else log.high_watermark
            if want.fetch_offset == end and prior.unchanged(log.high_watermark, log.log_start_offset):
                continue
        # KIP-74: only the first partition with data may exceed the limits.
        limit = min(want.max_bytes, budget - size)
        min_one = size == 0 and ctx.api_version >= FIRST_MIN_ONE_VERSION
        answers[key], read_size = _read(ctx, log, index, want, limit, min_one, committed)
        must_answer |= answers[key]["error_code"] != NO_ERROR
        size += read_size
    return new_tuple(Gathered, (answers, size, must_answer, logs))


def _served(answer: dict[str, Any]) -> Served:
    return new_tuple(
        Served,
        (answer["error_code"], answer["high_watermark"], answer["log_start_offset"], bool(answer["records"])),
    )


def _responses(
    ctx: RequestContext, answers: Mapping[PartitionKey, dict[str, Any]], included: Iterable[PartitionKey]
) -> list[dict[str, Any]]:
    """The partitions to send, grouped by topic in order (a topic whose partitions are not
    adjacent appears twice, as in Kafka's answers)."""
    field = "topic_id" if _uses_topic_ids(ctx) else "topic"
    responses: list[dict[str, Any]] = []
    current: TopicKey | None = None
    for key in included:
        topic_key, _ = key
        if not responses or topic_key != current:
            current = topic_key
            responses.append({field: topic_key, "partitions": []})
        responses[-1]["partitions"].append(answers[key])
    return responses


async def handle(ctx: RequestContext, request: FetchRequestData) -> dict[str, Any]:
    now = ctx.now_ms()
    context = ctx.broker.fetch_sessions.new_context(
        session_id=request.session_id,
        epoch=request.session_epoch,
        uses_topic_ids=_uses_topic_ids(ctx),
        wanted=_wanted(ctx, request),
        forgotten=_forgotten(ctx, request),
        privileged=_from_follower(request),
        now=now,
    )
    if isinstance(context, SessionError):
        return {"throttle_time_ms": 0, "error_code": context.error, "session_id": 0, "responses": []}
    wanted = context.wanted  # an incremental fetch: every partition of the session
    readable = _readable(ctx, wanted)  # once: a long poll does not ask again
    max_bytes = fetch_byte_budget(ctx, request.max_bytes)
    epochs = None if ctx.broker.cluster.single else _leader_epochs(ctx, request)
    # The long poll waits on wall time, as the client times it: not on the broker's clock, which
    # a test may freeze or advance (shim.testbroker.clock). It starts after the first read, as
    # Kafka's DelayedFetch does, so a Fetch answered at once reads no wall time.
    deadline = None
    while True:
        gathered = _gather(ctx, request, wanted, context.reported, readable, max_bytes, epochs)
        if gathered.must_answer or gathered.size >= min(request.min_bytes, max_bytes):
            break
        wall = ctx.wall_ms()
        if deadline is None:
            deadline = wall + max(request.max_wait_ms, 0)
        if deadline <= wall:
            break
        await ctx.wait_for_append(gathered.logs, deadline - wall)
    answers = gathered.answers
    if deadline is not None:  # it may have waited: the session is touched at answer time
        now = ctx.now_ms()
    answer = context.answer({key: _served(a) for key, a in answers.items()}, now)
    responses = _responses(ctx, answers, answer.partitions)
    response = {"error_code": answer.error, "session_id": answer.session_id, "responses": responses}
    if epochs is not None and ctx.api_version >= FIRST_CURRENT_LEADER_VERSION:
        response["node_endpoints"] = leader_endpoints(ctx, responses, "partitions")
    return throttle_fetch(ctx, response, gathered.size)


def _leader_epochs(ctx: RequestContext, request: FetchRequestData) -> dict[PartitionKey, int]:
    """The leader epoch the client believes current, for each partition this request names
    (partitions a session carries over are checked for leadership only)."""
    return {
        (_topic_key(ctx, t), p.partition): p.current_leader_epoch
        for t in request.topics
        for p in t.partitions
    }
