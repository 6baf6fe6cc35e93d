"""Internal topics as Kafka 3.9 treats them (the probe2 corpus's internal.* cases): no client
appends, whatever the ACLs; creation refused only where Kafka refuses it; a client may grow and
delete them, and the coordinators survive both as Kafka's do."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.coordinator.types import JoinRequest, JoinResult, Protocol
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC, partition_for
from kafka_shim.storage.transaction_log import TRANSACTION_TOPIC
from tests.batches import make_batch
from tests.helpers import Harness, subscription

PRODUCE, METADATA, OFFSET_COMMIT, OFFSET_FETCH = 0, 3, 8, 9
CREATE_TOPICS, DELETE_TOPICS, INIT_PRODUCER_ID, CREATE_PARTITIONS = 19, 20, 22, 37
DESCRIBE_TRANSACTIONS = 65
ADMIN = "User:admin"


def broker() -> Harness:
    """A secured broker whose two internal topics exist (a commit, a transactional id)."""
    h = Harness(
        authorizer_class_name=STANDARD_AUTHORIZER,
        super_users=ADMIN,
        allow_everyone_if_no_acl_found=False,
        initial_rebalance_delay_ms=3000,
    )
    commit(h, "g", 5)
    init = {"transactional_id": "tx", "transaction_timeout_ms": 60000}
    assert h.call(INIT_PRODUCER_ID, 4, init, h.context(4, ADMIN)).error_code == 0
    return h


def commit(h: Harness, group: str, offset: int) -> int:
    request = {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset}]}],
    }
    if h.broker.topics.get("t") is None:
        h.broker.topics.create("t", 1, {})
    response = h.call(OFFSET_COMMIT, 8, request, h.context(8, ADMIN))
    return int(response.topics[0].partitions[0].error_code)


def committed(h: Harness, group: str) -> int:
    request = {"groups": [{"group_id": group, "topics": [{"name": "t", "partition_indexes": [0]}]}]}
    response = h.call(OFFSET_FETCH, 8, request, h.context(8, ADMIN))
    return int(response.groups[0].topics[0].partitions[0].committed_offset)


def produce(h: Harness, version: int, topic: str, partition: int = 0, acks: int = -1) -> Any:
    request = {
        "acks": acks,
        "timeout_ms": 1000,
        "topic_data": [
            {"name": topic, "partition_data": [{"index": partition, "records": make_batch([b"x"])}]}
        ],
    }
    response = h.call(PRODUCE, version, request, h.context(version, ADMIN))
    return response.responses[0].partition_responses[0]


def metadata(h: Harness, name: str) -> Any:
    request = {"topics": [{"name": name}], "allow_auto_topic_creation": False}
    return h.call(METADATA, 12, request, h.context(12, ADMIN)).topics[0]


@pytest.mark.parametrize("topic", [OFFSETS_TOPIC, TRANSACTION_TOPIC])
@pytest.mark.parametrize(("version", "acks"), [(3, -1), (7, -1), (7, 1), (11, -1)])
def test_a_client_cannot_append_to_an_internal_topic_even_as_super_user(
    topic: str, version: int, acks: int
) -> None:
    h = broker()
    log = h.broker.topics.partition(topic, 0)
    assert log is not None
    end = log.log_end_offset
    answer = produce(h, version, topic, acks=acks)
    assert (answer.error_code, answer.base_offset) == (ErrorCode.INVALID_TOPIC_EXCEPTION, -1)
    assert log.log_end_offset == end


def test_a_partition_the_internal_topic_lacks_is_unknown_first() -> None:
    assert produce(broker(), 7, OFFSETS_TOPIC, partition=9).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_creation_answers_as_kafka_3_9() -> None:
    h = broker()

    def create(name: str) -> Any:
        topic = {"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
        request = {"topics": [topic], "timeout_ms": 1000, "validate_only": False}
        return h.call(CREATE_TOPICS, 7, request, h.context(7, ADMIN)).topics[0]

    assert create(OFFSETS_TOPIC).error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    assert create(TRANSACTION_TOPIC).error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    refused = create("__cluster_metadata")
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "Creation of internal topic __cluster_metadata is prohibited.",
    )
    assert create("__any-other-name").error_code == ErrorCode.NONE
    described = metadata(h, "__cluster_metadata")
    assert (described.error_code, described.is_internal) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, False)


def test_grown_offsets_topic_moves_no_group_until_restart() -> None:
    """Kafka's coordinator reads the partition count once: a group that would hash elsewhere
    after CreatePartitions keeps committing where it did."""
    h = broker()
    moving = next(g for g in (f"g{i}" for i in range(100)) if partition_for(g, 2) == 1)
    assert commit(h, moving, 1) == 0
    grow = {"topics": [{"name": OFFSETS_TOPIC, "count": 2, "assignments": None}], "timeout_ms": 1000}
    assert h.call(CREATE_PARTITIONS, 3, grow, h.context(3, ADMIN)).results[0].error_code == 0
    assert len(metadata(h, OFFSETS_TOPIC).partitions) == 2
    assert commit(h, moving, 2) == 0
    assert committed(h, moving) == 2
    new_partition = h.broker.topics.partition(OFFSETS_TOPIC, 1)
    assert new_partition is not None and new_partition.log_end_offset == 0


def test_deleted_offsets_topic_unloads_the_groups_as_kafka_resigns_them() -> None:
    h = broker()
    assert committed(h, "g") == 5
    waiting: list[JoinResult] = []
    join = JoinRequest(
        group_id="joining",
        member_id="",
        session_timeout_ms=10000,
        rebalance_timeout_ms=10000,
        protocol_type="consumer",
        protocols=(Protocol("range", subscription("t")),),
        require_known_member_id=False,
    )
    b = h.broker
    unloaded = JoinResult(ErrorCode.NOT_COORDINATOR, "")
    b.group_service.effects.apply(
        b.groups.join_group(join, h.clock(), b.group_service.effects.waiter(waiting.append, unloaded))
    )
    assert not waiting  # held for group.initial.rebalance.delay.ms
    delete = {"topics": [{"name": OFFSETS_TOPIC}], "timeout_ms": 1000}
    assert h.call(DELETE_TOPICS, 6, delete, h.context(6, ADMIN)).responses[0].error_code == 0
    assert [w.error for w in waiting] == [ErrorCode.NOT_COORDINATOR]  # answered, never left hanging
    assert committed(h, "g") == -1
    gone = metadata(h, OFFSETS_TOPIC)
    assert (gone.error_code, gone.is_internal) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, True)
    assert commit(h, "g", 7) == 0  # the topic is made anew by the next record
    assert committed(h, "g") == 7
    assert len(metadata(h, OFFSETS_TOPIC).partitions) == h.broker.config.offsets_topic_num_partitions


def test_deleted_transaction_topic_forgets_the_transactions_as_kafka_resigns_them() -> None:
    h = broker()

    def described() -> int:
        request = {"transactional_ids": ["tx"]}
        return int(
            h.call(DESCRIBE_TRANSACTIONS, 0, request, h.context(0, ADMIN)).transaction_states[0].error_code
        )

    assert described() == ErrorCode.NONE
    delete = {"topics": [{"name": TRANSACTION_TOPIC}], "timeout_ms": 1000}
    assert h.call(DELETE_TOPICS, 6, delete, h.context(6, ADMIN)).responses[0].error_code == 0
    assert described() == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    init = {"transactional_id": "tx", "transaction_timeout_ms": 60000}
    assert h.call(INIT_PRODUCER_ID, 4, init, h.context(4, ADMIN)).error_code == 0  # made anew
    assert described() == ErrorCode.NONE
    assert h.broker.topics.get(TRANSACTION_TOPIC) is not None
