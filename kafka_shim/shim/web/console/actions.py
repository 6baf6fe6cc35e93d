"""What the console may change when the user enables it (`--console-actions`): reset an inactive
group's committed offset of a partition, and delete a partition's records before an offset.
Each goes the way the Kafka API would (the coordinator's commit, as an admin tool's OffsetCommit
to an Empty group; the partition service's delete-records step, shim.partitions, as
DeleteRecords'); the console's routes declare those APIs' rows, so the guard (shim.web.http_guard)
authorizes them as the APIs are authorized."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.types import CommitRequest, OffsetCommit, TopicPartition
from kafka_shim.shim.partitions.delete import delete_records as delete_partition_records
from kafka_shim.shim.web import views
from kafka_shim.shim.web.http_guard import INT32_MAX

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker

INACTIVE = frozenset({"Empty", "Dead"})


class ActionRefused(Exception):
    """An action that may not be done: its HTTP status and Kafka's reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def field(body: Any, name: str, kind: type, default: Any = None) -> Any:
    """`name` of a JSON object body, of type `kind` (400 naming the field otherwise)."""
    if not isinstance(body, dict):
        raise ActionRefused(400, f"the body must be a JSON object, not {type(body).__name__}")
    value = body.get(name, default)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ActionRefused(400, f"{name}: an integer, got {value!r}")
    if kind is str and not isinstance(value, str):
        raise ActionRefused(400, f"{name}: a string, got {value!r}")
    return value


def partition_field(body: Any) -> int:
    partition = field(body, "partition", int)
    if not 0 <= partition <= INT32_MAX:
        raise ActionRefused(400, f"partition: from 0 to {INT32_MAX}, got {partition}")
    return int(partition)


def _partition(broker: Broker, topic: str, partition: int) -> Any:
    log = broker.topics.partition(topic, partition)
    if log is None:
        raise ActionRefused(404, f"no partition {topic}-{partition}")
    return log


def reset_offset(
    broker: Broker,
    group_id: str,
    topic: str,
    partition: int,
    to: Any,
    bounds: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Commit `to` (an offset, "earliest" or "latest", kept within the log) for the group, as
    kafka-consumer-groups.sh --reset-offsets does: only while the group has no members.
    `bounds`: the log's start offset and high watermark as its leader reads them, where the
    coordinator does not lead the partition (--process-per-broker); else the broker's own log."""
    log = _partition(broker, topic, partition)
    start, end = (log.log_start_offset, log.high_watermark) if bounds is None else bounds
    shape = views.group_shape(broker, group_id)
    if shape is not None and shape.state not in INACTIVE:
        raise ActionRefused(
            409, f"group {group_id} is {shape.state}: offsets are reset only while it has no members"
        )
    if to == "earliest":
        offset = start
    elif to == "latest":
        offset = end
    elif isinstance(to, int) and not isinstance(to, bool):
        offset = min(max(to, start), end)
    else:
        raise ActionRefused(400, f"reset to {to!r}: an offset, earliest or latest")
    tp = TopicPartition(topic, partition)
    errors = broker.group_service.effects.apply_or(
        broker.groups.commit_offsets(CommitRequest(group_id, {tp: OffsetCommit(offset)}), broker.clock()),
        lambda code: {tp: code},  # not written (a full disk): nothing changed
    )
    error = errors.get(tp, ErrorCode.NONE)
    if error != ErrorCode.NONE:
        raise ActionRefused(409, f"the commit was answered {ErrorCode(error).name}")
    return {"group_id": group_id, "topic": topic, "partition": partition, "offset": offset}


def delete_records(broker: Broker, topic: str, partition: int, before: int) -> dict[str, Any]:
    """Delete the partition's records before offset `before` (-1: the high watermark), as
    DeleteRecords does."""
    _partition(broker, topic, partition)
    code, low_watermark = delete_partition_records(broker.topics.get(topic), partition, before)
    if code != ErrorCode.NONE:
        raise ActionRefused(409, f"DeleteRecords answered {ErrorCode(code).name}")
    return {"topic": topic, "partition": partition, "low_watermark": low_watermark}
