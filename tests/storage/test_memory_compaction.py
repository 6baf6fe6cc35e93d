"""The in-memory offsets log compacts by its topic's delete.retention.ms, which defaults to the
broker's log.cleaner.delete.retention.ms (as the disk cleaner does): tombstones older than it
are gone after the next pass, younger ones stay."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.offsets_records import GroupKey, OffsetsRecord
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.memory_compaction import MIN_BATCHES
from kafka_shim.storage.offsets_log import OffsetsLog
from kafka_shim.storage.topics import TopicStore

DAY_MS = 86_400_000


def tombstones_left(broker_values: dict[str, str], later_ms: int) -> int:
    """Tombstones of MIN_BATCHES groups, written at 0 (their first pass sets the delete
    horizon), then as many more at `later_ms` (the pass they start drops what is past it):
    how many of the first batch survive."""
    log = OffsetsLog(TopicStore(lambda topic, partition: MemoryLog(), broker_value=broker_values.get), 1)
    for now_ms, first in ((0, 0), (later_ms, MIN_BATCHES)):
        for i in range(first, first + MIN_BATCHES):
            log.append([OffsetsRecord(GroupKey(f"g{i}"), None)], now_ms)
        for _ in range(MIN_BATCHES):  # let the pass this round started finish
            log.append([OffsetsRecord(GroupKey("filler"), None)], now_ms)
    return sum(
        1
        for record in log.replay()
        if record.key.group.startswith("g") and int(record.key.group[1:]) < MIN_BATCHES
    )


@pytest.mark.parametrize(
    ("broker_values", "later_ms", "left"),
    [
        ({}, DAY_MS // 2, MIN_BATCHES),  # Kafka's day: half a day later they are kept
        ({}, 2 * DAY_MS, 0),
        ({"log.cleaner.delete.retention.ms": "60000"}, 30_000, MIN_BATCHES),
        ({"log.cleaner.delete.retention.ms": "60000"}, 120_000, 0),
    ],
)
def test_tombstones_outlive_the_brokers_retention_setting_and_no_longer(
    broker_values: dict[str, str], later_ms: int, left: int
) -> None:
    assert tombstones_left(broker_values, later_ms) == left
