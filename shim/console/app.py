"""The console's ASGI application (Starlette): the page, its JSON API and /metrics.

It runs inside the broker's own event loop (the server hosts it), so every handler reads the
broker's state directly, between Kafka requests; it changes state only through its actions
(--console-actions). Every route declares the Kafka API it mirrors, so the guard
(shim.http_guard) authorizes it as that API is authorized, after the Host, Origin, body and
login rules every HTTP surface of the broker applies.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from kafka_shim.shim import http_guard, views
from kafka_shim.shim.authorization import (
    ALTER,
    CLUSTER,
    DELETE,
    DESCRIBE,
    GROUP,
    READ,
    TOPIC,
    TRANSACTIONAL_ID,
)
from kafka_shim.shim.authorizer import CLUSTER_NAME
from kafka_shim.shim.console import actions, api
from kafka_shim.shim.control_api import OPERATOR
from kafka_shim.shim.http_guard import LOGGED_IN, mirrors, need
from kafka_shim.shim.metrics import BrokerCollector

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker

STATIC = resources.files("kafka_shim.shim.console") / "static"
log = logging.getLogger("kafka_shim.console")


def _int(request: Request, name: str, default: int | None = None) -> int | None:
    text = request.query_params.get(name)
    if text in (None, ""):
        return default
    try:
        return int(text)
    except ValueError as exc:
        raise api.BadRequest(f"{name} must be an integer, not {text!r}") from exc


def console_app(broker: Broker) -> Starlette:
    """The console, its API and /metrics, each route declaring the Kafka API it mirrors."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(BrokerCollector(broker.request_stats, lambda: views.cluster(broker)))

    async def metrics(request: Request) -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    async def page(request: Request) -> Response:
        return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"))

    def json_of(read: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(read(request))
            except api.NotFound as exc:
                return JSONResponse({"error": str(exc)}, status_code=404)
            except api.BadRequest as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)

        return endpoint

    def records(request: Request) -> Any:
        partition = _int(request, "partition", 0)
        limit = _int(request, "limit", 50)
        assert partition is not None and limit is not None
        return api.records(
            broker,
            request.path_params["name"],
            partition,
            _int(request, "offset"),
            _int(request, "timestamp"),
            limit,
        )

    def topic_shown(request: Request) -> Callable[[str], bool]:
        return lambda topic: http_guard.allowed(request, DESCRIBE, TOPIC, topic)

    def groups(request: Request) -> Any:
        # ListGroups: every group with DESCRIBE on the cluster, else those it may DESCRIBE.
        everything = http_guard.allowed(request, DESCRIBE, CLUSTER, CLUSTER_NAME)
        described = lambda group: http_guard.allowed(request, DESCRIBE, GROUP, group)  # noqa: E731
        return api.groups(broker, lambda g: everything or described(g), described, topic_shown(request))

    async def act(request: Request) -> Response:
        """A POST of JSON (the guard refuses any other) carrying out one action."""
        if not broker.config.console_actions:
            return JSONResponse({"error": "the console is read-only (start with --console-actions)"}, 403)
        body = http_guard.json_body(request)
        params = request.path_params
        try:
            if "group_id" in params:
                topic = actions.field(body, "topic", str)
                http_guard.require(request, READ, TOPIC, topic)  # OffsetCommit's topic check
                to = body.get("to")
                done = actions.reset_offset(
                    broker, params["group_id"], topic, actions.partition_field(body), to
                )
            else:
                before = actions.field(body, "before", int, -1)
                done = actions.delete_records(broker, params["name"], actions.partition_field(body), before)
        except (actions.ActionRefused, http_guard.Refused) as refused:
            return JSONResponse({"error": str(refused)}, refused.status)
        log.info("console action by %s: %s", http_guard.principal_of(request), done)
        return JSONResponse(done)

    def read(path: str, access: http_guard.Access, reader: Any) -> BaseRoute:
        return http_guard.declare(Route(path, json_of(reader)), access)

    routes = [
        http_guard.declare(Route("/", lambda request: RedirectResponse("/console")), LOGGED_IN),
        http_guard.declare(Route("/metrics", metrics), mirrors("describe_log_dirs", need(DESCRIBE, CLUSTER))),
        http_guard.declare(Route("/console", page), LOGGED_IN),
        # What DescribeLogDirs shows of the broker (its storage) and what it counts.
        read(
            "/console/api/overview",
            mirrors("describe_log_dirs", need(DESCRIBE, CLUSTER)),
            lambda r: api.overview(broker),
        ),
        read(
            "/console/api/topics",
            mirrors("metadata", need(DESCRIBE, TOPIC)),
            lambda r: api.topics(broker, topic_shown(r)),
        ),
        read(
            "/console/api/topics/{name}",
            mirrors("metadata", need(DESCRIBE, TOPIC, "name")) + mirrors("describe_producers"),
            lambda r: api.topic(
                broker, r.path_params["name"], http_guard.allowed(r, READ, TOPIC, r.path_params["name"])
            ),
        ),
        read("/console/api/topics/{name}/records", mirrors("fetch", need(READ, TOPIC, "name")), records),
        read(
            "/console/api/groups",
            mirrors("list_groups", need(DESCRIBE, GROUP)) + mirrors("offset_fetch", need(DESCRIBE, TOPIC)),
            groups,
        ),
        read(
            "/console/api/groups/{group_id}",
            mirrors("describe_groups", need(DESCRIBE, GROUP, "group_id"))
            + mirrors("offset_fetch", need(DESCRIBE, TOPIC)),
            lambda r: api.group(broker, r.path_params["group_id"], topic_shown(r)),
        ),
        read(
            "/console/api/transactions",
            mirrors("list_transactions", need(DESCRIBE, TRANSACTIONAL_ID)),
            lambda r: api.transactions(
                broker, lambda t: http_guard.allowed(r, DESCRIBE, TRANSACTIONAL_ID, t)
            ),
        ),
        http_guard.declare(
            Route("/console/api/groups/{group_id}/reset-offsets", act, methods=["POST"]),
            mirrors("offset_commit", need(READ, GROUP, "group_id"), need(READ, TOPIC)),
        ),
        http_guard.declare(
            Route("/console/api/topics/{name}/delete-records", act, methods=["POST"]),
            mirrors("delete_records", need(DELETE, TOPIC, "name")),
        ),
        # The control endpoint's reads: what it asks (shim.control_api.OPERATOR).
        read(
            "/console/api/test-broker",
            mirrors(OPERATOR, need(ALTER, CLUSTER)),
            lambda r: api.test_broker(broker),
        ),
        http_guard.declare(
            Mount("/console/static", StaticFiles(directory=str(STATIC)), name="static"), LOGGED_IN
        ),
    ]
    return Starlette(
        routes=routes,
        middleware=[http_guard.guard(broker, routes, "console", bound_host=broker.config.console_listener)],
    )
