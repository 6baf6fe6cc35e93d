"""Batch reads through the kshim source against a real broker."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from tests.pipeline.kafka_helpers import new_topic, produce, value_of

PARTITIONS = 4
RECORDS = 2_000


@pytest.fixture(scope="module")
def topic(bootstrap: str) -> str:
    name = new_topic(bootstrap, PARTITIONS)
    produce(bootstrap, name, range(RECORDS), PARTITIONS, headers=True)
    return name


def read(spark: SparkSession, bootstrap: str, **options: str) -> DataFrame:
    reader = spark.read.format("kshim").option("kafka.bootstrap.servers", bootstrap)
    return reader.options(**options).load()


def offsets_by_partition(df: DataFrame) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for row in df.select("partition", "offset").collect():
        found.setdefault(row.partition, []).append(row.offset)
    return {p: sorted(offsets) for p, offsets in found.items()}


def test_reads_every_record_with_kafka_source_columns(
    spark: SparkSession, bootstrap: str, topic: str
) -> None:
    df = read(spark, bootstrap, subscribe=topic, includeHeaders="true")
    assert df.columns == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers",
    ]  # fmt: skip
    rows = df.collect()
    assert len(rows) == RECORDS
    for row in rows:
        index = int(row.key[1:])
        assert (row.topic, row.partition, bytes(row.value)) == (topic, index % PARTITIONS, value_of(index))
        assert row.offset == index // PARTITIONS  # one producer, in order: partition offsets are dense
        assert row.timestampType == 0  # CreateTime
        assert [(h.key, h.value) for h in row.headers] == [("index", str(index).encode()), ("empty", None)]


def test_json_offsets_read_exactly_that_range(spark: SparkSession, bootstrap: str, topic: str) -> None:
    starting = {topic: {"0": 10, "1": -2, "2": 499, "3": 100}}
    ending = {topic: {"0": 20, "1": 5, "2": -1, "3": 100}}
    offsets = {"startingOffsets": json.dumps(starting), "endingOffsets": json.dumps(ending)}
    df = read(spark, bootstrap, subscribe=topic, **offsets)
    assert offsets_by_partition(df) == {0: list(range(10, 20)), 1: list(range(5)), 2: [499]}


def test_assign_and_pattern_choose_partitions(spark: SparkSession, bootstrap: str, topic: str) -> None:
    assigned = read(spark, bootstrap, assign=json.dumps({topic: [1, 3]}))
    assert sorted(offsets_by_partition(assigned)) == [1, 3]
    pattern = read(spark, bootstrap, subscribePattern=topic.replace("t-", "t-.?"))
    assert pattern.count() == RECORDS


def test_data_loss_fails_or_is_skipped_as_asked(spark: SparkSession, bootstrap: str) -> None:
    name = new_topic(bootstrap, 1)
    produce(bootstrap, name, range(50), 1)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (deleted,) = admin.delete_records([TopicPartition(name, 0, 20)]).values()
    deleted.result(30)
    below_log_start = json.dumps({name: {"0": 5}})
    with pytest.raises(PySparkException, match="failOnDataLoss"):
        read(spark, bootstrap, subscribe=name, startingOffsets=below_log_start).collect()
    skipped = read(spark, bootstrap, subscribe=name, startingOffsets=below_log_start, failOnDataLoss="false")
    assert offsets_by_partition(skipped) == {0: list(range(20, 50))}


def test_bad_options_are_refused_with_their_name(spark: SparkSession, bootstrap: str, topic: str) -> None:
    with pytest.raises(PySparkException, match="exactly one of subscribe"):
        read(spark, bootstrap).collect()
    with pytest.raises(PySparkException, match="endingOffsets cannot be earliest"):
        read(spark, bootstrap, subscribe=topic, endingOffsets="earliest").collect()
