"""Fixtures and reporting for the real-client matrix tests: a plugin that tests/conftest.py
registers, because pytest-xdist's controller, which reports the run, collects nothing and so
never loads a conftest below tests/.

`COMPAT_TARGET` (default ``shim``) picks the broker target (see `compat.targets`). Every
outcome travels with its test's report (`keep_outcome`), so the process that reports the run
gathers them all, with or without workers; the matrix is printed in the terminal summary,
timings included.
After a whole run on the shim target the published report must show this run's statuses
(compat.published): if it does not, the run writes it anew and fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict

import pytest

from compat import published
from compat.catalog import SCENARIOS
from compat.drivers import DRIVERS
from compat.matrix import Matrix
from compat.report import text
from compat.scenario import Outcome

OUTCOMES: list[Outcome] = []
STARTED = time.monotonic()
OUTCOME_PROPERTY = "compat outcome"


@pytest.fixture
def keep_outcome(request: pytest.FixtureRequest) -> Callable[[Outcome], None]:
    """Attach a cell's outcome to this test's report, for the summary and the published check."""

    def keep(outcome: Outcome) -> None:
        request.node.user_properties.append((OUTCOME_PROPERTY, asdict(outcome)))

    return keep


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name == OUTCOME_PROPERTY and isinstance(value, dict):
            OUTCOMES.append(Outcome(**value))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "heavy: scale scenarios (hundreds of members); CI runs them on shim")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not OUTCOMES or is_worker(terminalreporter.config):
        return
    # In the catalog's order, whichever order the workers finished in.
    OUTCOMES.sort(key=lambda o: (list(SCENARIOS).index(o.scenario), list(DRIVERS).index(o.client)))
    targets = list(dict.fromkeys(o.target for o in OUTCOMES))
    scenarios = list(dict.fromkeys(o.scenario for o in OUTCOMES))
    clients = [client for client in DRIVERS if any(o.client == client for o in OUTCOMES)]
    matrix = Matrix(targets, scenarios, clients, {(o.target, o.scenario, o.client): o for o in OUTCOMES})
    terminalreporter.section("compatibility matrix (cells: status, wall time)")
    for line in text(matrix).splitlines():
        terminalreporter.write_line(line)
    terminalreporter.section("client timings (observations, never asserted)")
    for o in OUTCOMES:
        for label, seconds in o.timings.items():
            terminalreporter.write_line(
                f"[{o.target}] {o.scenario} x {o.client}: {label.removesuffix(' s')}: {seconds:.2f}s"
            )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if is_worker(session.config) or not published.is_whole_run(OUTCOMES):
        return
    behind = published.check(OUTCOMES, time.monotonic() - STARTED)
    if behind is not None:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(behind, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def is_worker(config: pytest.Config) -> bool:
    """A pytest-xdist worker: it sees only its own share of the cells."""
    return hasattr(config, "workerinput")
