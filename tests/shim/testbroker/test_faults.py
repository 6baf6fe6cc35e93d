"""shim.testbroker.faults: rule specs, matching, how often rules fire, pausing, and the rules file."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.shim.testbroker.faults import FaultRules, FaultSpecError, RequestView, load_fault_rules

NOW = 1_700_000_000_000
TOPIC_ID = uuid.UUID(int=9)


def view(
    api_key: int,
    body: dict[str, Any],
    version: int = 8,
    client_id: str = "app",
    principal: str = "User:ANONYMOUS",
) -> RequestView:
    return RequestView(api_key, version, client_id, principal, body, {TOPIC_ID: "by-id"}.get)


COMMIT = view(8, {"group_id": "g", "topics": [{"name": "orders", "partitions": [{"partition_index": 1}]}]})
PRODUCE = view(
    0, {"transactional_id": "tx", "topic_data": [{"name": "orders", "partition_data": [{"index": 0}]}]}, 9
)
FETCH_BY_ID = view(1, {"topics": [{"topic_id": TOPIC_ID, "partitions": [{"partition": 3}]}]}, 13)
OFFSET_FETCH_V8 = view(9, {"groups": [{"group_id": "g2", "topics": None}]})
FIND_TXN_COORDINATOR = view(10, {"key_type": 1, "coordinator_keys": ["tx"]}, 4)

ON_BROKER_2 = RequestView(8, 8, "app", "User:ANONYMOUS", COMMIT.body, node_id=2)

MATCHES = [
    ({"broker": 2}, ON_BROKER_2, True),
    ({"broker": 2}, COMMIT, False),
    ({"api": "OffsetCommit"}, COMMIT, True),
    ({"api": 8}, COMMIT, True),
    ({"api": "offsetcommit", "versions": "0-7"}, COMMIT, False),
    ({"api": "OffsetCommit", "versions": "8+"}, COMMIT, True),
    ({"group": "g"}, COMMIT, True),
    ({"group": "other"}, COMMIT, False),
    ({"group": "g2"}, OFFSET_FETCH_V8, True),
    ({"topic": "orders", "partition": 1}, COMMIT, True),
    ({"topic": "orders", "partition": 0}, COMMIT, False),
    ({"topic": "orders"}, PRODUCE, True),
    ({"transactional_id": "tx"}, PRODUCE, True),
    ({"transactional_id": "tx"}, FIND_TXN_COORDINATOR, True),
    ({"group": "tx"}, FIND_TXN_COORDINATOR, False),
    ({"topic": "by-id", "partition": 3}, FETCH_BY_ID, True),
    ({"client_id": "app"}, COMMIT, True),
    ({"client_id": "other"}, COMMIT, False),
    ({"principal": "User:alice"}, COMMIT, False),
]


@pytest.mark.parametrize(("match", "request_view", "fires"), MATCHES)
def test_a_rule_fires_on_the_requests_it_matches(
    match: dict[str, Any], request_view: RequestView, fires: bool
) -> None:
    rules = FaultRules()
    rules.add({**match, "error": "NOT_COORDINATOR"})
    assert (rules.decide(request_view, NOW) is not None) is fires


BAD_SPECS = [
    ({"api": "Nope", "error": 6}, "api"),
    ({"error": "NO_SUCH_ERROR"}, "error"),
    ({"api": "Produce"}, "action"),
    ({"action": "close", "error": 6}, "error"),
    ({"error": 6, "times": 0}, "times"),
    ({"error": 6, "fraction": 1.5}, "fraction"),
    ({"error": 6, "versions": "x"}, "versions"),
    ({"action": "pause_fetch"}, "pause_fetch"),
    ({"error": 6, "where": "middle"}, "where"),
    ({"error": 6, "colour": "red"}, "unknown key"),
    ({"error": 6, "partition": "0"}, "partition"),
]


@pytest.mark.parametrize(("spec", "named"), BAD_SPECS)
def test_a_bad_spec_is_refused_naming_the_key(spec: dict[str, Any], named: str) -> None:
    with pytest.raises(FaultSpecError, match=named):
        FaultRules().add(spec)


def test_times_counts_down_and_a_spent_rule_stays_listed() -> None:
    rules = FaultRules()
    rule = rules.add({"api": "OffsetCommit", "error": "REBALANCE_IN_PROGRESS", "times": 2})
    fired = [rules.decide(COMMIT, NOW) is not None for _ in range(3)]
    assert fired == [True, True, False]
    assert rules.active == []
    assert rule.to_json()["fired"] == 2 and rule.to_json()["active"] is False
    assert [f.to_json()["error"] for f in rules.firings] == ["REBALANCE_IN_PROGRESS"] * 2


def test_a_fraction_is_drawn_from_the_seed_so_runs_repeat() -> None:
    def pattern() -> list[bool]:
        rules = FaultRules()
        rules.add({"error": 6, "fraction": 0.5, "seed": 42})
        return [rules.decide(COMMIT, NOW) is not None for _ in range(40)]

    first = pattern()
    assert first == pattern()
    assert 5 < sum(first) < 35


def test_the_first_matching_rule_wins_and_clearing_one_leaves_the_rest() -> None:
    rules = FaultRules()
    first = rules.add({"group": "g", "error": "NOT_COORDINATOR"})
    second = rules.add({"api": "OffsetCommit", "action": "close"})
    firing = rules.decide(COMMIT, NOW)
    assert firing is not None and firing.rule is first
    assert rules.clear(first.id) == 1
    firing = rules.decide(COMMIT, NOW)
    assert firing is not None and firing.rule is second
    with pytest.raises(KeyError):
        rules.clear(first.id)
    assert rules.clear() == 1 and rules.decide(COMMIT, NOW) is None


def test_pause_fetch_names_partitions_without_firing_on_requests() -> None:
    rules = FaultRules()
    rules.add({"action": "pause_fetch", "topic": "orders", "partition": 1})
    assert rules.active == [] and rules.pausing
    assert rules.decide(COMMIT, NOW) is None
    assert rules.paused("orders", 1, NOW) and not rules.paused("orders", 0, NOW)
    rules.clear()
    assert not rules.pausing


def test_a_rules_file_is_a_json_list_of_specs(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([{"api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS"}, {"delay_ms": 50}]))
    rules = FaultRules()
    assert [rule.action for rule in load_fault_rules(rules, path)] == ["error", "delay"]
    path.write_text(json.dumps({"error": 6}))
    with pytest.raises(FaultSpecError, match=r"rules\.json: a JSON list"):
        load_fault_rules(FaultRules(), path)
