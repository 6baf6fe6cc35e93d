"""Driver-side questions to the cluster: which partitions, which offsets, and the
progress commits of a stream. Uses confluent-kafka's AdminClient (librdkafka):
Metadata, ListOffsets and OffsetCommit as any Kafka broker answers them.

Positions travel as {topic: {partition: offset}}; `to_json`/`from_json` turn them
into the {"topic": {"0": 42}} form Spark keeps in its checkpoint (JSON keys are strings).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafka_shim.pipeline.options import Subscription

Positions = dict[str, dict[int, int]]
PositionsJson = dict[str, dict[str, int]]

REQUEST_TIMEOUT_S = 30.0


def to_json(positions: Positions) -> PositionsJson:
    return {
        topic: {str(p): o for p, o in sorted(parts.items())} for topic, parts in sorted(positions.items())
    }


def from_json(positions: PositionsJson) -> Positions:
    return {topic: {int(p): o for p, o in parts.items()} for topic, parts in positions.items()}


def flatten(positions: Positions) -> Iterator[tuple[str, int, int]]:
    for topic, parts in sorted(positions.items()):
        for partition, offset in sorted(parts.items()):
            yield topic, partition, offset


class Cluster:
    """One admin connection for the life of a reader (the streaming planner keeps it)."""

    def __init__(self, bootstrap: str, client_config: dict[str, str] | None = None) -> None:
        self.config: dict[str, Any] = {**(client_config or {}), "bootstrap.servers": bootstrap}
        self.admin = AdminClient(self.config)

    def partitions(self, subscription: Subscription) -> list[tuple[str, int]]:
        """The topic partitions the subscription names right now, sorted."""
        if subscription.assigned:
            return list(subscription.assigned)
        topics = self.admin.list_topics(timeout=REQUEST_TIMEOUT_S).topics
        found: list[tuple[str, int]] = []
        for name, metadata in topics.items():
            # A pattern skips internal topics, as the Kafka consumer does (exclude.internal.topics).
            if subscription.pattern is not None and name.startswith("__"):
                continue
            if subscription.matches(name) and metadata.error is None:
                found.extend((name, p) for p in metadata.partitions)
        return sorted(found)

    def offsets(self, partitions: Iterable[tuple[str, int]], which: str) -> Positions:
        """ListOffsets `earliest` (log start) or `latest` (log end) for each partition."""
        spec = OffsetSpec.earliest() if which == "earliest" else OffsetSpec.latest()
        request = {TopicPartition(t, p): spec for t, p in partitions}
        positions: Positions = {}
        if not request:
            return positions
        futures = self.admin.list_offsets(request, request_timeout=REQUEST_TIMEOUT_S)
        for tp, future in futures.items():
            positions.setdefault(tp.topic, {})[tp.partition] = future.result().offset
        return positions

    def commit(self, group: str, positions: Positions) -> None:
        """Commit positions for `group` as a standalone consumer (generation -1), the way
        Kafka's tools record progress of readers that are not group members."""
        with standalone_consumer(self.config, group) as consumer:
            offsets = [TopicPartition(t, p, o) for t, p, o in flatten(positions)]
            if offsets:
                consumer.commit(offsets=offsets, asynchronous=False)

    def committed(self, group: str, partitions: Iterable[tuple[str, int]]) -> Positions:
        """OffsetFetch for `group` (absent commits are left out)."""
        with standalone_consumer(self.config, group) as consumer:
            found = consumer.committed([TopicPartition(t, p) for t, p in partitions], REQUEST_TIMEOUT_S)
        positions: Positions = {}
        for tp in found:
            if tp.offset >= 0:
                positions.setdefault(tp.topic, {})[tp.partition] = tp.offset
        return positions


@contextmanager
def standalone_consumer(config: dict[str, Any], group: str) -> Iterator[Consumer]:
    consumer = Consumer({**config, "group.id": group, "enable.auto.commit": False})
    try:
        yield consumer
    finally:
        consumer.close()


__all__ = ["Cluster", "KafkaException", "Positions", "PositionsJson", "flatten", "from_json", "to_json"]
