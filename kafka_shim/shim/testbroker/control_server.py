"""The control endpoint: shim.testbroker.control_api's endpoints over HTTP/JSON, a Starlette application
served in the broker's own event loop by shim.web.http_server (as the console is).

Every request passes shim.web.http_guard's rules (Host, Origin, JSON bodies, HTTP Basic login of
a SASL user where listeners speak SASL) and needs ALTER on the cluster where an authorizer is
configured. The endpoints run on the loop between Kafka requests, so they read and change the broker's
state without locks. `control_app` takes `extra_routes` to mount other views beside the
control routes. Imported only
when a control listener is configured: a broker without one loads none of this.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import trio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from kafka_shim.shim.security.authorization import ALTER, CLUSTER
from kafka_shim.shim.testbroker.control_api import (
    ENDPOINTS,
    OPERATOR,
    ControlError,
    Controlled,
    ControlRequest,
    Endpoint,
)
from kafka_shim.shim.web.http_guard import declare, guard, json_body, mirrors, need
from kafka_shim.shim.web.http_server import listener_tls, serve_asgi

log = logging.getLogger("kafka_shim.control")


# Every control route is an operator's (ALTER on the cluster): its reads too, since recorded
# requests carry every client's records.
CONTROL_ACCESS = mirrors(OPERATOR, need(ALTER, CLUSTER))


def _route(server: Controlled, endpoint: Endpoint) -> BaseRoute:
    async def handle(request: Request) -> Response:
        control = ControlRequest(
            {key: str(value) for key, value in request.path_params.items()},
            dict(request.query_params),
            json_body(request),  # parsed by the guard: JSON only, numbers bounded
        )
        try:
            return JSONResponse(endpoint.call(server, control))
        except ControlError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)

    route = Route(endpoint.path, handle, methods=[endpoint.method], name=f"{endpoint.method} {endpoint.path}")
    return declare(route, CONTROL_ACCESS)


def control_app(server: Controlled, extra_routes: Sequence[BaseRoute] = ()) -> Starlette:
    """The control routes (and `extra_routes`, each declared: shim.web.http_guard), behind the
    guard every HTTP surface of the broker has."""
    routes = [*(_route(server, endpoint) for endpoint in ENDPOINTS), *extra_routes]
    broker = server.broker
    middleware = [guard(broker, routes, "control endpoint", bound_host=broker.config.control_listener)]
    return Starlette(routes=routes, middleware=middleware)


async def serve_control(
    server: Controlled, address: str, task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve the control endpoint on `address` (over TLS as the first TLS listener, as the
    console is); started() hands over its URLs."""
    tls = listener_tls(server.broker)
    await serve_asgi(control_app(server), address, "control listener", tls, task_status=task_status)
