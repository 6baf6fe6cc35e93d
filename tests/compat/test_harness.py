"""The harness's own pure parts: kcat's rebalance lines, convergence, differential diffs; and
that kcat-newest really runs on the confluent-kafka wheel's librdkafka."""

from __future__ import annotations

import pytest

from compat import librdkafka, versions
from compat.clients.kcat import PARTITION_IN_LIST, REBALANCE_LINE
from compat.drivers import DRIVERS
from compat.groups import owns_each_once
from compat.matrix import differences
from compat.scenario import Outcome


@pytest.mark.parametrize(
    ("line", "kind", "partitions"),
    [
        ("% Group g rebalanced (memberid a-1): assigned: t [0], t [1]", "assign", [0, 1]),
        ("% Group g rebalanced (memberid a-1): revoked: t [2]", "revoke", [2]),
        (
            "% Group g rebalanced: incremental assignment of 2 partition(s) "
            "(memberid a-1, COOPERATIVE rebalance protocol): t [1], t [0]",
            "assign",
            [1, 0],
        ),
        (
            "% Group g rebalanced: incremental revoke of 0 partition(s) "
            "(memberid a-1, COOPERATIVE rebalance protocol): ",
            "revoke",
            [],
        ),
    ],
)
def test_kcat_rebalance_lines(line: str, kind: str, partitions: list[int]) -> None:
    match = REBALANCE_LINE.match(line)
    assert match is not None
    assert match.group(1) == kind
    assert [int(p) for p in PARTITION_IN_LIST.findall(match.group(2))] == partitions


def test_kcat_ignores_other_lines() -> None:
    assert REBALANCE_LINE.match("% Reached end of topic t [3] at offset 0") is None


def test_convergence_needs_each_partition_once_and_a_share_for_everyone() -> None:
    assert owns_each_once({"a": [0, 1], "b": [2]}, 3)
    assert not owns_each_once({"a": [0, 1], "b": [1, 2]}, 3)
    assert not owns_each_once({"a": [0, 1, 2], "b": []}, 3)
    assert owns_each_once({"a": [0], "b": [1], "c": [2], "d": []}, 3)


def test_differences_name_the_observations_that_differ() -> None:
    left = Outcome("shim", "s", "c", "pass", observations={"latest": {0: 5}, "same": 1})
    right = Outcome("tansu", "s", "c", "fail", observations={"latest": {0: 4}, "same": 1})
    assert differences(left, right) == {"latest": ({0: 5}, {0: 4}), "status": ("pass", "fail")}


def test_kcat_newest_loads_the_wheels_librdkafka() -> None:
    assert DRIVERS["kcat-newest"].missing() is None, DRIVERS["kcat-newest"].missing()
    assert f"librdkafka {librdkafka.version()}" in versions.kcat_wheel_librdkafka()
