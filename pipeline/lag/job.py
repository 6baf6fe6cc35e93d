"""Compute the tables, write them as Parquet and render the HTML page."""

from __future__ import annotations

import time
from pathlib import Path

from pyspark.sql import SparkSession

import pipeline
from pipeline.cluster import Cluster
from pipeline.lag.report import render
from pipeline.lag.tables import LagTables, ReportSettings, compute


def run_report(spark: SparkSession, settings: ReportSettings, out: Path) -> Path:
    """Returns the report's path; the tables are under out/tables/."""
    pipeline.register(spark)
    now_ms = settings.now_ms if settings.now_ms is not None else int(time.time() * 1000)
    tables = compute(spark, settings, Cluster(settings.bootstrap), now_ms)
    write_tables(tables, out / "tables")
    page = out / "report.html"
    page.write_text(
        render(
            tables.current_lag.collect(),
            tables.lag_history.collect(),
            tables.commit_rate.collect(),
            tables.rebalances.collect(),
            f"Consumer lag: {settings.bootstrap}",
        )
    )
    return page


def write_tables(tables: LagTables, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.as_dict().items():
        frame.write.mode("overwrite").parquet(str(directory / name))
