"""The server-side `range` assignor against Kafka's own expectations: each row is a case of
Kafka's RangeAssignorTest (group-coordinator, org.apache.kafka.coordinator.group.assignor, as
of KAFKA-16944, Kafka 3.9 to 4.x), named in its comment, with the assignment Kafka's test
expects. Kafka's range assignor recomputes from scratch (not sticky): the previous
assignment, given where Kafka's test gives one, must not change the answer."""

from __future__ import annotations

import uuid

import pytest

from kafka_shim.shim.coordinator.consumer.assignors import range_
from kafka_shim.shim.coordinator.consumer.types import Assignment, TopicInfo

T1 = TopicInfo(uuid.UUID(int=1), "topic1", 3)
T2 = TopicInfo(uuid.UUID(int=2), "topic2", 3)
T3 = TopicInfo(uuid.UUID(int=3), "topic3", 2)


def grow(topic: TopicInfo, partitions: int) -> TopicInfo:
    return TopicInfo(topic.topic_id, topic.name, partitions)


def a(*topics: tuple[TopicInfo, tuple[int, ...]]) -> Assignment:
    return {topic.topic_id: frozenset(parts) for topic, parts in topics if parts}


# name -> (topics, member -> (subscribed topic names, previous assignment), expected)
CASES: dict[str, tuple[list[TopicInfo], dict[str, tuple[set[str], Assignment]], dict[str, Assignment]]] = {
    # testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions
    "two members, two topics, same subscriptions": (
        [T1, T3],
        {"A": ({"topic1", "topic3"}, {}), "B": ({"topic1", "topic3"}, {})},
        {"A": a((T1, (0, 1)), (T3, (0,))), "B": a((T1, (2,)), (T3, (1,)))},
    ),
    # testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions
    "three members, three topics, different subscriptions": (
        [T1, T2, T3],
        {"A": ({"topic1", "topic2"}, {}), "B": ({"topic3"}, {}), "C": ({"topic2", "topic3"}, {})},
        {
            "A": a((T1, (0, 1, 2)), (T2, (0, 1))),
            "B": a((T3, (0,))),
            "C": a((T2, (2,)), (T3, (1,))),
        },
    ),
    # testFirstAssignmentNumMembersGreaterThanNumPartitions
    "more members than partitions": (
        [T1, T3],
        {m: ({"topic1", "topic3"}, {}) for m in "ABC"},
        {"A": a((T1, (0,)), (T3, (0,))), "B": a((T1, (1,)), (T3, (1,))), "C": a((T1, (2,)))},
    ),
    # testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded
    "a member added, more members than partitions": (
        [grow(T1, 2), grow(T2, 2)],
        {
            "A": ({"topic1", "topic2"}, a((T1, (0,)), (T2, (0,)))),
            "B": ({"topic1", "topic2"}, a((T1, (1,)), (T2, (1,)))),
            "C": ({"topic1", "topic2"}, {}),
        },
        {"A": a((T1, (0,)), (T2, (0,))), "B": a((T1, (1,)), (T2, (1,))), "C": {}},
    ),
    # testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics
    "a partition added to each topic": (
        [grow(T1, 4), grow(T2, 4)],
        {
            "A": ({"topic1", "topic2"}, a((T1, (0, 1)), (T2, (0, 1)))),
            "B": ({"topic1", "topic2"}, a((T1, (2,)), (T2, (2,)))),
        },
        {"A": a((T1, (0, 1)), (T2, (0, 1))), "B": a((T1, (2, 3)), (T2, (2, 3)))},
    ),
    # testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics
    "a member added: A gives up partition 1 (not sticky)": (
        [T1, T2],
        {
            "A": ({"topic1", "topic2"}, a((T1, (0, 1)), (T2, (0, 1)))),
            "B": ({"topic1", "topic2"}, a((T1, (2,)), (T2, (2,)))),
            "C": ({"topic1", "topic2"}, {}),
        },
        {"A": a((T1, (0,)), (T2, (0,))), "B": a((T1, (1,)), (T2, (1,))), "C": a((T1, (2,)), (T2, (2,)))},
    ),
    # testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics
    "a member and a partition added, heterogeneous": (
        [grow(T1, 4), T2],
        {
            "A": ({"topic1", "topic2"}, a((T1, (0, 1)), (T2, (0, 1)))),
            "B": ({"topic1", "topic2"}, a((T1, (2,)), (T2, (2,)))),
            "C": ({"topic1"}, {}),
        },
        {"A": a((T1, (0, 1)), (T2, (0, 1))), "B": a((T1, (2,)), (T2, (2,))), "C": a((T1, (3,)))},
    ),
    # testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics
    "a member removed": (
        [T1, T2],
        {"B": ({"topic1", "topic2"}, a((T1, (2,)), (T2, (2,))))},
        {"B": a((T1, (0, 1, 2)), (T2, (0, 1, 2)))},
    ),
    # testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics
    "subscriptions changed": (
        [T1, T2, T3],
        {
            "A": ({"topic1"}, a((T1, (0, 1, 2)), (T2, (0,)))),
            "B": ({"topic1", "topic2", "topic3"}, a((T2, (1,)))),
            "C": ({"topic2"}, a((T2, (2,)), (T3, (0, 1)))),
        },
        {
            "A": a((T1, (0, 1))),
            "B": a((T1, (2,)), (T2, (0, 1)), (T3, (0, 1))),
            "C": a((T2, (2,))),
        },
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_range_as_kafkas_range_assignor_test(name: str) -> None:
    topics, members, expected = CASES[name]
    subscriptions = {m: frozenset(names) for m, (names, _) in members.items()}
    previous = {m: assignment for m, (_, assignment) in members.items()}
    by_name = {t.name: t for t in topics}
    no_instances = dict.fromkeys(members)
    assert range_(subscriptions, by_name, previous, no_instances) == expected
    assert range_(subscriptions, by_name, {}, no_instances) == expected  # recomputed: not sticky


@pytest.mark.parametrize(
    "partitions, instance_ids",
    [
        # testStaticMembership: A (instanceA) comes back as memberA1
        (3, {"A": "instanceA", "B": "instanceB"}),
        # testMixedStaticMembership: A and C static, B dynamic
        (5, {"A": "instanceA", "C": "instanceC", "B": None}),
    ],
)
def test_a_static_member_back_under_a_new_id_gets_its_ranges_back(
    partitions: int, instance_ids: dict[str, str | None]
) -> None:
    topics = {"topic1": grow(T1, partitions)}
    subscriptions = dict.fromkeys(instance_ids, frozenset({"topic1"}))
    before = range_(subscriptions, topics, {}, instance_ids)
    renamed = {("memberA1" if m == "A" else m): i for m, i in instance_ids.items()}
    after = range_(dict.fromkeys(renamed, frozenset({"topic1"})), topics, before, renamed)
    assert after["memberA1"] == before["A"]
    assert all(after[m] == before[m] for m in instance_ids if m != "A")
