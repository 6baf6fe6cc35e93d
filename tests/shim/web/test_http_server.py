"""The HTTP surfaces' server (shim.web.http_server): out of file descriptors, a console logs one
line, not a traceback every 0.1 s (trio's accept loop, which Hypercorn serves with)."""

from __future__ import annotations

import logging
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

from kafka_shim.shim.web.http_server import AcceptFailures
from tests.helpers import wait_until

ROOT = Path(__file__).resolve().parents[3]


def record(at: float) -> logging.LogRecord:
    made = logging.LogRecord(
        "trio.serve_listeners", logging.ERROR, __file__, 1, "accept returned %s", ("EMFILE",), None
    )
    made.created = at
    made.exc_info = (OSError, OSError(24, "Too many open files"), None)
    return made


def test_one_line_per_interval_without_the_traceback() -> None:
    limiter = AcceptFailures(interval_s=60)
    passed = [
        r for r in (record(1000 + n * 0.1) for n in range(600)) if limiter.filter(r)
    ]  # a minute of EMFILE
    assert len(passed) == 1 and passed[0].exc_info is None
    assert passed[0].getMessage().startswith("an HTTP listener cannot accept: accept returned EMFILE")
    later = record(1060.5)
    assert limiter.filter(later) and "(599 more since the last line)" in later.getMessage()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_console_out_of_descriptors_logs_one_line(tmp_path: Path) -> None:
    port = free_port()
    log_file = tmp_path / "broker.log"
    with log_file.open("w") as sink:
        broker = subprocess.Popen(
            [sys.executable, "-m", "kafka_shim", "--memory", "--port", "0", "--console", f"127.0.0.1:{port}"],
            cwd=ROOT, stderr=sink, stdout=sink,
        )  # fmt: skip
    held: list[socket.socket] = []
    try:
        wait_until(lambda: _accepts(port), "the console listening", deadline_s=30)
        open_now = len(os.listdir(f"/proc/{broker.pid}/fd"))
        resource.prlimit(broker.pid, resource.RLIMIT_NOFILE, (open_now + 10, open_now + 10))
        for _ in range(40):  # more connections than it has descriptors left
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        wait_until(lambda: "EMFILE" in log_file.read_text(), "the broker out of descriptors", deadline_s=10)
        time.sleep(1.0)  # ten more accept attempts: what is measured is that they log nothing
        text = log_file.read_text()
        assert text.count("EMFILE") == 1 and "Traceback" not in text, text[-3000:]
    finally:
        for each in held:
            each.close()
        broker.terminate()
        broker.wait(timeout=10)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True
