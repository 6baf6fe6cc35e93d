"""The Java client 4.x runs transactions with transaction version 2 against the default
broker (the `transactions` cells of test_matrix); here the same scenario, zombie fencing
included, runs against a broker finalized at transaction version 1, as a Kafka 3.x cluster
is, so the client falls back to the KIP-890-part-1 protocol (AddPartitionsToTxn, EndTxn v4)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from compat.catalog import SCENARIOS
from compat.scenario import Outcome, run_cell
from compat.targets import RunningBroker, start_shim

TARGET = "shim (transaction.version=1)"


def start_tv1(_target: str) -> RunningBroker:
    return start_shim(("--config", "transaction.version=1"))


@pytest.mark.clients
@pytest.mark.slow
def test_java_transactions_at_transaction_version_1(keep_outcome: Callable[[Outcome], None]) -> None:
    outcome = run_cell(SCENARIOS["transactions"], "java", TARGET, start=start_tv1)
    keep_outcome(outcome)
    if outcome.status == "unavailable":
        pytest.fail(f"not installed here: {outcome.detail} (bash .ci/run installs it)", pytrace=False)
    assert outcome.status == "pass", outcome.detail
    # Below version 2 the Java client's fenced producer learns it from EndTxn or Produce as
    # PRODUCER_FENCED / INVALID_PRODUCER_EPOCH; either way its commit failed.
    assert outcome.observations["fenced producer's error"], outcome.observations
