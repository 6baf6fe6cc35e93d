"""Every scenario x every client against the target broker (`COMPAT_TARGET`, default shim).

A failing cell fails with the client's own error text; a scenario the client cannot do is
skipped as n/a with the reason (never a pass); a client missing here is a skip locally and
a failure in CI. The heavy scale scenarios run on the shim target only, unless
COMPAT_HEAVY=1 asks for them elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from compat.catalog import SCENARIOS
from compat.drivers import DRIVERS
from compat.scenario import run_cell
from compat.targets import selected_target
from tests.compat.conftest import OUTCOMES, unavailable

HEAVY_ELSEWHERE_ENV = "COMPAT_HEAVY"

# Open investigations: the cell still runs and reports; it does not turn CI red
# while the cause is unknown. Remove an entry as soon as its cause is fixed.
KNOWN_FAILURES = {
    ("groups-100x3", "kafka-python"): (
        "1-3 of 100 groups leave one kafka-python 3.0.12 member out: it stops sending and "
        "never rejoins (seen with 300 consumers in one process; cause not yet found, "
        "client stall or broker: see the issue notes)"
    ),
}


def cases() -> Iterator[Any]:
    for scenario in SCENARIOS.values():
        marks = [pytest.mark.clients, pytest.mark.slow]
        if scenario.heavy:
            marks += [pytest.mark.heavy, pytest.mark.timeout(900)]
        for client in DRIVERS:
            known = KNOWN_FAILURES.get((scenario.name, client))
            cell_marks = [*marks, pytest.mark.xfail(reason=known, strict=False)] if known else marks
            yield pytest.param(scenario.name, client, id=f"{scenario.name}-{client}", marks=cell_marks)


@pytest.mark.parametrize(("scenario", "client"), cases())
def test_scenario(scenario: str, client: str) -> None:
    target = selected_target()
    if SCENARIOS[scenario].heavy and target != "shim" and not os.environ.get(HEAVY_ELSEWHERE_ENV):
        pytest.skip(f"heavy scenarios run on the shim target only ({HEAVY_ELSEWHERE_ENV}=1 runs them here)")
    outcome = run_cell(SCENARIOS[scenario], client, target)
    OUTCOMES.append(outcome)
    for label, seconds in outcome.timings.items():
        print(f"{label}: {seconds:.2f}")
    if outcome.status == "n/a":
        pytest.skip(f"n/a: {outcome.detail}")
    if outcome.status == "unavailable":
        unavailable(outcome.detail)
    if outcome.status == "fail":
        pytest.fail(f"[{target}] {scenario} x {client}: {outcome.detail}", pytrace=False)
