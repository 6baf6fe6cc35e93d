"""What the supervisor passes to each broker process."""

from __future__ import annotations

import pytest

from kafka_shim.shim.processes.supervisor import broker_argv, listening


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


def test_the_listening_line_names_listeners_only_when_a_broker_has_several() -> None:
    one = {0: {"PLAINTEXT": ("127.0.0.1", 9092)}, 1: {"PLAINTEXT": ("127.0.0.1", 9093)}}
    assert listening(one) == "127.0.0.1:9092 (broker 0), 127.0.0.1:9093 (broker 1)"
    two = {0: {"CLIENT": ("h", 1), "SECURE": ("h", 2)}, 1: {"CLIENT": ("h", 3), "SECURE": ("h", 4)}}
    assert listening(two) == (
        "h:1 (CLIENT, broker 0), h:2 (SECURE, broker 0), h:3 (CLIENT, broker 1), h:4 (SECURE, broker 1)"
    )
