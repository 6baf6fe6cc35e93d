"""The handler package is the single source of what ApiVersions advertises."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

import kafka_shim.shim.handlers
from kafka_shim.protocol.messages import APIS_BY_MODULE
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.releases import NEWEST
from kafka_shim.shim.handlers import ADVERTISED_APIS, handler_for
from kafka_shim.shim.handlers.api_versions import advertised_ranges
from kafka_shim.shim.served_versions import served_versions
from tests.helpers import Harness


def advertised(**config: object) -> dict[int, tuple[int, int]]:
    broker = Harness(**config).broker
    ranges = advertised_ranges(broker.served, broker.features)
    return {r["api_key"]: (r["min_version"], r["max_version"]) for r in ranges}


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


def test_api_versions_lists_exactly_the_handlers_within_their_schemas() -> None:
    ranges = served_versions(NEWEST).ranges
    assert set(ranges) == set(ADVERTISED_APIS) == set(advertised())
    for key, (low, high) in ranges.items():
        assert ADVERTISED_APIS[key].versions.low <= low <= high <= ADVERTISED_APIS[key].versions.high
    assert handler_for(9999) is None


def test_below_transaction_version_2_the_tv2_only_versions_are_not_advertised() -> None:
    # As a 3.x cluster: Produce up to 11, EndTxn and TxnOffsetCommit up to 4.
    full = advertised()
    for level in (0, 1):
        capped = advertised(transaction_version=level)
        assert (capped[0][1], capped[26][1], capped[28][1]) == (11, 4, 4)
        assert {k: v for k, v in capped.items() if k not in (0, 26, 28)} == {
            k: v for k, v in full.items() if k not in (0, 26, 28)
        }


def test_declared_apis_without_handlers_are_not_advertised() -> None:
    for name, api in APIS_BY_MODULE.items():
        has_handler = importlib.util.find_spec(f"kafka_shim.shim.handlers.{name}") is not None
        assert (api.key in ADVERTISED_APIS) == has_handler, name


def test_kafka_4_0s_new_versions_answer_as_their_specs_say() -> None:
    # Metadata v13's top-level error code (KIP-1102), DescribeCluster v2's is_fenced (KIP-1073),
    # DescribeGroups v6's GROUP_ID_NOT_FOUND for a group that is not there (KIP-1043).
    h = Harness()
    h.broker.topics.create("t", 1)
    topics = [{"name": "t", "topic_id": ZERO_UUID}]
    request = {
        "topics": topics,
        "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False,
    }
    metadata = h.call(3, 13, request)
    assert (metadata.error_code, metadata.topics[0].error_code) == (0, 0)
    cluster = h.call(60, 2, {"include_cluster_authorized_operations": False, "include_fenced_brokers": True})
    assert [b.is_fenced for b in cluster.brokers] == [False]
    for version, expected in ((5, (0, "Dead", None)), (6, (69, "", "Group g not found."))):
        group = h.call(15, version, {"groups": ["g"], "include_authorized_operations": False}).groups[0]
        assert (group.error_code, group.group_state, group.get("error_message")) == expected
