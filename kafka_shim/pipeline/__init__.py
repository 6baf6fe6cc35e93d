"""The PySpark pipeline: a Kafka-protocol Spark data source and sink (`kshim`), and the
consumer-lag report built on it. Needs the `spark` extra: pip install 'kafka-shim[spark]'.

    from kafka_shim import pipeline
    pipeline.register(spark)
    spark.read.format("kshim").option("kafka.bootstrap.servers", "HOST:PORT")
         .option("subscribe", "orders").load()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SHORT_NAME = "kshim"


def register(spark: SparkSession) -> None:
    """Make `format("kshim")` available in this session (reads and writes, batch and stream)."""
    from kafka_shim.pipeline.source import KafkaDataSource

    spark.dataSource.register(KafkaDataSource)
