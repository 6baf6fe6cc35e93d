"""Appending a Produce's validated batches, as Kafka's ReplicaManager.appendRecordsToLeader
does: only to an existing, non-internal partition; LogAppendTime stamped where the topic asks
it; the log refuses a producer's out-of-order, duplicate or fenced batches itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.protocol.tuples import fields_given, new_tuple
from kafka_shim.shim.partitions.errors import PartitionRefused
from kafka_shim.shim.partitions.settings import produce_settings
from kafka_shim.storage.internal_topics import INTERNAL_TOPICS
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.topic_configs import BrokerValue
from kafka_shim.storage.topics import Topic, TopicStore

# The log's refusals by its producer state: Kafka answers them with the log start offset,
# and no message (its exception is not one whose message it passes on).
PRODUCER_STATE_ERRORS = frozenset(
    {
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
        ErrorCode.DUPLICATE_SEQUENCE_NUMBER,
        ErrorCode.INVALID_PRODUCER_EPOCH,
    }
)


class Appended(NamedTuple):  # a tuple: built once per partition of every Produce
    base_offset: int
    log_append_time_ms: int  # -1 unless the topic stamps LogAppendTime (or a duplicate's)
    log_start_offset: int


fields_given(Appended, "base_offset", "log_append_time_ms", "log_start_offset")  # protocol.tuples


def writable(topics: TopicStore, name: str, index: int) -> tuple[Topic, PartitionLog]:
    """The partition a client's Produce may write, or PartitionRefused. Kafka 3.9's
    handleProduceRequest creates no topic (auto-creation is Metadata's) and answers a name it
    does not know, legal or not, UNKNOWN_TOPIC_OR_PARTITION without a message."""
    topic = topics.get(name)
    log = topic.partition(index) if topic is not None else None
    if topic is None or log is None:
        raise PartitionRefused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if name in INTERNAL_TOPICS:
        # Kafka's "Cannot append to internal topic", whatever the ACLs: only the broker's
        # coordinators write them (Kafka lets client.id __admin_client through; not here).
        raise PartitionRefused(ErrorCode.INVALID_TOPIC_EXCEPTION)
    return topic, log


def append(
    topic: Topic,
    log: PartitionLog,
    batches: RecordBatches,
    broker_value: BrokerValue,
    clock: Callable[[], int],
) -> Appended:
    """Append validated batches (StorageError: the log's refusal). `clock` is read only for a
    topic that stamps LogAppendTime."""
    append_time = -1
    if produce_settings(topic, broker_value).log_append_time:
        append_time = clock()
        batches = batches.with_log_append_time(append_time)
    result = log.append(batches)
    # Built without the NamedTuple's Python `__new__`: one per partition of every Produce.
    return new_tuple(
        Appended,
        (
            result.base_offset,
            result.duplicate_timestamp if result.duplicate else append_time,
            log.log_start_offset,
        ),
    )
