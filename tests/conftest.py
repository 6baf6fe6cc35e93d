"""How pytest-xdist's workers share the suite (`-n auto` in pyproject.toml; `-n 0` runs it in one
process). A unit of work is a test module, so a module's fixtures start once per run, except:

- each cell of the compatibility matrix is a unit of its own: the matrix is the longest module
  by far (over a third of a serial run), its cells independent and mostly waiting on the
  clients' own timers (rebalance delays, session timeouts);
- tests/docker is one unit: its tests publish the host's port 9092, or need it free;
- tests/pipeline is one unit: one Spark session (a JVM) serves all of it.

Units are handed out in collection order, and modules with a slow test are collected first, so
that a long unit does not start when the rest are done. The compatibility matrix's report is a
plugin registered here: the controller that prints it loads no conftest below this one.
"""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

pytest_plugins = ("tests.compat.matrix_report",)

CELLS = "tests/compat/test_matrix.py::"
ONE_UNIT_FOLDERS = ("tests/docker/", "tests/pipeline/")


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to (see the module docstring)."""
    if nodeid.startswith(CELLS):
        return nodeid
    for folder in ONE_UNIT_FOLDERS:
        if nodeid.startswith(folder):
            return folder
    return nodeid.split("::", 1)[0]


class UnitScheduling(LoadScopeScheduling):
    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        config.option.loadscopereorder = False  # our order: slow modules first, see below

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> UnitScheduling:
    return UnitScheduling(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with a slow test first, each module's tests kept together and in order."""
    slow_modules = {module_of(item) for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: module_of(item) not in slow_modules)


def module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]
