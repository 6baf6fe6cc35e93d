"""The report's tables, computed by Spark from the offsets log and the data topics.

Lag at time t is LEO(t) - committed(t): LEO(t) is one past the last record of the
partition stamped at or before t (record timestamps, read through the source),
committed(t) the group's last commit at or before t. Both are evaluated on a grid of
time buckets per partition, so a consumer that stops committing shows its lag
growing with every bucket in which the producer goes on. The last point of every
series is "now": ListOffsets' log end and the group's latest commit, the numbers
OffsetFetch and ListOffsets answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from kafka_shim.pipeline.cluster import Cluster, flatten
from kafka_shim.pipeline.lag.decode import GROUP, OFFSET, decoded
from kafka_shim.pipeline.options import Subscription

OFFSETS_TOPIC = "__consumer_offsets"


@dataclass(frozen=True)
class ReportSettings:
    bootstrap: str
    bucket_s: int = 60  # lag and commit-rate resolution
    stall_after_s: int = 300  # lag > 0 and no commit progress for this long: stalled
    now_ms: int | None = None  # the report's "now" (default: the clock when it starts)


@dataclass(frozen=True)
class LagTables:
    commits: DataFrame  # every offset commit: group, topic, partition, committed, commit_time
    lag_history: DataFrame  # group, topic, partition, time, log_end_offset, committed, lag
    current_lag: DataFrame  # group, topic, partition, committed, log_end_offset, lag, ..., stalled
    commit_rate: DataFrame  # group, time (bucket start), commits, commits_per_s
    rebalances: DataFrame  # group, time, generation, previous_generation, members, protocol, leader

    def as_dict(self) -> dict[str, DataFrame]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def read_topic(spark: SparkSession, bootstrap: str, topics: list[str]) -> DataFrame:
    return (
        spark.read.format("kshim")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", ",".join(topics))
        .option("failOnDataLoss", "false")  # retention may have moved a log start meanwhile
        .load()
    )


def offsets_log(spark: SparkSession, settings: ReportSettings) -> DataFrame:
    """Decoded records in log order; a key's last record is its current state."""
    raw = read_topic(spark, settings.bootstrap, [OFFSETS_TOPIC])
    rows = raw.select(
        decoded(F.col("key"), F.col("value")).alias("r"),
        F.col("timestamp").alias("log_time"),
        F.col("partition").alias("log_partition"),
        F.col("offset").alias("log_offset"),
    )
    return rows.select("r.*", "log_time", "log_partition", "log_offset")


def compute(spark: SparkSession, settings: ReportSettings, cluster: Cluster, now_ms: int) -> LagTables:
    log = offsets_log(spark, settings).cache()
    now = F.timestamp_millis(F.lit(now_ms))
    commits = _commits(log)
    committed_topics = sorted({r.topic for r in commits.select("topic").distinct().collect()})
    existing = cluster.partitions(Subscription(topics=tuple(committed_topics)))
    log_end = spark.createDataFrame(
        list(flatten(cluster.offsets(existing, "latest"))), "topic string, partition int, log_end_offset long"
    )
    marks = _log_end_marks(spark, settings, [t for t, _ in existing], settings.bucket_s)
    current = _current_lag(log, commits, log_end, now, settings.stall_after_s)
    return LagTables(
        commits=commits,
        lag_history=_lag_history(commits, marks, current, now, settings.bucket_s),
        current_lag=current,
        commit_rate=_commit_rate(commits, settings.bucket_s),
        rebalances=_rebalances(log),
    )


def _commits(log: DataFrame) -> DataFrame:
    offsets = log.where((F.col("kind") == OFFSET) & F.col("committed").isNotNull())
    return offsets.select(
        "group", "topic", "partition", "committed",
        F.coalesce(F.timestamp_millis("commit_ms"), "log_time").alias("commit_time"),
        "log_partition", "log_offset",
    )  # fmt: skip


def _bucket(column: str, bucket_s: int) -> F.Column:
    """The end of the bucket holding `column`: the state at a bucket's end is what it shows."""
    seconds = F.floor(F.unix_micros(column) / (bucket_s * 1_000_000)) * bucket_s + bucket_s
    return F.timestamp_seconds(seconds)


def _log_end_marks(
    spark: SparkSession, settings: ReportSettings, topics: list[str], bucket_s: int
) -> DataFrame:
    """Per partition and bucket, the log end reached by the bucket's end (records' timestamps)."""
    schema = "topic string, partition int, time timestamp, log_end_offset long"
    if not topics:
        return spark.createDataFrame([], schema)
    records = read_topic(spark, settings.bootstrap, sorted(set(topics))).select(
        "topic", "partition", "offset", "timestamp"
    )
    by_bucket = records.groupBy("topic", "partition", _bucket("timestamp", bucket_s).alias("time"))
    return by_bucket.agg((F.max("offset") + 1).alias("log_end_offset"))


def _current_lag(
    log: DataFrame, commits: DataFrame, log_end: DataFrame, now: F.Column, stall_after_s: int
) -> DataFrame:
    key = ["group", "topic", "partition"]
    in_order = Window.partitionBy(*key).orderBy("log_partition", "log_offset")
    # The commit history in log order: when did the committed offset last move forward?
    moved = commits.withColumn("previous", F.lag("committed").over(in_order)).withColumn(
        "advanced", F.col("previous").isNull() | (F.col("committed") > F.col("previous"))
    )
    progress = moved.groupBy(*key).agg(
        F.max_by("committed", F.struct("log_partition", "log_offset")).alias("committed"),
        F.max("commit_time").alias("last_commit_time"),
        F.max(F.when(F.col("advanced"), F.col("commit_time"))).alias("last_progress_time"),
        F.count("*").alias("commits"),
    )
    # A key whose last record is a tombstone (OffsetDelete, expiry, group deleted) has no offset now.
    last = (
        log.where(F.col("kind") == OFFSET)
        .groupBy(*key)
        .agg(F.max_by(F.col("committed").isNotNull(), F.struct("log_partition", "log_offset")).alias("live"))
    )
    live = progress.join(last.where("live"), key).drop("live")
    joined = live.join(log_end, ["topic", "partition"], "left")
    lag = F.greatest(F.col("log_end_offset") - F.col("committed"), F.lit(0))
    idle_s = F.unix_micros(now) / 1e6 - F.unix_micros("last_progress_time") / 1e6
    return joined.select(
        *key, "committed", "log_end_offset", lag.alias("lag"), "commits", "last_commit_time",
        "last_progress_time", ((lag > 0) & (idle_s >= stall_after_s)).alias("stalled"),
    ).orderBy(*key)  # fmt: skip


def _lag_history(
    commits: DataFrame, marks: DataFrame, current: DataFrame, now: F.Column, bucket_s: int
) -> DataFrame:
    key = ["group", "topic", "partition"]
    pairs = current.select(*key)
    # Every partition of a topic gets a point at every bucket end where anything happened to
    # the topic, so a topic's or group's total lag at a time sums all its partitions (the
    # records of one produce can straddle a bucket end, one partition in each bucket).
    times = (
        marks.select("topic", "time")
        .unionByName(commits.select("topic", _bucket("commit_time", bucket_s).alias("time")))
        .distinct()
    )
    grid = times.join(pairs, "topic")
    events = (
        grid.select(*key, "time", F.lit(2).alias("kind"), F.lit(None).cast("long").alias("committed"),
                    F.lit(None).cast("long").alias("log_end_offset"))
        .unionByName(commits.select(*key, F.col("commit_time").alias("time"), F.lit(1).alias("kind"),
                                    "committed", F.lit(None).cast("long").alias("log_end_offset")))
        .unionByName(marks.join(pairs, ["topic", "partition"]).select(*key, "time", F.lit(0).alias("kind"),
                     F.lit(None).cast("long").alias("committed"), "log_end_offset"))
    )  # fmt: skip
    # At equal times: records first, then commits, then the grid point that reads both.
    so_far = Window.partitionBy(*key).orderBy("time", "kind").rowsBetween(Window.unboundedPreceding, 0)
    history = events.select(
        *key, "time", "kind",
        F.max("log_end_offset").over(so_far).alias("log_end_offset"),
        F.last("committed", ignorenulls=True).over(so_far).alias("committed"),
    ).where((F.col("kind") == 2) & F.col("committed").isNotNull())  # fmt: skip
    latest = current.select(*key, now.alias("time"), "log_end_offset", "committed")
    points = history.drop("kind").unionByName(latest)
    lag = F.greatest(F.coalesce(F.col("log_end_offset"), F.col("committed")) - F.col("committed"), F.lit(0))
    return points.withColumn("lag", lag).orderBy(*key, "time")


def _commit_rate(commits: DataFrame, bucket_s: int) -> DataFrame:
    start = F.timestamp_seconds(F.floor(F.unix_micros("commit_time") / (bucket_s * 1_000_000)) * bucket_s)
    counted = commits.groupBy("group", start.alias("time")).agg(F.count("*").alias("commits"))
    return counted.withColumn("commits_per_s", F.col("commits") / bucket_s).orderBy("group", "time")


def _rebalances(log: DataFrame) -> DataFrame:
    """Each generation a group reached, with the one before it (Kafka writes group
    metadata on every completed rebalance and when a group empties)."""
    groups = log.where((F.col("kind") == GROUP) & F.col("generation").isNotNull()).select(
        "group", "generation", "members", "protocol", "leader",
        F.coalesce(F.timestamp_millis("state_ms"), "log_time").alias("time"), "log_partition", "log_offset",
    )  # fmt: skip
    in_order = Window.partitionBy("group").orderBy("log_partition", "log_offset")
    with_previous = groups.withColumn("previous_generation", F.lag("generation").over(in_order))
    changed = F.col("previous_generation").isNull() | (F.col("generation") != F.col("previous_generation"))
    return (
        with_previous.where(changed)
        .select("group", "time", "generation", "previous_generation", "members", "protocol", "leader")
        .orderBy("group", "time")
    )
