"""The style rules hold for the whole tree: ruff's lint and format, and mypy, as configured
in pyproject.toml. Run here so that CI turns red when they stop holding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CHECKS = {
    "ruff lint": [sys.executable, "-m", "ruff", "check", "."],
    "ruff format": [sys.executable, "-m", "ruff", "format", "--check", "."],
    "mypy": [sys.executable, "-m", "mypy"],
}


@pytest.mark.parametrize("name", CHECKS)
def test_tree_is_clean(name: str, tmp_path: Path) -> None:
    argv = CHECKS[name]
    if name == "mypy":
        argv = [*argv, "--cache-dir", str(tmp_path / "mypy-cache")]
    result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{name} found problems:\n{result.stdout}{result.stderr}"
