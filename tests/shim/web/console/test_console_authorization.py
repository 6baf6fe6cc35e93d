"""Every console and control route, as the Kafka walk walks every API (tests/shim/
test_authorization.py): against a broker with a SASL listener, StandardAuthorizer and
allow.everyone.if.no.acl.found=false, each route is asked with no login (401), by a principal
granted nothing (refused, or shown nothing where the API it mirrors hides) and by one granted
exactly the checks its declaration takes from the rows of shim/security/authorization.py (served).
A route missing from the walk fails it: a new route must say what it expects."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from starlette.routing import Mount, Route

from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.security.authorizer import (
    CLUSTER_NAME,
    AclBinding,
    AclFilter,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from kafka_shim.shim.server import BrokerThread
from kafka_shim.shim.testbroker.control_server import control_app
from kafka_shim.shim.web.console.app import console_app
from kafka_shim.shim.web.http_guard import ACCESS, Access
from tests.helpers import wait_until

pytestmark = pytest.mark.clients

TOPIC, GROUP, TXN = "t", "g", "tx"
NAMES = {ResourceType.TOPIC: TOPIC, ResourceType.GROUP: GROUP, ResourceType.TRANSACTIONAL_ID: TXN}
NAMES[ResourceType.CLUSTER] = CLUSTER_NAME
ADMIN = {"sasl.mechanism": "PLAIN", "sasl.username": "admin", "sasl.password": "admin-secret"}


@dataclass(frozen=True)
class Case:
    """One route's request, and what a principal granted nothing sees of a 200 (None: it is
    refused) and what one granted the route's checks must find in it."""

    method: str
    path: str
    body: Any = None
    hidden: Callable[[Any], bool] | None = None  # the answer to a principal granted nothing
    shown: Callable[[Any], bool] = lambda answer: True


def names(key: str) -> Callable[[Any], list[str]]:
    return lambda answer: [row[key] for row in answer]


CONSOLE = {
    "/": Case("GET", "/", hidden=lambda a: True),  # only a login: the page is no data
    "/console": Case("GET", "/console", hidden=lambda a: True),
    "/console/static": Case("GET", "/console/static/console.js", hidden=lambda a: True),
    "/metrics": Case("GET", "/metrics"),
    "/console/api/overview": Case("GET", "/console/api/overview"),
    "/console/api/topics": Case(
        "GET", "/console/api/topics", hidden=lambda a: a == [], shown=lambda a: TOPIC in names("name")(a)
    ),
    "/console/api/topics/{name}": Case("GET", f"/console/api/topics/{TOPIC}"),
    "/console/api/topics/{name}/records": Case(
        "GET", f"/console/api/topics/{TOPIC}/records", shown=lambda a: len(a["records"]) == 3
    ),
    "/console/api/groups": Case(
        "GET",
        "/console/api/groups",
        hidden=lambda a: a == [],
        shown=lambda a: (
            [(g["group_id"], [o["topic"] for o in g["offsets"]]) for g in a] == [(GROUP, [TOPIC])]
        ),
    ),
    "/console/api/groups/{group_id}": Case(
        "GET", f"/console/api/groups/{GROUP}", shown=lambda a: [o["topic"] for o in a["offsets"]] == [TOPIC]
    ),
    "/console/api/transactions": Case(
        "GET",
        "/console/api/transactions",
        hidden=lambda a: a == [],
        shown=lambda a: TXN in names("transactional_id")(a),
    ),
    "/console/api/groups/{group_id}/reset-offsets": Case(
        "POST",
        f"/console/api/groups/{GROUP}/reset-offsets",
        {"topic": TOPIC, "partition": 0, "to": "earliest"},
    ),
    "/console/api/topics/{name}/delete-records": Case(
        "POST", f"/console/api/topics/{TOPIC}/delete-records", {"partition": 0, "before": 1}
    ),
    "/console/api/test-broker": Case("GET", "/console/api/test-broker"),
    "/console/api/subjects": Case("GET", "/console/api/subjects", hidden=lambda a: a == []),
    # No subject t-value is registered: the granted principal is answered 404, not refused.
    "/console/api/subjects/{subject}": Case("GET", f"/console/api/subjects/{TOPIC}-value"),
}
CONTROL = {
    "/faults": [
        Case("GET", "/faults"),
        Case("POST", "/faults", {"api": "Fetch", "client_id": "no-such-client", "delay_ms": 1}),
        Case("DELETE", "/faults"),
    ],
    "/faults/{rule_id:int}": [Case("DELETE", "/faults/999")],
    "/faults/firings": [Case("GET", "/faults/firings")],
    "/clock": [Case("GET", "/clock")],
    "/clock/advance": [Case("POST", "/clock/advance", {"seconds": 0})],
    "/clock/freeze": [Case("POST", "/clock/freeze")],
    "/clock/resume": [Case("POST", "/clock/resume")],
    "/requests": [Case("GET", "/requests"), Case("DELETE", "/requests")],
    "/cluster": [Case("GET", "/cluster")],
    "/cluster/brokers/{node_id:int}/stop": [Case("POST", "/cluster/brokers/99/stop")],
    "/cluster/brokers/{node_id:int}/start": [Case("POST", "/cluster/brokers/99/start")],
    "/cluster/partitions/{topic}/{partition:int}": [Case("GET", f"/cluster/partitions/{TOPIC}/0")],
    "/cluster/partitions/{topic}/{partition:int}/leader": [
        Case("POST", f"/cluster/partitions/{TOPIC}/0/leader", {"node": 1})
    ],
    "/cluster/coordinator": [
        Case("GET", f"/cluster/coordinator?group={GROUP}"),
        Case("POST", "/cluster/coordinator", {"group": GROUP, "node": 1}),
    ],
}


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerThread]:
    argv = ["--memory", "--listeners", "SASL_PLAINTEXT://127.0.0.1:0", "--console", "127.0.0.1:0"]
    argv += ["--control", "127.0.0.1:0", "--console-actions"]
    argv += [
        "--user",
        "admin:admin-secret",
        "--user",
        "nobody:nobody-secret",
        "--user",
        "granted:granted-secret",
    ]
    for pair in (
        "listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms=PLAIN",
        f"authorizer.class.name={STANDARD_AUTHORIZER}",
        "allow.everyone.if.no.acl.found=false",
        "super.users=User:admin",
    ):
        argv += ["--config", pair]
    thread = BrokerThread(config_from_args(build_parser().parse_args(argv))).start()
    try:
        wait_until(lambda: bool(thread.server.console_urls), "the console listening", deadline_s=30)
        seed(thread.bootstrap)
        yield thread
    finally:
        thread.stop()


def seed(bootstrap: str) -> None:
    """As the super user: topic t with three records, group g's committed offset of t-0, and a
    committed transaction of tx."""
    client = {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", **ADMIN}
    producer = Producer({**client, "transactional.id": TXN})
    producer.init_transactions(10)
    producer.begin_transaction()
    for n in range(3):
        producer.produce(TOPIC, f"v{n}".encode(), partition=0)
    producer.commit_transaction(10)
    consumer = Consumer({**client, "group.id": GROUP, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(TOPIC, 0, 1)], asynchronous=False)
    consumer.close()


def routes(thread: BrokerThread) -> dict[str, Access]:
    """Every route of both surfaces, with its declaration."""
    found = {}
    for app in (console_app(thread.broker), control_app(thread.server)):
        for route in app.routes:
            assert isinstance(route, Route | Mount)
            found[route.path] = getattr(route, ACCESS)
    return found


def grants(access: Access) -> list[AclBinding]:
    """Exactly the ACLs the route's checks ask, on the walk's resources."""
    return [
        AclBinding(
            need.resource,
            NAMES[need.resource],
            PatternType.LITERAL,
            "User:granted",
            "*",
            need.operation,
            PermissionType.ALLOW,
        )
        for need in access.needs
    ]


@dataclass(frozen=True)
class Answer:
    status: int
    media_type: str
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def ask(base: str, case: Case, user: str | None) -> Answer:
    headers = {"content-type": "application/json"}
    if user is not None:
        headers["authorization"] = "Basic " + base64.b64encode(f"{user}:{user}-secret".encode()).decode()
    body = None if case.body is None else json.dumps(case.body).encode()
    request = urllib.request.Request(base + case.path, body, headers, method=case.method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return Answer(answer.status, answer.headers.get_content_type(), answer.read().decode())
    except urllib.error.HTTPError as refused:
        return Answer(refused.code, refused.headers.get_content_type(), refused.read().decode())


def test_the_walk_names_every_route(broker: BrokerThread) -> None:
    assert set(routes(broker)) == set(CONSOLE) | set(CONTROL)


@pytest.mark.parametrize(
    ("route", "case"),
    [(route, case) for route, case in CONSOLE.items()]
    + [(route, case) for route, cases in CONTROL.items() for case in cases],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_route_serves_exactly_who_its_rows_allow(broker: BrokerThread, route: str, case: Case) -> None:
    base = broker.server.console_urls[0] if route in CONSOLE else broker.server.control_urls[0]
    access = routes(broker)[route]
    assert ask(base, case, None).status == 401
    refused = ask(base, case, "nobody")
    if case.hidden is None or not access.needs:
        assert refused.status == (200 if case.hidden else 403), refused.text
    else:
        assert refused.status == 200 and case.hidden(refused.json()), refused.text
    authorizer = broker.broker.authorizer
    assert authorizer is not None
    assert broker.call(lambda: authorizer.create(grants(access))) == [None] * len(access.needs)
    try:
        served = ask(base, case, "granted")
        assert served.status not in (401, 403), served.text
        if served.media_type == "application/json" and served.status == 200:
            assert case.shown(served.json()), json.dumps(served.json())[:500]
    finally:
        everything = AclFilter(
            ResourceType.ANY,
            None,
            PatternType.ANY,
            "User:granted",
            None,
            AclOperation.ANY,
            PermissionType.ANY,
        )
        broker.call(lambda: authorizer.delete([everything]))
