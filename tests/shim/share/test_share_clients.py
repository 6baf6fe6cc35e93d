"""Share groups (KIP-932) with real clients: the Java KafkaShareConsumer and Admin of
kafka-clients 4.3 (compat/java/ShareDriver) and confluent-kafka's ShareConsumer, against an
in-process broker. Each record goes to one member at a time; RELEASE redelivers, REJECT never;
a member that stops acknowledging loses its records after the lock duration; the
delivery-count limit archives; a restart keeps what was acknowledged."""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import AcknowledgeType, Consumer, Producer, ShareConsumer

from compat.java_build import compiled_classpath
from kafka_shim.protocol.share_state_records import SharePartitionKey
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients

DEADLINE_S = 30.0


def start(data_dir: Path | None = None) -> BrokerThread:
    return BrokerThread(
        replace(BrokerConfig(), listeners="PLAINTEXT://127.0.0.1:0", data_dir=data_dir)
    ).start()


def stop(thread: BrokerThread) -> None:
    thread.stop()
    thread.broker.close()  # releases the data directory for the next start


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    thread = start()
    yield thread
    stop(thread)


def produce(thread: BrokerThread, topic: str, values: list[str], group_configs: dict[str, str]) -> None:
    """One batch per value, the group's configs set first (earliest: it reads what is there)."""
    configs = {"share.auto.offset.reset": "earliest", **group_configs}
    thread.call(lambda: thread.broker.topics.create(topic, 1, {}))
    thread.call(lambda: thread.broker.group_configs.replace(topic, configs))
    producer = Producer({"bootstrap.servers": thread.bootstrap, "linger.ms": 0})
    for value in values:
        producer.produce(topic, value.encode())
        producer.flush(10)


def share_driver(thread: BrokerThread, **command: Any) -> list[dict[str, Any]]:
    """Run compat/java/ShareDriver (group and topic named alike); its events."""
    command = {"bootstrap": thread.bootstrap, "group": command["topic"], "timeout_s": DEADLINE_S, **command}
    done = subprocess.run(
        [
            "java",
            "-XX:TieredStopAtLevel=1",
            "-Xmx256m",
            "-cp",
            compiled_classpath(),
            "ShareDriver",
            json.dumps(command),
        ],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S + 30,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert not [e for e in events if e["event"] == "error"], events
    return events


def deliveries(events: list[dict[str, Any]]) -> list[tuple[str, int, str, int]]:
    return [(e["value"], e["count"], e["ack"], e["member"]) for e in events if e["event"] == "delivery"]


def test_java_three_members_share_one_partition_release_and_reject(broker: BrokerThread) -> None:
    values = [f"r{i}" for i in range(30)] + ["release-once", "reject"]
    produce(broker, "three", values, {})
    events = share_driver(
        broker, op="consume", topic="three", members=3, expect=32, handle_ms=5, max_poll_records=4
    )
    seen = deliveries(events)
    accepted = Counter(v for v, _, ack, _ in seen if ack == "accept")
    assert accepted == Counter(v for v in values if v != "reject")  # every record once
    assert len({member for *_, member in seen}) == 3  # all three took part
    assert [(c, a) for v, c, a, _ in seen if v == "release-once"] == [(1, "release"), (2, "accept")]
    assert [(c, a) for v, c, a, _ in seen if v == "reject"] == [(1, "reject")]
    # The admin client sees the share group, its start offset past every record, and resets it.
    admin = share_driver(
        broker, op="admin", topic="three", actions="list,describe,offsets,reset,offsets", offset=5
    )
    listed, described, offsets, _, reset = [e for e in admin if e["event"] not in ("ready",)]
    assert {"group": "three", "type": "Share"} in listed["groups"]
    assert (described["state"], described["members"]) == ("Empty", [])
    assert offsets["offsets"] == {"three-0": {"start": 32, "lag": 0}}
    assert reset["offsets"]["three-0"]["start"] == 5
    gone = share_driver(broker, op="admin", topic="three", actions="delete_offsets,delete_group,list")
    assert {"group": "three", "type": "Share"} not in gone[-1]["groups"]


def test_java_a_stalled_members_records_go_to_another_once_its_lock_expires(broker: BrokerThread) -> None:
    produce(broker, "locks", ["r0", "r1", "r2", "r3"], {"share.record.lock.duration.ms": "1000"})
    events = share_driver(
        broker,
        op="consume",
        topic="locks",
        members=2,
        stall_member=0,
        stall_ms=2500,
        expect=4,
        handle_ms=150,
        max_poll_records=2,
        quiet_ms=1500,
    )
    seen = deliveries(events)
    held = [v for v, _, ack, member in seen if member == 0 and ack == "none"]
    assert held, "the stalling member acquired nothing"
    for value in held:  # its lock expired: the other member got it, delivered again
        assert [(c >= 2, m) for v, c, ack, m in seen if v == value and ack == "accept"] == [(True, 1)], events
    assert Counter(v for v, _, ack, _ in seen if ack == "accept") == Counter(["r0", "r1", "r2", "r3"])


def test_java_the_delivery_count_limit_archives_a_record_released_every_time(broker: BrokerThread) -> None:
    # One member: a stalled second one could prefetch the record, so that a delivery (or its
    # given-back count, when the member closes) never reaches an application.
    produce(broker, "limit", ["r0", "release-always", "r1"], {"share.delivery.count.limit": "2"})
    events = share_driver(broker, op="consume", topic="limit", members=1, expect=2, quiet_ms=1500)
    seen = deliveries(events)
    # Released at its first and second delivery: archived at the limit, never delivered a third time.
    assert [(c, ack) for v, c, ack, _ in seen if v == "release-always"] == [(1, "release"), (2, "release")]
    assert Counter(v for v, _, ack, _ in seen if ack == "accept") == Counter(["r0", "r1"])


def test_java_restart_keeps_acknowledged_records_and_redelivers_in_flight_ones(tmp_path: Path) -> None:
    values = [f"r{i}" for i in range(20)]
    first = start(tmp_path)
    try:
        produce(first, "restart", values, {})
        crashed = share_driver(
            first, op="consume", topic="restart", members=1, exit_after=8, max_poll_records=4
        )
    finally:
        stop(first)
    before = {v for v, _, ack, _ in deliveries(crashed) if ack == "accept"}
    assert len(before) >= 8 and [e for e in crashed if e["event"] == "crash"]
    second = start(tmp_path)
    try:
        after = deliveries(
            share_driver(second, op="consume", topic="restart", members=1, expect=len(values) - len(before))
        )
    finally:
        stop(second)
    assert not before & {v for v, *_ in after}  # nothing acknowledged comes back
    assert before | {v for v, _, ack, _ in after if ack == "accept"} == set(values)


def test_confluent_share_consumer_and_a_consumer_group_read_independently(broker: BrokerThread) -> None:
    values = [f"v{i}" for i in range(10)] + ["release-once"]
    produce(broker, "both", values, {})
    share = ShareConsumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "both", "share.acknowledgement.mode": "explicit"}
    )
    share.subscribe(["both"])
    classic = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "classic", "auto.offset.reset": "earliest"}
    )
    classic.subscribe(["both"])
    shared: list[str] = []
    read: list[str] = []
    deadline = time.monotonic() + DEADLINE_S
    while (len(shared) < len(values) or len(read) < len(values)) and time.monotonic() < deadline:
        for message in share.poll(0.2) or []:
            value = (message.value() or b"").decode()
            again = value == "release-once" and value not in shared and value + "#1" not in shared
            share.acknowledge(message, AcknowledgeType.RELEASE if again else AcknowledgeType.ACCEPT)
            shared.append(value + "#1" if again else value)
        share.commit_sync()
        record = classic.poll(0.05)
        if record is not None and record.error() is None:
            read.append((record.value() or b"").decode())
    share.close()
    classic.close()
    assert sorted(read) == sorted(values)
    assert sorted(v for v in shared if not v.endswith("#1")) == sorted(values)
    assert "release-once#1" in shared  # released once, delivered again


def share_start_offset(thread: BrokerThread, group: str, topic: str) -> int:
    """The share partition's start offset (what DescribeShareGroupOffsets answers)."""

    def read() -> int:
        found = thread.broker.topics.get(topic)
        assert found is not None
        partition = thread.broker.share_partitions.get(SharePartitionKey(group, found.topic_id, 0))
        return -1 if partition is None else partition.start_offset

    return thread.call(read)


def test_confluent_small_fetch_max_bytes_gets_one_batch_a_fetch(broker: BrokerThread) -> None:
    # librdkafka's 0171 do_test_fetch_max_bytes_small: 1000-byte records, one batch each, and
    # fetch.max.bytes 1500: every ShareFetch answer holds one batch (at least one, then the limit).
    produce(broker, "small", ["x" * 1000 for _ in range(10)], {})
    consumer = ShareConsumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "small", "fetch.max.bytes": 1500}
    )
    consumer.subscribe(["small"])
    sizes: list[int] = []
    deadline = time.monotonic() + DEADLINE_S
    while sum(sizes) < 10 and time.monotonic() < deadline:
        sizes += [len(batch)] if (batch := consumer.poll(1.0)) else []
    consumer.close()
    assert sizes == [1] * 10


def test_confluent_acknowledgements_pending_at_close_are_committed_before_the_session_ends(
    broker: BrokerThread,
) -> None:
    # close() sends the pending acknowledgements with the final epoch (ShareAcknowledge -1) and
    # leaves the group: whichever the broker sees first, the acknowledgements are applied and
    # the callback's receipts are what was delivered.
    produce(broker, "closing", [f"v{i}" for i in range(5)], {})
    consumer = ShareConsumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "closing",
            "share.acknowledgement.mode": "explicit",
        }
    )
    receipts: list[tuple[dict[Any, set[int]], object]] = []
    consumer.set_acknowledgement_commit_callback(lambda offsets, error: receipts.append((offsets, error)))
    consumer.subscribe(["closing"])
    delivered: set[int] = set()
    deadline = time.monotonic() + DEADLINE_S
    while len(delivered) < 5 and time.monotonic() < deadline:
        for message in consumer.poll(1.0) or []:
            consumer.acknowledge(message)
            delivered.add(message.offset() or 0)
    consumer.close()
    assert delivered == set(range(5))
    assert [error for _, error in receipts] == [None] * len(receipts)
    assert {o for offsets, _ in receipts for acked in offsets.values() for o in acked} == delivered
    assert share_start_offset(broker, "closing", "closing") == 5  # accepted, never delivered again


def test_confluent_topic_names_are_literal_not_patterns(broker: BrokerThread) -> None:
    # librdkafka's 0170 caret e2e: '^<topic>$' names no topic; after unsubscribe and a subscription
    # by the plain name, every record arrives (the member's share session outlives the leave).
    produce(broker, "caret", [f"v{i}" for i in range(10)], {})
    consumer = ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": "caret"})
    consumer.subscribe(["^caret$"])
    assert consumer.subscription() == ["^caret$"]
    before = [m for _ in range(2) for m in consumer.poll(1.0) or []]
    consumer.unsubscribe()
    consumer.subscribe(["caret"])
    after: list[str] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(after) < 10 and time.monotonic() < deadline:
        after += [(m.value() or b"").decode() for m in consumer.poll(1.0) or []]
    consumer.close()
    assert before == []
    assert sorted(after) == sorted(f"v{i}" for i in range(10))


def test_java_small_fetch_max_bytes_and_acknowledgements_committed_by_close(broker: BrokerThread) -> None:
    # Each ShareFetch answers one 1000-byte batch (fetch.max.bytes 1500); the Java consumer may
    # hand a poll what two fetches buffered, never everything at once. The member never calls
    # commitSync: close() commits what is pending, and the callback reports exactly that.
    produce(broker, "small", ["x" * 1000 for _ in range(10)], {})
    events = share_driver(
        broker, op="consume", topic="small", members=1, expect=10, fetch_max_bytes=1500, commit_on_close=True
    )
    polls = [e["count"] for e in events if e["event"] == "poll"]
    assert sum(polls) == 10 and len(polls) >= 5, polls
    acked = [e for e in events if e["event"] == "acked"]
    assert [e["error"] for e in acked] == [""] * len(acked)
    assert sorted(o for e in acked for offsets in e["offsets"].values() for o in offsets) == list(range(10))
    assert share_start_offset(broker, "small", "small") == 10


def test_java_implicit_and_explicit_members_of_one_group_are_both_served(broker: BrokerThread) -> None:
    produce(broker, "mixed", [f"v{i}" for i in range(200)], {})
    events = share_driver(
        broker, op="consume", topic="mixed", members=2, implicit_members=1, expect=200, max_poll_records=10
    )
    seen = deliveries(events)
    assert Counter(v for v, *_ in seen) == Counter(f"v{i}" for i in range(200))  # each once
    assert {member for *_, member in seen} == {0, 1}


def test_java_a_subscription_names_topics_literally(broker: BrokerThread) -> None:
    produce(broker, "literal", ["v0", "v1"], {})
    events = share_driver(
        broker, op="consume", topic="literal", subscribe="^literal$", members=1, timeout_s=3
    )
    assert deliveries(events) == []


def test_a_crashed_members_connection_closing_gives_its_records_back_at_once(broker: BrokerThread) -> None:
    # The Java member halts with records acquired (no close, no final epoch): its connection
    # closing ends its share session and returns them, long before their 30 s locks expire.
    produce(broker, "crash", [f"v{i}" for i in range(8)], {})
    crashed = share_driver(broker, op="consume", topic="crash", members=1, exit_after=2, max_poll_records=2)
    in_flight = [e for e in crashed if e["event"] == "crash"]
    assert in_flight, crashed
    accepted = {v for v, _, ack, _ in deliveries(crashed) if ack == "accept"}
    consumer = ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": "crash"})
    consumer.subscribe(["crash"])
    again: dict[str, int] = {}
    deadline = time.monotonic() + 10  # a third of the lock duration
    while len(again) + len(accepted) < 8 and time.monotonic() < deadline:
        for message in consumer.poll(1.0) or []:
            again[(message.value() or b"").decode()] = message.delivery_count() or 0
    consumer.close()
    assert set(again) == {f"v{i}" for i in range(8)} - accepted
    assert 2 in again.values()  # the records the crashed member held, delivered a second time
