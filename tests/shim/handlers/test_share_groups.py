"""The share-group APIs through the wire schemas: one broker on a fake clock (memory, or a
data directory for restarts)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_configs import ConfigSource
from kafka_shim.protocol.messages.share_fetch import ACCEPT, REJECT, RELEASE, RENEW
from kafka_shim.protocol.messages.update_features import UPGRADE
from kafka_shim.protocol.share_state_records import decode_record
from kafka_shim.shim.handlers import (
    alter_share_group_offsets,
    api_versions,
    consumer_group_heartbeat,
    delete_groups,
    delete_share_group_offsets,
    delete_topics,
    describe_configs,
    describe_groups,
    describe_share_group_offsets,
    incremental_alter_configs,
    join_group,
    list_groups,
    share_acknowledge,
    share_fetch,
    share_group_describe,
    share_group_heartbeat,
)
from tests.batches import batch, read_records
from tests.helpers import Harness, subscription

GROUP = "sg"


def harness(**config: Any) -> Harness:
    h = Harness(**config)
    h.broker.topics.create("t", 1, {})
    h.broker.group_configs[GROUP] = {"share.auto.offset.reset": "earliest"}
    return h


def topic_id(h: Harness) -> uuid.UUID:
    topic = h.broker.topics.get("t")
    assert topic is not None
    return topic.topic_id


def produce(h: Harness, *values: bytes) -> None:
    topic = h.broker.topics.get("t")
    assert topic is not None
    topic.partitions[0].append(batch(*values))


def join(h: Harness, member: str) -> Any:
    request = {"group_id": GROUP, "member_id": member, "member_epoch": 0, "subscribed_topic_names": ["t"]}
    return h.call(share_group_heartbeat, 1, request)


def fetch(
    h: Harness, member: str, epoch: int, acks: Sequence[tuple[int, int, list[int]]] = (), **fields: Any
) -> Any:
    request = {
        "group_id": GROUP,
        "member_id": member,
        "share_session_epoch": epoch,
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_records": 10,
        "batch_size": 10,
        "topics": [
            {
                "topic_id": topic_id(h),
                "partitions": [
                    {
                        "partition_index": 0,
                        "acknowledgement_batches": [
                            {"first_offset": f, "last_offset": last, "acknowledge_types": t}
                            for f, last, t in acks
                        ],
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        **fields,
    }
    return h.call(share_fetch, 2, request)


def acquired(answer: Any) -> list[tuple[int, int, int]]:
    assert answer.error_code == ErrorCode.NONE, answer
    return [
        (a.first_offset, a.last_offset, a.delivery_count)
        for t in answer.responses
        for p in t.partitions
        for a in p.acquired_records
    ]


def test_heartbeat_assigns_every_member_every_partition_and_describe_shows_them() -> None:
    h = harness()
    first, second = join(h, "m1"), join(h, "m2")
    assert (first.error_code, first.member_epoch, second.member_epoch) == (0, 1, 2)
    for answer in (first, second):
        (assigned,) = answer.assignment.topic_partitions
        assert (assigned.topic_id, assigned.partitions) == (topic_id(h), [0])
    described = h.call(
        share_group_describe, 1, {"group_ids": [GROUP, "none"], "include_authorized_operations": False}
    )
    group, missing = described.groups
    assert (group.group_state, group.assignor_name, sorted(m.member_id for m in group.members)) == (
        "Stable",
        "simple",
        ["m1", "m2"],
    )
    assert missing.error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_a_classic_group_id_is_not_a_share_group() -> None:
    h = harness()
    h.call(
        join_group,
        5,
        {
            "group_id": GROUP,
            "session_timeout_ms": 10_000,
            "rebalance_timeout_ms": 10_000,
            "member_id": "",
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": subscription("t")}],
        },
    )
    assert join(h, "m1").error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_each_record_goes_to_one_member_at_a_time_and_release_redelivers() -> None:
    h = harness()
    join(h, "m1")
    join(h, "m2")
    produce(h, b"a", b"b")
    produce(h, b"c")
    first = fetch(h, "m1", 0, max_records=1)
    assert acquired(first) == [(0, 1, 1)]  # a whole batch
    assert [v for _, _, v in read_records(first.responses[0].partitions[0].records)] == [b"a", b"b"]
    assert acquired(fetch(h, "m2", 0)) == [(2, 2, 1)]
    assert acquired(fetch(h, "m2", 1)) == []  # nothing left: m1 holds 0-1
    released = fetch(h, "m1", 1, acks=[(0, 1, [RELEASE, ACCEPT])])
    assert released.responses[0].partitions[0].acknowledge_error_code == ErrorCode.NONE
    assert acquired(released) == [(0, 0, 2)]  # released, then acquired again: its second delivery
    assert acquired(fetch(h, "m2", 2, acks=[(2, 2, [REJECT])])) == []
    partition = h.broker.share_partitions.get(next(iter(dict(h.broker.share_partitions.of_group(GROUP)))))
    assert partition is not None and partition.start_offset == 0


def test_locks_expire_after_the_lock_duration_and_renew_extends_them() -> None:
    h = harness()
    h.broker.group_configs[GROUP]["share.record.lock.duration.ms"] = "1000"
    join(h, "m1")
    join(h, "m2")
    produce(h, b"a")
    produce(h, b"b")
    assert acquired(fetch(h, "m1", 0, max_records=2)) == [(0, 1, 1)]
    h.clock.now += 900
    renewed = fetch(
        h, "m1", 1, acks=[(0, 0, [RENEW])], is_renew_ack=True, max_wait_ms=0, min_bytes=0, max_records=0
    )
    assert acquired(renewed) == []
    h.clock.now += 200  # offset 1's lock expired; offset 0's was renewed
    assert acquired(fetch(h, "m2", 0)) == [(1, 1, 2)]


def test_long_poll_waits_for_a_lock_to_expire() -> None:
    h = harness()
    h.broker.group_configs[GROUP]["share.record.lock.duration.ms"] = "1000"
    join(h, "m1")
    join(h, "m2")
    produce(h, b"a")
    acquired(fetch(h, "m1", 0))
    start = h.clock.now
    answer = fetch(h, "m2", 0, max_wait_ms=5000)
    assert acquired(answer) == [(0, 0, 2)]
    assert h.clock.now - start == 1000


@pytest.mark.parametrize(("release", "count"), [("4.2", 2), ("4.1", 1)])
def test_closing_the_session_returns_what_it_still_holds(release: str, count: int) -> None:
    # Kafka 4.1 gives the delivery count back (fetched, never handled: KAFKA-17541); the
    # newest counts it (KAFKA-19972), as when the lock expires.
    h = harness(emulate=release)
    assert h.broker.features.update({"share.version": (1, UPGRADE)}, validate_only=False) is None
    join(h, "m1")
    join(h, "m2")
    produce(h, b"a")
    produce(h, b"b")
    assert acquired(fetch(h, "m1", 0, max_records=2)) == [(0, 1, 1)]
    closed = fetch(h, "m1", -1, acks=[(0, 0, [ACCEPT])], max_records=0)
    assert closed.error_code == ErrorCode.NONE
    assert acquired(fetch(h, "m2", 0)) == [(1, 1, count)]


def test_session_epochs_and_acknowledge_errors() -> None:
    h = harness()
    join(h, "m1")
    produce(h, b"a")
    assert fetch(h, "m1", 3).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert fetch(h, "m1", 0, acks=[(0, 0, [ACCEPT])]).error_code == ErrorCode.INVALID_REQUEST
    acquired(fetch(h, "m1", 0))
    assert fetch(h, "m1", 5).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    ack = {
        "group_id": GROUP,
        "member_id": "m1",
        "share_session_epoch": 1,
        "is_renew_ack": False,
        "topics": [
            {
                "topic_id": topic_id(h),
                "partitions": [
                    {
                        "partition_index": 0,
                        "acknowledgement_batches": [
                            {"first_offset": 3, "last_offset": 3, "acknowledge_types": [1]}
                        ],
                    }
                ],
            }
        ],
    }
    answer = h.call(share_acknowledge, 2, ack)
    assert answer.responses[0].partitions[0].error_code == ErrorCode.INVALID_RECORD_STATE
    assert answer.acquisition_lock_timeout_ms == 30_000
    opened = h.call(share_acknowledge, 2, ack | {"share_session_epoch": 0})
    assert opened.error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH


def test_acknowledged_records_survive_a_restart_and_in_flight_ones_return(tmp_path: Path) -> None:
    h = harness(data_dir=tmp_path)
    join(h, "m1")
    produce(h, b"a", b"b", b"c")
    acquired(fetch(h, "m1", 0))
    fetch(h, "m1", 1, acks=[(0, 0, [ACCEPT])], max_wait_ms=0)  # 1-2 still held, none new
    h.broker.close()
    restarted = Harness(data_dir=tmp_path)
    restarted.broker.group_configs[GROUP] = {"share.auto.offset.reset": "earliest"}
    group = restarted.broker.group_service.share.group(GROUP)
    assert group is not None and list(group.members) == ["m1"]  # membership replayed too
    assert acquired(fetch(restarted, "m1", 0)) == [(1, 2, 2)]
    restarted.broker.close()


def alter_group(h: Harness, configs: Mapping[str, str | None]) -> Any:
    resource = {
        "resource_type": 32,
        "resource_name": GROUP,
        "configs": [
            {"name": n, "config_operation": 0 if v is not None else 1, "value": v} for n, v in configs.items()
        ],
    }
    (answer,) = h.call(
        incremental_alter_configs, 1, {"resources": [resource], "validate_only": False}
    ).responses
    return answer


def test_group_configs_through_incremental_alter_configs(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path)
    assert (
        alter_group(
            h, {"share.record.lock.duration.ms": "2000", "share.isolation.level": "read_committed"}
        ).error_code
        == 0
    )
    refused = [
        {"share.record.lock.duration.ms": "500"},  # below group.share.min.record.lock.duration.ms
        {"share.delivery.count.limit": "11"},
        {"share.auto.offset.reset": "sometimes"},
        {"consumer.session.timeout.ms": "5000"},  # a Kafka group config this broker has no effect for
    ]
    for configs in refused:
        assert alter_group(h, configs).error_code == ErrorCode.INVALID_CONFIG, configs
    assert alter_group(h, {"share.auto.offset.reset": "by_duration:PT1H"}).error_code == 0
    assert alter_group(h, {"share.isolation.level": None}).error_code == 0
    config = h.broker.group_configs.share_config_of(GROUP)
    assert (config.record_lock_duration_ms, config.isolation_level, config.auto_offset_reset) == (
        2000,
        "read_uncommitted",
        "by_duration:PT1H",
    )
    described = h.call(
        describe_configs,
        4,
        {
            "resources": [{"resource_type": 32, "resource_name": GROUP, "configuration_keys": None}],
            "include_synonyms": False,
            "include_documentation": False,
        },
    )
    values = {c.name: (c.value, c.config_source) for c in described.results[0].configs}
    assert values["share.record.lock.duration.ms"] == ("2000", ConfigSource.DYNAMIC_GROUP_CONFIG)
    assert values["share.delivery.count.limit"] == ("5", ConfigSource.DEFAULT_CONFIG)
    h.broker.close()
    assert (
        Harness(data_dir=tmp_path).broker.group_configs.share_config_of(GROUP).record_lock_duration_ms == 2000
    )


def test_read_committed_skips_aborted_transactions_and_markers() -> None:
    h = harness()
    h.broker.group_configs[GROUP]["share.isolation.level"] = "read_committed"
    topic = h.broker.topics.get("t")
    assert topic is not None
    log = topic.partitions[0]
    log.append(batch(b"c1", producer_id=7, producer_epoch=0, base_sequence=0, transactional=True))
    log.append(batch(b"a1", producer_id=8, producer_epoch=0, base_sequence=0, transactional=True))
    log.write_txn_marker(8, 0, False, 0, 0)  # abort 8 at offset 2
    log.write_txn_marker(7, 0, True, 0, 0)  # commit 7 at offset 3
    produce(h, b"p")
    join(h, "m1")
    assert acquired(fetch(h, "m1", 0)) == [(0, 0, 1), (4, 4, 1)]


def test_list_describe_and_delete_groups_know_share_groups() -> None:
    h = harness()
    join(h, "m1")
    produce(h, b"a")
    acquired(fetch(h, "m1", 0))
    listed = h.call(list_groups, 5, {"states_filter": [], "types_filter": ["share"]}).groups
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed] == [
        (GROUP, "share", "Stable", "share")
    ]
    assert h.call(list_groups, 5, {"states_filter": [], "types_filter": ["classic"]}).groups == []
    (described,) = h.call(
        describe_groups, 5, {"groups": [GROUP], "include_authorized_operations": False}
    ).groups
    assert described.group_state == "Dead"
    delete = {"groups_names": [GROUP]}
    assert h.call(delete_groups, 2, delete).results[0].error_code == ErrorCode.NON_EMPTY_GROUP
    h.call(share_group_heartbeat, 1, {"group_id": GROUP, "member_id": "m1", "member_epoch": -1})
    assert h.call(delete_groups, 2, delete).results[0].error_code == ErrorCode.NONE
    assert h.broker.group_service.share.group(GROUP) is None
    assert list(h.broker.share_partitions.of_group(GROUP)) == []


def test_share_group_offsets_admin() -> None:
    h = harness()
    join(h, "m1")
    produce(h, b"a", b"b", b"c")
    acquired(fetch(h, "m1", 0, max_records=1))
    fetch(h, "m1", 1, acks=[(0, 0, [ACCEPT])], max_wait_ms=0)
    describe = {"groups": [{"group_id": GROUP, "topics": None}]}
    (group,) = h.call(describe_share_group_offsets, 1, describe).groups
    (partition,) = group.topics[0].partitions
    assert (group.topics[0].topic_name, partition.start_offset, partition.lag) == ("t", 1, 2)
    alter = {
        "group_id": GROUP,
        "topics": [{"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 2}]}],
    }
    assert h.call(alter_share_group_offsets, 0, alter).error_code == ErrorCode.NON_EMPTY_GROUP
    h.call(share_group_heartbeat, 1, {"group_id": GROUP, "member_id": "m1", "member_epoch": -1})
    assert h.call(alter_share_group_offsets, 0, alter).responses[0].partitions[0].error_code == ErrorCode.NONE
    (group,) = h.call(describe_share_group_offsets, 1, describe).groups
    assert group.topics[0].partitions[0].start_offset == 2
    deleted = h.call(delete_share_group_offsets, 0, {"group_id": GROUP, "topics": [{"topic_name": "t"}]})
    assert (deleted.error_code, deleted.responses[0].error_code) == (ErrorCode.NONE, ErrorCode.NONE)
    assert h.call(describe_share_group_offsets, 1, describe).groups[0].topics == []


def test_a_share_group_id_is_not_a_classic_or_consumer_group() -> None:
    h = harness()
    join(h, "m1")
    joined = h.call(
        join_group,
        5,
        {
            "group_id": GROUP,
            "session_timeout_ms": 10_000,
            "rebalance_timeout_ms": 10_000,
            "member_id": "",
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": subscription("t")}],
        },
    )
    assert joined.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    beat = {
        "group_id": GROUP,
        "member_id": "c1",
        "member_epoch": 0,
        "rebalance_timeout_ms": 30_000,
        "subscribed_topic_names": ["t"],
        "topic_partitions": [],
    }
    assert h.call(consumer_group_heartbeat, 1, beat).error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_the_timer_task_expires_locks_nobody_asks_about() -> None:
    h = harness()
    h.broker.group_configs[GROUP]["share.record.lock.duration.ms"] = "1000"
    h.broker.group_configs[GROUP]["share.delivery.count.limit"] = "2"
    join(h, "m1")
    produce(h, b"a")
    acquired(fetch(h, "m1", 0))
    h.broker.share_partitions.acknowledge(
        next(k for k, _ in h.broker.share_partitions.of_group(GROUP)),
        "m1",
        h.broker.topics.get("t").partitions[0],  # type: ignore[union-attr]
        [(0, 0, [RELEASE])],
        h.clock.now,
    )
    acquired(fetch(h, "m1", 1))  # its second delivery, the last one
    assert h.broker.timers.watch_deadlines() == h.clock.now + 1000
    h.clock.now += 1000
    h.broker.timers.tick(h.clock.now)  # nobody fetches: the timer archives it
    (partition,) = [p for _, p in h.broker.share_partitions.of_group(GROUP)]
    assert (partition.start_offset, partition.records) == (1, {})


def test_share_version_zero_turns_share_groups_off_as_in_kafka_4_1() -> None:
    h = Harness(emulate="4.1")  # share groups were a preview: share.version 0 on a new cluster
    h.broker.topics.create("t", 1, {})
    advertised = {a.api_key for a in h.call(api_versions, 3, {"client_software_name": "t"}).api_keys}
    assert not advertised & {76, 77, 78, 79, 90, 91}
    assert join(h, "m1").error_code == ErrorCode.UNSUPPORTED_VERSION
    assert fetch(h, "m1", 0).error_code == ErrorCode.UNSUPPORTED_VERSION
    refusal = h.broker.features.update({"share.version": (1, UPGRADE)}, validate_only=False)
    assert refusal is None  # kafka-features.sh upgrade --feature share.version=1
    advertised = {a.api_key for a in h.call(api_versions, 3, {"client_software_name": "t"}).api_keys}
    assert {76, 77, 78, 79, 90} <= advertised
    assert join(h, "m1").error_code == ErrorCode.NONE


def leave(h: Harness, member: str) -> Any:
    return h.call(share_group_heartbeat, 1, {"group_id": GROUP, "member_id": member, "member_epoch": -1})


def test_a_member_leaving_keeps_its_share_session_until_its_final_epoch() -> None:
    # librdkafka's close: the leave heartbeat may arrive before ShareAcknowledge -1 (Kafka keeps
    # the session: the acknowledgements are applied, then the rest returns).
    h = harness()
    join(h, "m1")
    join(h, "m2")
    produce(h, b"a")
    produce(h, b"b")
    assert acquired(fetch(h, "m1", 0, max_records=2)) == [(0, 1, 1)]
    assert leave(h, "m1").error_code == ErrorCode.NONE
    assert acquired(fetch(h, "m2", 0)) == []  # still held by m1's session
    closed = fetch(h, "m1", -1, acks=[(0, 0, [ACCEPT])], max_records=0)
    assert closed.error_code == ErrorCode.NONE
    assert [p.acknowledge_error_code for t in closed.responses for p in t.partitions] == [ErrorCode.NONE]
    assert fetch(h, "m1", 1).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND  # ended
    assert acquired(fetch(h, "m2", 1)) == [(1, 1, 2)]


def test_the_session_limit_refuses_a_new_session() -> None:
    h = harness(share_max_share_sessions=1)
    join(h, "m1")
    join(h, "m2")
    acquired(fetch(h, "m1", 0))
    assert fetch(h, "m2", 0).error_code == ErrorCode.SHARE_SESSION_LIMIT_REACHED
    fetch(h, "m1", -1, max_records=0)
    acquired(fetch(h, "m2", 0))


@pytest.mark.parametrize(
    ("max_bytes", "max_records", "got"),
    [
        (1, 10, [(0, 0, 1)]),  # at least one batch, however small the limit
        (2**31 - 1, 10, [(0, 2, 1)]),  # every batch within the records
        (2**31 - 1, 2, [(0, 1, 1)]),  # whole batches up to max_records
    ],
)
def test_share_fetch_acquires_whole_batches_within_its_byte_and_record_limits(
    max_bytes: int, max_records: int, got: list[tuple[int, int, int]]
) -> None:
    h = harness()
    join(h, "m1")
    for value in (b"a" * 100, b"b" * 100, b"c" * 100):
        produce(h, value)
    assert acquired(fetch(h, "m1", 0, max_bytes=max_bytes, max_records=max_records)) == got


def test_deleting_a_topic_deletes_its_share_state(tmp_path: Path) -> None:
    h = harness(data_dir=tmp_path)
    join(h, "m1")
    produce(h, b"a", b"b")
    old_id = topic_id(h)
    assert acquired(fetch(h, "m1", 0)) == [(0, 1, 1)]
    fetch(h, "m1", 1, acks=[(0, 0, [ACCEPT])])
    assert [k.topic_id for k, _ in h.broker.share_partitions.of_group(GROUP)] == [old_id]
    assert (
        h.call(delete_topics, 6, {"topics": [{"name": "t"}], "timeout_ms": 1000}).responses[0].error_code == 0
    )
    assert [k for k, _ in h.broker.share_partitions.of_group(GROUP)] == []
    h.broker.close()
    restarted = Harness(data_dir=tmp_path)
    assert [k for k, _ in restarted.broker.share_partitions.of_group(GROUP)] == []  # tombstoned
    restarted.broker.close()


def state_records(h: Harness) -> list[tuple[str, int, list[tuple[int, int, int, int]]]]:
    """What __share_group_state holds, in order: (kind, start offset, state batches)."""
    log = h.broker.share_partitions.state_log
    topic = log.topic
    assert topic is not None
    out = []
    for _, records in log._scan(0, topic.partitions[0]):
        for _, key, value in records:
            record = decode_record(key, value)
            assert record.value is not None
            batches = [tuple(b.values()) for b in record.value["state_batches"]]
            out.append(("update" if record.update else "snapshot", record.value["start_offset"], batches))
    return out


def test_share_updates_between_snapshots_and_their_replay(tmp_path: Path) -> None:
    # share.coordinator.snapshot.update.records.per.snapshot = 2: a snapshot, two updates (the
    # batches that changed), a snapshot again; a restart replays the snapshot and the updates.
    h = harness(data_dir=tmp_path, share_snapshot_update_records_per_snapshot=2)
    join(h, "m1")
    produce(h, b"a", b"b", b"c", b"d")
    assert acquired(fetch(h, "m1", 0)) == [(0, 3, 1)]
    fetch(h, "m1", 1, acks=[(1, 1, [ACCEPT])])
    fetch(h, "m1", 2, acks=[(0, 0, [REJECT])])
    fetch(h, "m1", 3, acks=[(3, 3, [ACCEPT])])
    assert state_records(h) == [
        ("snapshot", 0, [(0, 3, 0, 1)]),
        ("update", 0, [(1, 1, 2, 1)]),
        ("update", 2, []),  # the start moved past 0-1: it says all
        ("snapshot", 2, [(2, 2, 0, 1), (3, 3, 2, 1)]),
    ]
    fetch(h, "m1", 4, acks=[(2, 2, [RELEASE])])
    h.broker.close()
    restarted = Harness(data_dir=tmp_path)
    restarted.broker.group_configs[GROUP] = {"share.auto.offset.reset": "earliest"}
    # 2 was released and acquired again by the same fetch (count 2), in flight at the stop:
    # delivered a third time; 3 stays acknowledged.
    assert acquired(fetch(restarted, "m1", 0)) == [(2, 2, 3)]
    restarted.broker.close()
