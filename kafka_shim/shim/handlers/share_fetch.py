"""ShareFetch: a share-group member acknowledges what it was given (piggy-backed) and
acquires records for a while: released records first, then new batches, at least
max_records rounded up to whole batches (at most max_records in record_limit mode, v2).

Byte limits: max_bytes shared out evenly among the session's partitions, at least one whole
batch in the answer (a small fetch.max.bytes gets one batch a fetch, not everything).

Long poll: with nothing to acquire the request waits until a partition of its session is
appended to, a lock held by another member expires, or max_wait_ms passes. Epoch 0 opens
a share session (its partitions are the request's; later requests add partitions and forget
the forgotten ones); -1 acknowledges, closes the session and fetches nothing; a renewing
request (v2 is_renew_ack) fetches nothing either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.share_fetch import API, OPEN_SESSION_EPOCH, RECORD_LIMIT
from kafka_shim.protocol.share_state_records import SharePartitionKey
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.share.sessions import TopicPartition
from kafka_shim.shim.share import requests as share_requests
from kafka_shim.shim.share.partitions import Fetched
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import PartitionLog

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.share_fetch import ShareFetchRequestData

__all__ = ["API", "handle"]

DEFAULT_MAX_RECORDS = 500  # a request that names none (max_records 0): Kafka's max.poll.records


def _refused(error: ErrorCode, message: str | None) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "error_code": error,
        "error_message": message,
        "acquisition_lock_timeout_ms": 0,
        "responses": [],
        "node_endpoints": [],
    }


def _acquire(
    ctx: RequestContext,
    share: share_requests.ShareRequest,
    logs: dict[TopicPartition, PartitionLog],
    request: ShareFetchRequestData,
) -> dict[TopicPartition, Fetched]:
    """Acquire from the session's partitions as Kafka's DelayedShareFetch does: starting at a
    partition rotated by the request's epoch (PartitionRotateStrategy ROUND_ROBIN, so no
    partition is always served first), within max_records and max_bytes (the bytes shared out
    evenly, PartitionMaxBytesStrategy UNIFORM; at least one batch until one partition answers
    records, as minOneMessage)."""
    broker = ctx.broker
    budget = request.max_records if request.max_records > 0 else DEFAULT_MAX_RECORDS
    bytes_left = request.max_bytes if request.max_bytes > 0 else 0
    strict = (
        ctx.api_version >= share_requests.FIRST_RENEW_VERSION and request.share_acquire_mode == RECORD_LIMIT
    )
    order = list(logs)
    if order:
        turn = max(request.share_session_epoch, 0) % len(order)
        order = order[turn:] + order[:turn]
    per_partition = bytes_left // max(len(order), 1)
    fetched: dict[TopicPartition, Fetched] = {}
    for topic_id, index in order:
        if budget <= 0 or bytes_left <= 0:
            break
        key = SharePartitionKey(share.group_id, topic_id, index)
        try:
            got = broker.share_partitions.acquire(
                key,
                share.member_id,
                logs[(topic_id, index)],
                budget,
                ctx.now_ms(),
                strict=strict,
                max_bytes=min(per_partition, bytes_left),
                min_one=not fetched,
            )
        except StorageError as exc:  # nothing acquired: the records stay for a later fetch
            share.errors[(topic_id, index)] = share_requests.state_not_written(exc)
            continue
        if got.acquired:
            fetched[(topic_id, index)] = got
            budget -= sum(a.last_offset - a.first_offset + 1 for a in got.acquired)
            bytes_left -= len(got.records)
    return fetched


async def handle(ctx: RequestContext, request: ShareFetchRequestData) -> dict[str, Any]:
    share = share_requests.enter(ctx, request)
    if not isinstance(share, share_requests.ShareRequest):
        return _refused(*share)
    broker = ctx.broker
    share.session.add([(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions])
    share.session.forget([(t.topic_id, p) for t in request.forgotten_topics_data for p in t.partitions])
    share_requests.acknowledge(ctx, share, request)
    fetched: dict[TopicPartition, Fetched] = {}
    if not share.closing and not share.renewing:
        logs = {}
        for topic_id, index in share.session.partitions:
            log = share_requests.partition_log(ctx, share, topic_id, index)
            if log is not None:
                logs[(topic_id, index)] = log
        deadline = ctx.now_ms() + max(request.max_wait_ms, 0)
        keys = [SharePartitionKey(share.group_id, t, p) for t, p in logs]
        while True:
            fetched = _acquire(ctx, share, logs, request)
            now = ctx.now_ms()
            failed = any(key in share.errors for key in logs)  # a state write: answered now
            if fetched or failed or now >= deadline or not logs or request.min_bytes <= 0:
                break
            wake = deadline
            lock = broker.share_partitions.next_lock_deadline(keys)
            if lock is not None:  # another member's lock expiring frees records
                wake = min(wake, max(lock, now + 1))
            await ctx.wait_for_append(list(logs.values()), wake - now)
    requested = (
        {(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions}
        if request.share_session_epoch == OPEN_SESSION_EPOCH
        else set()
    )
    answers = {}
    for key in sorted({*share.errors, *share.acknowledged, *fetched, *requested}):
        got = fetched.get(key)
        answers[key] = {
            "partition_index": key[1],
            "error_code": share.errors.get(key, ErrorCode.NONE),
            "acknowledge_error_code": share.acknowledged.get(key, ErrorCode.NONE),
            "current_leader": share_requests.leader(ctx),
            "records": b"" if got is None else got.records,
            "acquired_records": [] if got is None else [a._asdict() for a in got.acquired],
        }
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "acquisition_lock_timeout_ms": broker.group_configs.share_config_of(
            share.group_id
        ).record_lock_duration_ms,
        "responses": share_requests.by_topic(answers),
        "node_endpoints": [],
    }
