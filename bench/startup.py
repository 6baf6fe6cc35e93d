"""Start-up: seconds from spawning the broker process to its first answered
ApiVersions, kafka-shim beside Tansu, same run (target for kafka-shim: < 0.5 s).

    python -m bench.startup [--runs 10]
"""

from __future__ import annotations

import argparse
import compileall
import os
import socket
import struct
import subprocess
import sys
import time
from statistics import median

from bench.common import print_row
from compat.targets import REPO_ROOT, free_port, tansu_argv, tansu_binary

# ApiVersions v0 request: header v1 (key 18, version 0, correlation 1, null client id), empty body.
API_VERSIONS_V0 = struct.pack(">ihhih", 10, 18, 0, 1, -1)


def answered(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(API_VERSIONS_V0)
            header = sock.recv(8)
            return len(header) == 8 and struct.unpack(">ii", header)[1] == 1
    except OSError:
        return False


def installed_like_env() -> dict[str, str]:
    """Start the broker as a pip-installed one starts: with its bytecode
    compiled (pip compiles at install), not recompiling every module from
    source, which PYTHONDONTWRITEBYTECODE in some environments would force."""
    compileall.compile_dir(REPO_ROOT / "protocol", quiet=1)
    compileall.compile_dir(REPO_ROOT / "shim", quiet=1)
    compileall.compile_dir(REPO_ROOT / "storage", quiet=1)
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def time_to_first_answer(argv: list[str], port: int, env: dict[str, str], timeout_s: float = 30.0) -> float:
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while time.perf_counter() - started < timeout_s:
            if answered(port):
                return time.perf_counter() - started
            if process.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited with {process.returncode}")
            time.sleep(0.002)
        raise RuntimeError(f"no ApiVersions answer within {timeout_s}s")
    finally:
        process.terminate()
        process.wait(timeout=10)


def shim_argv(port: int) -> list[str]:
    return [sys.executable, "-m", "kafka_shim", "--memory", "--host", "127.0.0.1", "--port", str(port)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    env = installed_like_env()
    samples: dict[str, list[float]] = {"shim": [], "tansu": []}
    for _ in range(args.runs):  # interleaved, so machine noise hits both alike
        for name, argv in (("shim", shim_argv), ("tansu", lambda port: tansu_argv(tansu_binary(), port))):
            port = free_port()
            samples[name].append(time_to_first_answer(argv(port), port, env))
    print_row(
        "start-up to first ApiVersions (median)",
        {k: median(v) * 1000 for k, v in samples.items()},
        "ms",
        higher_is_better=False,
    )
    print_row(
        "start-up to first ApiVersions (max)",
        {k: max(v) * 1000 for k, v in samples.items()},
        "ms",
        higher_is_better=False,
    )


if __name__ == "__main__":
    main()
