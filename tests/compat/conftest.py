"""Fixtures for the real-client tests: the broker under test and client availability.

`COMPAT_TARGET` (default ``shim``) picks the broker: for ``shim`` the simple tests use the
project's in-process `kafka_shim` fixture, every other test (and every other target) a
broker subprocess from `compat.targets`.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest

from compat.drivers import DRIVERS, Driver
from compat.targets import RunningBroker, TargetUnavailable, selected_target, start_target

IN_CI = os.environ.get("CI", "").lower() == "true"


def unavailable(reason: str) -> None:
    """In CI a missing client or broker is a failure (CI must install it); locally a skip."""
    if IN_CI:
        pytest.fail(f"required in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def require(client: str) -> Driver:
    driver = DRIVERS[client]
    reason = driver.missing()
    if reason is not None:
        unavailable(f"{client}: {reason}")
    return driver


@pytest.fixture
def broker_process() -> Iterator[RunningBroker]:
    """A fresh broker subprocess (SIGTERM at the end): for timing and group tests."""
    try:
        broker = start_target()
    except TargetUnavailable as exc:
        unavailable(f"broker target {selected_target()!r}: {exc}")
        raise
    with broker:
        yield broker


@pytest.fixture
def bootstrap(request: pytest.FixtureRequest) -> Iterator[str]:
    """host:port of the broker under test; in-process for the shim."""
    if selected_target() == "shim":
        yield request.getfixturevalue("kafka_shim").bootstrap
        return
    yield request.getfixturevalue("broker_process").bootstrap


@pytest.fixture
def names(request: pytest.FixtureRequest) -> tuple[str, str]:
    """A topic and a group name unique to this test (brokers may be shared)."""
    suffix = uuid.uuid4().hex[:8]
    stem = "".join(c if c.isalnum() else "-" for c in request.node.name)[:60]
    return f"t-{stem}-{suffix}", f"g-{stem}-{suffix}"


# Timings measured by the group tests: printed in the terminal summary (never asserted:
# performance is bench/'s business, tests only assert convergence within a deadline).
TIMINGS: list[str] = []
RecordTiming = Callable[[str, float], None]


@pytest.fixture
def record_timing(record_property: Callable[[str, object], None]) -> RecordTiming:
    def record(label: str, seconds: float) -> None:
        TIMINGS.append(f"{label}: {seconds:.2f}s")
        record_property(label, round(seconds, 3))
        print(f"{label}: {seconds:.2f}s")

    return record


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TIMINGS:
        terminalreporter.section(f"client timings (target {selected_target()})")
        for line in TIMINGS:
            terminalreporter.write_line(line)
