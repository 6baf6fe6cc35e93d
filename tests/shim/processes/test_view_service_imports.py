"""A broker process answers the cluster console (shim.processes.view_service) without the web
stack: Hypercorn, Starlette, anyio and prometheus_client load in the supervisor, which serves
the pages, never in a broker process for its reads (an action, with --console-actions, loads
its module's guard helpers)."""

from __future__ import annotations

import subprocess
import sys

from tests.shim.test_start_imports import HEAVY

WEB_STACK = ("hypercorn", "starlette", "anyio", "prometheus_client", "kafka_shim.shim.web.http_guard")
# What a broker process imports to serve the console's questions, up to its first answer.
ANSWERING = (
    "kafka_shim.shim.processes.node",
    "kafka_shim.shim.processes.view_service",
    "kafka_shim.shim.web.console.api",
    "kafka_shim.shim.web.views",
)


def test_a_broker_process_answers_the_console_without_the_web_stack() -> None:
    script = "import importlib, sys\n"
    script += "".join(f"importlib.import_module({module!r})\n" for module in ANSWERING)
    script += "print('\\n'.join(sorted(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    modules = set(loaded.stdout.split())
    assert set(ANSWERING) <= modules
    heavy = sorted(
        module
        for module in modules
        for name in (*WEB_STACK, *(h for h in HEAVY if h != "kafka_shim.shim.web.console"))
        if module == name or module.startswith(name + ".")
    )
    assert heavy == []
