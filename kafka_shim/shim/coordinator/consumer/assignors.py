"""Server-side assignors: `uniform` (Kafka's default: balanced and sticky) and `range`.

Both take each member's subscribed topics (names, regexes already resolved), the topics as
they are now, the previous target assignment and each member's instance id (None: not
static), and return every member's new target.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping

from kafka_shim.shim.coordinator.consumer.config import RANGE, UNIFORM
from kafka_shim.shim.coordinator.consumer.types import Assignment, TopicInfo

Partition = tuple[uuid.UUID, int]
Assignor = Callable[
    [
        Mapping[str, frozenset[str]],
        Mapping[str, TopicInfo],
        Mapping[str, Assignment],
        Mapping[str, str | None],
    ],
    dict[str, Assignment],
]


def _as_assignment(partitions: set[Partition]) -> Assignment:
    by_topic: dict[uuid.UUID, set[int]] = {}
    for topic_id, partition in partitions:
        by_topic.setdefault(topic_id, set()).add(partition)
    return {topic_id: frozenset(parts) for topic_id, parts in by_topic.items()}


def uniform(
    subscriptions: Mapping[str, frozenset[str]],
    topics: Mapping[str, TopicInfo],
    previous: Mapping[str, Assignment],
    instance_ids: Mapping[str, str | None],
) -> dict[str, Assignment]:
    """Every partition of a subscribed topic to one of its subscribers, counts as even as the
    subscriptions allow (max - min <= 1 when everyone subscribes to the same topics), and a
    member keeps what it had unless balance needs it elsewhere."""
    by_id = {info.topic_id: info for name, info in topics.items()}
    subscribers: dict[uuid.UUID, list[str]] = {}
    for member in sorted(subscriptions):
        for name in subscriptions[member]:
            info = topics.get(name)
            if info is not None:
                subscribers.setdefault(info.topic_id, []).append(member)
    owned: dict[str, set[Partition]] = {member: set() for member in subscriptions}
    owner: dict[Partition, str] = {}
    for member in sorted(subscriptions):
        for topic_id, parts in previous.get(member, {}).items():
            info = by_id.get(topic_id)
            if info is None or member not in subscribers.get(topic_id, ()):
                continue
            for partition in parts:
                if partition < info.partitions and (topic_id, partition) not in owner:
                    owner[(topic_id, partition)] = member
                    owned[member].add((topic_id, partition))

    def least_loaded(topic_id: uuid.UUID) -> str:
        return min(subscribers[topic_id], key=lambda m: (len(owned[m]), m))

    # Unowned partitions, those with the fewest candidates first.
    free = [
        (topic_id, p)
        for topic_id in sorted(subscribers, key=lambda t: (len(subscribers[t]), by_id[t].name))
        for p in range(by_id[topic_id].partitions)
        if (topic_id, p) not in owner
    ]
    for tp in free:
        member = least_loaded(tp[0])
        owner[tp] = member
        owned[member].add(tp)
    # Move partitions from the most to the least loaded eligible member until no move helps;
    # each move lowers the sum of squared counts, so this ends.
    # A member gives a partition only to one with at least two fewer: while no member has that
    # few, it is skipped unsorted (every member, in the last pass over a balanced group).
    moved = True
    while moved:
        moved = False
        fewest = min(map(len, owned.values()), default=0)
        for member in sorted(owned, key=lambda m: (-len(owned[m]), m)):
            if len(owned[member]) - 1 <= fewest:
                continue
            for tp in sorted(owned[member], key=lambda tp: (by_id[tp[0]].name, tp[1]), reverse=True):
                target = least_loaded(tp[0])
                if len(owned[target]) < len(owned[member]) - 1:
                    owned[member].discard(tp)
                    owned[target].add(tp)
                    moved = True
                    fewest = min(map(len, owned.values()))
    return {member: _as_assignment(parts) for member, parts in owned.items()}


def range_(
    subscriptions: Mapping[str, frozenset[str]],
    topics: Mapping[str, TopicInfo],
    previous: Mapping[str, Assignment],
    instance_ids: Mapping[str, str | None],
) -> dict[str, Assignment]:
    """Per topic, consecutive ranges of partitions to its subscribers in order, the first ones
    one more when the count does not divide: with co-partitioned topics, partition i of each
    goes to the same member. Kafka's RangeAssignor since KAFKA-16944 (3.9): recomputed from
    scratch every time, not sticky (`previous` is unused); static members come first, by
    instance id, so a static member that comes back under a new member id gets its ranges
    back; then the others by member id."""

    def rank(member: str) -> tuple[int, str]:
        instance_id = instance_ids.get(member)
        return (1, member) if instance_id is None else (0, instance_id)

    order = sorted(subscriptions, key=rank)
    owned: dict[str, set[Partition]] = {member: set() for member in subscriptions}
    for name, info in sorted(topics.items()):
        members = [m for m in order if name in subscriptions[m]]
        if not members:
            continue
        quota, extra = divmod(info.partitions, len(members))
        start = 0
        for index, member in enumerate(members):
            count = quota + (1 if index < extra else 0)
            owned[member].update((info.topic_id, p) for p in range(start, start + count))
            start += count
    return {member: _as_assignment(parts) for member, parts in owned.items()}


ASSIGNORS: dict[str, Assignor] = {UNIFORM: uniform, RANGE: range_}
