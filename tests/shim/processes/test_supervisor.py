"""What the supervisor passes to each broker process."""

from __future__ import annotations

import pytest

from kafka_shim.shim.processes.supervisor import broker_argv


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--brokers", "2", "--process-per-broker"], ["--brokers", "2", "--busy-poll-us", "0"]),
        (["--process-per-broker", "--busy-poll-us", "200"], ["--busy-poll-us", "200"]),
        (["--busy-poll-us=300", "--process-per-broker"], ["--busy-poll-us=300"]),
    ],
)
def test_broker_processes_do_not_busy_poll_unless_asked(argv: list[str], expected: list[str]) -> None:
    assert broker_argv(argv) == expected
