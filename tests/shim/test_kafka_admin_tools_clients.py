"""What kafka-metadata-quorum.sh, kafka-delegation-tokens.sh and kafka-configs.sh
--entity-type broker-loggers do, through the Java Admin client they are built on (Kafka's
scripts are not installed here; compat/java/AdminToolsDriver.java makes their Admin calls),
against a broker with a SASL listener and delegation tokens turned on: the quorum described,
a token created, renewed, described, used to log in (SCRAM with tokenauth=true) and expired,
and a broker logger described, set and deleted; and kafka-python's admin client, which has
describe_metadata_quorum, list_config_resources and broker-logger configs too."""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaAdminClient
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

from compat import java_build
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients

DAY, WEEK = 86_400_000, 604_800_000


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerThread]:
    argv = ["--data-dir", str(tmp_path_factory.mktemp("data")), "--listeners", "SASL_PLAINTEXT://127.0.0.1:0"]
    argv += ["--user", "alice:alice-pw", "--config", "delegation.token.secret.key=dev-token-key"]
    started = BrokerThread(config_from_args(build_parser().parse_args(argv))).start()
    yield started
    started.stop()


def admin_tools(broker: BrokerThread) -> dict[str, Any]:
    """Each step's line, by step name."""
    try:
        classpath = java_build.compiled_classpath()
        java = java_build._require_tool("java")
    except java_build.JavaDriverUnavailable as exc:
        raise AssertionError(f"the Java driver is needed (bash .ci/run builds it): {exc}") from exc
    command = {"bootstrap": broker.bootstrap, "user": "alice", "password": "alice-pw"}
    done = subprocess.run(
        [
            java,
            "-XX:TieredStopAtLevel=1",
            "-Xmx256m",
            "-cp",
            classpath,
            "AdminToolsDriver",
            json.dumps(command),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {step["step"]: step for step in map(json.loads, done.stdout.splitlines())}


def test_the_admin_tools_calls(broker: BrokerThread) -> None:
    steps = admin_tools(broker)
    quorum = steps["describe_quorum"]["result"]
    assert (quorum["leader_id"], quorum["leader_epoch"], quorum["observers"]) == (0, 1, 0)
    assert quorum["voters"] == [[0, quorum["high_watermark"]]] and quorum["nodes"] == [[0, 1]]

    created = steps["create_token"]["result"]
    assert (created["owner"], created["requester"], created["renewers"]) == (
        "User:alice",
        "User:alice",
        ["User:bob"],
    )
    assert (created["lifetime_ms"], created["expires_in_ms"]) == (WEEK, DAY)
    assert steps["renew_token"]["error"] is None
    (described,) = steps["describe_tokens"]["result"]
    assert described["token_id"] == created["token_id"]

    assert steps["token_login_lists_topics"]["error"] is None  # logged in as alice with the token
    assert steps["token_login_creates_token"]["error"] == "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"

    loggers = steps["describe_loggers"]["result"]
    assert "root" in loggers and loggers["kafka.server.KafkaApis"].endswith("DYNAMIC_BROKER_LOGGER_CONFIG")
    assert steps["set_logger"]["error"] is None
    assert steps["described_after_set"]["result"] == "DEBUG DYNAMIC_BROKER_LOGGER_CONFIG"
    assert steps["delete_logger"]["error"] is None
    assert steps["described_after_delete"]["result"] == loggers["kafka.server.KafkaApis"]
    assert steps["set_unknown_logger"]["error"] == "INVALID_CONFIG"

    assert steps["expire_token"]["error"] is None
    assert steps["describe_after_expire"]["result"] == []


@pytest.fixture
def restored_kafka_log_level() -> Iterator[None]:
    storage = logging.getLogger("kafka_shim.storage")
    level = storage.level
    yield
    storage.setLevel(level)


def test_kafka_pythons_admin(broker: BrokerThread, restored_kafka_log_level: None) -> None:
    """kafka-python over the SASL listener: the quorum, the config resources, a broker logger."""
    admin = KafkaAdminClient(
        bootstrap_servers=broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_plain_username="alice",
        sasl_plain_password="alice-pw",
    )
    try:
        (topic,) = admin.describe_metadata_quorum()["topics"]
        (partition,) = topic["partitions"]
        assert (topic["topic_name"], partition["leader_id"], partition["error"]) == (
            "__cluster_metadata",
            0,
            None,
        )
        listed = admin.list_config_resources()
        assert listed["broker"] == ["0"] and listed["broker_logger"] == ["0"]
        kafka_log = ConfigResource(
            ConfigResourceType.BROKER_LOGGER, "0", {"kafka.log": (AlterConfigOp.SET, "TRACE")}
        )
        assert admin.alter_configs([kafka_log]) == {"broker_logger": {"0": "OK"}}
        asked = ConfigResource(ConfigResourceType.BROKER_LOGGER, "0", {"kafka.log": None})
        described = admin.describe_configs([asked], config_filter="all")["broker_logger"]["0"]["kafka.log"]
        assert (described["value"], described["config_source"]) == ("TRACE", "DYNAMIC_BROKER_LOGGER_CONFIG")
    finally:
        admin.close()
