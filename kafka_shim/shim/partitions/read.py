"""A Fetch's read of one partition, as Kafka's ReplicaManager.readFromLog and KafkaApis serve
it: under read_committed only below the last stable offset, with the aborted transactions
overlapping what is served (the client drops their records itself); left in the log's files
(sent with sendfile) when served as stored; down-converted to magic 0/1 message sets for
Fetch v0-3 (control batches skipped, record headers dropped), where the topic allows it."""

from __future__ import annotations

from kafka_shim.protocol.errors import NO_ERROR, ErrorCode
from kafka_shim.protocol.file_records import FileRecords
from kafka_shim.protocol.legacy_records import downconvert
from kafka_shim.protocol.records import RecordsError, iter_headers
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.topic_configs import BrokerValue, effective_value
from kafka_shim.storage.topics import Topic

LAST_MAGIC_0_VERSION = 1  # Fetch v0-1 read magic 0 message sets, v2-3 magic 1
LAST_LEGACY_VERSION = 3
FIRST_ZSTD_VERSION = 10


def _unfiltered(log: PartitionLog, offset: int) -> bool:
    """Whether what a read_committed Fetch reads is served as stored, every batch to the end:
    then it may stay in its files (no open transaction to cut at, no aborted one to list)."""
    stable = log.last_stable_offset
    return stable >= log.log_end_offset and not log.aborted_ranges(offset, stable)


def read(
    log: PartitionLog,
    offset: int,
    limit: int,
    *,
    min_one: bool,
    committed: bool,
    zero_copy: bool,
    version: int,
) -> tuple[ErrorCode, bytes | FileRecords]:
    """Up to `limit` bytes of stored batches from `offset` (`min_one`: the first batch even
    beyond it, KIP-74) for Fetch `version`; `zero_copy`: the connection may be sent file
    regions. An error (an offset out of range) comes with no records."""
    try:
        if zero_copy and version > LAST_LEGACY_VERSION and (not committed or _unfiltered(log, offset)):
            return NO_ERROR, log.read_file_records(offset, limit, min_one=min_one)
        if committed:
            return NO_ERROR, log.read_committed(offset, limit, min_one=min_one)
        return NO_ERROR, log.read(offset, limit, min_one=min_one)
    except StorageError as exc:
        return exc.code, b""


def down_converted(version: int, records: bytes | FileRecords, fetch_offset: int) -> tuple[ErrorCode, bytes]:
    """What was read as Fetch `version` (v0-3) gets it: magic 0 or 1 message sets."""
    magic = 0 if version <= LAST_MAGIC_0_VERSION else 1
    try:
        return ErrorCode.NONE, downconvert(bytes(records), magic, fetch_offset)  # read, for v0-3
    except RecordsError as exc:
        return exc.code, b""


def aborted(log: PartitionLog, offset: int, records: bytes | FileRecords) -> list[dict[str, int]]:
    """The aborted transactions with records among those served, as Kafka lists them."""
    if not records or not log.aborted_ranges(offset, log.last_stable_offset):
        return []  # the common case: no walk over the batches served
    *_, last = iter_headers(bytes(records))  # bytes already: left in files only when none is aborted
    return [
        {"producer_id": txn.producer_id, "first_offset": txn.first_offset}
        for txn in log.aborted_transactions(offset, last.last_offset + 1)
    ]


def unservable(topic: Topic, version: int, broker_value: BrokerValue) -> ErrorCode:
    """Kafka's answer for a partition an old Fetch version cannot be given: a zstd topic
    before v10, or v0-3 where the topic disables down-conversion."""
    if version >= FIRST_ZSTD_VERSION:  # today's clients: no config lookups on their path
        return NO_ERROR
    if effective_value(topic.configs, "compression.type", broker_value) == "zstd":
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    enabled = effective_value(topic.configs, "message.downconversion.enable", broker_value)
    if version <= LAST_LEGACY_VERSION and enabled != "true":
        return ErrorCode.UNSUPPORTED_VERSION
    return ErrorCode.NONE
