"""The control endpoint as a privileged API, over plain HTTP against running brokers: a web
page's requests (text/plain, another Origin, a rebound Host) change nothing; every body is
validated with bounded numbers (400 naming the field, never 500); under SASL listeners it asks
a login of a principal with ALTER on the cluster, which `kafka-shim ctl` sends; over TLS it is
served with the listener's context."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.cli import ctl
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.security.authorizer import (
    CLUSTER_NAME,
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from kafka_shim.shim.security.dev_certs import write_dev_certs
from kafka_shim.shim.server import BrokerThread
from tests.wire import WireClient

JSON_TYPE = {"content-type": "application/json"}


def call(
    url: str, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None,
    context: ssl.SSLContext | None = None,
) -> tuple[int, str, str]:  # fmt: skip
    """Status, body and X-Content-Type-Options of one request."""
    request = urllib.request.Request(url + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as answer:
            return answer.status, answer.read().decode(), answer.headers.get("x-content-type-options", "")
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode(), refused.headers.get("x-content-type-options", "")


@pytest.fixture
def broker(faults_broker: BrokerThread) -> BrokerThread:
    return faults_broker


def clock_offset(broker: BrokerThread) -> Any:
    return broker.call(lambda: broker.broker.broker_clock.offset_ms)


@pytest.mark.parametrize(
    ("path", "body", "headers", "expected"),
    [
        # A page on any site could send these without a preflight: none reaches the clock.
        ("/clock/advance", b'{"seconds": 31536000}', {"content-type": "text/plain"}, 415),
        ("/clock/advance", b"seconds=31536000", {"content-type": "application/x-www-form-urlencoded"}, 415),
        ("/clock/advance", b'{"seconds": 31536000}', {**JSON_TYPE, "origin": "http://evil.example"}, 403),
        ("/clock/advance", b'{"seconds": 31536000}', {**JSON_TYPE, "host": "evil.example:9094"}, 421),
        ("/cluster/brokers/1/stop", b"", {"content-type": "text/plain"}, 415),
        # Bodies with numbers no clock takes: 400 naming the field.
        ("/clock/advance", b'{"seconds": 1e16}', JSON_TYPE, 400),
        ("/clock/advance", b'{"seconds": NaN}', JSON_TYPE, 400),
        ("/clock/advance", b'{"seconds": Infinity}', JSON_TYPE, 400),
        ("/clock/advance", b'{"seconds": -1}', JSON_TYPE, 400),
        ("/clock/advance", b'{"seconds": "1"}', JSON_TYPE, 400),
        ("/clock/advance", b"[1]", JSON_TYPE, 400),
        ("/clock/advance", b'{"seconds": 1' + b"0" * 400 + b"}", JSON_TYPE, 400),
        ("/cluster/coordinator", b'{"group": "g", "node": 99999999999}', JSON_TYPE, 400),
        ("/cluster/partitions/t/0/leader", b'{"node": -1}', JSON_TYPE, 400),
        ("/cluster/partitions/t/0/leader", b"[]", JSON_TYPE, 400),
        ("/faults", b'{"api": "Fetch", "delay_ms": 1e300}', JSON_TYPE, 400),
        ("/faults", b'[1, "x"]', JSON_TYPE, 400),
        ("/faults", b'{"api": "Fetch", "action": "delay", "fraction": NaN}', JSON_TYPE, 400),
    ],
)
def test_what_a_page_sends_and_unbounded_numbers_are_refused(
    broker: BrokerThread, path: str, body: bytes, headers: dict[str, str], expected: int
) -> None:
    before = clock_offset(broker)
    status, text, nosniff = call(broker.server.control_urls[0], "POST", path, body, headers)
    assert (status, nosniff) == (expected, "nosniff"), text
    if expected == 400 and path == "/clock/advance" and b"seconds" in body:
        assert "seconds" in text  # names the field
    assert clock_offset(broker) == before
    assert broker.call(lambda: broker.broker.faults.rules()) == []
    with WireClient(broker.bootstrap) as client:  # the broker still serves
        assert (
            client.request(18, 3, {"client_software_name": "t", "client_software_version": "1"}).error_code
            == 0
        )


def test_a_bad_path_number_is_400(broker: BrokerThread) -> None:
    status, _, _ = call(broker.server.control_urls[0], "DELETE", "/faults/" + "9" * 5000, None, JSON_TYPE)
    assert status == 400


def test_the_clock_stops_at_the_end_of_kafkas_range(broker: BrokerThread) -> None:
    url = broker.server.control_urls[0]
    status, text, _ = call(url, "POST", "/clock/advance", b'{"seconds": 1e13}', JSON_TYPE)
    assert status == 400 and "timestamp range" in text


def make(*extra: str, protocol: str = "SASL_PLAINTEXT") -> BrokerThread:
    argv = ["--memory", "--listeners", f"{protocol}://127.0.0.1:0", "--control", "127.0.0.1:0"]
    argv += ["--user", "admin:admin-secret", "--user", "bob:bob-secret"]
    argv += ["--config", f"listener.security.protocol.map={protocol}:{protocol}", *extra]
    return BrokerThread(config_from_args(build_parser().parse_args(argv))).start()


def run_ctl(url: str, user: str | None, password: str, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    monkeypatch.setenv("KAFKA_SHIM_CONTROL_PASSWORD", password)
    return ctl.main(["--url", url, *(("--user", user) if user else ()), *extra, "clock"])


def test_under_sasl_and_an_authorizer_only_alter_on_the_cluster_controls(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = make(
        "--config", f"authorizer.class.name={STANDARD_AUTHORIZER}", "--config", "super.users=User:admin"
    )
    try:
        url = thread.server.control_urls[0]
        assert run_ctl(url, None, "", monkeypatch) == 1
        assert "401: log in as a SASL user" in capsys.readouterr().err
        assert run_ctl(url, "admin", "wrong", monkeypatch) == 1
        assert "401" in capsys.readouterr().err
        assert run_ctl(url, "bob", "bob-secret", monkeypatch) == 1
        assert "403: User:bob may not ALTER the cluster" in capsys.readouterr().err
        assert run_ctl(url, "admin", "admin-secret", monkeypatch) == 0  # a super user
        assert json.loads(capsys.readouterr().out)["frozen"] is False
        grant = AclBinding(
            ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL, "User:bob", "*",
            AclOperation.ALTER, PermissionType.ALLOW,
        )  # fmt: skip
        authorizer = thread.broker.authorizer
        assert authorizer is not None
        assert thread.call(lambda: authorizer.create([grant])) == [None]
        assert run_ctl(url, "bob", "bob-secret", monkeypatch) == 0
    finally:
        thread.stop()


def test_under_sasl_without_an_authorizer_any_sasl_user_controls(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = make()
    try:
        url = thread.server.control_urls[0]
        assert run_ctl(url, None, "", monkeypatch) == 1
        assert run_ctl(url, "bob", "bob-secret", monkeypatch) == 0
    finally:
        thread.stop()


def test_over_tls_the_endpoint_is_https_with_the_listeners_keystore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    certs = write_dev_certs(tmp_path, ("localhost", "127.0.0.1"), "client", 2)
    thread = make(
        "--config", f"ssl.keystore.location={certs['broker']}",
        "--config", f"ssl.truststore.location={certs['ca']}",
        protocol="SASL_SSL",
    )  # fmt: skip
    try:
        url = thread.server.control_urls[0]
        assert url.startswith("https://")
        assert run_ctl(url, "bob", "bob-secret", monkeypatch, "--cafile", str(certs["ca"])) == 0
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(url.replace("https://", "http://") + "/clock", timeout=10)
    finally:
        thread.stop()
