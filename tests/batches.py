"""Real record batches for tests, built by kafka-python 3.0.12's client-side
DefaultRecordBatchBuilder (kafka.record.default_records), and read back with
its MemoryRecords: the broker's framing is checked against a real client's.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kafka_shim.protocol.records import RecordBatches

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def make_batch(
    values: Sequence[bytes],
    *,
    base_timestamp: int = 1_000,
    timestamps: Sequence[int] | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    compression: str = "none",
    key: bytes | None = None,
    keys: Sequence[bytes | None] | None = None,
    transactional: bool = False,
) -> bytes:
    """One v2 batch of `values`; every record keyed `key`, or each its own of `keys`."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=CODECS[compression],
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 24,
    )
    for index, value in enumerate(values):
        timestamp = timestamps[index] if timestamps is not None else base_timestamp + index
        builder.append(index, timestamp=timestamp, key=keys[index] if keys else key, value=value, headers=[])
    return bytes(builder.build())


def read_records(data: bytes) -> list[tuple[int, int, bytes | None]]:
    """(offset, timestamp, value) of every record, as a consumer decodes them."""
    out = []
    records = MemoryRecords(data)
    while records.has_next():
        batch = records.next_batch()
        if batch is None:
            break
        for record in batch:
            out.append((record.offset, record.timestamp, record.value))
    return out


def batch(*values: bytes, **kwargs: object) -> RecordBatches:
    """make_batch, parsed as the broker's Produce handler parses it."""
    return RecordBatches.parse(make_batch(list(values), **kwargs))  # type: ignore[arg-type]
