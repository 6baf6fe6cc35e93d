"""Every API's declaration, one module each; `APIS` maps key -> Api."""

from __future__ import annotations

import importlib
import pkgutil

from protocol.api import Api


def _discover() -> dict[int, Api]:
    apis: dict[int, Api] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        api = getattr(module, "API", None)
        if isinstance(api, Api):
            if api.key in apis:
                raise RuntimeError(f"API key {api.key} declared twice")
            apis[api.key] = api
    return apis


APIS: dict[int, Api] = _discover()
