"""What ShareFetch and ShareAcknowledge have in common: the request-level checks, the share
session, and the acknowledgements of each partition (Kafka's KafkaApis share handling).

Acknowledgements are applied before anything is fetched; each partition's are all applied
or none (INVALID_RECORD_STATE for records its member does not hold). RENEW is valid only
from version 2, in a request that says is_renew_ack, while share.renew.acknowledge.enable
holds; such a request fetches nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.share_fetch import CLOSE_SESSION_EPOCH, OPEN_SESSION_EPOCH, RELEASE, RENEW
from kafka_shim.protocol.share_state_records import SharePartitionKey
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller.features import SHARE_VERSION
from kafka_shim.shim.coordinator.share.sessions import ShareSession, TopicPartition
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.shim.share.partitions import state_not_written
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import LEADER_EPOCH, PartitionLog
from kafka_shim.storage.topics import Topic

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.alter_share_group_offsets import AlterShareGroupOffsetsRequestData
    from kafka_shim.protocol.views.delete_share_group_offsets import DeleteShareGroupOffsetsRequestData
    from kafka_shim.protocol.views.share_acknowledge import ShareAcknowledgeRequestData
    from kafka_shim.protocol.views.share_fetch import ShareFetchRequestData

FIRST_RENEW_VERSION = 2
DISABLED = (
    "Share groups are disabled: share.version is 0 (kafka-features.sh upgrade --feature share.version=1)."
)
NO_LEADER_EPOCH = -1  # share requests carry none: leadership alone is checked


@dataclass
class ShareRequest:
    """A ShareFetch or ShareAcknowledge past its request-level checks."""

    group_id: str
    member_id: str
    session: ShareSession
    closing: bool
    renewing: bool
    # per partition: its error (refused topic, unknown partition) or its acknowledgement error
    errors: dict[TopicPartition, ErrorCode] = field(default_factory=dict)
    acknowledged: dict[TopicPartition, ErrorCode] = field(default_factory=dict)


def share_groups_enabled(ctx: RequestContext) -> bool:
    """share.version 1 (finalized on a fresh 4.2 cluster; 4.1's preview needs UpdateFeatures):
    Kafka answers every share API UNSUPPORTED_VERSION below it."""
    return ctx.broker.features.at_least(SHARE_VERSION, 1)


# A topic's answer fields in AlterShareGroupOffsets / DeleteShareGroupOffsets: from one code
# for the whole topic, or from changing a topic that exists and may be read (its group's code).
TopicAnswer = Callable[[Any, ErrorCode], dict[str, Any]]
TopicChange = Callable[[Topic, Any, ErrorCode], dict[str, Any]]


def change_share_offsets(
    ctx: RequestContext,
    request: AlterShareGroupOffsetsRequestData | DeleteShareGroupOffsetsRequestData,
    operation: AclOperation,
    answer: TopicAnswer,
    change: TopicChange,
) -> dict[str, Any]:
    """AlterShareGroupOffsets and DeleteShareGroupOffsets: share groups on, then `operation` on
    the group, then each topic READ-authorized on its own; the group's own refusal (not
    coordinated here, not a share group, members) is the top-level error once a topic may be
    read, and each readable topic's code, with which `change` is called."""
    response: dict[str, Any] = {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "responses": []}
    if not share_groups_enabled(ctx):
        return response | {"error_code": ErrorCode.UNSUPPORTED_VERSION, "error_message": DISABLED}
    if not ctx.authorize(operation, ResourceType.GROUP, request.group_id):
        return response | {"error_code": ctx.refusal(operation, ResourceType.GROUP)}
    readable = ctx.authorized_names(
        AclOperation.READ, ResourceType.TOPIC, [t.topic_name for t in request.topics]
    )
    error, message = empty_share_group(ctx, request.group_id)
    if readable and error != ErrorCode.NONE:
        response |= {"error_code": error, "error_message": message}
    for requested in request.topics:
        topic = ctx.broker.topics.get(requested.topic_name)
        if requested.topic_name not in readable:
            fields = answer(requested, ctx.refusal(AclOperation.READ, ResourceType.TOPIC))
        elif topic is None:
            fields = answer(requested, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        else:
            fields = change(topic, requested, error)
        entry: dict[str, Any] = {"topic_name": requested.topic_name, **fields}
        if topic is not None:
            entry["topic_id"] = topic.topic_id
        response["responses"].append(entry)
    return response


def empty_share_group(ctx: RequestContext, group_id: str) -> tuple[ErrorCode, str | None]:
    """The error refusing to change a share group's offsets: not coordinated here, not a share
    group, or one with members (NONE when it may be changed)."""
    if not ctx.coordinates(GROUP_KEY_TYPE, group_id):
        return ErrorCode.NOT_COORDINATOR, None
    group = ctx.broker.group_service.share_group(group_id)
    if group is None:
        return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."
    if group.members:
        return ErrorCode.NON_EMPTY_GROUP, "The group has active members: its offsets cannot be altered."
    return ErrorCode.NONE, None


def _batches(partition: Any) -> list[tuple[int, int, Sequence[int]]]:
    return [(b.first_offset, b.last_offset, b.acknowledge_types) for b in partition.acknowledgement_batches]


def enter(
    ctx: RequestContext, request: ShareFetchRequestData | ShareAcknowledgeRequestData
) -> ShareRequest | tuple[ErrorCode, str | None]:
    """Check the request as Kafka does and enter its share session; or the top-level error."""
    broker = ctx.broker
    if not share_groups_enabled(ctx):
        return ErrorCode.UNSUPPORTED_VERSION, DISABLED
    if not request.group_id:
        return ErrorCode.INVALID_REQUEST, "The group id is empty."
    if not request.member_id:
        return ErrorCode.INVALID_REQUEST, "The member id is empty."
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return ctx.refusal(AclOperation.READ, ResourceType.GROUP), None
    has_acks = any(p.acknowledgement_batches for t in request.topics for p in t.partitions)
    if request.share_session_epoch == OPEN_SESSION_EPOCH and has_acks:
        return ErrorCode.INVALID_REQUEST, "Acknowledgements are not allowed when opening a share session."
    renewing = ctx.api_version >= FIRST_RENEW_VERSION and bool(request.is_renew_ack)
    renews = any(
        RENEW in b.acknowledge_types
        for t in request.topics
        for p in t.partitions
        for b in p.acknowledgement_batches
    )
    if renews and not renewing:
        return ErrorCode.INVALID_REQUEST, "Renew acknowledgements need IsRenewAck (version 2+)."
    if renewing and not broker.group_configs.share_config_of(request.group_id).renew_acknowledge_enable:
        return ErrorCode.INVALID_REQUEST, "share.renew.acknowledge.enable is false for this group."
    # The connection a session is opened on ends it when it closes (Kafka keys it by connection id).
    connection = str(getattr(ctx, "peer", ""))
    session = broker.shares.sessions.enter(
        request.group_id, request.member_id, request.share_session_epoch, connection
    )
    if isinstance(session, ErrorCode):
        return session, None
    return ShareRequest(
        request.group_id,
        request.member_id,
        session,
        closing=request.share_session_epoch == CLOSE_SESSION_EPOCH,
        renewing=renewing,
    )


def partition_log(
    ctx: RequestContext, share: ShareRequest, topic_id: uuid.UUID, index: int
) -> PartitionLog | None:
    """The partition's log, or None with its error noted (unknown topic or partition, refused topic)."""
    key = (topic_id, index)
    topic = ctx.broker.topics.get_by_id(topic_id)
    if topic is None:
        share.errors[key] = ErrorCode.UNKNOWN_TOPIC_ID
        return None
    if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic.name):
        share.errors[key] = ctx.refusal(AclOperation.READ, ResourceType.TOPIC)
        return None
    log = topic.partition(index)
    if log is None:
        share.errors[key] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return None
    not_leader = ctx.leader_error(topic.name, index, NO_LEADER_EPOCH, log)  # several emulated brokers
    if not_leader != ErrorCode.NONE:
        share.errors[key] = not_leader
        return None
    return log


def acknowledge(
    ctx: RequestContext, share: ShareRequest, request: ShareFetchRequestData | ShareAcknowledgeRequestData
) -> None:
    """Apply every partition's acknowledgements; a closing session then gives back what its
    member still holds."""
    broker = ctx.broker
    now = ctx.now_ms()
    for topic in request.topics:
        for partition in topic.partitions:
            if not partition.acknowledgement_batches:
                continue
            log = partition_log(ctx, share, topic.topic_id, partition.partition_index)
            if log is None:
                continue
            key = SharePartitionKey(share.group_id, topic.topic_id, partition.partition_index)
            batches = _batches(partition)
            try:
                error = broker.share_partitions.acknowledge(key, share.member_id, log, batches, now)
            except StorageError as exc:
                error = state_not_written(exc)
            share.acknowledged[(topic.topic_id, partition.partition_index)] = error
            if error == ErrorCode.NONE and any(RELEASE in types for _, _, types in batches):
                broker.on_append(log)  # released records: wake the members long-polling it
    if share.closing:  # answered after the acknowledgements above: none is lost to the release
        broker.shares.session_ended(share.group_id, share.member_id, now)


def leader(ctx: RequestContext) -> dict[str, int]:
    return {"leader_id": ctx.broker.node_id, "leader_epoch": LEADER_EPOCH}


def by_topic(partitions: dict[TopicPartition, dict[str, Any]]) -> list[dict[str, Any]]:
    topics: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for (topic_id, _), answer in sorted(partitions.items()):
        topics.setdefault(topic_id, []).append(answer)
    return [{"topic_id": topic_id, "partitions": answers} for topic_id, answers in topics.items()]
