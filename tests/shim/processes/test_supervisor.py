"""What the supervisor passes to each broker process."""

from __future__ import annotations

import pytest

from kafka_shim.shim.processes.supervisor import broker_argv


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--brokers", "2", "--process-per-broker"], ["--brokers", "2"]),
        (["--process-per-broker", "--busy-poll-us", "200"], ["--busy-poll-us", "200"]),
        (["--busy-poll-us=0", "--process-per-broker"], ["--busy-poll-us=0"]),
    ],
)
def test_broker_processes_poll_as_one_process_does(argv: list[str], expected: list[str]) -> None:
    # Busy polling stands aside by itself where the processes share cores (shim.net.polling).
    assert broker_argv(argv) == expected
