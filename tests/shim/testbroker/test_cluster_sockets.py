"""Three brokers in one process over real sockets: what each answers, and what stopping one,
moving a leader or moving a coordinator does to connections and answers."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages import APIS
from kafka_shim.pytest_plugin import KafkaShim
from tests.batches import make_batch
from tests.wire import WireClient

PRODUCE, FETCH, METADATA, HEARTBEAT, FIND_COORDINATOR, DELETE_RECORDS = 0, 1, 3, 12, 10, 21


@pytest.fixture
def cluster(kafka_shim_factory: Callable[..., KafkaShim]) -> KafkaShim:
    shim = kafka_shim_factory(brokers=3, racks=("r0", "r1", "r2"))
    shim.create_topic("t", partitions=3)
    return shim


def metadata(client: WireClient) -> Any:
    return client.request(
        METADATA, 12, {"topics": [{"name": "t"}], "include_topic_authorized_operations": False}
    )


def produce(client: WireClient, partition: int) -> Any:
    body = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 5000,
        "topic_data": [
            {"name": "t", "partition_data": [{"index": partition, "records": make_batch([b"v"])}]}
        ],
    }
    [topic] = client.request(PRODUCE, 10, body).responses
    return topic.partition_responses[0]


def fetch_body(epoch: int, max_wait_ms: int = 0) -> dict[str, Any]:
    body = {
        "max_wait_ms": max_wait_ms,
        "min_bytes": 1,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": "t",
                "partitions": [
                    {
                        "partition": 0,
                        "current_leader_epoch": epoch,
                        "fetch_offset": 0,
                        "partition_max_bytes": 1 << 20,
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    return body


def fetched(client: WireClient, epoch: int) -> Any:
    return client.request(FETCH, 12, fetch_body(epoch)).responses[0].partitions[0]


def test_every_broker_describes_the_same_cluster(cluster: KafkaShim) -> None:
    answers = []
    for node in range(3):
        with WireClient(cluster.address(node)) as client:
            answers.append(metadata(client))
    first = answers[0]
    assert [(b.node_id, f"{b.host}:{b.port}", b.rack) for b in first.brokers] == [
        (node, cluster.address(node), f"r{node}") for node in range(3)
    ]
    assert first.controller_id == 0
    partitions = first.topics[0].partitions
    assert sorted(p.leader_id for p in partitions) == [0, 1, 2]
    for p in partitions:
        assert (p.error_code, p.leader_epoch, p.replica_nodes[0]) == (0, 0, p.leader_id)
        assert sorted(p.isr_nodes) == [0, 1, 2]
    assert all(a.topics == first.topics and a.brokers == first.brokers for a in answers)


def test_produce_to_another_broker_names_the_leader(cluster: KafkaShim) -> None:
    leader = cluster.leader("t", 0)
    other = (leader + 1) % 3
    with WireClient(cluster.address(other)) as client:
        refused = produce(client, 0)
    assert refused.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (refused.current_leader.leader_id, refused.current_leader.leader_epoch) == (leader, 0)
    with WireClient(cluster.address(leader)) as client:
        assert produce(client, 0).error_code == ErrorCode.NONE


def test_delete_records_is_done_by_the_leader_only(cluster: KafkaShim) -> None:
    leader = cluster.leader("t", 0)
    body = {
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "offset": 0}]}],
        "timeout_ms": 1000,
    }
    answers = {}
    for node in range(3):
        with WireClient(cluster.address(node)) as client:
            answers[node] = client.request(DELETE_RECORDS, 2, body).topics[0].partitions[0].error_code
    assert answers == {
        n: ErrorCode.NONE if n == leader else ErrorCode.NOT_LEADER_OR_FOLLOWER for n in range(3)
    }


def test_a_moved_leader_fences_by_epoch_then_by_leadership(cluster: KafkaShim) -> None:
    old = cluster.leader("t", 0)
    new = (old + 1) % 3
    assert cluster.move_leader("t", 0, new) == 1
    with WireClient(cluster.address(new)) as client:
        answers = {epoch: fetched(client, epoch).error_code for epoch in (-1, 0, 1, 2)}
    assert answers == {
        -1: ErrorCode.NONE,
        0: ErrorCode.FENCED_LEADER_EPOCH,
        1: ErrorCode.NONE,
        2: ErrorCode.UNKNOWN_LEADER_EPOCH,
    }
    with WireClient(cluster.address(old)) as client:
        assert fetched(client, 1).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_a_long_poll_ends_when_its_partition_moves(cluster: KafkaShim) -> None:
    leader = cluster.leader("t", 0)
    # The poll would wait 60 s; the client gives up after 5: only the move can answer it.
    with WireClient(cluster.address(leader), timeout_s=5) as client:
        client.send_raw(client.frame(FETCH, 12, fetch_body(0, max_wait_ms=60_000)))
        cluster.move_leader("t", 0, (leader + 1) % 3)
        frame = client.receive_frame()
    # correlation id, an empty tagged-field section, then the body
    answer = APIS[FETCH].response.parse(frame[5:], 12)
    assert answer.responses[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH


def test_group_requests_go_to_the_coordinator_and_follow_it(cluster: KafkaShim) -> None:
    beat = {"group_id": "g", "generation_id": 1, "member_id": "m", "group_instance_id": None}
    coordinator = cluster.coordinator(group="g")
    with WireClient(cluster.address((coordinator + 1) % 3)) as client:
        found = client.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g"]})
        assert found.coordinators[0].node_id == coordinator
        assert client.request(HEARTBEAT, 4, beat).error_code == ErrorCode.NOT_COORDINATOR
    with WireClient(cluster.address(coordinator)) as client:
        assert client.request(HEARTBEAT, 4, beat).error_code == ErrorCode.UNKNOWN_MEMBER_ID
        cluster.move_coordinator((coordinator + 2) % 3, group="g")
        assert client.request(HEARTBEAT, 4, beat).error_code == ErrorCode.NOT_COORDINATOR
        found = client.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g"]})
        assert found.coordinators[0].node_id == (coordinator + 2) % 3


def test_a_stopped_broker_closes_its_connections_and_refuses_new_ones(cluster: KafkaShim) -> None:
    host, port = cluster.address(1).rsplit(":", 1)
    led = [p for p in range(3) if cluster.leader("t", p) == 1]
    with WireClient(cluster.address(1)) as connected:
        cluster.stop_broker(1)
        assert connected.is_closed_by_peer()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=5).close()
    with WireClient(cluster.address(0)) as client:
        answer = metadata(client)
    assert [b.node_id for b in answer.brokers] == [0, 2]
    for p in answer.topics[0].partitions:
        assert p.leader_id != 1 and 1 not in p.isr_nodes and p.offline_replicas == [1]
        assert p.leader_epoch == (1 if p.partition_index in led else 0)
    cluster.start_broker(1)
    with WireClient(cluster.address(1)) as client:
        answer = metadata(client)
    assert [b.node_id for b in answer.brokers] == [0, 1, 2]
    assert all(1 in p.isr_nodes for p in answer.topics[0].partitions)
