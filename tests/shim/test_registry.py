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
        # By name, not identity: pytester's in-process runs drop modules they imported from
        # sys.modules, so a later import can make a second copy of the same handler module.
        assert handler is not None and handler.handle.__module__ == module.__name__, name


def test_api_versions_lists_exactly_the_handlers() -> None:
    advertised = {r["api_key"]: (r["min_version"], r["max_version"]) for r in supported_ranges(2)}
    assert advertised == {key: (api.versions.low, api.versions.high) for key, api in ADVERTISED_APIS.items()}
    assert handler_for(9999) is None


def test_below_transaction_version_2_the_tv2_only_versions_are_not_advertised() -> None:
    # As a 3.x cluster: Produce up to 11, EndTxn up to 4 (TxnOffsetCommit 4 once it exists).
    for level in (0, 1):
        advertised = {r["api_key"]: r["max_version"] for r in supported_ranges(level)}
        assert (advertised[0], advertised[26]) == (11, 4)
        assert advertised.get(28, 4) == 4
        unchanged = {k: v for k, v in advertised.items() if k not in (0, 26, 28)}
        assert unchanged == {
            k: v
            for k, v in ((r["api_key"], r["max_version"]) for r in supported_ranges(2))
            if k not in (0, 26, 28)
        }


def test_declared_apis_without_handlers_are_not_advertised() -> None:
    for name, api in APIS_BY_MODULE.items():
        has_handler = importlib.util.find_spec(f"kafka_shim.shim.handlers.{name}") is not None
        assert (api.key in ADVERTISED_APIS) == has_handler, name
