"""A streaming job run as its own process, so a test can SIGKILL it mid-batch:
kshim -> (a deliberately slow step) -> Parquet, with a checkpoint.

    python -m tests.pipeline.stream_job BOOTSTRAP TOPIC CHECKPOINT OUT PAUSE_PER_ROW_S
"""

from __future__ import annotations

import os
import sys
import time

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_shim import pipeline

MAX_OFFSETS_PER_TRIGGER = 4000


def stream(spark: SparkSession, bootstrap: str, topic: str, max_offsets: int | None = None) -> DataFrame:
    reader = (
        spark.readStream.format("kshim")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
    )
    if max_offsets is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets))
    return reader.load()


def main(bootstrap: str, topic: str, checkpoint: str, out: str, pause_per_row_s: str) -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    pipeline.register(spark)
    pause = float(pause_per_row_s)

    @F.udf("binary")
    def heavy_processing(value: bytes) -> bytes:
        # Stands for real per-record work: it keeps each micro-batch in flight long
        # enough for the test to kill the job with the batch half done.
        time.sleep(pause)
        return value

    query = (
        stream(spark, bootstrap, topic, MAX_OFFSETS_PER_TRIGGER)
        .withColumn("value", heavy_processing("value"))
        .writeStream.format("parquet")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start(out)
    )
    print("started", flush=True)
    query.awaitTermination()


if __name__ == "__main__":
    main(*sys.argv[1:])
