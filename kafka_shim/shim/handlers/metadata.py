"""Metadata: the running brokers (one, or those of --brokers), each partition's leader, leader
epoch, replicas and in-sync replicas (shim.testbroker.cluster), and the controller."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.metadata import (
    API,
    AUTHORIZED_OPERATIONS_OMITTED,
    ZERO_UUID,
)
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller import placement
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.testbroker.cluster import NO_LEADER, Cluster
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.internal_topics import INTERNAL_TOPICS
from kafka_shim.storage.topics import Topic, invalid_topic_name

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.metadata import MetadataRequestData, MetadataRequestTopics

__all__ = ["API", "brokers", "handle", "partition_state"]


def partition_state(cluster: Cluster, topic: Topic, index: int) -> dict[str, Any]:
    """A partition as Metadata (and DescribeTopicPartitions) describe it: its leader and leader
    epoch, its replicas (shim.testbroker.cluster), the running ones in sync. With no replica running, Kafka
    answers LEADER_NOT_AVAILABLE and leader -1."""
    epoch = topic.partitions[index].leader_epoch
    if cluster.single:  # nearly every broker, for every partition of a Metadata: no lookups
        node = cluster.first
        return {
            "error_code": ErrorCode.NONE,
            "partition_index": index,
            "leader_id": node,
            "leader_epoch": epoch,
            "replica_nodes": [node],
            "isr_nodes": [node],
            "offline_replicas": [],
        }
    leader = cluster.leader(topic.name, index)
    replicas = cluster.replicas(topic.name, index)
    running = {node.node_id for node in cluster.running()}
    return {
        "error_code": ErrorCode.LEADER_NOT_AVAILABLE if leader == NO_LEADER else ErrorCode.NONE,
        "partition_index": index,
        "leader_id": leader,
        "leader_epoch": epoch,
        "replica_nodes": replicas,
        "isr_nodes": [n for n in replicas if n in running],
        "offline_replicas": [n for n in replicas if n not in running],
    }


def _describe(broker: Broker, topic: Topic, operations: int) -> dict[str, Any]:
    return {
        "error_code": ErrorCode.NONE,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.name in INTERNAL_TOPICS,
        "partitions": [
            partition_state(broker.cluster, topic, index) for index in range(len(topic.partitions))
        ],
        "topic_authorized_operations": operations,
    }


def _refused(ctx: RequestContext, name: str | None, topic_id: Any = ZERO_UUID) -> dict[str, Any]:
    # Named: no topic id, which would tell the topic exists; by id: no name (ids are not secret).
    return {
        "error_code": ctx.refusal(AclOperation.DESCRIBE, ResourceType.TOPIC),
        "name": name,
        "topic_id": topic_id,
        "is_internal": name in INTERNAL_TOPICS,
    }


def _may_create(ctx: RequestContext, name: str) -> bool:
    """CREATE on the cluster, or else on the topic (Kafka asks in that order)."""
    cluster_wide = ctx.authorized_names(
        AclOperation.CREATE, ResourceType.CLUSTER, (CLUSTER_NAME,), log_denied=False
    )
    return bool(cluster_wide) or ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, name)


def _resolve(
    ctx: RequestContext, requested: Any, auto_create: bool, described: set[str]
) -> Topic | dict[str, Any]:
    """The topic, or the error entry for it. DESCRIBE is checked before anything that would
    tell whether the topic exists. Internal is a name's property, as in Kafka: a deleted
    __consumer_offsets is still internal."""
    topics = ctx.broker.topics
    if requested.name is None and ctx.api_version < 12:
        # v10-11 parse a null name but cannot answer one: only v12 looks topics up by id.
        return {"error_code": ErrorCode.INVALID_REQUEST, "name": "", "topic_id": requested.topic_id}
    if _by_id(ctx, requested):
        found = topics.get_by_id(requested.topic_id)
        if found is None:
            return {"error_code": ErrorCode.UNKNOWN_TOPIC_ID, "name": None, "topic_id": requested.topic_id}
        return found if found.name in described else _refused(ctx, None, requested.topic_id)
    name = requested.name
    if name not in described:
        return _refused(ctx, name)
    error = {"name": name, "topic_id": requested.topic_id, "is_internal": name in INTERNAL_TOPICS}
    if invalid_topic_name(name) is not None:
        return error | {"error_code": ErrorCode.INVALID_TOPIC_EXCEPTION}
    topic = topics.get(name)
    if topic is None and auto_create and ctx.broker.config.auto_create_topics:
        if not _may_create(ctx, name):
            return _refused(ctx, name)
        try:
            topic = placement.auto_create(topics, name)
        except StorageError:
            # Not recorded (a full disk): what Kafka answers while a topic it creates is not
            # ready, so the client asks again.
            return error | {"error_code": ErrorCode.LEADER_NOT_AVAILABLE}
        if not ctx.broker.config.auto_created_topic_answered_at_once:
            return error | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    return topic if topic is not None else error | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


def _by_id(ctx: RequestContext, requested: MetadataRequestTopics) -> bool:
    """v12 looks a topic up by id (the Java client sends an empty name beside the id, as
    Kafka allows)."""
    return bool(requested.name is None or (ctx.api_version >= 12 and requested.topic_id != ZERO_UUID))


def _requested_names(ctx: RequestContext, request: MetadataRequestData) -> list[str]:
    """The names to authorize: those given, and those of the topics asked for by id."""
    topics = ctx.broker.topics
    requested = request.topics or []  # None (all topics) is answered without names
    by_id = [topics.get_by_id(t.topic_id) for t in requested if _by_id(ctx, t)]
    named = [t.name for t in requested if not _by_id(ctx, t) and t.name is not None]
    return named + [t.name for t in by_id if t is not None]


def _all_topics_requested(ctx: RequestContext, request: MetadataRequestData) -> bool:
    # v0 spells "all topics" as an empty list; v1+ as null (empty means none).
    return request.topics is None or (ctx.api_version == 0 and not request.topics)


def _cluster_operations(ctx: RequestContext, request: MetadataRequestData) -> int:
    if not (8 <= ctx.api_version <= 10 and request.include_cluster_authorized_operations):
        return AUTHORIZED_OPERATIONS_OMITTED
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return 0
    return ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME)


# Entries Kafka describes with the topic's authorized operations besides existing topics.
_DESCRIBED_ERRORS = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_TOPIC_EXCEPTION)


def _entry(ctx: RequestContext, resolved: Topic | dict[str, Any], with_operations: bool) -> dict[str, Any]:
    if isinstance(resolved, Topic):
        operations = ctx.authorized_operations(ResourceType.TOPIC, resolved.name) if with_operations else None
        return _describe(
            ctx.broker, resolved, AUTHORIZED_OPERATIONS_OMITTED if operations is None else operations
        )
    if with_operations and resolved["error_code"] in _DESCRIBED_ERRORS:
        return resolved | {
            "topic_authorized_operations": ctx.authorized_operations(ResourceType.TOPIC, resolved["name"])
        }
    return resolved


def brokers(ctx: RequestContext) -> list[dict[str, Any]]:
    """The running brokers, each at its address on the listener this request arrived on."""
    answer = []
    for node in ctx.broker.cluster.running():
        host, port = ctx.broker_address(node.node_id)
        answer.append({"node_id": node.node_id, "host": host, "port": port, "rack": node.rack})
    return answer


async def handle(ctx: RequestContext, request: MetadataRequestData) -> dict[str, Any]:
    broker = ctx.broker
    resolved: list[Topic | dict[str, Any]]
    if _all_topics_requested(ctx, request):
        # Topics the principal may not describe are left out, unlogged: it did not name them.
        every = list(broker.topics)
        visible = ctx.authorized_names(
            AclOperation.DESCRIBE, ResourceType.TOPIC, (t.name for t in every), log_denied=False
        )
        resolved = [t for t in every if t.name in visible]
    else:
        auto_create = request.allow_auto_topic_creation  # v0-3: always true, as in Kafka
        described = ctx.authorized_names(
            AclOperation.DESCRIBE, ResourceType.TOPIC, _requested_names(ctx, request)
        )
        resolved = [_resolve(ctx, requested, auto_create, described) for requested in request.topics or []]
    with_operations = request.include_topic_authorized_operations
    return {
        "throttle_time_ms": 0,
        "brokers": brokers(ctx),
        "cluster_id": broker.cluster_id,
        "controller_id": broker.cluster.controller_id,
        "topics": [_entry(ctx, t, with_operations) for t in resolved],
        "cluster_authorized_operations": _cluster_operations(ctx, request),
    }
