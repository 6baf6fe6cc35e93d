"""How a broker process reaches another over their shared listeners (shim.processes.peer_route):
the listener chosen, and calls through TLS and SASL logins answered by a real broker, or
refused with the reason named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from kafka_shim.protocol.messages.metadata import API as METADATA
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.net.running import BrokerThread
from kafka_shim.shim.processes.peer import PeerCallError, call
from kafka_shim.shim.processes.peer_route import PeerLogin, PeerRoute, peer_route
from kafka_shim.shim.security.dev_certs import DEFAULT_HOSTS, write_dev_certs

NO_TOPICS = {"topics": [], "allow_auto_topic_creation": False}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_dev_certs(tmp_path_factory.mktemp("certs"), DEFAULT_HOSTS, "client", 2)


def settings(certs: dict[str, Path], listeners: str, *extra: str) -> BrokerConfig:
    argv = ["--memory", "--listeners", listeners, "--config", f"ssl.keystore.location={certs['broker']}"]
    argv += ["--config", f"ssl.truststore.location={certs['ca']}", *extra]
    return config_from_args(build_parser().parse_args(argv))


def chosen(config: BrokerConfig) -> tuple[str, bool, str | None] | None:
    route = peer_route(config, config.listener_endpoints())
    if route is None:
        return None
    mechanism = route.login.mechanism if route.login is not None else None
    return route.listener, route.ssl_context is not None, mechanism


@pytest.mark.parametrize(
    ("listeners", "extra", "expected"),
    [
        # PLAINTEXT wherever it is: nothing to pass.
        ("SASL_SSL://:0,PLAINTEXT://:0", [], ("PLAINTEXT", False, None)),
        # SASL as the first --user, SCRAM before PLAIN; TLS trusting the brokers' chain.
        ("SASL_PLAINTEXT://:0", ["--user", "a:p"], ("SASL_PLAINTEXT", False, "SCRAM-SHA-256")),
        ("SASL_SSL://:0", ["--user", "a:p"], ("SASL_SSL", True, "SCRAM-SHA-256")),
        (
            "SASL_PLAINTEXT://:0",
            ["--user", "a:p", "--config", "sasl.enabled.mechanisms=PLAIN"],
            ("SASL_PLAINTEXT", False, "PLAIN"),
        ),
        ("SSL://:0", [], ("SSL", True, None)),
        # What a broker process cannot pass is skipped: SASL without a user, a client certificate.
        ("SASL_PLAINTEXT://:0,SSL://:0", [], ("SSL", True, None)),
        ("SSL://:0,SASL_SSL://:0", ["--config", "ssl.client.auth=required", "--user", "a:p"], None),
        ("SASL_PLAINTEXT://:0", [], None),
    ],
)
def test_the_route_is_the_first_listener_a_broker_process_can_pass(
    certs: dict[str, Path], listeners: str, extra: list[str], expected: tuple[str, bool, str | None] | None
) -> None:
    assert chosen(settings(certs, listeners, *extra)) == expected


@pytest.fixture(scope="module")
def secured(certs: dict[str, Path]) -> Iterator[tuple[tuple[str, int], BrokerConfig]]:
    """A broker with one SASL_SSL listener and the user alice."""
    config = settings(certs, "SASL_SSL://127.0.0.1:0", "--user", "alice:alice-pw")
    broker = BrokerThread(config).start()
    try:
        host, port = broker.bootstrap.rsplit(":", 1)
        yield (host, int(port)), config
    finally:
        broker.stop()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"])
def test_a_call_through_tls_and_a_login_is_answered(
    secured: tuple[tuple[str, int], BrokerConfig], mechanism: str
) -> None:
    address, config = secured
    route = peer_route(config, config.listener_endpoints())
    assert route is not None and route.login is not None
    login = PeerRoute(route.listener, route.ssl_context, PeerLogin(mechanism, "alice", "alice-pw"))
    answer = trio.run(call, address, METADATA, 12, NO_TOPICS, 5.0, login)
    assert [broker.port for broker in answer.brokers] == [address[1]]


def test_a_refused_login_is_named(secured: tuple[tuple[str, int], BrokerConfig]) -> None:
    address, config = secured
    route = peer_route(config, config.listener_endpoints())
    assert route is not None
    wrong = PeerRoute(route.listener, route.ssl_context, PeerLogin("SCRAM-SHA-256", "alice", "wrong"))
    refused = "refused the SCRAM-SHA-256 login as alice: Authentication failed"
    with pytest.raises(PeerCallError, match=refused):
        trio.run(call, address, METADATA, 12, NO_TOPICS, 5.0, wrong)


def test_a_certificate_of_another_ca_is_refused(
    secured: tuple[tuple[str, int], BrokerConfig], tmp_path: Path
) -> None:
    address, _ = secured
    other = settings(write_dev_certs(tmp_path, DEFAULT_HOSTS, "client", 2), "SASL_SSL://:0", "--user", "a:p")
    route = peer_route(other, other.listener_endpoints())
    with pytest.raises(PeerCallError, match=r"Metadata to 127\.0\.0\.1:\d+: .*CERTIFICATE_VERIFY_FAILED"):
        trio.run(call, address, METADATA, 12, NO_TOPICS, 5.0, route)
