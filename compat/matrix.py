"""Runs scenarios x clients on targets, and diffs two targets' observations (differential mode)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compat.catalog import SCENARIOS
from compat.scenario import Outcome, run_cell

ALL = "all"


def resolve(names: Iterable[str], known: Iterable[str], kind: str) -> list[str]:
    """Expand "all" (and comma lists) into known names, in their canonical order."""
    known = list(known)
    wanted: list[str] = []
    for name in names:
        for part in name.split(","):
            if part == ALL:
                wanted.extend(known)
            elif part in known:
                wanted.append(part)
            else:
                raise SystemExit(f"unknown {kind} {part!r}: expected {ALL} or one of {', '.join(known)}")
    return [name for name in known if name in wanted]


@dataclass
class Matrix:
    targets: list[str]
    scenarios: list[str]
    clients: list[str]
    outcomes: dict[tuple[str, str, str], Outcome] = field(default_factory=dict)

    def cell(self, target: str, scenario: str, client: str) -> Outcome | None:
        return self.outcomes.get((target, scenario, client))

    def failures(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes.values() if outcome.status == "fail"]


def applicable_cells(target: str, heavy_elsewhere: bool = False) -> list[tuple[str, str]]:
    """(scenario, client) of every cell the client can do on `target`: a scenario a client
    cannot do is n/a (its driver says why); heavy ones run on shim unless asked elsewhere."""
    from compat.drivers import DRIVERS

    return [
        (scenario.name, client)
        for scenario in SCENARIOS.values()
        if not scenario.heavy or target == "shim" or heavy_elsewhere
        for client in DRIVERS
        if scenario.not_applicable(DRIVERS[client]) is None
    ]


def load_outcomes(path: Path) -> dict[tuple[str, str, str], Outcome]:
    """Outcomes saved by `python -m compat run --json`."""
    return {
        (o.target, o.scenario, o.client): o
        for o in (Outcome(**item) for item in json.loads(path.read_text()))
    }


def run_matrix(
    targets: list[str],
    scenarios: list[str],
    clients: list[str],
    progress: Callable[[Outcome], None] | None = None,
    reuse: dict[tuple[str, str, str], Outcome] | None = None,
) -> Matrix:
    """Runs every cell; a cell found in `reuse` that did not fail is taken from there instead."""
    matrix = Matrix(targets, scenarios, clients)
    for target in targets:
        for scenario in scenarios:
            for client in clients:
                earlier = (reuse or {}).get((target, scenario, client))
                if earlier is not None and earlier.status != "fail":
                    matrix.outcomes[(target, scenario, client)] = earlier
                    continue
                outcome = run_cell(SCENARIOS[scenario], client, target)
                matrix.outcomes[(target, scenario, client)] = outcome
                if progress is not None:
                    progress(outcome)
    return matrix


def print_progress(outcome: Outcome) -> None:
    line = (
        f"[{outcome.target}] {outcome.scenario} x {outcome.client}: {outcome.status} ({outcome.duration_s}s)"
    )
    if outcome.status == "fail":
        line += "\n    " + outcome.detail.replace("\n", "\n    ")
    print(line, file=sys.stderr, flush=True)


def differences(left: Outcome, right: Outcome) -> dict[str, tuple[Any, Any]]:
    """Observation keys whose values differ between two runs of one scenario and client."""
    keys = sorted(set(left.observations) | set(right.observations))
    diff = {
        key: (left.observations.get(key), right.observations.get(key))
        for key in keys
        if left.observations.get(key) != right.observations.get(key)
    }
    if left.status != right.status:
        diff["status"] = (left.status, right.status)
    return diff


def differential(matrix: Matrix) -> dict[tuple[str, str], dict[str, tuple[Any, Any]]]:
    """For a two-target matrix: per (scenario, client), what the second target observed differently."""
    first, second = matrix.targets[:2]
    found = {}
    for scenario in matrix.scenarios:
        for client in matrix.clients:
            left, right = matrix.cell(first, scenario, client), matrix.cell(second, scenario, client)
            if left is None or right is None or "n/a" in (left.status, right.status):
                continue
            diff = differences(left, right)
            if diff:
                found[(scenario, client)] = diff
    return found
