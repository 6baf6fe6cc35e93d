"""From offset specs to the ranges Spark reads: one InputPartition per topic partition,
reading exactly [start, end).

Pure functions over positions already fetched from the cluster, so the planning rules
(defaults for partitions a JSON spec does not name, data-loss handling, per-trigger
limits) are tested without a broker.
"""

from __future__ import annotations

from pyspark.sql.datasource import InputPartition

from kafka_shim.pipeline.cluster import Positions, flatten
from kafka_shim.pipeline.options import EARLIEST, LATEST, OffsetSpec, OptionError


class DataLossError(RuntimeError):
    """Offsets the query must read are gone (retention, deleted topic) and failOnDataLoss is on."""


class OffsetRange(InputPartition):
    """One Spark task: topic partition `partition` of `topic`, offsets [start, end)."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OffsetRange) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    @property
    def size(self) -> int:
        return self.end - self.start


def resolve(
    spec: OffsetSpec, partitions: list[tuple[str, int]], earliest: Positions, latest: Positions, default: str
) -> Positions:
    """Concrete offsets for every partition: a word applies to all; a JSON spec gives the
    partitions it names (-2 earliest, -1 latest) and `default` the others."""
    word = spec if isinstance(spec, str) else default
    chosen = earliest if word == "earliest" else latest
    positions: Positions = {}
    for topic, partition in partitions:
        offset = chosen[topic][partition]
        if isinstance(spec, dict) and partition in spec.get(topic, {}):
            named = spec[topic][partition]
            sentinels = {EARLIEST: earliest[topic][partition], LATEST: latest[topic][partition]}
            offset = sentinels.get(named, named)
        positions.setdefault(topic, {})[partition] = offset
    unknown = _named(spec) - set(partitions)
    if unknown:
        raise OptionError(f"offsets given for partitions the query does not read: {sorted(unknown)}")
    return positions


def _named(spec: OffsetSpec) -> set[tuple[str, int]]:
    if isinstance(spec, str):
        return set()
    return {(topic, partition) for topic, parts in spec.items() for partition in parts}


def plan(start: Positions, end: Positions, earliest: Positions, fail_on_data_loss: bool) -> list[OffsetRange]:
    """Non-empty ranges from `start` to `end`; a partition missing from `start` (new since
    the last batch) starts at its earliest offset, as Spark's Kafka source does."""
    ranges = []
    for topic, partition, stop in flatten(end):
        log_start = earliest.get(topic, {}).get(partition, 0)
        begin = start.get(topic, {}).get(partition, log_start)
        if begin < log_start:
            if fail_on_data_loss:
                raise DataLossError(
                    f"{topic}/{partition}: offsets {begin}..{log_start - 1} are gone (log starts at "
                    f"{log_start}); set failOnDataLoss=false to skip them"
                )
            begin = log_start
        if stop < begin:
            raise DataLossError(f"{topic}/{partition}: ending offset {stop} is before start {begin}")
        if stop > begin:
            ranges.append(OffsetRange(topic, partition, begin, stop))
    return ranges


def cap(start: Positions, latest: Positions, max_offsets: int) -> Positions:
    """At most `max_offsets` offsets in all, shared in proportion to what each partition
    has waiting (Spark's rateLimit); leftover units go to the partitions with most waiting,
    so a small limit still makes progress."""
    waiting = {(t, p): max(0, o - start.get(t, {}).get(p, o)) for t, p, o in flatten(latest)}
    total = sum(waiting.values())
    if total <= max_offsets:
        return {t: dict(parts) for t, parts in latest.items()}
    share = {tp: n * max_offsets // total for tp, n in waiting.items()}
    leftover = max_offsets - sum(share.values())
    for tp in sorted(waiting, key=lambda tp: waiting[tp] - share[tp], reverse=True)[:leftover]:
        share[tp] += 1
    capped: Positions = {}
    for (topic, partition), n in share.items():
        base = start.get(topic, {}).get(partition, latest[topic][partition] - waiting[(topic, partition)])
        capped.setdefault(topic, {})[partition] = base + n
    return capped
