"""The crash harness's names: each run's own, so clients left over from another run of the
same test on this machine (retrying on a port the kernel handed out again) cannot reach
this run's topics, groups or transactional ids."""

from __future__ import annotations

from pathlib import Path

from tests.storage.crash_harness import CrashHarness


def test_runs_name_their_topics_and_groups_apart(tmp_path: Path) -> None:
    first, second = CrashHarness(tmp_path / "a"), CrashHarness(tmp_path / "b")
    assert first.name("storm-0") != second.name("storm-0")
    assert first.name("storm-0").startswith("storm-0-")
    assert first.name("storm-0") == first.name("storm-0")  # one run's rounds agree
