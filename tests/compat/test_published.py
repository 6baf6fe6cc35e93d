"""The published report follows the suite's run: a whole run on shim whose statuses the report
does not show writes the report anew (stamped with the commit) and says what changed; one whose
statuses it shows passes and leaves it alone."""

from __future__ import annotations

from pathlib import Path

from compat import published
from compat.matrix import applicable_cells
from compat.scenario import Outcome


def whole_run(failing: tuple[str, str] | None = None) -> list[Outcome]:
    return [
        Outcome("shim", scenario, client, "fail" if (scenario, client) == failing else "pass", duration_s=1.0)
        for scenario, client in applicable_cells("shim")
    ]


def test_a_report_behind_the_run_is_written_anew_and_named(tmp_path: Path) -> None:
    report = tmp_path / "REPORT.md"
    report.write_text("# an old report with no shim table\n")
    outcomes = whole_run()
    assert published.is_whole_run(outcomes) and not published.is_whole_run(outcomes[1:])
    behind = published.check(outcomes, 60.0, report)
    assert behind is not None and "commit it" in behind
    text = report.read_text()
    assert "(git " in text  # stamped: the `Target shim` line names the commit
    assert published.published_statuses(text) == published.statuses(published.suite_matrix(outcomes))
    # The same run again: the report shows its statuses, and is left as it is.
    assert published.check(outcomes, 60.0, report) is None and report.read_text() == text
    # A cell that stops passing leaves the report behind again.
    failing = applicable_cells("shim")[0]
    behind = published.check(whole_run(failing), 60.0, report)
    assert behind is not None and f"{failing[0]} x {failing[1]}: pass -> FAIL" in behind
