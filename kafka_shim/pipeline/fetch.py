"""Executor side: read one offset range with librdkafka and hand Spark Arrow batches.

confluent-kafka's consumer fetches ahead in C and returns messages in chunks, so the
Python work per record is a handful of attribute reads and list appends; the columns are
then built by Arrow in C. `assign` at the start offset and stop at the end offset: the
range is exact, whatever the consumer prefetched beyond it is dropped. Offsets missing
inside the range (compaction, transaction markers) are simply not there: the range ends
at the first message at or past `end`, or at the partition's end (EOF), whichever comes first.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, TopicPartition

from kafka_shim.pipeline.options import SourceOptions
from kafka_shim.pipeline.ranges import DataLossError, OffsetRange

# Messages per consume() call and per Arrow batch: big enough to amortise Spark's per-batch cost.
CHUNK = 10_000
READER_GROUP = "kshim-range-reader"  # librdkafka wants a group.id; this consumer never joins or commits


def consumer_config(options: SourceOptions) -> dict[str, Any]:
    return {
        # Fetch deep: a range is read start to end, nothing else shares this consumer.
        "fetch.max.bytes": 52_428_800,
        "max.partition.fetch.bytes": 10_485_760,
        "queued.min.messages": 200_000,
        **options.client_config,
        "bootstrap.servers": options.bootstrap,
        "group.id": READER_GROUP,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        # Reading below the log start is data loss, which failOnDataLoss decides about.
        "auto.offset.reset": "error",
    }


class RangeReader:
    """Reads one OffsetRange into Arrow record batches of `schema`."""

    def __init__(self, options: SourceOptions, schema: pa.Schema) -> None:
        self.options = options
        self.schema = schema
        self.with_headers = "headers" in schema.names

    def batches(self, task: OffsetRange) -> Iterator[pa.RecordBatch]:
        consumer = Consumer(consumer_config(self.options))
        try:
            consumer.assign([TopicPartition(task.topic, task.partition, task.start)])
            yield from self._drain(consumer, task)
        finally:
            consumer.close()

    def _drain(self, consumer: Consumer, task: OffsetRange) -> Iterator[pa.RecordBatch]:
        last_progress = time.monotonic()
        timeout_s = self.options.poll_timeout_ms / 1000
        position = task.start
        done = False
        while not done:
            # Ask for no more than the range still holds, so consume() returns as soon as it has them.
            messages = consumer.consume(num_messages=min(CHUNK, task.end - position), timeout=1.0)
            records, done = self._in_range(consumer, task, messages)
            if records:
                last_progress = time.monotonic()
                batch = self._to_arrow(task, records)
                position = batch.column("offset")[-1].as_py() + 1
                done = done or position >= task.end
                yield batch
            elif not done and time.monotonic() - last_progress > timeout_s:
                raise TimeoutError(
                    f"no records from {task.topic}/{task.partition} for {timeout_s:.0f} s "
                    f"while reading [{task.start}, {task.end})"
                )

    def _in_range(
        self, consumer: Consumer, task: OffsetRange, messages: list[Message]
    ) -> tuple[list[Message], bool]:
        """The records of `messages` inside the range, and whether the range is finished
        (EOF, or a record at or past its end). Comprehensions, not a loop with branches:
        this runs for every record."""
        if not any([m.error() for m in messages]):
            if messages and messages[-1].offset() >= task.end:  # type: ignore[operator]
                return [m for m in messages if m.offset() < task.end], True  # type: ignore[operator]
            return messages, False
        records: list[Message] = []
        for message in messages:
            error = message.error()
            if error is None:
                if message.offset() >= task.end:  # type: ignore[operator]
                    return records, True
                records.append(message)
            elif error.code() == KafkaError._PARTITION_EOF:
                return records, True
            else:
                self._on_error(consumer, task, error)
        return records, False

    def _on_error(self, consumer: Consumer, task: OffsetRange, error: KafkaError) -> None:
        if error.code() == KafkaError._AUTO_OFFSET_RESET:
            # The start offset fell below the log start between planning and reading.
            if self.options.fail_on_data_loss:
                raise DataLossError(f"{task.topic}/{task.partition}: {error.str()} (failOnDataLoss=true)")
            consumer.assign([TopicPartition(task.topic, task.partition, OFFSET_BEGINNING)])
            return
        if error.fatal() or not error.retriable():
            raise KafkaException(error)

    def _to_arrow(self, task: OffsetRange, records: list[Message]) -> pa.RecordBatch:
        count = len(records)
        stamps = [m.timestamp() for m in records]
        columns = [
            pa.array([m.key() for m in records], pa.binary()),
            pa.array([m.value() for m in records], pa.binary()),
            pa.array([task.topic] * count, pa.string()),
            pa.array([task.partition] * count, pa.int32()),
            pa.array([m.offset() for m in records], pa.int64()),
            # ms -> the microseconds of Spark's timestamp
            pa.array([ts * 1000 for _, ts in stamps], pa.int64()).cast(self.schema.field("timestamp").type),
            # librdkafka: 1 CreateTime, 2 LogAppendTime; Spark: 0, 1
            pa.array([kind - 1 for kind, _ in stamps], pa.int32()),
        ]
        if self.with_headers:
            headers = [_headers(m) for m in records]
            columns.append(pa.array(headers, self.schema.field("headers").type))
        return pa.RecordBatch.from_arrays(columns, schema=self.schema)


def _headers(message: Message) -> list[dict[str, Any]]:
    pairs: list[tuple[str, bytes | None]] = message.headers() or []  # type: ignore[assignment]
    return [{"key": key, "value": value} for key, value in pairs]
