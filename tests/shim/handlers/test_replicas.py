"""One replica model under --brokers N: a topic's replication factor is what CreateTopics asked
for, else default.replication.factor (N under --brokers N unless set), and every view reports
the same replicas: CreateTopics' answer (v5+), Metadata, DescribeTopicPartitions, the control
endpoint's partition, the console's view, and a restart from the data directory. Oracles: Kafka
3.9's ReplicationControlManager.createTopic (the asked factor, else the default; a manual
assignment's lists as given) and StripedReplicaPlacer's constraints (each partition on distinct
brokers, never led by a fenced one, a fenced broker used only once the unfenced ones are all
taken); the placements themselves are Kafka's own test cases in tests/shim/controller/test_placement.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.handlers import (
    alter_partition_reassignments,
    create_partitions,
    create_topics,
    describe_configs,
    describe_topic_partitions,
    list_partition_reassignments,
    metadata,
)
from kafka_shim.shim.web import views
from tests.helpers import Harness

PARTITIONS = 6


def harness(brokers: int, racks: tuple[str, ...] = (), **config: Any) -> Harness:
    h = Harness(brokers=brokers, racks=racks, **config)
    for node in h.broker.cluster.nodes.values():  # what the server fills in once bound
        node.endpoints[""] = ("localhost", 9092 + node.node_id)
    return h


def create(h: Harness, factor: int = -1, assignments: tuple[list[int], ...] = ()) -> Any:
    topic = {
        "name": "t",
        "num_partitions": -1 if assignments else PARTITIONS,
        "replication_factor": factor,
        "assignments": [{"partition_index": i, "broker_ids": ids} for i, ids in enumerate(assignments)],
        "configs": [],
    }
    (answer,) = h.call(create_topics, 7, {"topics": [topic], "timeout_ms": 1000}).topics
    assert (answer.error_code, answer.error_message) == (ErrorCode.NONE, None)
    return answer


def reported(h: Harness) -> dict[str, list[tuple[list[int], list[int], list[int], int]]]:
    """Each view's (replicas, ISR, offline, leader) per partition of topic t."""
    request = {"topics": [{"name": "t", "topic_id": None}], "allow_auto_topic_creation": False}
    (described,) = h.call(metadata, 9, request).topics
    (paged,) = h.call(describe_topic_partitions, 0, {"topics": [{"name": "t"}]}).topics
    (viewed,) = [v for v in views.topics(h.broker) if v.name == "t"]
    cluster = h.broker.cluster
    controls = [cluster.partition_json("t", i) for i in range(len(described.partitions))]
    return {
        "Metadata": [
            (p.replica_nodes, p.isr_nodes, p.offline_replicas, p.leader_id) for p in described.partitions
        ],
        "DescribeTopicPartitions": [
            (p.replica_nodes, p.isr_nodes, p.offline_replicas, p.leader_id) for p in paged.partitions
        ],
        "control": [(c["replicas"], c["isr"], c["offline"], c["leader"]) for c in controls],
        "console": [(list(p.replicas), list(p.isr), [], p.leader) for p in viewed.partitions],
    }


def one_picture(h: Harness) -> list[list[int]]:
    """The replicas every view reports (they must agree), per partition."""
    seen = reported(h)
    console = seen.pop("console")
    first = seen["Metadata"]
    assert all(view == first for view in seen.values()), seen
    assert [(r, i, leader) for r, i, _, leader in first] == [(r, i, leader) for r, i, _, leader in console]
    return [replicas for replicas, _, _, _ in first]


# name -> (brokers, racks, stopped before creation, config, factor asked, assignment, factor expected)
Case = tuple[int, tuple[str, ...], tuple[int, ...], dict[str, Any], int, tuple[list[int], ...], int]
CASES: dict[str, Case] = {
    "one broker": (1, (), (), {}, -1, (), 1),
    "three brokers, the default": (3, (), (), {}, -1, (), 3),
    "three brokers, 1 asked": (3, (), (), {}, 1, (), 1),
    "three brokers, 2 asked, racks": (3, ("a", "b"), (), {}, 2, (), 2),
    "three brokers, default.replication.factor=2 set": (
        3, (), (), {"default_replication_factor": 2, "explicit": frozenset({"default.replication.factor"})},
        -1, (), 2,
    ),
    "four brokers, one stopped, 3 asked": (4, (), (3,), {}, 3, (), 3),
    "three brokers, one stopped, 3 asked": (3, (), (1,), {}, 3, (), 3),
    "a manual assignment": (3, (), (), {}, -1, ([2, 0], [0, 1], [1, 2]), 2),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_every_view_reports_the_replicas_createtopics_answered(name: str) -> None:
    brokers, racks, stopped, config, factor, assignment, expected = CASES[name]
    h = harness(brokers, racks, **config)
    for node_id in stopped:
        h.broker.cluster.stop(node_id)
    answer = create(h, factor, assignment)
    assert answer.replication_factor == expected
    placed = one_picture(h)
    assert len(placed) == answer.num_partitions
    if assignment:
        assert placed == list(assignment)
    running = [n.node_id for n in h.broker.cluster.running()]
    for replicas in placed:
        assert len(replicas) == len(set(replicas)) == expected
        assert replicas[0] in running  # the placer never makes a fenced broker a leader
        if not assignment and expected <= len(running):
            assert set(replicas) <= set(running)  # fenced brokers only once the others are taken
    if brokers > 1 and not assignment:  # leaders spread: no broker leads two more than another
        leaders = [replicas[0] for replicas in placed]
        counts = [leaders.count(n) for n in running]
        assert max(counts) - min(counts) <= 2


def test_describe_configs_reports_the_default_factor_new_topics_get() -> None:
    h = harness(3)
    request = {"resources": [{"resource_type": 4, "resource_name": "0", "configuration_keys": None}]}
    configs = {c.name: c for c in h.call(describe_configs, 4, request).results[0].configs}
    assert configs["default.replication.factor"].value == "3"
    assert create(h).replication_factor == 3


def test_a_one_copy_partition_goes_offline_with_its_broker() -> None:
    h = harness(3)
    create(h, factor=1)
    (replicas, *_) = one_picture(h)
    h.broker.cluster.stop(replicas[0])
    (metadata_view, *_) = reported(h)["Metadata"]
    assert metadata_view == (replicas, [], replicas, -1)


def test_new_partitions_get_the_topics_factor() -> None:
    h = harness(3)
    create(h, factor=2)
    request = {"topics": [{"name": "t", "count": PARTITIONS + 2, "assignments": None}], "timeout_ms": 1000}
    (result,) = h.call(create_partitions, 3, request | {"validate_only": False}).results
    assert result.error_code == ErrorCode.NONE
    assert [len(replicas) for replicas in one_picture(h)] == [2] * (PARTITIONS + 2)


def test_replicas_are_recorded_with_the_topic_and_an_old_catalog_still_loads(tmp_path: Path) -> None:
    h = harness(3, data_dir=tmp_path / "data")
    create(h, factor=2)
    placed = one_picture(h)
    h.broker.close()
    again = harness(3, data_dir=tmp_path / "data")
    assert one_picture(again) == placed
    again.broker.close()
    catalog = tmp_path / "data" / "topics.json"  # as written before replicas were recorded
    document = json.loads(catalog.read_text())
    for topic in document["topics"]:
        del topic["replicas"]
    catalog.write_text(json.dumps(document))
    old = harness(3, data_dir=tmp_path / "data")
    assert all(sorted(replicas) == [0, 1, 2] for replicas in one_picture(old))  # on every broker
    old.broker.close()


def test_a_reassignment_is_recorded_and_its_leader_is_one_of_the_new_replicas() -> None:
    """Kafka's controller completes a reassignment with the target replicas and elects a leader
    among them; ListPartitionReassignments then lists nothing in progress."""
    h = harness(3)
    create(h, factor=1)
    (before, *_) = one_picture(h)
    target = [n for n in (0, 1, 2) if n not in before]
    topics = [{"name": "t", "partitions": [{"partition_index": 0, "replicas": target}]}]
    answer = h.call(alter_partition_reassignments, 0, {"timeout_ms": 1000, "topics": topics})
    assert answer.responses[0].partitions[0].error_code == ErrorCode.NONE
    (replicas, isr, offline, leader) = reported(h)["Metadata"][0]
    assert (replicas, isr, offline, leader) == (target, target, [], target[0])
    listed = h.call(list_partition_reassignments, 0, {"timeout_ms": 1000, "topics": None})
    assert listed.topics == []
