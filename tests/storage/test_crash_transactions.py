"""kill -9 during a transactional producer's loop, 20 times at random moments: after
every restart read_committed sees every committed transaction whole, nothing of an
aborted one, and the transaction cut off by the crash whole or not at all; the open one
is aborted (at its timeout, or when the next producer with its id starts)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tests.storage.crash_harness import CrashHarness, Storm
from tests.storage.transaction_storm import TransactionStorm

pytestmark = [pytest.mark.slow, pytest.mark.clients]

ROUNDS = 20


def test_transactions_survive_kill_9(tmp_path: Path) -> None:
    rng = random.Random(20261123)
    harness = CrashHarness(tmp_path / "data", ["--num-partitions", "3"])
    storms: list[TransactionStorm] = []

    def make_storms(number: int) -> list[Storm]:
        storm = TransactionStorm(harness.name(f"txn-storm-{number}"), number, harness.name("crash-storm"))
        storms.append(storm)
        return [storm]

    started = time.monotonic()
    rounds = list(harness.rounds(ROUNDS, make_storms, rng, storm_s=(0.0, 0.6)))
    assert rounds == list(range(ROUNDS))
    bootstrap = harness.start()
    try:
        for storm in storms:
            storm.verify(bootstrap)
    finally:
        harness.stop()
    committed = sum(len(s.committed) for s in storms)
    aborted = sum(len(s.aborted) for s in storms)
    print(
        f"{ROUNDS} kill -9 rounds: {committed} committed and {aborted} aborted transactions verified "
        f"in {time.monotonic() - started:.1f} s; restart to listening: max {max(harness.restarts):.2f} s"
    )
