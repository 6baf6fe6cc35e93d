"""The lag report on a scripted scenario: group `stuck` commits once and stops while the
producer goes on; group `steady` keeps up and rebalances when a second member joins."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from confluent_kafka import Consumer
from pyspark.sql import SparkSession

from kafka_shim.pipeline.cluster import Cluster
from kafka_shim.pipeline.lag.job import run_report
from kafka_shim.pipeline.lag.tables import ReportSettings
from tests.pipeline.kafka_helpers import new_topic, produce

PARTITIONS = 2
STEP = 50


def member(bootstrap: str, group: str, topic: str) -> Consumer:
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
        "auto.offset.reset": "earliest", "heartbeat.interval.ms": 200, "session.timeout.ms": 6000,
    })  # fmt: skip
    consumer.subscribe([topic])
    return consumer


def consume_until(consumers: list[Consumer], cluster: Cluster, group: str, topic: str, total: int) -> None:
    """Poll and commit until the group's committed offsets add up to `total`."""
    deadline = time.monotonic() + 60
    partitions = [(topic, p) for p in range(PARTITIONS)]
    while sum(cluster.committed(group, partitions).get(topic, {}).values()) < total:
        assert time.monotonic() < deadline, f"{group} did not commit {total} records within 60 s"
        for consumer in consumers:
            if consumer.consume(num_messages=500, timeout=0.2) and consumer.assignment():
                consumer.commit(asynchronous=False)


def next_bucket(bucket_s: int = 1) -> None:
    """Wait for the wall clock to enter the next lag bucket, so each step is its own point."""
    current = int(time.time()) // bucket_s
    while int(time.time()) // bucket_s == current:
        time.sleep(0.01)


def test_report_shows_the_stopped_consumer_lag_growing(
    spark: SparkSession, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap, PARTITIONS, "orders")
    cluster = Cluster(bootstrap)
    produce(bootstrap, topic, range(100), PARTITIONS)
    stuck = member(bootstrap, "stuck", topic)
    consume_until([stuck], cluster, "stuck", topic, 100)
    stuck.close()  # stops committing; the producer goes on
    steady = [member(bootstrap, "steady", topic)]
    consume_until(steady, cluster, "steady", topic, 100)
    produced = 100
    for step in range(3):
        next_bucket()
        produce(bootstrap, topic, range(produced, produced + STEP), PARTITIONS)
        produced += STEP
        if step == 1:
            steady.append(member(bootstrap, "steady", topic))  # a second member: a rebalance
        consume_until(steady, cluster, "steady", topic, produced)
    for consumer in steady:
        consumer.close()

    settings = ReportSettings(bootstrap, bucket_s=1, stall_after_s=2)
    page = run_report(spark, settings, tmp_path)
    tables = {name: spark.read.parquet(str(tmp_path / "tables" / name)) for name in (
        "current_lag", "lag_history", "rebalances", "commit_rate", "commits")}  # fmt: skip

    # Every number matches what OffsetFetch and ListOffsets answer now.
    partitions = [(topic, p) for p in range(PARTITIONS)]
    log_end = cluster.offsets(partitions, "latest")[topic]
    current = {(r.group, r.partition): r for r in tables["current_lag"].where(f"topic = '{topic}'").collect()}
    for group in ("stuck", "steady"):
        committed = cluster.committed(group, partitions)[topic]
        for p in range(PARTITIONS):
            row = current[(group, p)]
            assert (row.committed, row.log_end_offset) == (committed[p], log_end[p])
            assert row.lag == log_end[p] - committed[p]
    assert sum(current[("stuck", p)].lag for p in range(PARTITIONS)) == 3 * STEP
    assert all(current[("stuck", p)].stalled for p in range(PARTITIONS))
    assert not any(current[("steady", p)].stalled or current[("steady", p)].lag for p in range(PARTITIONS))

    # The stopped consumer's lag grows step by step.
    totals: dict[datetime, int] = defaultdict(int)
    for point in tables["lag_history"].where(f"group = 'stuck' and topic = '{topic}'").collect():
        totals[point.time] += point.lag
    series = [totals[t] for t in sorted(totals)]
    assert series == sorted(series), f"stuck lag is not growing: {series}"
    assert {0, STEP, 2 * STEP, 3 * STEP} <= set(series)

    steady_rebalances = tables["rebalances"].where("group = 'steady'").orderBy("time")
    generations = [r.generation for r in steady_rebalances.collect()]
    assert len(generations) >= 2 and generations == sorted(generations)
    commits = tables["commits"].where(f"topic = '{topic}'").groupBy("group").count().collect()
    rates = tables["commit_rate"].groupBy("group").sum("commits").collect()
    assert {r[0]: r[1] for r in commits} == {r[0]: r[1] for r in rates if r[0] in ("stuck", "steady")}

    html = page.read_text()
    assert html.count("<svg") >= 4 and "stuck" in html and "stalled" in html


def test_lag_report_subcommand_is_dispatched_without_spark_on_the_broker_path() -> None:
    lean = (
        "import sys, kafka_shim.shim.cli.main; "
        "assert 'pyspark' not in sys.modules and 'kafka_shim.pipeline' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", lean], check=True)
    shown = subprocess.run(
        [sys.executable, "-m", "kafka_shim", "lag-report", "--help"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert "--bootstrap" in shown.stdout and "--stall-seconds" in shown.stdout
