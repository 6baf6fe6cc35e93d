"""Compute the tables, write them as Parquet and render the HTML page."""

from __future__ import annotations

import time
from pathlib import Path

from pyspark.sql import Row, SparkSession

from kafka_shim import pipeline
from kafka_shim.pipeline.cluster import Cluster
from kafka_shim.pipeline.lag.report import render
from kafka_shim.pipeline.lag.tables import LagTables, ReportSettings, compute


def run_report(spark: SparkSession, settings: ReportSettings, out: Path) -> Path:
    """Returns the report's path; the tables are under out/tables/."""
    pipeline.register(spark)
    now_ms = settings.now_ms if settings.now_ms is not None else int(time.time() * 1000)
    tables = compute(spark, settings, Cluster(settings.bootstrap), now_ms)
    write_tables(tables, out / "tables")

    # The page is drawn from the written tables: computing them again would re-read Kafka.
    def written(name: str) -> list[Row]:
        return spark.read.parquet(str(out / "tables" / name)).collect()

    page = out / "report.html"
    history, rates = written("lag_history"), written("commit_rate")
    title = f"Consumer lag: {settings.bootstrap}"
    page.write_text(render(written("current_lag"), history, rates, written("rebalances"), title))
    return page


def write_tables(tables: LagTables, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.as_dict().items():
        frame.write.mode("overwrite").parquet(str(directory / name))
