"""kill -9 during acks=all produce storms from confluent-kafka and
kafka-python producers, with synchronous offset commits from several
confluent-kafka consumers, 20 times at random moments: every acknowledged
record is back at its acknowledged offset and every acknowledged commit is
returned by OffsetFetch after each restart."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tests.storage.crash_harness import CommitStorm, CrashHarness, ProduceStorm, Storm

pytestmark = [pytest.mark.slow, pytest.mark.clients]

ROUNDS = 20


def test_acknowledged_produces_and_commits_survive_kill_9(tmp_path: Path) -> None:
    rng = random.Random(20240611)
    harness = CrashHarness(tmp_path / "data", ["--num-partitions", "3"])
    storms: list[ProduceStorm] = []
    commit_storms: list[CommitStorm] = []

    def make_storms(number: int) -> list[Storm]:
        topic = harness.name(f"storm-{number}")
        storm = ProduceStorm(topic)
        commits = CommitStorm(topic)
        storms.append(storm)
        commit_storms.append(commits)
        return [storm, commits]

    started = time.monotonic()
    rounds = list(harness.rounds(ROUNDS, make_storms, rng, storm_s=(0.0, 0.6)))
    assert rounds == list(range(ROUNDS))
    acked = sum(len(s.ledger.acked) for s in storms)
    commit_groups = sum(c.acknowledged() for c in commit_storms)
    # Everything from earlier rounds is still there after the last restart.
    bootstrap = harness.start()
    try:
        for storm in storms:
            storm.verify(bootstrap)
        for commits in commit_storms:
            commits.verify(bootstrap)
    finally:
        harness.stop()
    elapsed = time.monotonic() - started
    print(
        f"{ROUNDS} kill -9 rounds, {acked} acknowledged records and the commits of "
        f"{commit_groups} groups verified in {elapsed:.1f} s; "
        f"restart to listening: max {max(harness.restarts):.2f} s"
    )
    # ~50 s on an idle 2-core machine; pytest-timeout bounds it on a loaded one.
