"""compat/REPORT.md, the published matrix, is the test suite's own run: when the whole matrix ran
on the shim target (`COMPAT_TARGET=shim python -m pytest`, as CI runs it), the report is made
from that run's outcomes and stamped with the commit (its `Target shim` line), and the statuses
the committed report shows (pass, FAIL, n/a, per cell) must be this run's. A behaviour that
changes a cell, or a scenario or client added, leaves the committed report behind: the suite
then writes the new report in place and fails, so it cannot fall behind silently."""

from __future__ import annotations

import os
from pathlib import Path

from compat.catalog import SCENARIOS
from compat.drivers import DRIVERS
from compat.matrix import Matrix, applicable_cells
from compat.report import MARK, markdown
from compat.scenario import Outcome

REPORT = Path(__file__).resolve().parent / "REPORT.md"
COMMAND = "COMPAT_TARGET=shim python -m pytest (tests/compat/test_matrix.py)"
TARGET = "shim"
# Set to write the report after every whole run, not only when its statuses change.
WRITE_ENV = "COMPAT_WRITE_REPORT"


def suite_matrix(outcomes: list[Outcome]) -> Matrix:
    """The run's outcomes, with the cells a client cannot do as n/a with the reason."""
    cells = {(o.scenario, o.client): o for o in outcomes if o.target == TARGET}
    for scenario in SCENARIOS.values():
        for client, driver in DRIVERS.items():
            reason = scenario.not_applicable(driver)
            if reason is not None:
                cells[scenario.name, client] = Outcome(TARGET, scenario.name, client, "n/a", reason)
    return Matrix(
        [TARGET],
        list(SCENARIOS),
        list(DRIVERS),
        {(TARGET, scenario, client): outcome for (scenario, client), outcome in cells.items()},
    )


def statuses(matrix: Matrix) -> dict[tuple[str, str], str]:
    return {(o.scenario, o.client): MARK[o.status] for o in matrix.outcomes.values()}


def published_statuses(text: str) -> dict[tuple[str, str], str]:
    """The shim table's cell statuses in a report as written by compat.report.markdown."""
    lines = text.splitlines()
    start = lines.index(f"## Target `{TARGET}`") + 2
    clients = [c.strip() for c in lines[start].strip("|").split("|")][1:]
    found: dict[tuple[str, str], str] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        scenario, *cells = (c.strip() for c in line.strip("|").split("|"))
        for client, cell in zip(clients, cells, strict=False):
            if cell:
                found[scenario, client] = cell.split()[0].rstrip(":")
    return found


def is_whole_run(outcomes: list[Outcome]) -> bool:
    ran = {(o.scenario, o.client) for o in outcomes if o.target == TARGET}
    return bool(ran) and ran == set(applicable_cells(TARGET))


def check(outcomes: list[Outcome], wall_s: float, report: Path = REPORT) -> str | None:
    """After a whole run on shim: None if the committed report shows this run's statuses,
    else why not (the new report then written in place)."""
    matrix = suite_matrix(outcomes)
    text = report.read_text(encoding="utf-8") if report.exists() else ""
    try:
        published = published_statuses(text)
    except ValueError:
        published = {}
    observed = statuses(matrix)
    changed = sorted(
        cell for cell in observed.keys() | published.keys() if observed.get(cell) != published.get(cell)
    )
    if changed or os.environ.get(WRITE_ENV):
        report.write_text(markdown(matrix, COMMAND, wall_s), encoding="utf-8")
    if not changed:
        return None
    shown = ", ".join(
        f"{s} x {c}: {published.get((s, c), '-')} -> {observed.get((s, c), '-')}" for s, c in changed[:12]
    )
    return (
        f"compat/REPORT.md is behind this run ({len(changed)} cells differ: {shown}); "
        "the report of this run is written in its place: commit it"
    )
