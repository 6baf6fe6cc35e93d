"""The share-group state log: the internal topic `__share_group_state`, written and replayed.

The share partitions' state (start offset, in-flight delivery states and counts) is written
as ShareSnapshot and ShareUpdate records in Kafka's share coordinator format, to the partition
Kafka would pick for the share partition's key ("group:topicId:partition"); `replay` reads
back the latest snapshot of each share partition with the updates after it applied, at
start-up. One write path, one recovery path. The topic is compacted: a snapshot supersedes
what came before it under the same key, an update is kept beside it (another key version).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Sequence
from typing import Any, NamedTuple

from kafka_shim.protocol.internal_topics import SHARE_STATE_TOPIC
from kafka_shim.protocol.record_codec import Record, build_batch
from kafka_shim.protocol.share_state_records import (
    SharePartitionKey,
    ShareStateRecord,
    decode_record,
    encode_record,
    merge_update,
)
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.storage.internal_log import InternalLog
from kafka_shim.storage.log import LEADER_EPOCH
from kafka_shim.storage.offsets_log import OFFSETS_SEGMENT_BYTES, partition_for
from kafka_shim.storage.topics import TopicStore

log = logging.getLogger(__name__)

SHARE_STATE_TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": str(OFFSETS_SEGMENT_BYTES)}


def shard_key(key: SharePartitionKey) -> str:
    """What Kafka hashes to place a share partition's state: "group:topicId:partition",
    the topic id in Kafka's text form (URL-safe base64, unpadded)."""
    topic_id = base64.urlsafe_b64encode(key.topic_id.bytes).decode("ascii").rstrip("=")
    return f"{key.group_id}:{topic_id}:{key.partition}"


class ShareStateLog(InternalLog):
    """`__share_group_state` in a TopicStore, created with `partitions` partitions when the
    first record is written; a share partition's key is placed by the topic's partition
    count at each write."""

    def __init__(self, topics: TopicStore, partitions: int) -> None:
        super().__init__(topics, SHARE_STATE_TOPIC, partitions, SHARE_STATE_TOPIC_CONFIGS)

    def append(self, records: Sequence[ShareStateRecord], now_ms: int) -> None:
        """One uncompressed batch per partition; durable under the fsync policy on return."""
        topic = self._open()
        by_partition: dict[int, list[tuple[bytes, bytes | None]]] = {}
        for record in records:
            index = partition_for(shard_key(record.key), len(topic.partitions))
            by_partition.setdefault(index, []).append(encode_record(record))
        for index, keys_values in by_partition.items():
            partition = topic.partitions[index]
            base = partition.log_end_offset
            batch = [Record(base + i, now_ms, key, value) for i, (key, value) in enumerate(keys_values)]
            partition.append(build_batch(batch, partition_leader_epoch=LEADER_EPOCH))
            self._appended(index, partition, now_ms)

    def replay(self) -> dict[SharePartitionKey, ReplayedState]:
        """Every share partition's latest state, as ShareSnapshot fields with the ShareUpdates
        after the snapshot merged in, and how many updates followed it (Kafka's
        snapshotUpdateCount); records that are not Kafka's are skipped with a warning."""
        states: dict[SharePartitionKey, ReplayedState] = {}
        topic = self.topic
        for index, partition in enumerate(topic.partitions if topic is not None else ()):
            for _, records in self._scan(index, partition):
                for _, key, value in records:
                    try:
                        record = decode_record(key, value)
                    except ProtocolError as exc:
                        log.warning("%s-%d: record skipped: %s", SHARE_STATE_TOPIC, index, exc)
                        continue
                    if record.value is None:
                        if not record.update:  # an update's tombstone is compaction's, not a deletion
                            states.pop(record.key, None)
                    elif record.update:
                        before = states.get(record.key)
                        merged = merge_update(None if before is None else before.fields, record.value)
                        states[record.key] = ReplayedState(
                            merged, 1 if before is None else before.updates + 1
                        )
                    else:
                        states[record.key] = ReplayedState(record.value, 0)
        return states


class ReplayedState(NamedTuple):
    fields: dict[str, Any]  # ShareSnapshotValue's
    updates: int  # ShareUpdates since the snapshot
