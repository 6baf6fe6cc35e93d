"""DescribeLogDirs: the one log directory (the data directory) with the on-disk size of each
partition's segments, as KafkaApis and ReplicaManager.describeLogDirs answer it.

One replica: the offset lag is always 0 and no log is a future one. An in-memory broker
(--memory) describes one directory too, as Kafka always has one: named ":memory:", with the
bytes its partitions hold, and the machine's memory as the volume's total and usable bytes.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_log_dirs import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.storage.topics import TopicStore

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_log_dirs import DescribeLogDirsRequestData

__all__ = ["API", "handle"]


def _memory_bytes() -> tuple[int, int]:
    """The machine's memory, total and available: the "volume" an in-memory log lives in."""
    page = os.sysconf("SC_PAGE_SIZE")
    return os.sysconf("SC_PHYS_PAGES") * page, os.sysconf("SC_AVPHYS_PAGES") * page


def _log_dir(
    store: TopicStore, name: str, volume: tuple[int, int], wanted: set[tuple[str, int]] | None
) -> dict[str, Any]:
    topics = []
    for topic in store:
        partitions = [
            {
                "partition_index": index,
                "partition_size": log.size_in_bytes,
                "offset_lag": 0,
                "is_future_key": False,
            }
            for index, log in enumerate(topic.partitions)
            if wanted is None or (topic.name, index) in wanted
        ]
        if partitions:
            topics.append({"name": topic.name, "partitions": partitions})
    total, usable = volume
    return {
        "error_code": ErrorCode.NONE,
        "log_dir": name,
        "topics": topics,
        "total_bytes": total,
        "usable_bytes": usable,
    }


async def handle(ctx: RequestContext, request: DescribeLogDirsRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        # v0-2 have no top-level error: they just see no directory.
        return {"throttle_time_ms": 0, "error_code": denial, "results": []}
    wanted = None
    if request.topics is not None:
        wanted = {(t.topic, index) for t in request.topics for index in t.partitions}
    storage = ctx.broker.storage
    volume = _memory_bytes() if storage is None else storage.volume_bytes()
    log_dir = _log_dir(ctx.broker.topics, ctx.broker.log_dir, volume, wanted)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results": [log_dir]}
