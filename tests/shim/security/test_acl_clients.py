"""ACLs with unmodified clients over real sockets: each client's admin API creates, lists
and deletes ACLs, and a principal the ACLs leave out gets the authorization error at once.

On a PLAINTEXT listener every client is User:ANONYMOUS, as in Kafka. The broker runs the
built-in authorizer with allow.everyone.if.no.acl.found=true, so ANONYMOUS may administer
ACLs (the cluster has none) while the ACLs created decide for the topics and groups they
name: ANONYMOUS may write and read topic A and read group G; topic B and group H have
ACLs for User:bob only, which leaves ANONYMOUS out.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.helpers import java_driver
from tests.wire import WireClient

pytestmark = pytest.mark.clients

REPO = Path(__file__).resolve().parents[3]
ME = "User:ANONYMOUS"
TIMEOUT_S = 10


@pytest.fixture
def bootstrap() -> Iterator[str]:
    config = BrokerConfig(
        host="127.0.0.1",
        port=0,
        authorizer_class_name=STANDARD_AUTHORIZER,
        allow_everyone_if_no_acl_found=True,
    )
    broker = BrokerThread(config).start()
    yield broker.bootstrap
    broker.stop()


def test_kafka_python(bootstrap: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        NewTopic,
        ResourcePattern,
        ResourcePatternFilter,
        ResourceType,
    )
    from kafka.errors import GroupAuthorizationFailedError, NoError, TopicAuthorizationFailedError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
    admin.create_topics([NewTopic("A", 1, 1), NewTopic("B", 1, 1)])

    def acl(principal: str, operation: ACLOperation, kind: ResourceType, name: str) -> ACL:
        return ACL(principal, "*", operation, ACLPermissionType.ALLOW, ResourcePattern(kind, name))

    wanted = [
        acl(ME, ACLOperation.WRITE, ResourceType.TOPIC, "A"),
        acl(ME, ACLOperation.READ, ResourceType.TOPIC, "A"),
        acl(ME, ACLOperation.READ, ResourceType.GROUP, "G"),
        acl("User:bob", ACLOperation.WRITE, ResourceType.TOPIC, "B"),
        acl("User:bob", ACLOperation.READ, ResourceType.GROUP, "H"),
        ACL(
            "User:bob",
            "*",
            ACLOperation.DESCRIBE,
            ACLPermissionType.ALLOW,
            ResourcePattern(ResourceType.TOPIC, "B-", ACLResourcePatternType.PREFIXED),
        ),
    ]
    created = admin.create_acls(wanted)
    assert (len(created["succeeded"]), created["failed"]) == (6, [])
    any_pattern = ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)
    listed, error = admin.describe_acls(
        ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY, any_pattern)
    )
    assert error is NoError
    assert {
        (a.principal, a.operation, a.resource_pattern.resource_name, a.resource_pattern.pattern_type)
        for a in listed
    } == {
        (a.principal, a.operation, a.resource_pattern.resource_name, a.resource_pattern.pattern_type)
        for a in wanted
    }

    producer = KafkaProducer(bootstrap_servers=bootstrap, max_block_ms=TIMEOUT_S * 1000)
    try:
        assert producer.send("A", b"allowed").get(TIMEOUT_S).offset == 0
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send("B", b"denied").get(TIMEOUT_S)
    finally:
        producer.close()
    denied = KafkaConsumer(
        "A", bootstrap_servers=bootstrap, group_id="H", consumer_timeout_ms=TIMEOUT_S * 1000
    )
    try:
        with pytest.raises(GroupAuthorizationFailedError):
            next(iter(denied))
    finally:
        denied.close()
    allowed = KafkaConsumer(
        "A",
        bootstrap_servers=bootstrap,
        group_id="G",
        auto_offset_reset="earliest",
        consumer_timeout_ms=TIMEOUT_S * 1000,
    )
    try:
        assert next(iter(allowed)).value == b"allowed"
    finally:
        allowed.close()

    bobs = ACLFilter("User:bob", None, ACLOperation.ANY, ACLPermissionType.ANY, any_pattern)
    [(_, deleted, error)] = admin.delete_acls([bobs])
    assert (len(deleted), error) == (3, NoError)
    left, _ = admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY, any_pattern))
    assert {a.principal for a in left} == {ME}
    admin.close()


def test_confluent_kafka(bootstrap: str) -> None:
    from confluent_kafka import Consumer, KafkaError, Message, Producer
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic("A", 1, 1), NewTopic("B", 1, 1)]).values():
        future.result(TIMEOUT_S)
    literal, allow = ResourcePatternType.LITERAL, AclPermissionType.ALLOW
    wanted = [
        AclBinding(ResourceType.TOPIC, "A", literal, ME, "*", AclOperation.WRITE, allow),
        AclBinding(ResourceType.TOPIC, "A", literal, ME, "*", AclOperation.READ, allow),
        AclBinding(ResourceType.GROUP, "G", literal, ME, "*", AclOperation.READ, allow),
        AclBinding(ResourceType.TOPIC, "B", literal, "User:bob", "*", AclOperation.WRITE, allow),
        AclBinding(ResourceType.GROUP, "H", literal, "User:bob", "*", AclOperation.READ, allow),
        AclBinding(
            ResourceType.TOPIC,
            "B-",
            ResourcePatternType.PREFIXED,
            "User:bob",
            "*",
            AclOperation.DESCRIBE,
            allow,
        ),
    ]
    for future in admin.create_acls(wanted).values():
        assert future.result(TIMEOUT_S) is None

    def any_acl(principal: str | None = None) -> AclBindingFilter:
        # None matches any name, principal and host (librdkafka's filter; its stubs say str).
        kinds = (ResourceType.ANY, ResourcePatternType.ANY, AclOperation.ANY, AclPermissionType.ANY)
        return AclBindingFilter(kinds[0], None, kinds[1], principal, None, kinds[2], kinds[3])  # type: ignore[arg-type]

    everything = any_acl()
    assert sorted(map(str, admin.describe_acls(everything).result(TIMEOUT_S))) == sorted(map(str, wanted))

    outcomes: dict[str, KafkaError | None] = {}

    def delivered(error: KafkaError | None, message: Message) -> None:
        outcomes[message.topic() or ""] = error

    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce("A", b"allowed", on_delivery=delivered)
    producer.produce("B", b"denied", on_delivery=delivered)
    assert producer.flush(TIMEOUT_S) == 0
    denied_write = outcomes["B"]
    assert outcomes["A"] is None and denied_write is not None
    assert denied_write.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    def first(group: str) -> Message:
        consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest"}
        )
        consumer.subscribe(["A"])
        try:
            for _ in range(TIMEOUT_S * 2):
                message = consumer.poll(0.5)
                if message is not None:
                    return message
            raise AssertionError(f"nothing from group {group} in {TIMEOUT_S} s")
        finally:
            consumer.close()

    refused = first("H").error()
    assert refused is not None and refused.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    allowed = first("G")
    assert (allowed.error(), allowed.value()) == (None, b"allowed")

    [deleted] = admin.delete_acls([any_acl("User:bob")]).values()
    assert len(deleted.result(TIMEOUT_S)) == 3
    assert {b.principal for b in admin.describe_acls(everything).result(TIMEOUT_S)} == {ME}


def test_aiokafka_gets_the_authorization_errors(bootstrap: str) -> None:
    """aiokafka's admin client has no ACL API (0.14): kafka-python's sets the ACLs up."""
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.errors import GroupAuthorizationFailedError, TopicAuthorizationFailedError
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        KafkaAdminClient,
        NewTopic,
        ResourcePattern,
        ResourceType,
    )

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("A", 1, 1), NewTopic("B", 1, 1)])
    grants = [
        (ME, ACLOperation.WRITE, ResourceType.TOPIC, "A"),
        (ME, ACLOperation.READ, ResourceType.TOPIC, "A"),
        (ME, ACLOperation.READ, ResourceType.GROUP, "G"),
        ("User:bob", ACLOperation.WRITE, ResourceType.TOPIC, "B"),
        ("User:bob", ACLOperation.READ, ResourceType.GROUP, "H"),
    ]
    acls = [
        ACL(p, "*", op, ACLPermissionType.ALLOW, ResourcePattern(kind, name)) for p, op, kind, name in grants
    ]
    assert admin.create_acls(acls)["failed"] == []
    admin.close()

    async def scenario() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)
        await producer.start()
        try:
            assert (await producer.send_and_wait("A", b"allowed")).offset == 0
            with pytest.raises(TopicAuthorizationFailedError):
                await producer.send_and_wait("B", b"denied")
        finally:
            await producer.stop()
        denied = AIOKafkaConsumer("A", bootstrap_servers=bootstrap, group_id="H")
        try:
            with pytest.raises(GroupAuthorizationFailedError):
                await asyncio.wait_for(denied.start(), TIMEOUT_S)
        finally:
            await denied.stop()
        allowed = AIOKafkaConsumer(
            "A", bootstrap_servers=bootstrap, group_id="G", auto_offset_reset="earliest"
        )
        await allowed.start()
        try:
            assert (await asyncio.wait_for(allowed.getone(), TIMEOUT_S)).value == b"allowed"
        finally:
            await allowed.stop()

    asyncio.run(scenario())


def test_java_client(bootstrap: str) -> None:
    events = java_driver(
        {
            "op": "acls",
            "bootstrap": bootstrap,
            "topic": "orders",
            "group": "G",
            "other_group": "H",
            "timeout_s": TIMEOUT_S,
        }
    )
    steps = {o["step"]: (o["error"], o["result"]) for o in events if o["event"] == "acl_step"}
    mine = [
        "GROUP:LITERAL:G:User:ANONYMOUS:READ:ALLOW",
        "TOPIC:LITERAL:orders:User:ANONYMOUS:READ:ALLOW",
        "TOPIC:LITERAL:orders:User:ANONYMOUS:WRITE:ALLOW",
    ]
    bobs = [
        "GROUP:LITERAL:H:User:bob:READ:ALLOW",
        "TOPIC:LITERAL:orders-denied:User:bob:WRITE:ALLOW",
        "TOPIC:PREFIXED:orders-:User:bob:DESCRIBE:ALLOW",
    ]
    assert steps == {
        "create_topics": (None, None),
        "create_acls": (None, 6),
        "describe_acls": (None, sorted(mine + bobs)),
        "produce_allowed": (None, 0),
        "produce_denied": ("TOPIC_AUTHORIZATION_FAILED", None),
        "consume_allowed": (None, "v"),
        "consume_denied": ("GROUP_AUTHORIZATION_FAILED", None),
        "delete_acls": (None, bobs),
        "describe_acls_after": (None, mine),
    }


def start_cli(data_dir: Path) -> tuple[subprocess.Popen[str], str]:
    """`python -m kafka_shim` on a data directory, with the authorizer: (process, bootstrap)."""
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "kafka_shim", "--port", "0", "--data-dir", str(data_dir)),
            *("--config", f"authorizer.class.name={STANDARD_AUTHORIZER}"),
            *("--config", "allow.everyone.if.no.acl.found=true"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    found = re.search(r"listening on (\S+:\d+)", proc.stdout.readline())
    assert found, proc.stderr.read() if proc.stderr else ""
    return proc, found.group(1)


def stop_cli(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    return err


def test_acls_outlive_a_broker_restart_on_its_data_directory(tmp_path: Path) -> None:
    from confluent_kafka import KafkaError, Producer
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
    )
    from confluent_kafka.admin import ResourceType as Kind

    proc, bootstrap = start_cli(tmp_path)
    try:
        bob_only = AclBinding(
            Kind.TOPIC,
            "B",
            ResourcePatternType.LITERAL,
            "User:bob",
            "*",
            AclOperation.WRITE,
            AclPermissionType.ALLOW,
        )
        admin = AdminClient({"bootstrap.servers": bootstrap})
        [created] = admin.create_acls([bob_only]).values()
        created.result(TIMEOUT_S)
    finally:
        err = stop_cli(proc)
    assert "Traceback" not in err
    proc, bootstrap = start_cli(tmp_path)
    try:
        outcomes: list[KafkaError | None] = []
        producer = Producer({"bootstrap.servers": bootstrap})
        producer.produce("B", b"denied", on_delivery=lambda error, message: outcomes.append(error))
        producer.flush(TIMEOUT_S)
        [refused] = outcomes
        assert refused is not None and refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        err = stop_cli(proc)
    assert "Principal = User:ANONYMOUS is Denied operation = DESCRIBE" in err


def test_kcat_gets_the_authorization_errors(bootstrap: str) -> None:
    """kcat has no admin API: kafka-python's sets the ACLs up."""
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        KafkaAdminClient,
        NewTopic,
        ResourcePattern,
        ResourceType,
    )

    assert shutil.which("kcat"), "kcat is not installed: apt-get install kcat (bash .ci/run does)"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("A", 1, 1), NewTopic("B", 1, 1)])
    grants = [(ResourceType.TOPIC, "B", ACLOperation.WRITE), (ResourceType.GROUP, "H", ACLOperation.READ)]
    acls = [
        ACL("User:bob", "*", op, ACLPermissionType.ALLOW, ResourcePattern(kind, name))
        for kind, name, op in grants
    ]
    assert admin.create_acls(acls)["failed"] == []
    admin.close()

    def kcat(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["kcat", "-b", bootstrap, *args], input="x\n", capture_output=True, text=True, timeout=30
        )

    assert kcat("-P", "-t", "A").returncode == 0
    denied_write = kcat("-P", "-t", "B")
    assert denied_write.returncode == 1 and "Topic authorization failed" in denied_write.stderr
    denied_group = kcat("-G", "H", "A", "-e")
    assert denied_group.returncode == 1 and "Group authorization failed" in denied_group.stderr


def test_an_acl_request_naming_the_unknown_code_closes_only_its_connection(
    bootstrap: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka cannot parse a CreateAcls naming resource type 0 (UNKNOWN) and closes."""
    unknown = {
        "resource_type": 0,
        "resource_name": "t",
        "resource_pattern_type": 3,
        "principal": ME,
        "host": "*",
        "operation": 3,
        "permission_type": 3,
    }
    with WireClient(bootstrap) as bystander, WireClient(bootstrap) as offender:
        with caplog.at_level(logging.WARNING, logger="kafka_shim.server"):
            frame = offender.frame(30, 3, {"creations": [unknown]})
            offender.sock.sendall(struct.pack(">i", len(frame)) + frame)
            assert offender.is_closed_by_peer()
        assert (
            bystander.request(30, 3, {"creations": [unknown | {"resource_type": 2}]}).results[0].error_code
            == 0
        )
    closing = [r.getMessage() for r in caplog.records if "closing connection" in r.getMessage()]
    assert (
        len(closing) == 1
        and "invalid CreateAcls v3 request: CreatableAcls contains UNKNOWN elements" in closing[0]
    )
