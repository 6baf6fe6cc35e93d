"""The control endpoint: shim.control_api's endpoints over HTTP/JSON, a Starlette application
served in the broker's own event loop by shim.http_server (as the console is).

The endpoints run on the loop between Kafka requests, so they read and change the broker's
state without locks. `control_app` takes `extra_routes` to mount other views beside the
control routes. Imported only
when a control listener is configured: a broker without one loads none of this.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import trio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from kafka_shim.shim.control_api import ENDPOINTS, ControlError, ControlRequest, Endpoint
from kafka_shim.shim.http_server import serve_asgi

if TYPE_CHECKING:
    from kafka_shim.shim.server import Server

log = logging.getLogger("kafka_shim.control")


def _route(server: Server, endpoint: Endpoint) -> Route:
    async def handle(request: Request) -> Response:
        body: Any = None
        if request.method in ("POST", "PUT"):
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError as exc:
                return JSONResponse({"error": f"the body is not JSON: {exc}"}, status_code=400)
        control = ControlRequest(
            {key: str(value) for key, value in request.path_params.items()}, dict(request.query_params), body
        )
        try:
            return JSONResponse(endpoint.call(server, control))
        except ControlError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)

    return Route(endpoint.path, handle, methods=[endpoint.method], name=f"{endpoint.method} {endpoint.path}")


def control_app(server: Server, extra_routes: Sequence[BaseRoute] = ()) -> Starlette:
    return Starlette(routes=[*(_route(server, endpoint) for endpoint in ENDPOINTS), *extra_routes])


async def serve_control(
    server: Server, address: str, task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve the control endpoint on `address`; started() hands over its URLs."""
    await serve_asgi(control_app(server), address, "control listener", task_status=task_status)
