"""CreateTopics: topics with their replicas placed (shim.placement), optional configs, validate_only."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.create_topics import API
from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.handlers.describe_configs import config_source
from kafka_shim.shim.placement import new_topic_layout
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.internal_topics import CLUSTER_METADATA_TOPIC
from kafka_shim.storage.topic_configs import resolve
from kafka_shim.storage.topics import check_configs

__all__ = ["API", "handle"]


def _create(ctx: RequestContext, requested: Any, validate_only: bool) -> dict[str, Any]:
    """One topic, checked in the order of Kafka's controller: name, existence, configs, layout."""
    topics = ctx.broker.topics
    configs = {c.name: c.value for c in requested.configs}
    try:
        topics.check_name(requested.name)
        nulls = [name for name, value in configs.items() if value is None]
        if nulls:  # the request's null, which Kafka refuses (the store reads None as the default)
            raise StorageError(
                ErrorCode.INVALID_CONFIG, f"Null value not supported for topic configs: {nulls[0]}"
            )
        check_configs(configs)
        cluster = ctx.broker.cluster
        running = [node.node_id for node in cluster.running()]
        layout = new_topic_layout(
            requested, cluster.registered(), running, ctx.broker.config.default_replication_factor
        )
        if validate_only:
            count = topics.check_new(requested.name, layout.partitions, configs)
            topic_id = uuid.uuid4()  # Kafka draws one for a validation too, and answers it
            overrides = {k: v for k, v in configs.items() if v is not None}
        else:
            topic = topics.create(
                requested.name,
                layout.partitions,
                configs,
                replication_factor=layout.replication_factor,
                assignment=layout.assignment,
            )
            count, topic_id, overrides = len(topic.partitions), topic.topic_id, topic.configs
    except StorageError as exc:
        return {"name": requested.name, "error_code": exc.code, "error_message": exc.message}
    return {
        "name": requested.name,
        "topic_id": topic_id,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "num_partitions": count,
        "replication_factor": layout.replication_factor,
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


def _creatable(ctx: RequestContext, names: list[str]) -> set[str]:
    """CREATE on the cluster allows every topic; else CREATE on each topic decides."""
    if ctx.authorized_names(AclOperation.CREATE, ResourceType.CLUSTER, (CLUSTER_NAME,), log_denied=False):
        return set(names)
    return ctx.authorized_names(AclOperation.CREATE, ResourceType.TOPIC, names)


def _without_configs(ctx: RequestContext, answer: dict[str, Any]) -> dict[str, Any]:
    """A created topic's answer to a principal that may not DESCRIBE_CONFIGS it, as Kafka's."""
    return answer | {
        "configs": [],
        "num_partitions": -1,
        "replication_factor": -1,
        "topic_config_error_code": ctx.refusal(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC),
    }


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    """As Kafka's ControllerApis.createTopics: a name given twice is answered once, with 42,
    after the others, and nothing is created for it."""
    counts = Counter(t.name for t in request.topics)
    names = [name for name, n in counts.items() if n == 1]
    creatable = _creatable(ctx, names)
    describable = ctx.authorized_names(
        AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names, log_denied=False
    )
    results = []
    for requested in request.topics:
        if counts[requested.name] > 1:
            continue
        if requested.name == CLUSTER_METADATA_TOPIC:  # whatever the ACLs, as Kafka's controller
            results.append(
                {
                    "name": requested.name,
                    "error_code": ErrorCode.INVALID_REQUEST,
                    "error_message": f"Creation of internal topic {CLUSTER_METADATA_TOPIC} is prohibited.",
                }
            )
            continue
        if requested.name not in creatable:
            results.append(
                {
                    "name": requested.name,
                    "error_code": ctx.refusal(AclOperation.CREATE, ResourceType.TOPIC),
                    "error_message": "Authorization failed.",
                }
            )
            continue
        answer = _create(ctx, requested, request.validate_only)
        created = answer["error_code"] == ErrorCode.NONE
        results.append(
            answer if not created or requested.name in describable else _without_configs(ctx, answer)
        )
    results += [
        {"name": name, "error_code": ErrorCode.INVALID_REQUEST, "error_message": "Duplicate topic name."}
        for name, n in counts.items()
        if n > 1
    ]
    return {"throttle_time_ms": 0, "topics": results}
