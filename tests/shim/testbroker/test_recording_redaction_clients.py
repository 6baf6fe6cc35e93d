"""Recordings never hold credentials (protocol.redaction): a SASL/SCRAM and a PLAIN session,
a SCRAM upsert and password configs, recorded with --trace-file and --record-requests, leave no
secret in the trace file, `GET /requests`, the Python API or the DEBUG request log; what the
application produced is still there. The trace file is created 0600."""

from __future__ import annotations

import base64
import concurrent.futures
import hashlib
import json
import logging
import stat
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients

PAYLOAD = b"what the application sent stays visible"
SALT, NEW_PASSWORD, ITERATIONS = b"a-known-salt-0123456789", "carol-new-secret", 8192
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required password="jaas-secret";'


def secrets() -> list[bytes]:
    """Every secret the session sends, as text and in the forms a recording could hold them."""
    salted = hashlib.pbkdf2_hmac("sha256", NEW_PASSWORD.encode(), SALT, ITERATIONS)
    raw = [b"alice-secret", b"bob-secret", NEW_PASSWORD.encode(), SALT, salted, b"jaas-secret"]
    raw += [b"\0bob\0bob-secret", b"key-pass-secret", b"topic-secret-value"]
    forms = set()
    for value in raw:
        forms |= {value, base64.b64encode(value), value.hex().encode()}
    return sorted(forms)


def as_user(broker: BrokerThread, user: str, mechanism: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": f"{user}-secret",
    }


def test_a_recorded_sasl_session_and_scram_upsert_hold_no_secret(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    trace = tmp_path / "trace.jsonl"
    argv = ["--memory", "--listeners", "SASL_PLAINTEXT://127.0.0.1:0", "--control", "127.0.0.1:0"]
    argv += ["--user", "alice:alice-secret", "--user", "bob:bob-secret"]
    argv += ["--record-requests", "1000", "--trace-file", str(trace)]
    broker = BrokerThread(config_from_args(build_parser().parse_args(argv))).start()
    try:
        with caplog.at_level(logging.DEBUG, logger="kafka_shim.requests"):
            producer = Producer(as_user(broker, "alice", "SCRAM-SHA-256"))
            producer.produce("orders", PAYLOAD)
            assert producer.flush(15) == 0
            admin = AdminClient(as_user(broker, "bob", "PLAIN"))
            info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, ITERATIONS)
            upsert = UserScramCredentialUpsertion("carol", info, NEW_PASSWORD.encode(), SALT)
            for future in admin.alter_user_scram_credentials([upsert]).values():
                future.result(15)
            wait_all(admin.create_topics([NewTopic("secretive", 1, 1, config=topic_configs())]))
            broker_configs = ConfigResource(
                "BROKER",
                "0",
                incremental_configs=[
                    ConfigEntry("ssl.key.password", "key-pass-secret", incremental_operation=SET),
                    ConfigEntry(
                        "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                        JAAS,
                        incremental_operation=SET,
                    ),
                    ConfigEntry("log.cleaner.threads", "2", incremental_operation=SET),
                ],
            )
            wait_all(admin.incremental_alter_configs([broker_configs]))
        recorded = broker.requests()
        apis = {entry.api for entry in recorded}
        assert {"SaslAuthenticate", "AlterUserScramCredentials", "CreateTopics"} <= apis
        assert "IncrementalAlterConfigs" in apis
        over_http = read_requests(broker)
    finally:
        broker.stop()
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "kafka_shim.requests")
    as_json = json.dumps([entry.to_json() for entry in recorded])
    held = {
        "trace file": trace.read_bytes(),
        "GET /requests": over_http,
        "Python API": as_json.encode() + repr([entry.request for entry in recorded]).encode(),
        "DEBUG log": logged.encode(),
    }
    for where, text in held.items():
        leaked = [secret for secret in secrets() if secret in text]
        assert not leaked, f"{where} holds {leaked}"
        assert b"[hidden]" in text, where
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    produced = [e for e in recorded if e.api == "Produce"]
    assert any(PAYLOAD in e.request.topic_data[0].partition_data[0].records for e in produced)
    create = next(e for e in recorded if e.api == "CreateTopics").to_json()
    shown = {c["name"]: c["value"] for c in create["request"]["topics"][0]["configs"]}
    # retention.ms is no secret; a key Kafka cannot type is hidden, as Kafka's logger hides it.
    assert shown == {"retention.ms": "60000", "unknown.secret.key": "[hidden]"}
    upserted = next(e for e in recorded if e.api == "AlterUserScramCredentials").to_json()
    (carol,) = upserted["request"]["upsertions"]
    assert (carol["name"], carol["iterations"], carol["salt"], carol["salted_password"]) == (
        "carol",
        ITERATIONS,
        "[hidden]",
        "[hidden]",
    )


SET = AlterConfigOpType.SET


def topic_configs() -> dict[str, str]:
    return {"retention.ms": "60000", "unknown.secret.key": "topic-secret-value"}


def wait_all(futures: dict[Any, Any]) -> None:
    """The requests were answered (a refusal, of an unknown key say, is an answer too)."""
    _, pending = concurrent.futures.wait(list(futures.values()), timeout=15)
    assert not pending


def read_requests(broker: BrokerThread) -> bytes:
    request = urllib.request.Request(f"{broker.server.control_urls[0]}/requests")
    credentials = base64.b64encode(b"alice:alice-secret").decode()
    request.add_header("Authorization", f"Basic {credentials}")
    with urllib.request.urlopen(request, timeout=10) as answer:
        body: bytes = answer.read()
    return body
