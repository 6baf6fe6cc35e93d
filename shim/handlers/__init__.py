"""Request handlers, one module per API.

A handler module exposes `API` (its `protocol.api.Api`) and
`async def handle(ctx: RequestContext, request) -> Mapping | None` (None: no
response, as for acks=0 Produce). Discovery makes this package the single
source of what the broker advertises in ApiVersions.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from protocol.api import Api
from shim.context import RequestContext

Handle = Callable[[RequestContext, Any], Awaitable[Mapping[str, Any] | None]]


@dataclass(frozen=True)
class Handler:
    api: Api
    handle: Handle


def _discover() -> dict[int, Handler]:
    handlers: dict[int, Handler] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        api = getattr(module, "API", None)
        handle = getattr(module, "handle", None)
        if isinstance(api, Api) and handle is not None:
            handlers[api.key] = Handler(api, handle)
    return handlers


HANDLERS: dict[int, Handler] = _discover()
