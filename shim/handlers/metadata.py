"""Metadata: this one broker, as controller and leader of every partition."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.metadata import API, AUTHORIZED_OPERATIONS_OMITTED, TOPIC_OPERATIONS
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.context import RequestContext
from kafka_shim.storage.log import LEADER_EPOCH
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC
from kafka_shim.storage.topics import Topic, invalid_topic_name
from kafka_shim.storage.transaction_log import TRANSACTION_TOPIC

__all__ = ["API", "handle"]

INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_TOPIC})


def _describe(broker: Broker, topic: Topic, operations: int) -> dict[str, Any]:
    node = broker.node_id
    return {
        "error_code": ErrorCode.NONE,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.name in INTERNAL_TOPICS,
        "partitions": [
            {
                "error_code": ErrorCode.NONE,
                "partition_index": index,
                "leader_id": node,
                "leader_epoch": LEADER_EPOCH,
                "replica_nodes": [node],
                "isr_nodes": [node],
                "offline_replicas": [],
            }
            for index in range(len(topic.partitions))
        ],
        "topic_authorized_operations": operations,
    }


def _resolve(ctx: RequestContext, requested: Any, auto_create: bool) -> Topic | dict[str, Any]:
    """The topic, or the error entry for it."""
    topics = ctx.broker.topics
    if requested.name is None and ctx.api_version < 12:
        # v10-11 parse a null name but cannot answer one: only v12 looks topics up by id.
        return {"error_code": ErrorCode.INVALID_REQUEST, "name": "", "topic_id": requested.topic_id}
    if requested.name is None:  # v12: by id alone
        found = topics.get_by_id(requested.topic_id)
        if found is None:
            return {"error_code": ErrorCode.UNKNOWN_TOPIC_ID, "name": None, "topic_id": requested.topic_id}
        return found
    error = {"name": requested.name, "topic_id": requested.topic_id}
    if invalid_topic_name(requested.name) is not None:
        return error | {"error_code": ErrorCode.INVALID_TOPIC_EXCEPTION}
    topic = topics.auto_create(requested.name) if auto_create else topics.get(requested.name)
    return topic if topic is not None else error | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


def _all_topics_requested(ctx: RequestContext, request: Any) -> bool:
    # v0 spells "all topics" as an empty list; v1+ as null (empty means none).
    return request.topics is None or (ctx.api_version == 0 and not request.topics)


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    broker = ctx.broker
    host, port = ctx.advertised_address()  # the listener's this request arrived on, as in Kafka
    operations = (
        TOPIC_OPERATIONS if request.include_topic_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED
    )
    if _all_topics_requested(ctx, request):
        resolved: list[Topic | dict[str, Any]] = list(broker.topics)
    else:
        auto_create = request.allow_auto_topic_creation  # v0-3: always true, as in Kafka
        resolved = [_resolve(ctx, requested, auto_create) for requested in request.topics]
    return {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": broker.node_id, "host": host, "port": port}],
        "cluster_id": broker.cluster_id,
        "controller_id": broker.node_id,
        "topics": [_describe(broker, t, operations) if isinstance(t, Topic) else t for t in resolved],
    }
