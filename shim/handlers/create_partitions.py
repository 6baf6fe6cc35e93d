"""CreatePartitions: grow topics; every new partition lives on this broker."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.create_partitions import API
from kafka_shim.shim.authorizer import AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.placement import check_replica_list, check_some_running
from kafka_shim.storage.errors import StorageError

__all__ = ["API", "handle"]


def _grow(ctx: RequestContext, requested: Any, validate_only: bool) -> dict[str, Any]:
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
        if not validate_only:
            topics.add_partitions(requested.name, requested.count, assignment)
    except StorageError as exc:
        return {"name": requested.name, "error_code": exc.code, "error_message": exc.message}
    return {"name": requested.name, "error_code": ErrorCode.NONE, "error_message": None}


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
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
    results += [
        _grow(ctx, t, request.validate_only) if t.name in alterable else {"name": t.name, **refused}
        for t in request.topics
        if counts[t.name] == 1
    ]
    return {"throttle_time_ms": 0, "results": results}
