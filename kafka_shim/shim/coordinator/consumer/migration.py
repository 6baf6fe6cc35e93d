"""Converting a group between the classic and the consumer protocol (KIP-848's online
migration, Kafka's ConsumerGroup.fromClassicGroup and ClassicGroup.fromConsumerGroup).

Upgrade: every classic member becomes a consumer-group member that still speaks the classic
protocol, Stable at the classic generation with the partitions its last SyncGroup gave it,
which are also its target; the group and target epochs are the generation. The joining
consumer-protocol member then bumps the group epoch and the classic members rejoin.

Downgrade: the remaining (all classic) members become a classic group at the group epoch,
each with its target assignment in the consumer protocol's assignment format; the classic
coordinator then rebalances it.
"""

from __future__ import annotations

import uuid

from kafka_shim.protocol import consumer_protocol
from kafka_shim.protocol.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.shim.coordinator.consumer import records
from kafka_shim.shim.coordinator.consumer.group import ConsumerGroup
from kafka_shim.shim.coordinator.consumer.member import ClassicMetadata, ConsumerMember
from kafka_shim.shim.coordinator.consumer.types import Assignment, Topics, mapping_of
from kafka_shim.shim.coordinator.types import GroupSnapshot, MemberSnapshot, Protocol


class NotConvertible(Exception):
    """The group cannot change protocol; the message says why (Kafka logs it and answers
    GROUP_ID_NOT_FOUND to the member that asked)."""


def by_id(pairs: tuple[tuple[str, int], ...], topics: Topics) -> Assignment:
    """(topic name, partition) pairs as an assignment by topic id; unknown topics are dropped."""
    found: dict[uuid.UUID, set[int]] = {}
    for name, partition in pairs:
        info = topics.by_name(name)
        if info is not None:
            found.setdefault(info.topic_id, set()).add(partition)
    return mapping_of(found)


def by_name(assignment: Assignment, topics: Topics) -> dict[str, list[int]]:
    named: dict[str, list[int]] = {}
    for topic_id, parts in assignment.items():
        info = topics.by_id(topic_id)
        if info is not None and parts:
            named[info.name] = sorted(parts)
    return named


def protocol_version(protocols: tuple[Protocol, ...]) -> int:
    """The consumer-protocol version of a member's first protocol, which Kafka writes its
    assignment in."""
    if not protocols:
        return 0
    try:
        return consumer_protocol.version_of(protocols[0].metadata)
    except ProtocolError:
        return 0


def encode_assignment(assignment: Assignment, protocols: tuple[Protocol, ...], topics: Topics) -> bytes:
    return consumer_protocol.encode_assignment(by_name(assignment, topics), protocol_version(protocols))


def may_upgrade(snapshot: GroupSnapshot, max_size: int, enabled: bool) -> bool:
    """Kafka's validateOnlineUpgrade: the policy allows it, the group uses the consumer
    embedded protocol and it is not larger than a consumer group may be."""
    return enabled and snapshot.protocol_type == CONSUMER_PROTOCOL_TYPE and len(snapshot.members) <= max_size


def from_classic(snapshot: GroupSnapshot, topics: Topics) -> ConsumerGroup:
    """NotConvertible if a member's subscription or assignment does not parse."""
    group = ConsumerGroup(snapshot.group_id)
    group.group_epoch = group.assignment_epoch = snapshot.generation_id
    for taken in snapshot.members:
        metadata = next((p.metadata for p in taken.protocols if p.name == snapshot.protocol_name), None)
        try:
            subscription = consumer_protocol.decode_subscription(metadata or b"")
            assigned = by_id(consumer_protocol.decode_assignment(taken.assignment), topics)
        except ProtocolError as exc:
            raise NotConvertible(f"the embedded consumer protocol is malformed: {exc}") from exc
        member = ConsumerMember(
            taken.member_id,
            instance_id=taken.group_instance_id,
            rack_id=subscription.rack_id,
            client_id=taken.client_id,
            client_host=taken.client_host,
            subscribed_topic_names=subscription.topics,
            rebalance_timeout_ms=taken.rebalance_timeout_ms,
            member_epoch=snapshot.generation_id,
            previous_member_epoch=snapshot.generation_id,
            assigned=assigned,
            classic=ClassicMetadata(taken.session_timeout_ms, taken.protocols),
        )
        group.target[member.member_id] = assigned
        group.put_member(member)
    # The subscribed topics as they are: the members' next requests see nothing changed.
    for name in group.subscribed_topics():
        info = topics.by_name(name)
        if info is not None and info.partitions > 0:
            group.subscription_metadata[name] = info
    return group


def creation_records(group: ConsumerGroup) -> list[OffsetsRecord]:
    """Kafka's ConsumerGroup.createConsumerGroupRecords: the group as records, from nothing."""
    out = [records.member_metadata(group.group_id, m) for m in group.members.values()]
    out.append(records.group_epoch(group.group_id, group.group_epoch))
    out.append(records.partition_metadata(group.group_id, group.subscription_metadata))
    out += [records.target_member(group.group_id, m, group.target_of(m)) for m in group.members]
    out.append(records.target_epoch(group.group_id, group.assignment_epoch))
    out += [records.current_assignment(group.group_id, m) for m in group.members.values()]
    return out


def to_classic(group: ConsumerGroup, topics: Topics) -> GroupSnapshot:
    """The members (all classic) as a classic group at the group epoch, each assigned its target."""
    members = []
    for member in group.members.values():
        assert member.classic is not None, f"{member.member_id} uses the consumer protocol"
        protocols = member.classic.protocols
        members.append(
            MemberSnapshot(
                member.member_id,
                member.instance_id,
                member.client_id,
                member.client_host,
                member.rebalance_timeout_ms,
                member.classic.session_timeout_ms,
                protocols,
                encode_assignment(group.target_of(member.member_id), protocols, topics),
            )
        )
    return GroupSnapshot(group.group_id, group.group_epoch, CONSUMER_PROTOCOL_TYPE, None, tuple(members))
