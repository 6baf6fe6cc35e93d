"""Read-only views of the broker's state, as the console and the metrics endpoint show it.

Each function reads the live state on the broker's own thread (the Trio loop) and returns plain
values; nothing here keeps a copy of the truth or changes it (DESIGN.md: "The console is a view").
Groups of every type are listed in one shape, so a page or a metric never asks which
coordinator holds a group.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_shim.protocol.consumer_protocol import decode_assignment
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.shim.groups.journal import GroupShape
from kafka_shim.shim.groups.journal import group_shape as journal_group_shape
from kafka_shim.storage.internal_topics import INTERNAL_TOPICS
from kafka_shim.storage.log import PartitionLog

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.shim.coordinator.share.group import ShareGroup


@dataclass(frozen=True)
class PartitionView:
    topic: str
    partition: int
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicView:
    name: str
    topic_id: str
    internal: bool
    configs: dict[str, str]
    partitions: tuple[PartitionView, ...]


@dataclass(frozen=True)
class MemberView:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    assignment: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class OffsetView:
    topic: str
    partition: int
    committed: int
    log_end_offset: int | None  # None: the partition no longer exists

    @property
    def lag(self) -> int | None:
        return None if self.log_end_offset is None else max(self.log_end_offset - self.committed, 0)


@dataclass(frozen=True)
class GroupView:
    group_id: str
    group_type: str  # classic, consumer, share
    state: str
    protocol_type: str
    protocol_name: str
    members: tuple[MemberView, ...]
    offsets: tuple[OffsetView, ...]


def partition_view(broker: Broker, topic: str, index: int, log: PartitionLog) -> PartitionView:
    cluster = broker.cluster
    return PartitionView(
        topic,
        index,
        log.log_start_offset,
        log.log_end_offset,
        log.high_watermark,
        cluster.leader(topic, index),
        tuple(cluster.replicas(topic, index)),
        tuple(cluster.isr(topic, index)),
    )


def topics(broker: Broker) -> list[TopicView]:
    return [
        TopicView(
            topic.name,
            str(topic.topic_id),
            topic.name in INTERNAL_TOPICS,
            dict(topic.configs),
            tuple(partition_view(broker, topic.name, i, log) for i, log in enumerate(topic.partitions)),
        )
        for topic in sorted(broker.topics, key=lambda t: t.name)
    ]


def _offsets(broker: Broker, group_id: str) -> tuple[OffsetView, ...]:
    committed = broker.groups.fetch_offsets(group_id, None)
    views = []
    for tp, offset in sorted(committed.items()):
        log = broker.topics.partition(tp.topic, tp.partition)
        views.append(
            OffsetView(tp.topic, tp.partition, offset.offset, None if log is None else log.high_watermark)
        )
    return tuple(views)


def _classic_assignment(protocol_type: str, data: bytes) -> tuple[tuple[str, int], ...]:
    if protocol_type != "consumer" or not data:
        return ()
    try:
        return tuple(sorted(decode_assignment(data)))
    except ProtocolError:
        return ()  # a consumer-type group whose leader wrote bytes of its own: nothing to show


def _assigned(broker: Broker, assignment: Mapping[uuid.UUID, Iterable[int]]) -> tuple[tuple[str, int], ...]:
    pairs = []
    for topic_id, partitions in assignment.items():
        topic = broker.topics.get_by_id(topic_id)
        name = topic.name if topic is not None else str(topic_id)
        pairs += [(name, p) for p in sorted(partitions)]
    return tuple(pairs)


def _share_group(broker: Broker, group: ShareGroup) -> GroupView:
    """A share group: its members each hold every partition they are assigned at once; its
    "committed" offset per partition is the share partition's start offset (everything before
    it is acknowledged or archived), from which its lag is counted, as Kafka 4.2 reports it."""
    members = tuple(
        MemberView(m.member_id, None, m.client_id, m.client_host, _assigned(broker, m.assignment))
        for m in group.members.values()
    )
    offsets = []
    for key, partition in sorted(broker.share_partitions.of_group(group.group_id)):
        topic = broker.topics.get_by_id(key.topic_id)
        if topic is None:
            continue
        log = topic.partition(key.partition)
        end = None if log is None else log.high_watermark
        offsets.append(OffsetView(topic.name, key.partition, partition.start_offset, end))
    return GroupView(group.group_id, "share", group.state.value, "share", "", members, tuple(offsets))


def groups(broker: Broker) -> list[GroupView]:
    views: dict[str, GroupView] = {}
    for consumer_group in broker.consumer_groups.groups():
        members = [
            MemberView(m.member_id, m.instance_id, m.client_id, m.client_host, _assigned(broker, m.assigned))
            for m in consumer_group.members.values()
        ]
        views[consumer_group.group_id] = GroupView(
            consumer_group.group_id,
            "consumer",
            consumer_group.state.value,
            "consumer",
            "",
            tuple(members),
            _offsets(broker, consumer_group.group_id),
        )
    for share_group in broker.group_service.share.groups():
        views[share_group.group_id] = _share_group(broker, share_group)
    for listing in broker.groups.list_groups():
        if listing.group_id in views:
            continue  # a consumer group's offsets sit in an empty classic entry of the same id
        description = broker.groups.describe_group(listing.group_id)
        views[listing.group_id] = GroupView(
            listing.group_id,
            "classic",
            description.state,
            description.protocol_type,
            description.protocol_name,
            tuple(
                MemberView(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    _classic_assignment(description.protocol_type, m.assignment),
                )
                for m in description.members
            ),
            _offsets(broker, listing.group_id),
        )
    return [views[group_id] for group_id in sorted(views)]


@dataclass(frozen=True)
class ClusterView:
    brokers: int
    topics: list[TopicView]
    groups: list[GroupView]


def cluster(broker: Broker) -> ClusterView:
    return ClusterView(len(broker.cluster.running()), topics(broker), groups(broker))


def group_shape(broker: Broker, group_id: str) -> GroupShape | None:
    """The group's type, state, member ids and generation (or epoch) (shim.groups.journal)."""
    return journal_group_shape(broker.groups, broker.consumer_groups, broker.group_service.share, group_id)
