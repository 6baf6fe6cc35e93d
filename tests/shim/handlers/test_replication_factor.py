"""A replication factor above the registered brokers, on one broker and with --brokers 3, through
CreateTopics, CreatePartitions and auto-creation. Oracles: the answers recorded from Kafka 3.9.0
(golden corpus, cases create_topics.v2/v5/v7 step 09.replication_3: 38 "Unable to replicate the
partition 3 time(s): The target replication factor of 3 cannot be reached because only 1 broker(s)
are registered.") and, for what the corpus did not record, Kafka 3.9's controller
(ReplicationControlManager.createTopic's wording of StripedReplicaPlacer's refusal, its check that
a manual assignment names an unfenced broker, ClusterControlManager.usableBrokers counting fenced
brokers) and AutoTopicCreationManager (a refused auto-creation is logged; Metadata answers 3)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.handlers import create_partitions, create_topics, metadata
from tests.helpers import Harness


def unable(factor: int, registered: int) -> str:
    return (
        f"Unable to replicate the partition {factor} time(s): The target replication factor of {factor} "
        f"cannot be reached because only {registered} broker(s) are registered."
    )


FENCED_ASSIGNMENT = (
    "All brokers specified in the manual partition assignment for partition 0 are fenced or in "
    "controlled shutdown."
)


def create(harness: Harness, replication_factor: int = -1, assignments: Any = ()) -> tuple[int, str | None]:
    topic = {
        "name": "t",
        "num_partitions": -1 if assignments else 1,
        "replication_factor": replication_factor,
        "assignments": [{"partition_index": i, "broker_ids": ids} for i, ids in enumerate(assignments)],
        "configs": [],
    }
    (result,) = harness.call(create_topics, 7, {"topics": [topic], "timeout_ms": 1000}).topics
    return result.error_code, result.error_message


# name -> (brokers, stopped node ids, default.replication.factor, factor asked, manual assignment, answer)
CASES: dict[str, tuple[int, tuple[int, ...], int, int, tuple[list[int], ...], tuple[int, str | None]]] = {
    "3 on one broker (the corpus)": (1, (), 1, 3, (), (38, unable(3, 1))),
    "the default 3 on one broker": (1, (), 3, -1, (), (38, unable(3, 1))),
    "1 on one broker": (1, (), 1, 1, (), (0, None)),
    "3 on three brokers": (3, (), 1, 3, (), (0, None)),
    "4 on three brokers": (3, (), 1, 4, (), (38, unable(4, 3))),
    # A stopped broker stays registered (fenced): placement still counts it.
    "3 on three brokers, one stopped": (3, (2,), 1, 3, (), (0, None)),
    "4 on three brokers, one stopped": (3, (2,), 1, 4, (), (38, unable(4, 3))),
    "a manual assignment on a stopped broker only": (3, (2,), 1, -1, ([2],), (39, FENCED_ASSIGNMENT)),
    "a manual assignment with a running broker": (3, (2,), 1, -1, ([2, 0],), (0, None)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_create_topics_replication_factor(name: str) -> None:
    brokers, stopped, default, factor, assignments, answer = CASES[name]
    harness = Harness(brokers=brokers, default_replication_factor=default)
    for node_id in stopped:
        harness.broker.cluster.stop(node_id)
    assert create(harness, factor, assignments) == answer
    assert (harness.broker.topics.get("t") is not None) == (answer[0] == 0)


def test_create_partitions_needs_a_running_broker_in_each_assignment() -> None:
    harness = Harness(brokers=3)
    harness.broker.topics.create("t", 1)
    for node_id in (1, 2):
        harness.broker.cluster.stop(node_id)

    def grow(*broker_ids: int) -> tuple[int, str | None]:
        topic = {"name": "t", "count": 2, "assignments": [{"broker_ids": list(broker_ids)}]}
        request = {"topics": [topic], "timeout_ms": 1000, "validate_only": True}
        (result,) = harness.call(create_partitions, 3, request).results
        return result.error_code, result.error_message

    # Every partition has the three brokers as replicas here, so an assignment names three.
    assert grow(1, 2, 0) == (0, None)
    harness.broker.cluster.start(1)
    harness.broker.cluster.stop(0)
    assert grow(2, 0, 1)[0] == 0
    harness.broker.cluster.stop(1)  # all stopped: what Kafka answers, though nobody could ask
    assert grow(2, 0, 1) == (
        39,
        "All brokers specified in the manual partition assignment for partition 1 are fenced or in "
        "controlled shutdown.",
    )


@pytest.mark.parametrize("brokers, created", [(1, False), (3, True)])
def test_auto_creation_with_a_default_factor_of_3(
    brokers: int, created: bool, caplog: pytest.LogCaptureFixture
) -> None:
    harness = Harness(brokers=brokers, default_replication_factor=3)
    for node in harness.broker.cluster.nodes.values():  # what the server fills in once bound
        node.endpoints[""] = ("localhost", 9092 + node.node_id)
    request = {"topics": [{"name": "auto", "topic_id": None}], "allow_auto_topic_creation": True}
    with caplog.at_level(logging.WARNING, logger="kafka_shim.shim.controller.placement"):
        for _ in range(2):  # a client asks again: still refused, logged once
            (answer,) = harness.call(metadata, 9, request).topics
    assert (answer.error_code == ErrorCode.NONE) == created
    assert (harness.broker.topics.get("auto") is not None) == created
    if not created:
        assert answer.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and answer.partitions == []
        lines = [r.getMessage() for r in caplog.records]
        assert lines == [
            f"Auto topic creation failed for auto with error 'INVALID_REPLICATION_FACTOR': {unable(3, 1)}."
        ]
