"""One Spark session and one in-memory kafka-shim for the whole pipeline suite: a Spark
session costs ~10 s to start, so tests share it and keep apart by topic names."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

try:
    import pyspark  # noqa: F401
except ImportError as exc:  # a clear error, not a skip: `bash .ci/run` installs the extra
    raise ImportError("the pipeline tests need the spark extra: pip install -e '.[test,spark]'") from exc

# Spark's Python workers must run this interpreter (the one with kafka-shim installed),
# and a sandboxed host may have no routable address for Spark to bind.
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from pyspark.sql import SparkSession

from kafka_shim import pipeline
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kafka-shim pipeline tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # A busy CI host can take longer than the default 15 s to start a Python worker.
        .config("spark.python.authenticate.socketTimeout", "120s")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    pipeline.register(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def broker() -> Iterator[BrokerThread]:
    running = BrokerThread(BrokerConfig(host="127.0.0.1", port=0)).start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def bootstrap(broker: BrokerThread) -> str:
    return broker.bootstrap
