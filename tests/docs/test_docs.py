"""The documentation builds and its samples run: README.md and every page of docs/ (the MkDocs
site, built with warnings as errors).

A ```python sample is a complete file: one that defines `test_*` functions runs under pytest
with this tree's plugin (so `kafka_shim` and the other fixtures are there), any other runs as
a script. A ```sh sample runs line by line where a line is a command of this project's that
finishes: `kafka-shim dev-certs` is run, `kafka-shim ctl` parsed (no endpoint is running); the
broker's own command line (`kafka-shim ...`, `python -m kafka_shim ...`) is parsed and its
configuration validated, exactly as at start, but not started (it would serve until stopped);
`python -m MODULE` must name a module of this tree.
Commands of other programs (docker, pip, bash, mkdocs) are run by the tests that own them
(tests/docker) or by CI itself, not here."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_shim.shim.cli import ctl, kafka_tools
from kafka_shim.shim.cli.container import container_argv
from kafka_shim.shim.cli.main import TOOLS, build_parser, config_from_args
from kafka_shim.shim.security import dev_certs

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
THIS_PLUGIN = ("-p", "no:kafka_shim", "-p", "kafka_shim.pytest_plugin")


def samples(language: str) -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for n, match in enumerate(m for m in FENCE.finditer(page.read_text(encoding="utf-8"))):
            if match.group(1) == language:
                found.append((f"{page.relative_to(ROOT)}#{n}", match.group(2)))
    return found


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").exists()


def test_the_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


@pytest.mark.parametrize(("where", "code"), samples("python"), ids=[w for w, _ in samples("python")])
def test_python_sample_runs(where: str, code: str, tmp_path: Path) -> None:
    if re.search(r"^def test_", code, re.M):
        sample = tmp_path / "test_sample.py"
        argv = [sys.executable, "-m", "pytest", *THIS_PLUGIN, "-q", "-p", "no:cacheprovider", str(sample)]
    else:
        sample = tmp_path / "sample.py"
        argv = [sys.executable, str(sample)]
    sample.write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TESTCONTAINERS_RYUK_DISABLED": "true"}
    env.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=240, env=env)
    assert result.returncode == 0, f"{where} failed:\n{result.stdout[-4000:]}{result.stderr[-4000:]}"


def shell_commands(code: str) -> list[list[str]]:
    """The sample's commands, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    commands = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]  # VAR=value prefixes
        if words:
            commands.append(words)
    return commands


def check_command(words: list[str], cwd: Path) -> None:
    if words[0] == "kafka-shim":
        argv = words[1:]
    elif words[:3] == ["python", "-m", "kafka_shim"]:
        argv = words[3:]
    elif words[:2] == ["python", "-m"]:
        module = words[2]
        assert importlib.util.find_spec(module) is not None, f"no module {module}"
        return
    else:
        return  # another program's command: see the module docstring
    if argv[:1] == ["dev-certs"]:
        assert dev_certs.main([str(cwd / argv[1]), *argv[2:]]) == 0
        return
    if argv[:1] == ["ctl"]:
        ctl.parse(argv[1:])  # what it would send (the endpoint is not running here)
        return
    if argv[:1] and argv[0] in TOOLS:  # Kafka's everyday tools: parsed, not run (they need a broker)
        kafka_tools.build_parser(argv[0]).parse_args(argv[1:])
        return
    if argv[:1] == ["container"]:
        argv = container_argv({}, argv[1:])
    if argv == ["--version"]:
        return
    previous = Path.cwd()
    os.chdir(cwd)  # relative paths in the sample (certs/broker.pem) are the sample's own
    try:
        config_from_args(build_parser().parse_args(argv))
    finally:
        os.chdir(previous)


@pytest.mark.parametrize(("where", "code"), samples("sh"), ids=[w for w, _ in samples("sh")])
def test_shell_sample_commands_are_valid(where: str, code: str, tmp_path: Path) -> None:
    for words in shell_commands(code):
        check_command(words, tmp_path)
