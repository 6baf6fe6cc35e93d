"""The `kshim` sink: rows of key, value and optionally topic, partition and headers
become Kafka records, sent by librdkafka's idempotent producer (retries inside a task
never duplicate or reorder). Like Spark's Kafka sink it is at-least-once across task
retries: a re-run task sends its rows again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from confluent_kafka import KafkaError, Message, Producer
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from kafka_shim.pipeline.options import SinkOptions

FLUSH_TIMEOUT_S = 120.0


@dataclass
class Written(WriterCommitMessage):
    records: int


class SinkError(RuntimeError):
    """The producer could not deliver every row."""


def producer_config(options: SinkOptions) -> dict[str, Any]:
    return {
        "linger.ms": 5,
        "batch.num.messages": 10_000,
        "queue.buffering.max.messages": 500_000,
        **options.client_config,
        "bootstrap.servers": options.bootstrap,
        "enable.idempotence": True,
    }


def write_batches(options: SinkOptions, batches: Iterator[pa.RecordBatch]) -> Written:
    producer = Producer(producer_config(options))
    failures: list[KafkaError] = []

    def delivered(error: KafkaError | None, _message: Message) -> None:
        if error is not None:
            failures.append(error)

    sent = 0
    for batch in batches:
        for row in _rows(options, batch):
            while True:
                try:
                    producer.produce(**row, on_delivery=delivered)
                    break
                except BufferError:  # local queue full: serve deliveries, then retry
                    producer.poll(0.05)
            sent += 1
        producer.poll(0)
    left = producer.flush(FLUSH_TIMEOUT_S)
    if left or failures:
        detail = failures[0].str() if failures else "flush timed out"
        raise SinkError(f"{len(failures) + left} of {sent} records not delivered: {detail}")
    return Written(sent)


def _rows(options: SinkOptions, batch: pa.RecordBatch) -> Iterator[dict[str, Any]]:
    names = batch.schema.names
    if "value" not in names:
        raise SinkError("the sink needs a value column")
    count = batch.num_rows
    values = batch.column("value").to_pylist()
    keys = batch.column("key").to_pylist() if "key" in names else [None] * count
    topics = batch.column("topic").to_pylist() if "topic" in names else [None] * count
    partitions = batch.column("partition").to_pylist() if "partition" in names else [None] * count
    headers = batch.column("headers").to_pylist() if options.include_headers else [None] * count
    for key, value, topic, partition, header in zip(keys, values, topics, partitions, headers, strict=True):
        chosen = topic or options.topic
        if chosen is None:
            raise SinkError("a row has no topic: add a topic column or the topic option")
        row: dict[str, Any] = {"topic": chosen, "value": value, "key": key}
        if partition is not None:
            row["partition"] = partition
        if header:
            row["headers"] = [(h["key"], h["value"]) for h in header]
        yield row


class KafkaWriter(DataSourceArrowWriter):
    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Written:
        return write_batches(self.options, iterator)


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Written:
        return write_batches(self.options, iterator)
