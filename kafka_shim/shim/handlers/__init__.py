"""Request handlers, one module per API, named like the API's message module.

A handler module exposes `API` (its `protocol.api.Api`) and
`async def handle(ctx: RequestContext, request) -> Mapping | None` (None: no
response, as for acks=0 Produce). The modules present in this package are the
single source of what the broker advertises in ApiVersions. They are imported
on first use, not at start-up: a client's first ApiVersions is answered
before the coordinator and storage code is even loaded.

Every handler module has a row in `shim.security.authorization.RULES`: the package refuses to load
without one, so no API is served without its declared authorization.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages import APIS_BY_MODULE
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorization import RULES, Rule

Handle = Callable[[RequestContext, Any], Awaitable[Mapping[str, Any] | None]]


@dataclass(frozen=True)
class Handler:
    api: Api
    handle: Handle
    rule: Rule


def _advertised() -> dict[int, tuple[str, Api]]:
    found: dict[int, tuple[str, Api]] = {}
    for info in pkgutil.iter_modules(__path__):
        api = APIS_BY_MODULE.get(info.name)
        if api is None:
            raise RuntimeError(
                f"kafka_shim.shim.handlers.{info.name} has no protocol.messages.{info.name} declaration"
            )
        if info.name not in RULES:
            raise RuntimeError(
                f"kafka_shim.shim.handlers.{info.name} has no row in shim.security.authorization.RULES: "
                "declare what it authorizes before it is served"
            )
        found[api.key] = (info.name, api)
    # Every declared message is served: shim.served_versions reads protocol.messages.APIS as
    # the served APIs, so that the broker (which builds that table) knows no handler.
    unserved = set(APIS_BY_MODULE) - {name for name, _ in found.values()}
    if unserved:
        raise RuntimeError(f"protocol.messages declares {sorted(unserved)} with no handler in {__name__}")
    return found


_ADVERTISED = _advertised()
_LOADED: dict[int, Handler] = {}

ADVERTISED_APIS: dict[int, Api] = {key: api for key, (_, api) in sorted(_ADVERTISED.items())}


def handler_for(api_key: int) -> Handler | None:
    """The handler of an advertised API, importing its module the first time."""
    handler = _LOADED.get(api_key)
    if handler is None and api_key in _ADVERTISED:
        name, api = _ADVERTISED[api_key]
        module = importlib.import_module(f"{__name__}.{name}")
        if module.API is not api:
            raise RuntimeError(f"kafka_shim.shim.handlers.{name} serves {module.API.name}, not {api.name}")
        handler = _LOADED[api_key] = Handler(api, module.handle, RULES[name])
    return handler
