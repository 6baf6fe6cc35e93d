"""The console's actions, on only with --console-actions: resetting an inactive group's offset
(as kafka-consumer-groups.sh --reset-offsets: refused while the group has members) and deleting
a partition's records (as DeleteRecords), each a JSON POST."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.helpers import wait_until

TOPIC, GROUP = "payments", "ledger"


def start(actions: bool) -> BrokerThread:
    thread = BrokerThread(
        BrokerConfig(port=0, console_listener="127.0.0.1:0", console_actions=actions)
    ).start()
    wait_until(lambda: bool(thread.server.console_urls), "the console listening", deadline_s=30)
    producer = Producer({"bootstrap.servers": thread.bootstrap})
    for n in range(10):
        producer.produce(TOPIC, str(n).encode(), partition=0)
    assert producer.flush(10) == 0
    return thread


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    thread = start(actions=True)
    yield thread
    thread.stop()


def post(
    thread: BrokerThread, path: str, body: Any, content_type: str = "application/json"
) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{thread.server.console_urls[0]}{path}", json.dumps(body).encode(), {"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def committed(thread: BrokerThread) -> dict[tuple[str, int], int]:
    fetched = thread.call(lambda: thread.broker.groups.fetch_offsets(GROUP, None))
    return {(tp.topic, tp.partition): c.offset for tp, c in fetched.items()}


def test_reset_offsets_of_an_inactive_group_and_refused_while_it_has_members(broker: BrokerThread) -> None:
    path = f"/console/api/groups/{GROUP}/reset-offsets"
    assert post(broker, path, {"topic": TOPIC, "partition": 0, "to": "latest"}) == (
        200,
        {"group_id": GROUP, "topic": TOPIC, "partition": 0, "offset": 10},
    )
    assert post(broker, path, {"topic": TOPIC, "partition": 0, "to": 4})[0] == 200
    assert committed(broker) == {(TOPIC, 0): 4}
    assert post(broker, path, {"topic": TOPIC, "partition": 0, "to": 99})[1]["offset"] == 10  # within the log
    member = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    member.subscribe([TOPIC])
    try:
        wait_until(
            lambda: bool(member.poll(0.2) or member.assignment()),
            "a member owning the partition",
            deadline_s=30,
        )
        status, answer = post(broker, path, {"topic": TOPIC, "partition": 0, "to": "earliest"})
        assert status == 409 and "only while it has no members" in answer["error"]
    finally:
        member.close()
    assert post(broker, path, {"topic": TOPIC, "partition": 0, "to": "sometime"})[0] == 400


def test_delete_records_moves_the_log_start(broker: BrokerThread) -> None:
    status, answer = post(
        broker, f"/console/api/topics/{TOPIC}/delete-records", {"partition": 0, "before": 6}
    )
    assert (status, answer["low_watermark"]) == (200, 6)
    assert broker.call(lambda: broker.broker.topics.partition(TOPIC, 0).log_start_offset) == 6  # type: ignore[union-attr]


def test_actions_are_off_unless_asked_and_take_only_json() -> None:
    thread = start(actions=False)
    try:
        path = f"/console/api/topics/{TOPIC}/delete-records"
        assert post(thread, path, {"partition": 0, "before": 5})[0] == 403
    finally:
        thread.stop()
    thread = start(actions=True)
    try:
        path = f"/console/api/topics/{TOPIC}/delete-records"
        assert post(thread, path, {"partition": 0, "before": 5}, "text/plain")[0] == 415
        # A page whose name was rebound to 127.0.0.1 (DNS rebinding), or any other site's page
        for header, value, refused in (
            ("Host", "rebound.example:80", 421),
            ("Origin", "http://evil.example", 403),
        ):
            request = urllib.request.Request(
                f"{thread.server.console_urls[0]}{path}",
                b'{"partition": 0, "before": 5}',
                {"Content-Type": "application/json", header: value},
            )
            with pytest.raises(urllib.error.HTTPError) as answer:
                urllib.request.urlopen(request, timeout=10)
            assert answer.value.code == refused
            assert answer.value.headers["X-Content-Type-Options"] == "nosniff"
        assert thread.call(lambda: thread.broker.topics.partition(TOPIC, 0).log_start_offset) == 0  # type: ignore[union-attr]
    finally:
        thread.stop()


# Malformed action bodies: each a 400 naming what is wrong (the field where there is one).
MALFORMED = [
    ("reset-offsets", b"[]", "a JSON object"),
    ("reset-offsets", b'"x"', "a JSON object"),
    ("reset-offsets", b"", "a JSON object"),
    ("reset-offsets", b'{"partition": 0, "to": "latest"}', "topic"),
    ("reset-offsets", b'{"topic": "payments", "partition": "0", "to": "latest"}', "partition"),
    ("reset-offsets", b'{"topic": "payments", "partition": 99999999999, "to": "latest"}', "partition"),
    ("reset-offsets", b'{"topic": "payments", "partition": 0, "to": 1e400}', "to"),
    ("reset-offsets", b'{"topic": "payments", "partition": 0, "to": [1]}', "reset to"),
    ("delete-records", b'{"partition": 0, "before": "5"}', "before"),
    ("delete-records", b'{"partition": -1}', "partition"),
    ("delete-records", b'{"partition": 0, "before": NaN}', "before"),
    ("delete-records", b"{not json", "not JSON"),
]


def test_malformed_action_bodies_answer_400_naming_the_field(broker: BrokerThread) -> None:
    for action, body, named in MALFORMED:
        where = f"groups/{GROUP}" if action == "reset-offsets" else f"topics/{TOPIC}"
        request = urllib.request.Request(
            f"{broker.server.console_urls[0]}/console/api/{where}/{action}",
            body,
            {"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        answer = refused.value.read().decode()
        assert refused.value.code == 400 and named in json.loads(answer)["error"], (body, answer)
    assert broker.call(lambda: broker.broker.topics.partition(TOPIC, 0).log_start_offset) == 0  # type: ignore[union-attr]
