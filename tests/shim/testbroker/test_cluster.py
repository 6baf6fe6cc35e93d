"""shim.testbroker.cluster: who leads each partition and coordinates each key, as nodes stop, start and
partitions move, on a broker of three nodes (no sockets: the server is not involved)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.testbroker.cluster import NO_LEADER, Cluster, ClusterError
from kafka_shim.storage.log import PartitionLog


def three_brokers(partitions: int = 6) -> Broker:
    broker = Broker(replace(BrokerConfig(), brokers=3, racks=("a", "b")))
    broker.topics.create("t", partitions)
    return broker


def log_of(broker: Broker, topic: str, index: int) -> PartitionLog:
    log = broker.topics.partition(topic, index)
    assert log is not None
    return log


def leaders(cluster: Cluster, partitions: int = 6) -> list[int]:
    return [cluster.leader("t", index) for index in range(partitions)]


def test_leaders_spread_over_the_nodes_each_a_replica() -> None:
    cluster = three_brokers().cluster
    assert Counter(leaders(cluster)) == {0: 2, 1: 2, 2: 2}
    for index, leader in enumerate(leaders(cluster)):
        assert cluster.replicas("t", index)[0] == leader
        assert sorted(cluster.isr("t", index)) == [0, 1, 2]
    assert [(n.node_id, n.rack) for n in cluster.running()] == [(0, "a"), (1, "b"), (2, "a")]


def test_a_stopped_node_hands_what_it_led_to_the_next_running_replica_in_a_new_epoch() -> None:
    broker = three_brokers()
    cluster = broker.cluster
    before = leaders(cluster)
    group = next(g for g in (f"g{i}" for i in range(100)) if cluster.coordinator(GROUP_KEY_TYPE, g) == 1)
    cluster.stop(1)
    for index, leader in enumerate(before):
        moved = leader == 1
        expected = next(n for n in cluster.replicas("t", index) if n != 1) if moved else leader
        assert cluster.leader("t", index) == expected
        assert log_of(broker, "t", index).leader_epoch == (1 if moved else 0)
        assert 1 not in cluster.isr("t", index)
        assert cluster.offline("t", index) == [1]
    assert cluster.coordinator(GROUP_KEY_TYPE, group) in (0, 2)
    assert cluster.controller_id == 0
    cluster.start(1)
    assert 1 in cluster.isr("t", 0)
    assert 1 not in leaders(cluster)  # no automatic preferred-leader election


def test_with_no_node_running_a_partition_has_no_leader_until_one_starts() -> None:
    broker = three_brokers(partitions=1)
    cluster = broker.cluster
    for node in (0, 1, 2):
        cluster.stop(node)
    assert cluster.leader("t", 0) == NO_LEADER
    assert cluster.controller_id == NO_LEADER
    cluster.start(2)
    assert cluster.leader("t", 0) == 2
    assert log_of(broker, "t", 0).leader_epoch >= 2


def test_a_moved_leader_starts_an_epoch_and_fences_the_old_one() -> None:
    broker = three_brokers(partitions=1)
    cluster = broker.cluster
    log = log_of(broker, "t", 0)
    old = cluster.leader("t", 0)
    new = (old + 1) % 3
    assert cluster.move_leader("t", 0, new) == 1
    assert cluster.leader("t", 0) == new
    cases = [  # (node, client's current epoch, answer), as Kafka's Partition checks them
        (new, -1, ErrorCode.NONE),
        (new, 1, ErrorCode.NONE),
        (new, 0, ErrorCode.FENCED_LEADER_EPOCH),
        (new, 2, ErrorCode.UNKNOWN_LEADER_EPOCH),
        (old, 1, ErrorCode.NOT_LEADER_OR_FOLLOWER),
        (old, 0, ErrorCode.FENCED_LEADER_EPOCH),  # the epoch is checked first
    ]
    for node, epoch, answer in cases:
        assert cluster.leader_error(node, "t", 0, epoch, log) == answer, (node, epoch)


@pytest.mark.parametrize("key_type", [GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE])
def test_a_coordinator_moves_with_its_internal_partition_even_before_that_topic_exists(key_type: int) -> None:
    broker = three_brokers()
    cluster = broker.cluster
    current = cluster.coordinator(key_type, "key")
    target = (current + 1) % 3
    cluster.move_coordinator(key_type, "key", target)
    assert cluster.coordinator(key_type, "key") == target
    assert cluster.coordinates(target, key_type, "key")
    assert not cluster.coordinates(current, key_type, "key")
    topic, _ = cluster.coordinator_partition(key_type, "key")
    config = broker.config
    count = (
        config.offsets_topic_num_partitions
        if key_type == GROUP_KEY_TYPE
        else config.transaction_state_log_num_partitions
    )
    broker.topics.create(topic, count)  # created once the first record is written: it stays put
    assert cluster.coordinator(key_type, "key") == target
    cluster.stop(target)
    assert cluster.coordinator(key_type, "key") not in (target, NO_LEADER)


@pytest.mark.parametrize(
    ("control", "message"),
    [
        (lambda c: c.stop(7), "no broker 7"),
        (lambda c: c.start(0), "already running"),
        (lambda c: c.move_leader("t", 0, 9), "no broker 9"),
        (lambda c: c.move_leader("t", 99, 0), "no partition t-99"),
        (lambda c: c.move_leader("nope", 0, 0), "no partition nope-0"),
    ],
)
def test_controls_that_cannot_be_done_say_why(control: Callable[[Cluster], object], message: str) -> None:
    with pytest.raises(ClusterError, match=message):
        control(three_brokers().cluster)


def test_a_stopped_node_cannot_be_given_leadership() -> None:
    cluster = three_brokers().cluster
    cluster.stop(2)
    with pytest.raises(ClusterError, match="broker 2 is stopped"):
        cluster.move_leader("t", 0, 2)
    with pytest.raises(ClusterError, match="already stopped"):
        cluster.stop(2)


def test_one_broker_leads_and_coordinates_everything() -> None:
    broker = Broker(BrokerConfig())
    broker.topics.create("t", 3)
    cluster = broker.cluster
    assert cluster.single
    assert [cluster.leader("t", i) for i in range(3)] == [0, 0, 0]
    assert cluster.coordinates(0, GROUP_KEY_TYPE, "g")


def test_a_preferred_election_gives_each_partition_back_to_its_first_replica() -> None:
    broker = three_brokers(partitions=1)
    cluster = broker.cluster
    preferred = cluster.replicas("t", 0)[0]
    cases = [  # (what happens first, election, answer, leader after)
        (lambda: None, False, ErrorCode.ELECTION_NOT_NEEDED, preferred),
        (lambda: cluster.stop(preferred), False, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, None),
        (lambda: cluster.start(preferred), True, ErrorCode.ELECTION_NOT_NEEDED, None),
        (lambda: None, False, ErrorCode.NONE, preferred),
    ]
    for before, unclean, answer, leader in cases:
        before()
        assert cluster.elect("t", 0, unclean) == answer
        if leader is not None:
            assert cluster.leader("t", 0) == leader
    assert log_of(broker, "t", 0).leader_epoch == 2  # moved away by the stop, back by the election
