"""Every scenario x every client against the target broker (`COMPAT_TARGET`, default shim).

A failing cell fails with the client's own error text; a scenario the client cannot do is
not collected (the report shows it as n/a with the reason, never a pass); a client that is
not installed is a failure, since `.ci/run` installs every one; only a container target
without a Docker engine (or kafka without Apache Kafka's image, which cannot be pulled here)
is skipped; kafka-shim's image missing beside an engine is a failure (`.ci/run` builds it).
The heavy scale scenarios run on the shim target only, unless COMPAT_HEAVY=1 asks for them
elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from compat.catalog import SCENARIOS
from compat.matrix import applicable_cells
from compat.scenario import Outcome, run_cell
from compat.targets import container_target_missing, selected_target

HEAVY_ELSEWHERE_ENV = "COMPAT_HEAVY"


def cases() -> Iterator[Any]:
    """The cells that apply: a scenario a client cannot do (its driver says why) is reported
    as n/a by `python -m compat run`, not collected here; heavy scenarios only on shim."""
    target = selected_target()
    for scenario, client in applicable_cells(target, bool(os.environ.get(HEAVY_ELSEWHERE_ENV))):
        marks = [pytest.mark.clients, pytest.mark.slow]
        if SCENARIOS[scenario].heavy:
            marks += [pytest.mark.heavy, pytest.mark.timeout(900)]
        yield pytest.param(scenario, client, id=f"{scenario}-{client}", marks=marks)


@pytest.mark.parametrize(("scenario", "client"), cases())
def test_scenario(scenario: str, client: str, keep_outcome: Callable[[Outcome], None]) -> None:
    target = selected_target()
    outcome = run_cell(SCENARIOS[scenario], client, target)
    keep_outcome(outcome)
    for label, seconds in outcome.timings.items():
        print(f"{label}: {seconds:.2f}")
    if outcome.status == "unavailable":
        reason = container_target_missing(target)
        if reason is not None:
            pytest.skip(f"the {target} target cannot run here: {reason}")
        pytest.fail(f"not installed here: {outcome.detail} (bash .ci/run installs it)", pytrace=False)
    if outcome.status == "fail":
        pytest.fail(f"[{target}] {scenario} x {client}: {outcome.detail}", pytrace=False)
