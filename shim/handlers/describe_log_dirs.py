"""DescribeLogDirs: the one log directory (the data directory) with the on-disk size of each
partition's segments, as KafkaApis and ReplicaManager.describeLogDirs answer it.

One replica: the offset lag is always 0 and no log is a future one. An in-memory broker
(--memory) has no log directory: it describes none.
"""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_log_dirs import API
from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.disk_store import DiskStore

__all__ = ["API", "handle"]


def _log_dir(storage: DiskStore, wanted: set[tuple[str, int]] | None) -> dict[str, Any]:
    topics = []
    for topic in storage.topics:
        partitions = [
            {
                "partition_index": index,
                "partition_size": log.size_in_bytes,
                "offset_lag": 0,
                "is_future_key": False,
            }
            for index, log in enumerate(topic.partitions)
            if isinstance(log, DiskLog) and (wanted is None or (topic.name, index) in wanted)
        ]
        if partitions:
            topics.append({"name": topic.name, "partitions": partitions})
    total, usable = storage.volume_bytes()
    return {
        "error_code": ErrorCode.NONE,
        "log_dir": storage.log_dir,
        "topics": topics,
        "total_bytes": total,
        "usable_bytes": usable,
    }


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        # v0-2 have no top-level error: they just see no directory.
        return {"throttle_time_ms": 0, "error_code": denial, "results": []}
    wanted = None
    if request.topics is not None:
        wanted = {(t.topic, index) for t in request.topics for index in t.partitions}
    storage = ctx.broker.storage
    results = [] if storage is None else [_log_dir(storage, wanted)]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results": results}
