"""CreatePartitions: grow topics; every new partition lives on this broker. The new
partitions' logs are made off the event loop (as CreateTopics' are) and recorded with one
catalog write; the answer comes once they exist durably."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.create_partitions import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller.placement import check_replica_list, check_some_running
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.topics import NewPartitions, too_many_for_one_request

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.create_partitions import (
        CreatePartitionsRequestData,
        CreatePartitionsRequestTopics,
    )

__all__ = ["API", "handle"]


def _reserve(
    ctx: RequestContext, requested: CreatePartitionsRequestTopics, validate_only: bool
) -> dict[str, Any] | NewPartitions:
    """One topic's growth checked (and reserved unless only validated), or its answer."""
    topics = ctx.broker.topics
    try:
        topic = topics.check_partition_count(requested.name, requested.count)
        assignment = None
        if requested.assignments is not None:  # null: placed as the topic's first partitions were
            new = requested.count - len(topic.partitions)
            if len(requested.assignments) != new:
                raise StorageError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"Attempted to add {new} additional partition(s), but only "
                    f"{len(requested.assignments)} assignment(s) were specified.",
                )
            cluster = ctx.broker.cluster
            running = [node.node_id for node in cluster.running()]
            replication_factor = len(cluster.replicas(requested.name, 0))
            for index, assigned in enumerate(requested.assignments, start=len(topic.partitions)):
                check_replica_list(assigned.broker_ids, cluster.registered(), replication_factor)
                check_some_running(assigned.broker_ids, running, index)
            assignment = [list(assigned.broker_ids) for assigned in requested.assignments]
        reserved = topics.reserve_growth(requested.name, requested.count, assignment)
    except StorageError as exc:
        return {"name": requested.name, "error_code": exc.code, "error_message": exc.message}
    if validate_only:
        topics.release([reserved])
        return _done(requested.name)
    return reserved


def _done(name: str) -> dict[str, Any]:
    return {"name": name, "error_code": ErrorCode.NONE, "error_message": None}


def _too_many(ctx: RequestContext, requests: list[CreatePartitionsRequestTopics]) -> str | None:
    """The refusal of the whole request when it asks for more new partitions than
    controller.max.records.per.batch (as CreateTopics', KAFKA-19673), or None."""
    cap = ctx.broker.config.max_partitions_per_request
    topics = ctx.broker.topics
    asked = 0
    for requested in requests:
        topic = topics.get(requested.name)
        asked += max(requested.count - len(topic.partitions), 0) if topic is not None else 0
    return too_many_for_one_request(asked, cap)


async def _make(ctx: RequestContext, reserved: list[NewPartitions]) -> dict[str, dict[str, Any]]:
    """Make the new logs off the event loop, then record them on it (the topics' owner)."""
    topics = ctx.broker.topics
    try:
        await ctx.off_loop(lambda: topics.make(reserved))
        topics.commit(reserved)
    except StorageError as exc:
        return {
            new.topic.name: {"name": new.topic.name, "error_code": exc.code, "error_message": exc.message}
            for new in reserved
        }
    finally:
        topics.abandon(reserved)  # after a failure or a cancellation: nothing is left reserved
    gone = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # deleted while its partitions were made
    return {
        new.topic.name: _done(new.topic.name)
        if topics.get(new.topic.name) is new.topic
        else {"name": new.topic.name, "error_code": gone, "error_message": gone.default_message}
        for new in reserved
    }


async def handle(ctx: RequestContext, request: CreatePartitionsRequestData) -> dict[str, Any]:
    """As Kafka's ControllerApis.createPartitions: a name given twice is answered once, with 42,
    and nothing is done for it."""
    counts = Counter(t.name for t in request.topics)
    alterable = ctx.authorized_names(
        AclOperation.ALTER, ResourceType.TOPIC, (name for name, n in counts.items() if n == 1)
    )
    refused = {
        "error_code": ctx.refusal(AclOperation.ALTER, ResourceType.TOPIC),
        "error_message": "The topic authorization is failed.",
    }
    results = [
        {"name": name, "error_code": ErrorCode.INVALID_REQUEST, "error_message": "Duplicate topic name."}
        for name, n in counts.items()
        if n > 1
    ]
    wanted = [t for t in request.topics if counts[t.name] == 1]
    too_many = _too_many(ctx, [t for t in wanted if t.name in alterable])
    answers: dict[str, dict[str, Any]] = {}
    reserved: list[NewPartitions] = []
    for requested in wanted:
        if requested.name not in alterable:
            answers[requested.name] = {"name": requested.name, **refused}
        elif too_many is not None:
            answers[requested.name] = {
                "name": requested.name,
                "error_code": ErrorCode.POLICY_VIOLATION,
                "error_message": too_many,
            }
        else:
            outcome = _reserve(ctx, requested, request.validate_only)
            if isinstance(outcome, dict):
                answers[requested.name] = outcome
            else:
                reserved.append(outcome)
    if reserved:
        answers |= await _make(ctx, reserved)
    results += [answers[t.name] for t in wanted]
    return {"throttle_time_ms": 0, "results": results}
