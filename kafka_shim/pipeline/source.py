"""The `kshim` Spark data source: Spark's Kafka source and sink, as a Python Data Source.

Planning (which partitions, which offsets) happens on the driver through one admin
client; each topic-partition range becomes one Spark task that reads exactly
[start, end) in a Python worker (pipeline.fetch) and yields Arrow record batches.
A stream's offsets are {"topic": {"partition": offset}} dicts that Spark journals in
its checkpoint before a batch runs, so a restarted query re-reads exactly the ranges
of the batch it did not finish: with an idempotent sink (Parquet's file sink, Delta)
every record lands once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from kafka_shim.pipeline.cluster import Cluster, Positions, PositionsJson, from_json, to_json
from kafka_shim.pipeline.fetch import RangeReader
from kafka_shim.pipeline.options import SourceOptions, parse_sink_options, parse_source_options
from kafka_shim.pipeline.ranges import OffsetRange, cap, plan, resolve
from kafka_shim.pipeline.schema import source_schema_ddl
from kafka_shim.pipeline.sink import KafkaStreamWriter, KafkaWriter


class KafkaDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "kshim"

    def schema(self) -> str:
        include = self.options.get("includeHeaders", "false").strip().lower() == "true"
        return source_schema_ddl(include)

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaBatchReader(parse_source_options(self.options, streaming=False), schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(parse_source_options(self.options, streaming=True), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return KafkaWriter(parse_sink_options(self.options, include_headers="headers" in schema.names))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        return KafkaStreamWriter(parse_sink_options(self.options, include_headers="headers" in schema.names))


class _RangeReading:
    """What batch and stream readers share: the planner-side cluster client (created on
    first use and never pickled: workers only read ranges) and reading a range."""

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        # The exact Arrow schema Spark checks yielded batches against.
        self.arrow_schema: pa.Schema = to_arrow_schema(schema, timezone="UTC")
        self._cluster: Cluster | None = None

    @property
    def cluster(self) -> Cluster:
        if self._cluster is None:
            self._cluster = Cluster(self.options.bootstrap, self.options.client_config)
        return self._cluster

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_cluster": None}

    def _partitions_now(self) -> list[tuple[str, int]]:
        return self.cluster.partitions(self.options.subscription)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, OffsetRange)
        return RangeReader(self.options, self.arrow_schema).batches(partition)


class KafkaBatchReader(_RangeReading, DataSourceReader):
    def partitions(self) -> Sequence[InputPartition]:
        partitions = self._partitions_now()
        earliest = self.cluster.offsets(partitions, "earliest")
        latest = self.cluster.offsets(partitions, "latest")
        start = resolve(self.options.starting, partitions, earliest, latest, default="earliest")
        end = resolve(self.options.ending, partitions, earliest, latest, default="latest")
        return plan(start, end, earliest, self.options.fail_on_data_loss)


class KafkaStreamReader(_RangeReading, DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        super().__init__(options, schema)
        self.target: Positions | None = None  # availableNow: never read past these
        self.latest_seen: Positions | None = None
        self.progress_committed: PositionsJson | None = None

    def initialOffset(self) -> PositionsJson:
        partitions = self._partitions_now()
        earliest = self.cluster.offsets(partitions, "earliest")
        latest = self.cluster.offsets(partitions, "latest")
        return to_json(resolve(self.options.starting, partitions, earliest, latest, default="latest"))

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self.cluster.offsets(self._partitions_now(), "latest")

    def latestOffset(self, start: PositionsJson, limit: ReadLimit) -> PositionsJson:
        # Spark asks from `start` only once every batch before it is done (a batch left
        # unfinished is re-run first), so `start` is progress worth showing. Spark's own
        # commit() comes only when a further batch runs: never for the last one.
        self._commit_progress(start)
        begin = from_json(start)
        partitions = self._partitions_now()
        latest = self.latest_seen = self.cluster.offsets(partitions, "latest")
        if self.target is not None:
            latest = self._within_target(latest, begin)
        # Partitions new since the last batch start at their earliest offset (Spark's rule).
        new = [(t, p) for t, parts in latest.items() for p in parts if p not in begin.get(t, {})]
        for topic, parts in self.cluster.offsets(new, "earliest").items():
            begin.setdefault(topic, {}).update(parts)
        if isinstance(limit, ReadMaxRows):
            latest = cap(begin, latest, limit.max_rows)
        # A partition that disappeared keeps its last position, so offsets never go back.
        for topic, parts in begin.items():
            for partition, offset in parts.items():
                latest.setdefault(topic, {}).setdefault(partition, offset)
        return to_json(latest)

    def _within_target(self, latest: Positions, begin: Positions) -> Positions:
        assert self.target is not None
        bounded: Positions = {}
        for topic, parts in self.target.items():
            for partition, target in parts.items():
                now = latest.get(topic, {}).get(partition, begin.get(topic, {}).get(partition, target))
                bounded.setdefault(topic, {})[partition] = min(target, now)
        return bounded

    def reportLatestOffset(self) -> PositionsJson | None:
        return None if self.latest_seen is None else to_json(self.latest_seen)

    def partitions(self, start: PositionsJson, end: PositionsJson) -> Sequence[InputPartition]:
        finish = from_json(end)
        targets = [(t, p) for t, parts in finish.items() for p in parts]
        earliest = self.cluster.offsets(targets, "earliest")
        return plan(from_json(start), finish, earliest, self.options.fail_on_data_loss)

    def commit(self, end: PositionsJson) -> None:
        self._commit_progress(end)

    def _commit_progress(self, done: PositionsJson) -> None:
        """Spark's checkpoint is what makes the stream exactly-once; the group commit only
        lets lag tools (kafka-consumer-groups, the lag report) see how far it has got."""
        if self.options.group_id is None or done == self.progress_committed:
            return
        self.cluster.commit(self.options.group_id, from_json(done))
        self.progress_committed = done
