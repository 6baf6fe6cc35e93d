"""AlterReplicaLogDirs: move partitions to another log directory. This broker has one (the
data directory, or ":memory:" in memory), so every partition already lives in the only one it
may name: that is a success without a move. Any other path is LOG_DIR_NOT_FOUND, as Kafka
answers a directory missing from its `log.dirs`.

Kafka's order (ReplicaManager.alterReplicaLogDirs): the topic name must fit a future log's
directory name, then the directory must be a log dir, then the partition must exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.alter_replica_log_dirs import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.alter_replica_log_dirs import AlterReplicaLogDirsRequestData

__all__ = ["API", "handle"]

# A future log lives in "<topic>-<partition>.<32 hex digits>-future", within a file
# system's 255-character names (Kafka's UnifiedLog.logFutureDirName, KAFKA-4893).
_FUTURE_DIR_EXTRA = len("-") + len(".") + 32 + len("-future")
_MAX_DIR_NAME = 255


def _move(ctx: RequestContext, topic: str, partition: int, path: str) -> ErrorCode:
    if len(topic) + len(str(partition)) + _FUTURE_DIR_EXTRA > _MAX_DIR_NAME:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    # Kafka compares the path as given with its log dirs' absolute paths.
    if path != ctx.broker.log_dir:
        return ErrorCode.LOG_DIR_NOT_FOUND
    if ctx.broker.topics.partition(topic, partition) is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return ErrorCode.NONE  # already there


async def handle(ctx: RequestContext, request: AlterReplicaLogDirsRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        refused = [
            {
                "topic_name": t.name,
                "partitions": [{"partition_index": p, "error_code": denial} for p in t.partitions],
            }
            for d in request.dirs
            for t in d.topics
        ]
        return {"throttle_time_ms": 0, "results": refused}
    # A partition named under two paths moves to the last one, as Kafka's map of them keeps.
    destinations: dict[tuple[str, int], str] = {}
    for d in request.dirs:
        for t in d.topics:
            for p in t.partitions:
                destinations[(t.name, p)] = d.path
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, partition), path in destinations.items():
        by_topic.setdefault(topic, []).append(
            {"partition_index": partition, "error_code": _move(ctx, topic, partition, path)}
        )
    return {
        "throttle_time_ms": 0,
        "results": [{"topic_name": name, "partitions": parts} for name, parts in by_topic.items()],
    }
