"""The rules every HTTP surface applies (shim.web.http_guard), on a small application of declared
routes over plain HTTP (Starlette's TestClient): Host (421), Origin (403), JSON bodies (415,
400 for NaN, Infinity and out-of-range numbers, 413), nosniff on every answer, HTTP Basic
login of a SASL user with Kafka's failed-login delay, and per-route authorization from the
table's rows."""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.security.authorization import DESCRIBE, READ, TOPIC, WRITE, UndeclaredCheck
from kafka_shim.shim.security.authorizer import (
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from kafka_shim.shim.web import http_guard
from kafka_shim.shim.web.http_guard import LOGGED_IN, declare, mirrors, need

REGISTRY_JSON = "application/vnd.schemaregistry.v1+json"


def make_broker(*extra: str, sasl: bool = False) -> Broker:
    argv = ["--memory", *extra]
    if sasl:
        argv += ["--listeners", "SASL_PLAINTEXT://127.0.0.1:0", "--user", "admin:admin-secret"]
        argv += [
            "--user",
            "bob:bob-secret",
            "--config",
            "listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT",
        ]
    return Broker(config_from_args(build_parser().parse_args(argv)))


def app_of(broker: Broker) -> Starlette:
    async def echo(request: Request) -> JSONResponse:
        return JSONResponse(
            {"body": http_guard.json_body(request), "principal": http_guard.principal_of(request)}
        )

    async def topics(request: Request) -> JSONResponse:
        return JSONResponse(sorted(http_guard.visible(request, DESCRIBE, TOPIC, ["a", "b"])))

    routes = [
        declare(Route("/echo", echo, methods=["GET", "POST", "PUT", "DELETE"]), LOGGED_IN),
        declare(Route("/topics", topics), mirrors("metadata", need(DESCRIBE, TOPIC))),
        declare(Route("/records/{name}", echo), mirrors("fetch", need(READ, TOPIC, "name"))),
    ]
    middleware = [
        http_guard.guard(broker, routes, "test surface", json_types=("application/json", REGISTRY_JSON))
    ]
    return Starlette(routes=routes, middleware=middleware)


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(app_of(make_broker()), base_url="http://127.0.0.1:8080") as found:
        yield found


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1:8080", 200),
        ("localhost:8080", 200),
        ("[::1]:8080", 200),
        ("localhost", 200),
        ("192.168.1.5:8080", 200),  # an address (a published port's): no DNS to rebind
        ("[fe80::1]:8080", 200),
        ("evil.example:8080", 421),  # a rebound name: DNS rebinding
        ("myhost:8080", 421),
        ("127.0.0.1.evil.example", 421),
        ("", 421),
    ],
)
def test_the_host_must_name_the_surface_or_loopback(client: TestClient, host: str, expected: int) -> None:
    answer = client.get("/echo", headers={"host": host})
    assert answer.status_code == expected
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_a_name_the_listeners_advertise_is_the_brokers_own() -> None:
    broker = make_broker(
        "--listeners", "PLAINTEXT://0.0.0.0:0", "--config", "advertised.listeners=PLAINTEXT://kafka-shim:0"
    )
    app = Starlette(routes=[], middleware=[http_guard.guard(broker, [], "test surface")])
    with TestClient(app, base_url="http://kafka-shim:8081") as client:  # a compose network's service name
        assert client.get("/x").status_code == 404  # past the guard


def test_the_name_a_surface_is_configured_with_is_its_own() -> None:
    broker = make_broker()
    app = Starlette(
        routes=[], middleware=[http_guard.guard(broker, [], "test surface", bound_host="myhost:8080")]
    )
    with TestClient(app, base_url="http://myhost:8080") as client:
        assert client.get("/x").status_code == 404  # past the guard
        assert client.get("/x", headers={"host": "other:8080"}).status_code == 421


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        (None, 200),
        ("http://127.0.0.1:8080", 200),  # the surface's own page
        ("http://evil.example", 403),
        ("http://127.0.0.1:9999", 403),  # another port is another origin
        ("https://127.0.0.1:8080", 403),
        ("null", 403),
    ],
)
def test_a_foreign_origin_is_refused(client: TestClient, origin: str | None, expected: int) -> None:
    headers = {} if origin is None else {"origin": origin}
    answer = client.post("/echo", json={"a": 1}, headers=headers)
    assert answer.status_code == expected
    assert answer.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("application/json", b'{"seconds": 1}', 200),
        ("application/json; charset=utf-8", b"[1, 2.5]", 200),
        (REGISTRY_JSON, b'{"schema": "x"}', 200),  # a surface's own JSON media type
        ("text/plain", b'{"seconds": 1}', 415),  # a cross-site page's request without preflight
        ("application/x-www-form-urlencoded", b"seconds=1", 415),
        ("multipart/form-data; boundary=x", b"--x--", 415),
        (None, b'{"seconds": 1}', 415),
        ("application/json", b"{not json", 400),
        ("application/json", b'{"seconds": NaN}', 400),
        ("application/json", b'{"seconds": Infinity}', 400),
        ("application/json", b'{"seconds": 1e400}', 400),
        ("application/json", b'{"seconds": 99999999999999999999}', 400),  # beyond a long
        ("application/json", b"9" * 5000, 400),
        ("application/json", b"[" * 100_000, 400),
    ],
)
def test_bodies_are_json_with_bounded_numbers(
    client: TestClient, content_type: str | None, body: bytes, expected: int
) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    answer = client.post("/echo", content=body, headers=headers)
    assert answer.status_code == expected, answer.text
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_a_bodiless_post_needs_no_content_type_and_the_parsed_body_reaches_the_handler(
    client: TestClient,
) -> None:
    assert client.post("/echo").json()["body"] is None
    assert client.delete("/echo").status_code == 200
    assert client.put("/echo", json={"a": [1, 2]}).json()["body"] == {"a": [1, 2]}


def test_a_body_over_the_limit_is_refused(client: TestClient) -> None:
    answer = client.post("/echo", content=b'"' + b"x" * (http_guard.MAX_BODY_BYTES + 1) + b'"',
                         headers={"content-type": "application/json"})  # fmt: skip
    assert answer.status_code == 413


def basic(user: str, password: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_sasl_listeners_ask_a_login_and_a_failed_one_waits(caplog: pytest.LogCaptureFixture) -> None:
    broker = make_broker(sasl=True)
    with TestClient(app_of(broker), base_url="http://127.0.0.1:8080") as client:
        assert client.get("/echo").status_code == 401
        assert client.get("/echo").headers["www-authenticate"].startswith("Basic")
        assert client.get("/echo", headers={"authorization": "Basic !!"}).status_code == 401
        big = b'"' + b"x" * (http_guard.MAX_BODY_BYTES + 1) + b'"'
        assert (
            client.post("/echo", content=big, headers={"content-type": "application/json"}).status_code == 401
        )
        started = time.monotonic()
        with caplog.at_level(logging.INFO, "kafka_shim.http"):
            assert client.get("/echo", headers=basic("admin", "wrong")).status_code == 401
        assert "failed login of 'admin' from testclient to the test surface" in caplog.text
        # connection.failed.authentication.delay.ms (Kafka's 100 ms) before the answer
        assert time.monotonic() - started >= broker.config.failed_authentication_delay_ms / 1000
        answer = client.get("/echo", headers=basic("admin", "admin-secret"))
        assert (answer.status_code, answer.json()["principal"]) == (200, "User:admin")
        assert answer.headers["x-content-type-options"] == "nosniff"


def grant(broker: Broker, principal: str, operation: AclOperation, name: str) -> None:
    binding = AclBinding(
        ResourceType.TOPIC, name, PatternType.LITERAL, principal, "*", operation, PermissionType.ALLOW
    )
    assert broker.authorizer is not None
    assert broker.authorizer.create([binding]) == [None]


def test_routes_are_authorized_by_the_row_they_mirror(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "kafka_shim.authorizer")
    broker = make_broker(
        "--config",
        f"authorizer.class.name={STANDARD_AUTHORIZER}",
        "--config",
        "super.users=User:admin",
        sasl=True,
    )
    with TestClient(app_of(broker), base_url="http://127.0.0.1:8080") as client:
        bob = basic("bob", "bob-secret")
        refused = client.get("/records/a", headers=bob)
        assert (refused.status_code, refused.text) == (403, "User:bob may not READ TOPIC a")
        assert client.get("/topics", headers=bob).json() == []  # hidden, not refused
        denials = [r.getMessage() for r in caplog.records if r.name == "kafka_shim.authorizer"]
        assert denials == [
            "Principal = User:bob is Denied operation = READ from host = testclient on resource = TOPIC:a"
        ]
        grant(broker, "User:bob", AclOperation.READ, "a")  # READ implies DESCRIBE
        assert client.get("/records/a", headers=bob).status_code == 200
        assert client.get("/topics", headers=bob).json() == ["a"]
        assert client.get("/topics", headers=basic("admin", "admin-secret")).json() == ["a", "b"]


def test_a_route_must_declare_its_access_and_only_its_rows_checks() -> None:
    with pytest.raises(UndeclaredCheck):
        http_guard.HttpGuard(Starlette(), make_broker(), [Route("/x", lambda r: None)], "test surface")
    with pytest.raises(UndeclaredCheck):
        mirrors("fetch", need(WRITE, TOPIC, "name"))  # Fetch asks no WRITE


def test_websockets_are_refused(client: TestClient) -> None:
    with pytest.raises(WebSocketDisconnect), client.websocket_connect("/echo"):
        pass
