"""The console's ASGI application (Starlette): the page, its JSON API and /metrics.

It runs inside the broker's own event loop (the server hosts it), so every handler reads the
broker's state directly, between Kafka requests; it changes state only through its actions
(--console-actions). Every route declares the Kafka API it mirrors, so the guard
(shim.web.http_guard) authorizes it as that API is authorized, after the Host, Origin, body and
login rules every HTTP surface of the broker applies.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from kafka_shim.shim.schema_registry import access as registry_access
from kafka_shim.shim.schema_registry import views as schema_views
from kafka_shim.shim.schema_registry.access import READ_SUBJECT, READS
from kafka_shim.shim.schema_registry.registry import Registry
from kafka_shim.shim.security.authorization import (
    ALTER,
    CLUSTER,
    DELETE,
    DESCRIBE,
    GROUP,
    READ,
    TOPIC,
    TRANSACTIONAL_ID,
)
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.testbroker.control_api import OPERATOR
from kafka_shim.shim.web import http_guard, views
from kafka_shim.shim.web.console import actions, api
from kafka_shim.shim.web.http_guard import LOGGED_IN, declare, mirrors, need
from kafka_shim.shim.web.metrics import BrokerCollector

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker

STATIC = resources.files("kafka_shim.shim.web.console") / "static"
log = logging.getLogger("kafka_shim.console")


def _int(request: Request, name: str, default: int | None = None) -> int | None:
    text = request.query_params.get(name)
    if text in (None, ""):
        return default
    try:
        return int(text)
    except ValueError as exc:
        raise api.BadRequest(f"{name} must be an integer, not {text!r}") from exc


def _shown(request: Request, operation: AclOperation, resource: ResourceType) -> Callable[[str], bool]:
    """A hidden check: what the principal may not see is left out and not logged, as Kafka's
    listings (Metadata of every topic, ListGroups, OffsetFetch of every offset) leave it."""
    return lambda name: http_guard.allowed(request, operation, resource, name, log_denied=False)


def _json_of(read: Callable[[Request], Awaitable[Any]]) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await read(request))
        except api.NotFound as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)
        except api.BadRequest as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except http_guard.Refused as refused:  # a check the handler made (a subject's topic)
            return JSONResponse({"error": str(refused)}, status_code=refused.status)

    return endpoint


class ConsoleSource(Protocol):
    """What the routes read and change: one broker's state (BrokerSource), or a cluster of
    broker processes' merged (shim.processes.cluster_console). A read that cannot be answered
    raises api.NotFound, api.BadRequest or http_guard.Refused; an action, actions.ActionRefused."""

    console_actions: bool

    async def overview(self) -> dict[str, Any]: ...
    async def topics(self, shown: api.Shown) -> list[dict[str, Any]]: ...
    async def topic(self, name: str, with_producers: bool) -> dict[str, Any]: ...
    async def records(
        self, name: str, partition: int, offset: int | None, timestamp: int | None, limit: int
    ) -> dict[str, Any]: ...
    async def groups(
        self, listed: api.Shown, described: api.Shown, topic_shown: api.Shown
    ) -> list[dict[str, Any]]: ...
    async def group(self, group_id: str, topic_shown: api.Shown) -> dict[str, Any]: ...
    async def transactions(self, shown: api.Shown) -> list[dict[str, Any]]: ...
    async def test_broker(self) -> dict[str, Any]: ...
    async def metrics(self) -> bytes: ...
    async def reset_offset(self, group_id: str, topic: str, partition: int, to: Any) -> dict[str, Any]: ...
    async def delete_records(self, topic: str, partition: int, before: int) -> dict[str, Any]: ...
    # The registry's subjects (shim.schema_registry.views); a missing subject is api.NotFound.
    async def schema_subjects(self, shown: Callable[[str], bool]) -> list[dict[str, Any]]: ...
    async def schema_subject(self, name: str, older: int | None, newer: int | None) -> dict[str, Any]: ...


class BrokerSource:
    """The console of one broker process: its live state, read on its own loop."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.console_actions = broker.config.console_actions
        self.registry: Registry = schema_views.console_registry(broker)
        self._metrics = CollectorRegistry(auto_describe=False)
        self._metrics.register(BrokerCollector(broker.request_stats, lambda: views.cluster(broker)))

    async def overview(self) -> dict[str, Any]:
        return api.overview(self.broker)

    async def topics(self, shown: api.Shown) -> list[dict[str, Any]]:
        return api.topics(self.broker, shown)

    async def topic(self, name: str, with_producers: bool) -> dict[str, Any]:
        return api.topic(self.broker, name, with_producers)

    async def records(
        self, name: str, partition: int, offset: int | None, timestamp: int | None, limit: int
    ) -> dict[str, Any]:
        return api.records(self.broker, name, partition, offset, timestamp, limit)

    async def groups(
        self, listed: api.Shown, described: api.Shown, topic_shown: api.Shown
    ) -> list[dict[str, Any]]:
        return api.groups(self.broker, listed, described, topic_shown)

    async def group(self, group_id: str, topic_shown: api.Shown) -> dict[str, Any]:
        return api.group(self.broker, group_id, topic_shown)

    async def transactions(self, shown: api.Shown) -> list[dict[str, Any]]:
        return api.transactions(self.broker, shown)

    async def test_broker(self) -> dict[str, Any]:
        return api.test_broker(self.broker)

    async def metrics(self) -> bytes:
        return bytes(generate_latest(self._metrics))

    async def reset_offset(self, group_id: str, topic: str, partition: int, to: Any) -> dict[str, Any]:
        return actions.reset_offset(self.broker, group_id, topic, partition, to)

    async def delete_records(self, topic: str, partition: int, before: int) -> dict[str, Any]:
        return actions.delete_records(self.broker, topic, partition, before)

    async def schema_subjects(self, shown: Callable[[str], bool]) -> list[dict[str, Any]]:
        return schema_views.subjects(self.registry, shown)

    async def schema_subject(self, name: str, older: int | None, newer: int | None) -> dict[str, Any]:
        try:
            return schema_views.subject(self.registry, name, older, newer)
        except schema_views.NoSuchSubject as exc:
            raise api.NotFound(str(exc)) from exc


async def _records(source: ConsoleSource, request: Request) -> Any:
    partition = _int(request, "partition", 0)
    limit = _int(request, "limit", 50)
    assert partition is not None and limit is not None
    name = request.path_params["name"]
    return await source.records(name, partition, _int(request, "offset"), _int(request, "timestamp"), limit)


async def _groups(source: ConsoleSource, request: Request) -> Any:
    # ListGroups: every group with DESCRIBE on the cluster (a shortcut), else those it may
    # DESCRIBE; members and offsets as DescribeGroups and OffsetFetch show them.
    everything = _shown(request, DESCRIBE, CLUSTER)(CLUSTER_NAME)
    described = _shown(request, DESCRIBE, GROUP)
    return await source.groups(
        lambda g: everything or described(g), described, _shown(request, DESCRIBE, TOPIC)
    )


async def _act(source: ConsoleSource, request: Request) -> Response:
    """A POST of JSON (the guard refuses any other) carrying out one action."""
    if not source.console_actions:
        return JSONResponse({"error": "the console is read-only (start with --console-actions)"}, 403)
    body = http_guard.json_body(request)
    params = request.path_params
    try:
        if "group_id" in params:
            topic = actions.field(body, "topic", str)
            http_guard.require(request, READ, TOPIC, topic)  # OffsetCommit's topic check
            partition = actions.partition_field(body)
            done = await source.reset_offset(params["group_id"], topic, partition, body.get("to"))
        else:
            before = actions.field(body, "before", int, -1)
            done = await source.delete_records(params["name"], actions.partition_field(body), before)
    except (actions.ActionRefused, http_guard.Refused) as refused:
        return JSONResponse({"error": str(refused)}, refused.status)
    log.info("console action by %s: %s", http_guard.principal_of(request), done)
    return JSONResponse(done)


async def _subjects(source: ConsoleSource, request: Request) -> Any:
    return await source.schema_subjects(lambda subject: registry_access.may(request, READ_SUBJECT, subject))


async def _subject(source: ConsoleSource, request: Request) -> Any:
    name = request.path_params["subject"]
    if not registry_access.may(request, READ_SUBJECT, name):
        topic = registry_access.topic_of(name)
        raise http_guard.Refused(
            403, http_guard.denial(http_guard.principal_of(request), DESCRIBE, TOPIC, topic)
        )
    return await source.schema_subject(name, _int(request, "from"), _int(request, "to"))


def _read(path: str, access: http_guard.Access, reader: Callable[[Request], Awaitable[Any]]) -> BaseRoute:
    return declare(Route(path, _json_of(reader)), access)


def _routes(source: ConsoleSource) -> list[BaseRoute]:
    """Every route, with the rows of shim.security.authorization of the Kafka API it mirrors."""
    cluster_wide = mirrors("describe_log_dirs", need(DESCRIBE, CLUSTER))  # the broker's storage, counts
    topic_page = mirrors("metadata", need(DESCRIBE, TOPIC, "name")) + mirrors("describe_producers")
    offsets = mirrors("offset_fetch", need(DESCRIBE, TOPIC))
    subjects = mirrors(READS, need(DESCRIBE, TOPIC))  # asked of each subject's topic by the handler

    async def metrics(request: Request) -> Response:
        try:
            return Response(await source.metrics(), media_type=CONTENT_TYPE_LATEST)
        except http_guard.Refused as refused:  # a broker process that did not answer
            return PlainTextResponse(str(refused), refused.status)

    return [
        declare(Route("/", lambda request: RedirectResponse("/console")), LOGGED_IN),
        declare(Route("/metrics", metrics), cluster_wide),
        declare(Route("/console", _page), LOGGED_IN),
        _read("/console/api/overview", cluster_wide, lambda r: source.overview()),
        _read(
            "/console/api/topics",
            mirrors("metadata", need(DESCRIBE, TOPIC)),
            lambda r: source.topics(_shown(r, DESCRIBE, TOPIC)),
        ),
        _read(
            "/console/api/topics/{name}",
            topic_page,
            lambda r: source.topic(r.path_params["name"], _shown(r, READ, TOPIC)(r.path_params["name"])),
        ),
        _read(
            "/console/api/topics/{name}/records",
            mirrors("fetch", need(READ, TOPIC, "name")),
            partial(_records, source),
        ),
        _read(
            "/console/api/groups",
            mirrors("list_groups", need(DESCRIBE, GROUP)) + offsets,
            partial(_groups, source),
        ),
        _read(
            "/console/api/groups/{group_id}",
            mirrors("describe_groups", need(DESCRIBE, GROUP, "group_id")) + offsets,
            lambda r: source.group(r.path_params["group_id"], _shown(r, DESCRIBE, TOPIC)),
        ),
        _read(
            "/console/api/transactions",
            mirrors("list_transactions", need(DESCRIBE, TRANSACTIONAL_ID)),
            lambda r: source.transactions(_shown(r, DESCRIBE, TRANSACTIONAL_ID)),
        ),
        declare(
            Route("/console/api/groups/{group_id}/reset-offsets", partial(_act, source), methods=["POST"]),
            mirrors("offset_commit", need(READ, GROUP, "group_id"), need(READ, TOPIC)),
        ),
        declare(
            Route("/console/api/topics/{name}/delete-records", partial(_act, source), methods=["POST"]),
            mirrors("delete_records", need(DELETE, TOPIC, "name")),
        ),
        # The registry's subjects, read from its topic (shim.schema_registry.views).
        _read("/console/api/subjects", subjects, partial(_subjects, source)),
        _read("/console/api/subjects/{subject}", subjects, partial(_subject, source)),
        # The control endpoint's reads: what it asks (shim.testbroker.control_api.OPERATOR).
        _read(
            "/console/api/test-broker",
            mirrors(OPERATOR, need(ALTER, CLUSTER)),
            lambda r: source.test_broker(),
        ),
        declare(Mount("/console/static", StaticFiles(directory=str(STATIC)), name="static"), LOGGED_IN),
    ]


async def _page(request: Request) -> Response:
    return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"))


def console_app(broker: Broker) -> Starlette:
    """The console, its API and /metrics behind the guard every HTTP surface has."""
    return source_app(BrokerSource(broker), broker)


def source_app(source: ConsoleSource, guarded: http_guard.Guarded) -> Starlette:
    """The console of `source`, behind the guard of `guarded`: the broker whose listeners,
    logins and authorizer the guard follows (or a cluster of processes' stand-in for them)."""
    routes = _routes(source)
    guard = http_guard.guard(guarded, routes, "console", bound_host=guarded.config.console_listener)
    return Starlette(routes=routes, middleware=[guard])
