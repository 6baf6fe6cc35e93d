"""Streaming reads: availableNow into Parquet, restarts from the checkpoint, and a
SIGKILL mid-batch that must leave every record in the output exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_shim.pipeline.cluster import Cluster
from tests.pipeline.kafka_helpers import new_topic, produce
from tests.pipeline.stream_job import MAX_OFFSETS_PER_TRIGGER, stream

PARTITIONS = 4
REPO = Path(__file__).resolve().parents[2]


def run_available_now(df: DataFrame, checkpoint: Path, out: Path) -> list[int]:
    """Run to the end of what is there now; the input rows of each micro-batch."""
    query = (
        df.writeStream.format("parquet")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(out))
    )
    assert query.awaitTermination(240), "availableNow query did not finish within 240 s"
    assert query.exception() is None
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def assert_exactly_once(spark: SparkSession, out: Path, expected: int) -> None:
    """Spark's Parquet sink lists its committed files in _spark_metadata; reading the
    directory through Spark sees exactly those, never the leftovers of a killed batch."""
    rows = spark.read.parquet(str(out)).select("partition", "offset")
    assert rows.count() == expected
    assert rows.distinct().count() == expected
    per_partition = rows.groupBy("partition").agg(F.min("offset"), F.max("offset"), F.count("*")).collect()
    for _, low, high, count in per_partition:
        assert (low, high) == (0, count - 1)  # every offset, none twice


def committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    partitions = [(topic, p) for p in range(PARTITIONS)]
    return Cluster(bootstrap).committed(group, partitions).get(topic, {})


@pytest.mark.slow
def test_available_now_reads_all_then_only_what_is_new(
    spark: SparkSession, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap, PARTITIONS)
    produce(bootstrap, topic, range(100_000), PARTITIONS)
    group = f"pipeline-{topic}"
    df = (
        spark.readStream.format("kshim")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "60000")
        .option("kafka.group.id", group)
        .load()
    )
    checkpoint, out = tmp_path / "checkpoint", tmp_path / "out"

    assert run_available_now(df, checkpoint, out) == [60_000, 40_000]
    assert_exactly_once(spark, out, 100_000)
    assert committed(bootstrap, group, topic) == dict.fromkeys(range(PARTITIONS), 25_000)

    produce(bootstrap, topic, range(100_000, 105_000), PARTITIONS)
    assert run_available_now(df, checkpoint, out) == [5_000]
    assert_exactly_once(spark, out, 105_000)
    assert committed(bootstrap, group, topic) == dict.fromkeys(range(PARTITIONS), 26_250)


def batch_ids(directory: Path) -> set[int]:
    return {int(p.name) for p in directory.glob("[0-9]*")} if directory.exists() else set()


@pytest.mark.slow
def test_killed_mid_batch_and_restarted_holds_every_record_once(
    spark: SparkSession, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap, PARTITIONS)
    records = 3 * MAX_OFFSETS_PER_TRIGGER
    produce(bootstrap, topic, range(records), PARTITIONS)
    checkpoint, out = tmp_path / "checkpoint", tmp_path / "out"
    job_args = [bootstrap, topic, str(checkpoint), str(out), "0.0005"]  # last: pause per row (s)
    job = subprocess.Popen(
        [sys.executable, "-m", "tests.pipeline.stream_job", *job_args],
        cwd=REPO,
        start_new_session=True,  # its own process group: the JVM and Python workers die with it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Kill once batch 0 is committed and batch 1 planned (journaled) but not committed.
        deadline = time.monotonic() + 180
        while not (0 in batch_ids(checkpoint / "commits") and 1 in batch_ids(checkpoint / "offsets")):
            assert job.poll() is None, "the job ended before it could be killed"
            assert time.monotonic() < deadline, "the job did not reach its second batch in 180 s"
            time.sleep(0.02)
        os.killpg(job.pid, signal.SIGKILL)
    finally:
        job.wait(30)
    in_flight = batch_ids(checkpoint / "offsets") - batch_ids(checkpoint / "commits")
    assert in_flight, "killed between batches, not mid-batch"

    # Batch 1 is re-run exactly as journaled, then the rest in one batch (no limit now).
    restarted = stream(spark, bootstrap, topic)
    rest = records - 2 * MAX_OFFSETS_PER_TRIGGER
    assert run_available_now(restarted, checkpoint, out) == [MAX_OFFSETS_PER_TRIGGER, rest]
    assert_exactly_once(spark, out, records)
