"""DeleteTopics: by name (v0-5) or by name or topic id (v6). The topics leave the catalog
in one write and are answered then; their partitions' files are removed afterwards, off the
event loop (storage.removal), as Kafka's log manager removes a deleted log's files later."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_topics import API
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.internal_topics import INTERNAL_TOPICS
from kafka_shim.storage.topics import Topic

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.delete_topics import DeleteTopicsRequestData

__all__ = ["API", "handle"]


def _allowed(ctx: RequestContext, operation: AclOperation, names: list[str]) -> set[str]:
    """DELETE on the cluster allows DESCRIBE and DELETE of every topic (Kafka's controller)."""
    if ctx.authorized_names(AclOperation.DELETE, ResourceType.CLUSTER, (CLUSTER_NAME,), log_denied=False):
        return set(names)
    return ctx.authorized_names(operation, ResourceType.TOPIC, names)


def _check(
    ctx: RequestContext, name: str | None, topic_id: Any, describable: set[str], deletable: set[str]
) -> dict[str, Any] | Topic:
    """DESCRIBE before existence for a name; for an id (not secret), existence first, and a
    refusal without the name to a principal that may not describe the topic. The topic if it
    may be deleted, else the answer."""
    topics = ctx.broker.topics
    topic: Topic | None
    answer = {"name": name, "topic_id": topic_id, "error_message": None}
    refused = answer | {"error_code": ctx.refusal(AclOperation.DELETE, ResourceType.TOPIC)}
    if name is not None:
        if name not in describable:
            return refused
        topic, missing = topics.get(name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    else:
        topic, missing = topics.get_by_id(topic_id), ErrorCode.UNKNOWN_TOPIC_ID
    if topic is None:
        return answer | {"error_code": missing, "error_message": missing.default_message}
    if topic.name not in deletable:
        return refused | {"name": topic.name if topic.name in describable else None}
    if not ctx.broker.config.delete_topic_enable:
        return answer | {"error_code": ErrorCode.TOPIC_DELETION_DISABLED}
    return topic


def _delete(
    ctx: RequestContext, checked: list[tuple[str | None, Any, dict[str, Any] | Topic]]
) -> list[dict[str, Any]]:
    """Every deletable topic of `checked` ((name asked, id asked, check)) deleted with one
    catalog write; the answers in the same order."""
    doomed = {check.name: check for _, _, check in checked if isinstance(check, Topic)}
    failure = None
    try:
        ctx.broker.topics.delete_many(list(doomed))
    except StorageError as exc:  # the catalog could not be written: the topics stay
        failure = {"error_code": exc.code, "error_message": exc.message}
    else:
        for internal in INTERNAL_TOPICS.intersection(doomed):
            ctx.broker.internal_topic_deleted(internal)
        ctx.broker.shares.topics_deleted([t.topic_id for t in doomed.values()])
    answers = []
    for name, topic_id, check in checked:
        if not isinstance(check, Topic):
            answers.append(check)
        elif failure is not None:
            answers.append({"name": name, "topic_id": topic_id} | failure)
        else:
            answers.append(
                {
                    "name": check.name,
                    "topic_id": check.topic_id,
                    "error_code": ErrorCode.NONE,
                    "error_message": None,
                }
            )
    return answers


def _invalid(name: str | None, topic_id: Any, message: str) -> dict[str, Any]:
    return {
        "name": name,
        "topic_id": topic_id,
        "error_code": ErrorCode.INVALID_REQUEST,
        "error_message": message,
    }


async def handle(ctx: RequestContext, request: DeleteTopicsRequestData) -> dict[str, Any]:
    """As Kafka's ControllerApis.deleteTopics: a name or id given twice, both a name and an id,
    or neither, is refused with 42 (once per name or id) and deletes nothing."""
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, ZERO_UUID) for name in request.topic_names]
    responses = []
    for name, topic_id in wanted:
        if name is None and topic_id == ZERO_UUID:
            responses.append(_invalid(None, ZERO_UUID, "Neither topic name nor id were specified."))
        elif name is not None and topic_id != ZERO_UUID:
            responses.append(_invalid(name, topic_id, "You may not specify both topic name and topic id."))
    by_name = Counter(name for name, topic_id in wanted if name is not None and topic_id == ZERO_UUID)
    by_id = Counter(topic_id for name, topic_id in wanted if name is None and topic_id != ZERO_UUID)
    responses += [_invalid(name, ZERO_UUID, "Duplicate topic name.") for name, n in by_name.items() if n > 1]
    responses += [_invalid(None, topic_id, "Duplicate topic id.") for topic_id, n in by_id.items() if n > 1]
    names = [name for name, n in by_name.items() if n == 1]
    ids = [topic_id for topic_id, n in by_id.items() if n == 1]
    topics = ctx.broker.topics
    found = (topics.get_by_id(topic_id) for topic_id in ids)
    candidates = names + [t.name for t in found if t is not None]
    describable = _allowed(ctx, AclOperation.DESCRIBE, candidates)
    deletable = _allowed(ctx, AclOperation.DELETE, candidates)
    checked: list[tuple[str | None, Any, dict[str, Any] | Topic]] = [
        (name, ZERO_UUID, _check(ctx, name, ZERO_UUID, describable, deletable)) for name in names
    ]
    checked += [(None, topic_id, _check(ctx, None, topic_id, describable, deletable)) for topic_id in ids]
    responses += _delete(ctx, checked)
    return {"throttle_time_ms": 0, "responses": responses}
