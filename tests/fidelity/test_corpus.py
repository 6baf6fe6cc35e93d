"""Kafka 3.9.0's recorded answers replayed against a fresh in-process kafka-shim (corpus.py).

The replay fails on any difference known_differences.toml does not list, and on any entry
that no longer matches a difference. The comparison itself is checked on hand-made records.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fidelity.corpus import (
    Cases,
    Difference,
    KnownDifference,
    compare,
    judge,
    load_golden,
    load_known,
    replay,
)


def test_replay_differs_only_as_listed() -> None:
    golden = load_golden()
    assert len(golden) == 73 and sum(len(steps) for steps in golden.values()) == 1184
    verdict = judge(golden, replay(), load_known())
    print(verdict.summary())
    assert not verdict.unlisted and not verdict.stale, verdict.report()


def record(case: str, step: str, response: object) -> dict[str, object]:
    return {"case": case, "step": step, "api": "Metadata", "response": response}


def cases(*records: dict[str, object]) -> Cases:
    out: Cases = {}
    for rec in records:
        out.setdefault(str(rec["case"]), {})[str(rec["step"])] = rec
    return out


@pytest.mark.parametrize(
    ("kafka", "shim", "expected"),
    [
        ({"error_code": 3}, {"error_code": 3}, []),
        ({"error_code": 3}, {"error_code": 0}, [("response.error_code", 3, 0)]),
        ({"topics": [{"a": 1}]}, {"topics": []}, [("response.topics.0", {"a": 1}, "<absent>")]),
        ({"x": 1}, {"x": 1, "y": None}, [("response.y", "<absent>", None)]),
        ({"x": 1}, {"x": True}, [("response.x", 1, True)]),  # 1 == True, but not the same answer
    ],
)
def test_compare_finds_each_differing_path(
    kafka: object, shim: object, expected: list[tuple[str, object, object]]
) -> None:
    found = compare(cases(record("c", "s", kafka)), cases(record("c", "s", shim)))
    assert [(d.path, d.kafka, d.shim) for d in found] == expected


def test_a_step_only_one_side_has_is_a_difference() -> None:
    found = compare(cases(record("c", "s1", 1)), cases(record("c", "s1", 1), record("c", "s2", 2)))
    assert [(d.step, d.path, d.kafka) for d in found] == [("s2", "<step>", "<absent>")]


def test_judge_reports_unlisted_differences_and_stale_entries() -> None:
    golden = cases(record("acls.v1", "01.create", {"error_code": -1}), record("quotas.v0", "02.alter", 0))
    observed = cases(record("acls.v1", "01.create", {"error_code": 42}), record("quotas.v0", "02.alter", 0))
    listed = KnownDifference(cases=["acls.*"], paths=["response.error_code"], reason="atomicity")
    stale = KnownDifference(cases=["quotas.*"], reason="fixed since")
    verdict = judge(golden, observed, [listed, stale])
    assert verdict.unlisted == [] and verdict.stale == [stale]
    verdict = judge(golden, observed, [stale])
    assert verdict.unlisted == [Difference("acls.v1", "01.create", "response.error_code", -1, 42)]


def test_a_partial_run_ignores_entries_about_other_cases() -> None:
    golden = cases(record("acls.v1", "01", 1))
    elsewhere = KnownDifference(cases=["quotas.*"], reason="not in this run")
    assert judge(golden, golden, [elsewhere], partial=True).stale == []


def test_entries_need_cases_and_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "known.toml"
    path.write_text('[[difference]]\ncases = "acls.*"\n')
    with pytest.raises(ValueError, match="needs cases and reason"):
        load_known(path)
    path.write_text('[[difference]]\ncases = "acls.*"\nreason = "r"\npath = "typo"\n')
    with pytest.raises(ValueError, match="needs cases and reason"):
        load_known(path)
