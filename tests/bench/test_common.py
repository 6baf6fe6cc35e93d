"""The benchmarks' CPU reader (bench.common.process_cpu_ns): another process's CPU, exited
threads included, in nanoseconds."""

from __future__ import annotations

import subprocess
import sys

from bench.common import process_cpu_ns

# A thread that runs 50 ms of CPU and exits, then the process says its own CPU clock and waits.
CHILD = """
import sys, threading, time
def burn():
    while time.thread_time() < 0.05:
        pass
worker = threading.Thread(target=burn)
worker.start()
worker.join()
print(time.process_time_ns(), flush=True)
sys.stdin.read()
"""


def test_counts_the_cpu_of_threads_that_have_exited() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        own_clock = int(child.stdout.readline())
        read_after = process_cpu_ns(child.pid)
        # Read later than the child read its own clock: at least as much, and the exited
        # thread's 50 ms are in both (a live-thread schedstat sum would miss them).
        assert read_after >= own_clock >= 50_000_000
    finally:
        child.kill()
        child.wait(timeout=10)
