"""Every API's declaration, one module each; `APIS` maps key -> Api."""

from __future__ import annotations

import importlib
import pkgutil

from kafka_shim.protocol.api import Api


def _discover() -> dict[str, Api]:
    by_module: dict[str, Api] = {}
    keys: set[int] = set()
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        api = getattr(module, "API", None)
        if isinstance(api, Api):
            if api.key in keys:
                raise RuntimeError(f"API key {api.key} declared twice")
            keys.add(api.key)
            by_module[info.name] = api
    return by_module


# Module name -> Api: a handler module in shim.handlers has the same name.
APIS_BY_MODULE: dict[str, Api] = _discover()
APIS: dict[int, Api] = {api.key: api for api in APIS_BY_MODULE.values()}
