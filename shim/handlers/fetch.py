"""Fetch: slices of stored batches, long-polled until min_bytes or max_wait_ms.

Sessionless only: every answer carries session_id 0, which tells a client
that asked for a session (KIP-227) to keep sending full fetch requests.

Fetch v0-3 gets magic 0/1 message sets, down-converted from the stored batches
(control batches skipped, record headers dropped) as Kafka 3.x serves them; v0-2
never exceed a partition's max bytes for a first large batch (no KIP-74).

Under isolation_level read_committed a partition is served only below its last
stable offset, with the aborted transactions overlapping what is served: the
client drops their records (and skips control batches) itself, as with Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.legacy_records import downconvert
from kafka_shim.protocol.messages.fetch import API
from kafka_shim.protocol.records import RecordsError, iter_headers
from kafka_shim.shim.authorizer import AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.throttling import fetch_byte_budget, throttle_fetch
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.topic_configs import effective_value
from kafka_shim.storage.topics import Topic

__all__ = ["API", "handle"]

READ_COMMITTED = 1
FINAL_EPOCH = -1  # session_epoch of a sessionless full fetch
INITIAL_EPOCH = 0  # asks to open a session; answering session_id 0 declines
LAST_MAGIC_0_VERSION = 1  # v0-1 read magic 0 message sets, v2-3 magic 1
LAST_LEGACY_VERSION = 3
FIRST_MIN_ONE_VERSION = 3  # KIP-74: the first batch is served even beyond the limits
FIRST_ZSTD_VERSION = 10


@dataclass
class Gathered:
    responses: list[dict[str, Any]]
    size: int
    must_answer: bool  # an error to report: Kafka answers at once
    logs: list[PartitionLog]  # what a long poll waits on


def _topic(ctx: RequestContext, requested: Any, readable: set[str]) -> tuple[Topic | None, ErrorCode]:
    """The topic to read, or None and the error of each of its partitions: an unknown topic
    id first, then (before a name's existence) the READ permission, as Kafka checks them."""
    topics = ctx.broker.topics
    if ctx.api_version >= 13:
        topic = topics.get_by_id(requested.topic_id)
        if topic is None:
            return None, ErrorCode.UNKNOWN_TOPIC_ID
        name = topic.name
    else:
        name = requested.topic
    if name not in readable:
        return None, ErrorCode.TOPIC_AUTHORIZATION_FAILED
    return topics.get(name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def _readable(ctx: RequestContext, request: Any) -> set[str]:
    if ctx.api_version >= 13:
        found = (ctx.broker.topics.get_by_id(t.topic_id) for t in request.topics)
        names = [topic.name for topic in found if topic is not None]
    else:
        names = [t.topic for t in request.topics]
    return ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, names)


def _read(
    log: PartitionLog, offset: int, limit: int, min_one: bool, committed: bool
) -> tuple[ErrorCode, bytes]:
    try:
        if committed:
            return ErrorCode.NONE, log.read_committed(offset, limit, min_one=min_one)
        return ErrorCode.NONE, log.read(offset, limit, min_one=min_one)
    except StorageError as exc:
        return exc.code, b""


def _aborted(log: PartitionLog, offset: int, records: bytes) -> list[dict[str, int]]:
    """The aborted transactions with records among those served, as Kafka lists them."""
    if not records or not log.aborted_ranges(offset, log.last_stable_offset):
        return []  # the common case: no walk over the batches served
    *_, last = iter_headers(records)
    return [
        {"producer_id": txn.producer_id, "first_offset": txn.first_offset}
        for txn in log.aborted_transactions(offset, last.last_offset + 1)
    ]


def _unconvertible(ctx: RequestContext, topic: Topic) -> ErrorCode:
    """Kafka's answer for a partition an old Fetch version cannot be given: a zstd topic
    before v10, or v0-3 where the topic disables down-conversion."""
    version = ctx.api_version
    if version >= FIRST_ZSTD_VERSION:  # today's clients: no config lookups on their path
        return ErrorCode.NONE
    broker_value = ctx.broker.config.kafka_value
    if effective_value(topic.configs, "compression.type", broker_value) == "zstd":
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    enabled = effective_value(topic.configs, "message.downconversion.enable", broker_value)
    if version <= LAST_LEGACY_VERSION and enabled != "true":
        return ErrorCode.UNSUPPORTED_VERSION
    return ErrorCode.NONE


def _down_converted(version: int, records: bytes, fetch_offset: int) -> tuple[ErrorCode, bytes]:
    magic = 0 if version <= LAST_MAGIC_0_VERSION else 1
    try:
        return ErrorCode.NONE, downconvert(records, magic, fetch_offset)
    except RecordsError as exc:
        return exc.code, b""


def _gather(ctx: RequestContext, request: Any, readable: set[str], budget: int) -> Gathered:
    size = 0
    must_answer = False
    committed = request.isolation_level == READ_COMMITTED
    responses = []
    logs: list[PartitionLog] = []
    for requested in request.topics:
        topic, missing = _topic(ctx, requested, readable)
        partitions = []
        for p in requested.partitions:
            log = topic.partition(p.partition) if topic is not None else None
            answer: dict[str, Any] = {
                "partition_index": p.partition,
                # Null unless read_committed, as Kafka answers.
                "aborted_transactions": [] if committed else None,
                "records": b"",
            }
            if log is None:
                must_answer = True
                partitions.append(answer | {"error_code": missing, "high_watermark": -1})
                continue
            logs.append(log)
            # KIP-74: only the first partition with data may exceed the limits.
            limit = min(p.partition_max_bytes, budget - size)
            min_one = size == 0 and ctx.api_version >= FIRST_MIN_ONE_VERSION
            code, records = _read(log, p.fetch_offset, limit, min_one, committed)
            must_answer |= code != ErrorCode.NONE
            size += len(records)
            assert topic is not None  # a log was found in it
            refusal = _unconvertible(ctx, topic)
            if refusal != ErrorCode.NONE:
                partitions.append(answer | {"error_code": refusal, "high_watermark": -1})
                continue
            if ctx.api_version <= LAST_LEGACY_VERSION and code == ErrorCode.NONE:
                code, records = _down_converted(ctx.api_version, records, p.fetch_offset)
                if code != ErrorCode.NONE:
                    partitions.append(answer | {"error_code": code, "high_watermark": -1})
                    continue
            if committed:
                answer["aborted_transactions"] = _aborted(log, p.fetch_offset, records)
            partitions.append(
                answer
                | {
                    "error_code": code,
                    "high_watermark": log.high_watermark,
                    "last_stable_offset": log.last_stable_offset,
                    "log_start_offset": log.log_start_offset,
                    "records": records,
                }
            )
        key = {"topic_id": requested.topic_id} if ctx.api_version >= 13 else {"topic": requested.topic}
        responses.append(key | {"partitions": partitions})
    return Gathered(responses, size, must_answer, logs)


def _session_error(request: Any) -> ErrorCode:
    if request.session_id != 0:
        return ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    if request.session_epoch not in (FINAL_EPOCH, INITIAL_EPOCH):
        return ErrorCode.INVALID_FETCH_SESSION_EPOCH
    return ErrorCode.NONE


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    error = _session_error(request)
    if error != ErrorCode.NONE:
        return {"throttle_time_ms": 0, "error_code": error, "session_id": 0, "responses": []}
    deadline = ctx.now_ms() + max(request.max_wait_ms, 0)
    readable = _readable(ctx, request)  # once: a long poll does not ask again
    max_bytes = fetch_byte_budget(ctx, request.max_bytes)
    while True:
        gathered = _gather(ctx, request, readable, max_bytes)
        remaining = deadline - ctx.now_ms()
        if gathered.must_answer or gathered.size >= min(request.min_bytes, max_bytes) or remaining <= 0:
            break
        await ctx.wait_for_append(gathered.logs, remaining)
    response = {"error_code": ErrorCode.NONE, "session_id": 0, "responses": gathered.responses}
    return throttle_fetch(ctx, response, gathered.size)
