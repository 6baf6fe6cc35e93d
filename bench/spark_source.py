"""Rows/s from a broker into Spark's noop sink through the kshim source: N 100-byte
records in a 4-partition topic, read by a batch job on local[2] (target: > 200k rows/s
from kafka-shim), kafka-shim beside Tansu in the same run.

    python -m bench.spark_source [--records 1000000] [--rounds 3]

Each broker's topic is produced once, then read `rounds` times (rounds alternate
between brokers); the first read per broker warms up Spark's Python workers and is
not counted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from statistics import median

from confluent_kafka import Producer
from pyspark.sql import SparkSession

from bench.commits import create_topic
from bench.common import measure_interleaved, print_row
from compat.targets import Broker
from kafka_shim import pipeline

PAYLOAD = b"x" * 100
PARTITIONS = 4


def fill(bootstrap: str, records: int) -> str:
    topic = f"bench-spark-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, PARTITIONS)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10_000})
    for i in range(records):
        while True:
            try:
                producer.produce(topic, PAYLOAD, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(120):
        raise RuntimeError("not every record was delivered within 120 s")
    return topic


def read_into_noop(spark: SparkSession, bootstrap: str, topic: str) -> float:
    started = time.perf_counter()
    reader = spark.read.format("kshim").option("kafka.bootstrap.servers", bootstrap)
    df = reader.option("subscribe", topic).load()
    df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    pipeline.register(spark)
    topics: dict[str, str] = {}

    def measure(broker: Broker) -> float:
        if broker.name not in topics:
            topics[broker.name] = fill(broker.bootstrap, args.records)
            read_into_noop(spark, broker.bootstrap, topics[broker.name])  # warm-up, not counted
        return args.records / read_into_noop(spark, broker.bootstrap, topics[broker.name])

    print(f"kshim -> noop sink, {args.records:,} x 100-byte records, {PARTITIONS} partitions, local[2]")
    samples = measure_interleaved(measure, args.rounds)
    print_row("rows/s into Spark (median)", {name: median(v) for name, v in samples.items()}, "rows/s", True)
    spark.stop()


if __name__ == "__main__":
    main()
