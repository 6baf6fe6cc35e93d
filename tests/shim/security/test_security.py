"""TLS, SASL and mutual TLS over real sockets with an unmodified client (librdkafka through
confluent-kafka), and the raw-frame edges: nothing before authentication, wrong protocols."""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import struct
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.security.dev_certs import write_dev_certs
from kafka_shim.shim.server import BrokerThread
from tests.wire import WireClient, encode_request

pytestmark = pytest.mark.clients

API_VERSIONS, METADATA, SASL_HANDSHAKE = 18, 3, 17
PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SSL"
LISTENERS = ",".join(
    f"{name}://127.0.0.1:0" for name in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL", "MTLS")
)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_dev_certs(tmp_path_factory.mktemp("certs"), ("localhost", "127.0.0.1"), "client", 2)


@pytest.fixture(scope="module")
def broker(certs: dict[str, Path]) -> Iterator[BrokerThread]:
    argv = ["--memory", "--listeners", LISTENERS, "--user", "alice:alice-secret"]
    for pair in (
        f"listener.security.protocol.map={PROTOCOL_MAP}",
        f"ssl.keystore.location={certs['broker']}",
        f"ssl.truststore.location={certs['ca']}",
        "listener.name.mtls.ssl.client.auth=required",
        "listener.name.mtls.ssl.principal.mapping.rules=RULE:^CN=(.*)$/$1/,DEFAULT",
    ):
        argv += ["--config", pair]
    started = BrokerThread(config_from_args(build_parser().parse_args(argv))).start()
    yield started
    started.stop()


def address(broker: BrokerThread, listener: str) -> tuple[str, int]:
    (bound,) = [each.bound for each in broker.listeners if each.name == listener]
    return bound


def bootstrap(broker: BrokerThread, listener: str) -> str:
    host, port = address(broker, listener)
    return f"{host}:{port}"


def client_config(
    broker: BrokerThread, certs: dict[str, Path], listener: str, mechanism: str | None
) -> dict[str, Any]:
    config: dict[str, Any] = {"bootstrap.servers": bootstrap(broker, listener)}
    protocol = {"MTLS": "SSL"}.get(listener, listener)
    config["security.protocol"] = protocol.lower()
    if "SSL" in protocol:
        config["ssl.ca.location"] = str(certs["ca"])
    if listener == "MTLS":
        config |= {
            "ssl.certificate.location": str(certs["client_cert"]),
            "ssl.key.location": str(certs["client_key"]),
        }
    if mechanism is not None:
        config |= {"sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": "alice-secret"}
    return config


def round_trip_with_group(config: dict[str, Any]) -> None:
    topic = f"secure-{uuid.uuid4().hex[:8]}"
    producer = Producer(config)
    for n in range(10):
        producer.produce(topic, f"m{n}".encode())
    assert producer.flush(15) == 0
    consumer = Consumer(
        config | {"group.id": f"g-{topic}", "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 20
    while len(got) < 10 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            got.append(message.value() or b"")
    committed = consumer.commit(asynchronous=False)
    consumer.close()
    assert got == [f"m{n}".encode() for n in range(10)]
    assert committed is not None and committed[0].offset == 10


@pytest.mark.parametrize(
    ("listener", "mechanism"),
    [
        ("SSL", None),
        ("MTLS", None),
        ("SASL_PLAINTEXT", "PLAIN"),
        ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
        ("SASL_SSL", "SCRAM-SHA-512"),
        ("SASL_SSL", "PLAIN"),
    ],
)
def test_round_trip_and_group_commit(
    broker: BrokerThread, certs: dict[str, Path], listener: str, mechanism: str | None
) -> None:
    round_trip_with_group(client_config(broker, certs, listener, mechanism))


@pytest.mark.parametrize("password", ["wrong", None], ids=["wrong-password", "unknown-user"])
def test_bad_credentials_fail_fast_with_the_authentication_error(
    broker: BrokerThread, certs: dict[str, Path], caplog: pytest.LogCaptureFixture, password: str | None
) -> None:
    config = client_config(broker, certs, "SASL_SSL", "SCRAM-SHA-256")
    config |= {"sasl.password": "wrong"} if password else {"sasl.username": "mallory"}
    errors: list[KafkaError] = []
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="kafka_shim.server"):
        producer = Producer(config | {"error_cb": errors.append})
        producer.poll(0)
        while not errors and time.monotonic() - started < 10:
            producer.poll(0.1)
        time.sleep(1.0)  # what librdkafka does next: reconnects with a growing backoff, no storm
        producer.poll(0)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "Authentication failed during authentication due to invalid credentials" in errors[0].str()
    failures = [r.getMessage() for r in caplog.records if "SASL authentication failed" in r.getMessage()]
    assert 1 <= len(failures) <= 8, failures  # reconnect.backoff.ms 100, doubling, jittered
    assert "mechanism SCRAM-SHA-256" in failures[0] and "127.0.0.1:" in failures[0]
    del producer


def test_a_user_created_through_the_admin_api_then_connects(
    broker: BrokerThread, certs: dict[str, Path]
) -> None:
    admin = AdminClient(client_config(broker, certs, "SASL_SSL", "SCRAM-SHA-512"))
    upsert = UserScramCredentialUpsertion(
        "bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), b"bob-pw"
    )
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(timeout=10)
    futures = admin.describe_user_scram_credentials(["bob"])
    assert isinstance(futures, dict)
    described = futures["bob"].result(timeout=10)
    assert [(i.mechanism, i.iterations) for i in described.scram_credential_infos] == [
        (ScramMechanism.SCRAM_SHA_256, 8192)
    ]
    config = client_config(broker, certs, "SASL_PLAINTEXT", "SCRAM-SHA-256")
    round_trip_with_group(config | {"sasl.username": "bob", "sasl.password": "bob-pw"})
    errors: list[KafkaError] = []  # SCRAM-SHA-512 was not created for bob
    refused = Producer(
        config
        | {"sasl.username": "bob", "sasl.password": "bob-pw", "sasl.mechanism": "SCRAM-SHA-512"}
        | {"error_cb": errors.append}
    )
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        refused.poll(0.1)
    del refused  # no client left retrying in the background
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION


def raw_request(api_key: int, version: int, body: dict[str, Any]) -> bytes:
    payload = encode_request(api_key, version, 1, body)
    return struct.pack(">i", len(payload)) + payload


def first_bytes(sock: socket.socket) -> bytes:
    """What the broker sends before closing: nothing (a reset counts as nothing too)."""
    sock.settimeout(5)
    try:
        return sock.recv(4)
    except (ConnectionResetError, ssl.SSLError):
        return b""


def closed_with_one_line(
    caplog: pytest.LogCaptureFixture, connect: Any, payload: bytes, reason: str, bystander: str
) -> None:
    with caplog.at_level(logging.WARNING, logger="kafka_shim.server"):
        offender = connect()
        peer = "{}:{}".format(*offender.getsockname()[:2])
        offender.sendall(payload)
        assert first_bytes(offender) == b""
        offender.close()
        with WireClient(bystander) as other:  # the broker keeps serving others
            assert other.request(API_VERSIONS, 3, {}).error_code == ErrorCode.NONE
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(reason in r.getMessage() for r in caplog.records):
            time.sleep(0.02)
    lines = [r.getMessage() for r in caplog.records if f"closing connection from {peer}:" in r.getMessage()]
    assert len(lines) == 1 and reason in lines[0], lines


def test_nothing_of_the_data_path_before_authentication(
    broker: BrokerThread, caplog: pytest.LogCaptureFixture
) -> None:
    closed_with_one_line(
        caplog,
        lambda: socket.create_connection(address(broker, "SASL_PLAINTEXT")),
        raw_request(METADATA, 9, {"topics": None, "allow_auto_topic_creation": True}),
        "Unexpected Kafka request of type Metadata during SASL handshake",
        bootstrap(broker, "PLAINTEXT"),
    )


def test_a_frame_past_sasl_max_receive_size_before_authentication_closes_at_its_header(
    broker: BrokerThread, certs: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """As Kafka's SaslServerAuthenticator: an unauthenticated peer announcing more than
    sasl.server.max.receive.size (512 KiB) is closed on its 4-byte header, before any of the
    body is read or reserved; an authenticated client may then send frames up to
    socket.request.max.bytes (a 600 KiB record here)."""
    for _ in range(3):
        closed_with_one_line(
            caplog,
            lambda: socket.create_connection(address(broker, "SASL_PLAINTEXT")),
            struct.pack(">i", 100 << 20),  # the header alone: the broker must not wait for the body
            "frame length 104857600 outside 0..524288 (sasl.server.max.receive.size before authentication)",
            bootstrap(broker, "PLAINTEXT"),
        )
        caplog.clear()
    producer = Producer(client_config(broker, certs, "SASL_PLAINTEXT", "PLAIN"))
    delivered: list[object] = []
    producer.produce(
        "large-after-login", b"x" * (600 << 10), on_delivery=lambda err, msg: delivered.append(err)
    )
    assert producer.flush(15) == 0 and delivered == [None]


def test_plaintext_client_on_a_tls_port_is_closed_cleanly(
    broker: BrokerThread, caplog: pytest.LogCaptureFixture
) -> None:
    closed_with_one_line(
        caplog,
        lambda: socket.create_connection(address(broker, "SSL")),
        raw_request(API_VERSIONS, 3, {}),
        "TLS handshake failed on TLS listener SSL (a plaintext client?)",
        bootstrap(broker, "PLAINTEXT"),
    )


def client_hello() -> bytes:
    """The first bytes a TLS client sends."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    with contextlib.suppress(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def test_tls_client_on_a_plaintext_port_is_closed_cleanly(
    broker: BrokerThread, caplog: pytest.LogCaptureFixture
) -> None:
    closed_with_one_line(
        caplog,
        lambda: socket.create_connection(address(broker, "PLAINTEXT")),
        client_hello(),
        "(a TLS client on a plaintext listener?)",
        bootstrap(broker, "PLAINTEXT"),
    )


def test_mutual_tls_refuses_a_client_without_a_certificate(
    broker: BrokerThread, certs: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    context = ssl.create_default_context(cafile=str(certs["ca"]))
    with (
        caplog.at_level(logging.WARNING, logger="kafka_shim.server"),
        socket.create_connection(address(broker, "MTLS")) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        # TLS 1.3: the server checks the certificate after the client's handshake ended.
        with contextlib.suppress(ssl.SSLError, ConnectionResetError):
            tls.sendall(raw_request(API_VERSIONS, 3, {}))
        assert first_bytes(tls) == b""
    assert any("TLS handshake failed on TLS listener MTLS" in r.getMessage() for r in caplog.records)


def test_mutual_tls_principal_is_the_mapped_certificate_subject(
    broker: BrokerThread, certs: dict[str, Path]
) -> None:
    (mtls,) = [each.security for each in broker.listeners if each.name == "MTLS"]
    assert mtls is not None
    pem = certs["client_cert"].read_text()
    assert mtls.certificate_principal(ssl.PEM_cert_to_DER_cert(pem)) == "User:client"  # RULE:^CN=(.*)$/$1/
    (plain_tls,) = [each.security for each in broker.listeners if each.name == "SSL"]
    assert (
        plain_tls is not None
        and plain_tls.certificate_principal(ssl.PEM_cert_to_DER_cert(pem)) == "User:CN=client"
    )
    assert plain_tls.certificate_principal(None) == "User:ANONYMOUS"


def test_the_sasl_v0_handshake_carries_bare_tokens() -> None:
    """kafka-python's and old clients' path: SaslHandshake v0, then the token as a bare frame."""
    config = config_from_args(
        build_parser().parse_args(
            ["--memory", "--user", "u:p", "--listeners", "SASL_PLAINTEXT://127.0.0.1:0"]
        )
    )
    started = BrokerThread(config).start()
    try:
        with WireClient(started.bootstrap) as client:
            assert client.request(SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"}).error_code == ErrorCode.NONE
            client.send_raw(b"\0u\0p")
            assert client.receive_frame() == b""
            assert client.request(METADATA, 9, {"topics": [], "allow_auto_topic_creation": False}).brokers
    finally:
        started.stop()


def test_sessions_expire_and_librdkafka_reauthenticates(caplog: pytest.LogCaptureFixture) -> None:
    """KIP-368: with connections.max.reauth.ms the client re-authenticates on its open
    connection before the session ends, and keeps producing."""
    argv = ["--memory", "--listeners", "SASL_PLAINTEXT://127.0.0.1:0", "--user", "alice:alice-secret"]
    started = BrokerThread(
        config_from_args(build_parser().parse_args([*argv, "--config", "connections.max.reauth.ms=1500"]))
    ).start()
    config = {
        "bootstrap.servers": started.bootstrap,
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
    }
    try:
        with caplog.at_level(logging.DEBUG, logger="kafka_shim.requests"):
            producer = Producer(config)
            # Produce for three session lifetimes and then until the handshakes show up: a loaded
            # machine can spend the whole window before the first login; the deadline only bounds a hang.
            window_ends = time.monotonic() + 4.5
            deadline = time.monotonic() + 60
            sent = 0
            handshakes: list[logging.LogRecord] = []
            while (
                time.monotonic() < window_ends or len(handshakes) < 3 or sent <= 10
            ) and time.monotonic() < deadline:
                producer.produce("reauth", b"x")
                sent += 1
                producer.poll(0.2)
                handshakes = [r for r in caplog.records if r.getMessage().startswith("SaslHandshake")]
            assert producer.flush(30) == 0
        expired = [r for r in caplog.records if "expired (connections.max.reauth.ms)" in r.getMessage()]
        assert len(handshakes) >= 3, "one login and re-authentications every ~1.5 s"
        assert not expired
        assert started.broker.topics.get("reauth") is not None and sent > 10
    finally:
        started.stop()


def test_the_request_trace_never_shows_credentials(caplog: pytest.LogCaptureFixture) -> None:
    argv = ["--memory", "--listeners", "SASL_PLAINTEXT://127.0.0.1:0", "--user", "u:hunter2"]
    started = BrokerThread(config_from_args(build_parser().parse_args(argv))).start()
    try:
        with (
            caplog.at_level(logging.DEBUG, logger="kafka_shim.requests"),
            WireClient(started.bootstrap) as client,
        ):
            assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == ErrorCode.NONE
            assert client.request(36, 2, {"auth_bytes": b"\0u\0hunter2"}).error_code == ErrorCode.NONE
    finally:
        started.stop()
    traced = [r.getMessage() for r in caplog.records if r.name == "kafka_shim.requests"]
    assert any(line.startswith("SaslAuthenticate v2") for line in traced)
    assert not any("hunter2" in line for line in traced)
