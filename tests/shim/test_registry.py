"""The handler package is the single source of what ApiVersions advertises."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

import kafka_shim.shim.handlers
from kafka_shim.protocol.messages import APIS_BY_MODULE
from kafka_shim.shim.handlers import ADVERTISED_APIS, handler_for
from kafka_shim.shim.handlers.api_versions import supported_ranges


def test_every_handler_module_serves_the_api_it_is_named_after() -> None:
    names = [info.name for info in pkgutil.iter_modules(kafka_shim.shim.handlers.__path__)]
    assert names, "no handlers found"
    for name in names:
        module = importlib.import_module(f"kafka_shim.shim.handlers.{name}")
        assert module.API is APIS_BY_MODULE[name], name
        handler = handler_for(module.API.key)
        assert handler is not None and handler.handle is module.handle


def test_api_versions_lists_exactly_the_handlers() -> None:
    advertised = {r["api_key"]: (r["min_version"], r["max_version"]) for r in supported_ranges()}
    assert advertised == {key: (api.versions.low, api.versions.high) for key, api in ADVERTISED_APIS.items()}
    assert handler_for(9999) is None


def test_declared_apis_without_handlers_are_not_advertised() -> None:
    for name, api in APIS_BY_MODULE.items():
        has_handler = importlib.util.find_spec(f"kafka_shim.shim.handlers.{name}") is not None
        assert (api.key in ADVERTISED_APIS) == has_handler, name
