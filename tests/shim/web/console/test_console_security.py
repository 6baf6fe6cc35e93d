"""The console is secured as the listeners are: over TLS with a TLS listener's keystore, behind
HTTP Basic credentials of a SASL user where a listener speaks SASL, and within the authorizer's
DESCRIBE on the cluster (as User:ANONYMOUS without SASL); with neither SASL nor an authorizer
it asks nothing (the other tests)."""

from __future__ import annotations

import base64
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.security.authorizer import (
    ANONYMOUS,
    CLUSTER_NAME,
    AclBinding,
    AclFilter,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from kafka_shim.shim.security.dev_certs import write_dev_certs
from kafka_shim.shim.server import BrokerThread
from tests.helpers import wait_until


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_dev_certs(tmp_path_factory.mktemp("certs"), ("localhost", "127.0.0.1"), "client", 2)


@pytest.fixture(scope="module")
def broker(certs: dict[str, Path]) -> Iterator[BrokerThread]:
    argv = ["--memory", "--listeners", "SASL_SSL://127.0.0.1:0", "--console", "127.0.0.1:0"]
    argv += ["--user", "admin:admin-secret", "--user", "bob:bob-secret"]
    for pair in (
        "listener.security.protocol.map=SASL_SSL:SASL_SSL",
        f"ssl.keystore.location={certs['broker']}",
        f"ssl.truststore.location={certs['ca']}",
        f"authorizer.class.name={STANDARD_AUTHORIZER}",
        "super.users=User:admin",
    ):
        argv += ["--config", pair]
    started = BrokerThread(config_from_args(build_parser().parse_args(argv))).start()
    wait_until(lambda: bool(started.server.console_urls), "the console listening", deadline_s=30)
    yield started
    started.stop()


def get(
    broker: BrokerThread, certs: dict[str, Path], path: str, user: str | None, password: str = ""
) -> tuple[int, bytes]:
    """Status and body of a GET of `path` over TLS, with HTTP Basic credentials unless `user` is None."""
    request = urllib.request.Request(f"{broker.server.console_urls[0]}{path}")
    if user is not None:
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    context = ssl.create_default_context(cafile=str(certs["ca"]))
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


@pytest.mark.parametrize(
    ("user", "password", "expected"),
    [
        (None, "", 401),
        ("admin", "wrong", 401),
        ("nobody", "admin-secret", 401),
        ("bob", "bob-secret", 403),  # a SASL user without DESCRIBE on the cluster
        ("admin", "admin-secret", 200),
    ],
)
def test_logins_over_tls(
    broker: BrokerThread, certs: dict[str, Path], user: str | None, password: str, expected: int
) -> None:
    assert broker.server.console_urls[0].startswith("https://")
    assert get(broker, certs, "/console/api/overview", user, password)[0] == expected


def test_plain_http_is_not_served(broker: BrokerThread) -> None:
    plain = broker.server.console_urls[0].replace("https://", "http://")
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(f"{plain}/console/api/overview", timeout=10)


def test_plaintext_console_is_authorized_as_anonymous() -> None:
    """Under an authorizer, the console of a PLAINTEXT-only broker asks as User:ANONYMOUS, as the
    listener's clients are: refused until that principal may DESCRIBE the cluster."""
    argv = ["--memory", "--port", "0", "--console", "127.0.0.1:0"]
    argv += ["--config", f"authorizer.class.name={STANDARD_AUTHORIZER}"]
    thread = BrokerThread(config_from_args(build_parser().parse_args(argv))).start()
    try:
        wait_until(lambda: bool(thread.server.console_urls), "the console listening", deadline_s=30)
        url = f"{thread.server.console_urls[0]}/console/api/overview"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=10)
        assert refused.value.code == 403
        assert refused.value.read() == b"User:ANONYMOUS may not DESCRIBE the cluster"
        grant = AclBinding(
            ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL, ANONYMOUS, "*",
            AclOperation.DESCRIBE, PermissionType.ALLOW,
        )  # fmt: skip
        authorizer = thread.broker.authorizer
        assert authorizer is not None
        assert thread.call(lambda: authorizer.create([grant])) == [None]
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200
    finally:
        thread.stop()


def test_describe_on_the_cluster_reads_no_records(broker: BrokerThread, certs: dict[str, Path]) -> None:
    """The issue's case: a user allowed only DESCRIBE on the cluster saw a topic's records,
    where a Kafka Fetch by the same user answers TOPIC_AUTHORIZATION_FAILED; and a group's page
    without DESCRIBE on the group."""
    broker.call(lambda: broker.broker.topics.create("secrets", 1, {}))
    grant = AclBinding(
        ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL, "User:bob", "*",
        AclOperation.DESCRIBE, PermissionType.ALLOW,
    )  # fmt: skip
    authorizer = broker.broker.authorizer
    assert authorizer is not None
    assert broker.call(lambda: authorizer.create([grant])) == [None]
    try:
        assert get(broker, certs, "/console/api/overview", "bob", "bob-secret")[0] == 200
        status, body = get(broker, certs, "/console/api/topics/secrets/records", "bob", "bob-secret")
        assert (status, body) == (403, b"User:bob may not READ TOPIC secrets")
        assert get(broker, certs, "/console/api/groups/any", "bob", "bob-secret")[0] == 403
        assert get(broker, certs, "/console/api/topics/secrets/records", "admin", "admin-secret")[0] == 200
    finally:
        exact = AclFilter(*(getattr(grant, name) for name in AclFilter.__dataclass_fields__))
        assert broker.call(lambda: authorizer.delete([exact])) == [[grant]]
