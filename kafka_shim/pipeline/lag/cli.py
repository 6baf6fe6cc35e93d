"""`kafka-shim lag-report` / `python -m pipeline.lag`: run the lag job on Spark and write
OUT/tables/<name>/ (Parquet) and OUT/report.html."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from kafka_shim.pipeline.lag.job import run_report
from kafka_shim.pipeline.lag.tables import ReportSettings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-shim lag-report",
        description="Consumer lag over time, commit rate, rebalances and stalled consumers, "
        "from __consumer_offsets and log-end offsets (any Kafka broker).",
    )
    parser.add_argument("--bootstrap", required=True, help="HOST:PORT of a broker")
    parser.add_argument("--out", required=True, type=Path, help="directory for tables/ and report.html")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default %(default)s)")
    parser.add_argument(
        "--bucket-seconds", type=int, default=60, help="time resolution (default %(default)s)"
    )
    parser.add_argument(
        "--stall-seconds",
        type=int,
        default=300,
        help="lag with no commit progress for this long is a stalled consumer (default %(default)s)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Spark's Python workers must run this interpreter, the one that has kafka-shim installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(args.master)
        .appName("kafka-shim lag report")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        now_ms = int(time.time() * 1000)
        settings = ReportSettings(args.bootstrap, args.bucket_seconds, args.stall_seconds, now_ms)
        report = run_report(spark, settings, args.out)
    finally:
        spark.stop()
    print(f"lag report: {report}")
    return 0
