"""DeleteRecords' step on one partition, as Kafka's UnifiedLog.deleteRecordsOnLeader: the log
start offset (the low watermark) moves forward to an offset, -1 standing for the high
watermark."""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.topics import Topic

NO_LOW_WATERMARK = -1


def delete_records(topic: Topic | None, index: int, offset: int) -> tuple[ErrorCode, int]:
    """The error and the new low watermark (NO_LOW_WATERMARK with an error)."""
    log = topic.partition(index) if topic is not None else None
    if log is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_LOW_WATERMARK
    if not log.config.deletes:
        # As Kafka: records of a compact-only topic are removed by compaction alone.
        return ErrorCode.POLICY_VIOLATION, NO_LOW_WATERMARK
    try:
        return ErrorCode.NONE, log.delete_records(offset)
    except StorageError as exc:
        return exc.code, NO_LOW_WATERMARK
