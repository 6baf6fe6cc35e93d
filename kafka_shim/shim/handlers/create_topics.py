"""CreateTopics: topics with their replicas placed (shim.controller.placement), optional configs,
validate_only."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.create_topics import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller.placement import new_topic_layout
from kafka_shim.shim.handlers.describe_configs import config_source
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.internal_topics import CLUSTER_METADATA_TOPIC
from kafka_shim.storage.topic_configs import resolve
from kafka_shim.storage.topics import NewPartitions, check_configs, too_many_for_one_request

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.create_topics import CreateTopicsRequestData, CreateTopicsRequestTopics

__all__ = ["API", "handle"]


def _reserve(
    ctx: RequestContext, requested: Any, validate_only: bool
) -> dict[str, Any] | tuple[NewPartitions, int]:
    """One topic, checked in the order of Kafka's controller: name, existence, configs, layout;
    an answer if it stops there (or is only validated), else its reserved partitions and
    replication factor."""
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
        if not validate_only:
            reserved = topics.reserve_topic(
                requested.name,
                layout.partitions,
                configs,
                replication_factor=layout.replication_factor,
                assignment=layout.assignment,
            )
            return reserved, layout.replication_factor
        count = topics.check_new(requested.name, layout.partitions, configs)
    except StorageError as exc:
        return {"name": requested.name, "error_code": exc.code, "error_message": exc.message}
    overrides = {k: v for k, v in configs.items() if v is not None}
    # Kafka draws a topic id for a validation too, and answers it.
    return _created(ctx, requested.name, uuid.uuid4(), count, layout.replication_factor, overrides)


def _created(
    ctx: RequestContext,
    name: str,
    topic_id: uuid.UUID,
    count: int,
    replication_factor: int,
    overrides: dict[str, str],
) -> dict[str, Any]:
    return {
        "name": name,
        "topic_id": topic_id,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "num_partitions": count,
        "replication_factor": replication_factor,
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


def _requested_partitions(ctx: RequestContext, requested: CreateTopicsRequestTopics) -> int:
    """What Kafka's validateTotalNumberOfPartitions counts for one topic: its assignments if
    given, else its partition count (-1: num.partitions)."""
    if requested.assignments:
        return len(requested.assignments)
    return max(ctx.broker.topics.new_topic_partitions(requested.num_partitions), 0)


async def _make(
    ctx: RequestContext, reserved: dict[str, tuple[NewPartitions, int]]
) -> dict[str, dict[str, Any]]:
    """Make the reserved topics' logs off the event loop, then record them all with one catalog
    write (on the loop, the topics' owner): the answers, by name, once they exist durably."""
    topics = ctx.broker.topics
    partitions = [new for new, _ in reserved.values()]
    try:
        await ctx.off_loop(lambda: topics.make(partitions))
        topics.commit(partitions)
    except StorageError as exc:
        return {
            name: {"name": name, "error_code": exc.code, "error_message": exc.message} for name in reserved
        }
    finally:
        topics.abandon(partitions)  # after a failure or a cancellation: nothing is left reserved
    return {
        name: _created(ctx, name, new.topic.topic_id, new.count, replication_factor, new.topic.configs)
        for name, (new, replication_factor) in reserved.items()
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


def _too_many(ctx: RequestContext, requests: list[CreateTopicsRequestTopics]) -> str | None:
    """Kafka's refusal of the whole request when its topics ask for more new partitions than
    its controller takes at once (controller.max.records.per.batch), or None."""
    asked = sum(_requested_partitions(ctx, requested) for requested in requests)
    return too_many_for_one_request(asked, ctx.broker.config.max_partitions_per_request)


async def handle(ctx: RequestContext, request: CreateTopicsRequestData) -> dict[str, Any]:
    """As Kafka's ControllerApis.createTopics: a name given twice is answered once, with 42,
    after the others, and nothing is created for it. The partitions are made off the event
    loop: other clients are served meanwhile, and the answer comes once all exist durably."""
    counts = Counter(t.name for t in request.topics)
    names = [name for name, n in counts.items() if n == 1]
    creatable = _creatable(ctx, names)
    describable = ctx.authorized_names(
        AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names, log_denied=False
    )
    answers: dict[str, dict[str, Any]] = {}
    to_controller = []
    for requested in request.topics:
        if counts[requested.name] > 1:
            continue
        if requested.name == CLUSTER_METADATA_TOPIC:  # whatever the ACLs, as Kafka's controller
            answers[requested.name] = {
                "name": requested.name,
                "error_code": ErrorCode.INVALID_REQUEST,
                "error_message": f"Creation of internal topic {CLUSTER_METADATA_TOPIC} is prohibited.",
            }
        elif requested.name not in creatable:
            answers[requested.name] = {
                "name": requested.name,
                "error_code": ctx.refusal(AclOperation.CREATE, ResourceType.TOPIC),
                "error_message": "Authorization failed.",
            }
        else:
            to_controller.append(requested)
    too_many = _too_many(ctx, to_controller)
    reserved: dict[str, tuple[NewPartitions, int]] = {}
    for requested in to_controller:
        if too_many is not None:
            answers[requested.name] = {
                "name": requested.name,
                "error_code": ErrorCode.POLICY_VIOLATION,
                "error_message": too_many,
            }
            continue
        outcome = _reserve(ctx, requested, request.validate_only)
        if isinstance(outcome, dict):
            answers[requested.name] = outcome
        else:
            reserved[requested.name] = outcome
    if reserved:
        answers |= await _make(ctx, reserved)
    results = []
    for requested in request.topics:
        if counts[requested.name] > 1:
            continue
        answer = answers[requested.name]
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
