"""The console's ASGI application (Starlette): the page, its JSON API and /metrics.

It runs inside the broker's own event loop (the server hosts it), so every handler reads the
broker's state directly, between Kafka requests; it is read-only: nothing here changes state.
"""

from __future__ import annotations

import logging
from importlib import resources
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kafka_shim.shim import views
from kafka_shim.shim.authorizer import ANONYMOUS
from kafka_shim.shim.console import actions, api
from kafka_shim.shim.console.access import ConsoleAccess, secured
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

    async def act(request: Request) -> Response:
        """A POST of JSON (so no cross-site form can make one) carrying out one action."""
        if not broker.config.console_actions:
            return JSONResponse({"error": "the console is read-only (start with --console-actions)"}, 403)
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse({"error": "actions take a JSON body (Content-Type: application/json)"}, 415)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, 400)
        principal = getattr(request.state, "principal", ANONYMOUS)
        host = request.client.host if request.client is not None else ""
        params = request.path_params
        try:
            if "group_id" in params:
                done = actions.reset_offset(
                    broker,
                    principal,
                    host,
                    params["group_id"],
                    body.get("topic"),
                    body.get("partition"),
                    body.get("to"),
                )
            else:
                done = actions.delete_records(
                    broker, principal, host, params["name"], body.get("partition"), body.get("before", -1)
                )
        except actions.ActionRefused as refused:
            return JSONResponse({"error": str(refused)}, refused.status)
        log.info("console action by %s: %s", principal, done)
        return JSONResponse(done)

    routes = [
        Route("/", lambda request: RedirectResponse("/console")),
        Route("/metrics", metrics),
        Route("/console", page),
        Route("/console/api/overview", json_of(lambda r: api.overview(broker))),
        Route("/console/api/topics", json_of(lambda r: api.topics(broker))),
        Route("/console/api/topics/{name}", json_of(lambda r: api.topic(broker, r.path_params["name"]))),
        Route("/console/api/topics/{name}/records", json_of(records)),
        Route("/console/api/groups", json_of(lambda r: api.groups(broker))),
        Route(
            "/console/api/groups/{group_id}", json_of(lambda r: api.group(broker, r.path_params["group_id"]))
        ),
        Route("/console/api/transactions", json_of(lambda r: api.transactions(broker))),
        Route("/console/api/groups/{group_id}/reset-offsets", act, methods=["POST"]),
        Route("/console/api/topics/{name}/delete-records", act, methods=["POST"]),
        Route("/console/api/test-broker", json_of(lambda r: api.test_broker(broker))),
        Mount("/console/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    middleware = [Middleware(ConsoleAccess, broker=broker)] if secured(broker) else []
    return Starlette(routes=routes, middleware=middleware)
