"""CreateTopics: single-replica topics, optional configs, validate_only."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.create_topics import API
from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.handlers.describe_configs import config_source
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.topic_configs import resolve

__all__ = ["API", "handle"]


def _partition_count(ctx: RequestContext, requested: Any) -> int | None:
    """The requested count; StorageError when the replica layout is impossible."""
    node = ctx.broker.node_id
    if requested.replication_factor not in (1, -1):
        raise StorageError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"replication factor {requested.replication_factor}: this cluster has one broker",
        )
    if not requested.assignments:
        return requested.num_partitions  # type: ignore[no-any-return]
    if requested.num_partitions != -1 or requested.replication_factor != -1:
        raise StorageError(
            ErrorCode.INVALID_REQUEST,
            "with manual assignments, num_partitions and replication_factor must be -1",
        )
    indexes = sorted(a.partition_index for a in requested.assignments)
    if indexes != list(range(len(indexes))):
        raise StorageError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "partition indexes must be 0..n-1")
    if any(a.broker_ids != [node] for a in requested.assignments):
        raise StorageError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"the only broker is {node}")
    return len(indexes)


def _create(ctx: RequestContext, requested: Any, validate_only: bool) -> dict[str, Any]:
    topics = ctx.broker.topics
    configs = {c.name: c.value for c in requested.configs}
    try:
        count = _partition_count(ctx, requested)
        if validate_only:
            count = topics.check_new(requested.name, count, configs)
            topic_id = None
            overrides = {k: v for k, v in configs.items() if v is not None}
        else:
            topic = topics.create(requested.name, count, configs)
            count, topic_id, overrides = len(topic.partitions), topic.topic_id, topic.configs
    except StorageError as exc:
        return {"name": requested.name, "error_code": exc.code, "error_message": exc.message}
    answer: dict[str, Any] = {
        "name": requested.name,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "num_partitions": count,
        "replication_factor": 1,
        "configs": [
            {
                "name": r.config.name,
                "value": r.value,
                "read_only": False,
                "config_source": config_source(r.origin),
                "is_sensitive": False,
            }
            for r in resolve(overrides, ctx.broker.config.known_value)
        ],
    }
    return answer if topic_id is None else answer | {"topic_id": topic_id}


def _creatable(ctx: RequestContext, names: list[str]) -> set[str]:
    """CREATE on the cluster allows every topic; else CREATE on each topic decides."""
    if ctx.authorized_names(AclOperation.CREATE, ResourceType.CLUSTER, (CLUSTER_NAME,), log_denied=False):
        return set(names)
    return ctx.authorized_names(AclOperation.CREATE, ResourceType.TOPIC, names)


def _without_configs(answer: dict[str, Any]) -> dict[str, Any]:
    """A created topic's answer to a principal that may not DESCRIBE_CONFIGS it, as Kafka's."""
    return answer | {
        "configs": [],
        "num_partitions": -1,
        "replication_factor": -1,
        "topic_config_error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    }


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    counts = Counter(t.name for t in request.topics)
    names = [t.name for t in request.topics if counts[t.name] == 1]
    creatable = _creatable(ctx, names)
    describable = ctx.authorized_names(
        AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names, log_denied=False
    )
    results = []
    for requested in request.topics:
        if counts[requested.name] > 1:
            results.append(
                {
                    "name": requested.name,
                    "error_code": ErrorCode.INVALID_REQUEST,
                    "error_message": f"topic {requested.name!r} appears more than once in the request",
                }
            )
        elif requested.name not in creatable:
            results.append(
                {
                    "name": requested.name,
                    "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                    "error_message": "Authorization failed.",
                }
            )
        else:
            answer = _create(ctx, requested, request.validate_only)
            created = answer["error_code"] == ErrorCode.NONE
            results.append(
                answer if not created or requested.name in describable else _without_configs(answer)
            )
    return {"throttle_time_ms": 0, "topics": results}
