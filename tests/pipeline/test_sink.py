"""Writes through the kshim sink, read back through the kshim source."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from tests.pipeline.kafka_helpers import new_topic, produce
from tests.pipeline.stream_job import stream

SINK_SCHEMA = "key binary, value binary, partition int, headers array<struct<key: string, value: binary>>"


def read_all(spark: SparkSession, bootstrap: str, topic: str) -> DataFrame:
    reader = spark.read.format("kshim").option("kafka.bootstrap.servers", bootstrap)
    return reader.option("subscribe", topic).option("includeHeaders", "true").load()


def test_batch_write_then_read_back_gives_the_same_rows(spark: SparkSession, bootstrap: str) -> None:
    topic = new_topic(bootstrap, 3)
    rows = [
        (f"k{i}".encode(), f"value {i}".encode(), i % 3, [("n", str(i).encode())] if i % 2 else [])
        for i in range(10_000)
    ]
    spark.createDataFrame(rows, SINK_SCHEMA).repartition(2).write.format("kshim").mode("append").option(
        "kafka.bootstrap.servers", bootstrap
    ).option("topic", topic).save()

    back = read_all(spark, bootstrap, topic).select("key", "value", "partition", "headers").collect()
    assert sorted((bytes(r.key), bytes(r.value), r.partition, [(h.key, bytes(h.value)) for h in r.headers])
                  for r in back) == sorted(rows)  # fmt: skip


def test_stream_copies_a_topic_into_another(spark: SparkSession, bootstrap: str, tmp_path: Path) -> None:
    source, target = new_topic(bootstrap, 2, "src"), new_topic(bootstrap, 2, "dst")
    produce(bootstrap, source, range(3_000), 2)
    query = (
        stream(spark, bootstrap, source)
        .select("key", F.upper("value").alias("value"), F.col("partition"))  # string value: encoded UTF-8
        .writeStream.format("kshim")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", target)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120), "copy did not finish in 120 s"
    assert query.exception() is None

    copied = read_all(spark, bootstrap, target).select("key", "value", "partition").collect()
    expected = read_all(spark, bootstrap, source).select("key", F.upper("value"), "partition").collect()
    assert sorted(map(tuple, copied)) == sorted((r[0], r[1].encode(), r[2]) for r in expected)
