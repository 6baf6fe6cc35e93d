"""The size rule of docs/architecture.md, checked on the product's source files with `ast`: no
file under kafka_shim/ over 600 lines, no class over 400, no function over 80 (a class or
function counted from its `class`/`def` line to its last, nested definitions included; a nested
function is also measured on its own).

Short units are the project's standard because a module a newcomer can read in one sitting is
one they can change safely. The rule holds with no exception, as tests/test_layers.py's do: a
change that breaks it splits the unit, not this file."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "kafka_shim"

MAX_FILE_LINES = 600
MAX_CLASS_LINES = 400
MAX_FUNCTION_LINES = 80


@dataclass(frozen=True)
class Unit:
    """A file, class or function and its length: a violation where it is over its limit."""

    path: str  # relative to the repository root, with forward slashes
    unit: str  # "" for the file itself, else the class's or function's dotted name in it
    lines: int
    limit: int  # MAX_FILE_LINES, MAX_CLASS_LINES or MAX_FUNCTION_LINES

    def __str__(self) -> str:
        what = f"{self.path}: {self.unit}" if self.unit else self.path
        return f"{what} ({self.lines} lines)"


def _units(source: str, relative: str) -> list[Unit]:
    """One file's `source` (named `relative`), each of its classes and functions, measured."""
    found = [Unit(relative, "", len(source.splitlines()), MAX_FILE_LINES)]

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                limit = MAX_CLASS_LINES if isinstance(child, ast.ClassDef) else MAX_FUNCTION_LINES
                assert child.end_lineno is not None
                found.append(Unit(relative, name, child.end_lineno - child.lineno + 1, limit))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source, relative), "")
    return found


def _measured(source: str, relative: str) -> list[Unit]:
    """The violations in one file's `source`, reported under its name `relative`."""
    return [unit for unit in _units(source, relative) if unit.lines > unit.limit]


def product_units() -> list[Unit]:
    """Every file of the product (kafka_shim/**) and its classes and functions."""
    return [
        unit
        for path in sorted((ROOT / PACKAGE).rglob("*.py"))
        for unit in _units(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    ]


def test_no_file_class_or_function_over_its_size() -> None:
    violations = [str(unit) for unit in product_units() if unit.lines > unit.limit]
    assert not violations, (
        f"over {MAX_FILE_LINES} lines a file, {MAX_CLASS_LINES} a class, {MAX_FUNCTION_LINES} a "
        "function (split along the code's seams; see docs/architecture.md):\n" + "\n".join(violations)
    )


def test_the_measure_names_nested_units_and_counts_them_whole() -> None:
    body = "\n".join(f"            x{n} = {n}" for n in range(MAX_FUNCTION_LINES - 1))
    source = f"class Holder:\n    def outer(self) -> None:\n        def inner() -> None:\n{body}\n"
    found = _measured(source, "example.py")
    # inner: its def line and 79 body lines (at the limit); outer: one more line, over it.
    assert [(v.unit, v.lines) for v in found] == [("Holder.outer", MAX_FUNCTION_LINES + 1)]
    long_file = "x = 1\n" * (MAX_FILE_LINES + 1)
    assert [(v.unit, v.lines) for v in _measured(long_file, "long.py")] == [("", MAX_FILE_LINES + 1)]


if __name__ == "__main__":
    # `python -m tests.test_sizes`: the figures docs/architecture.md quotes.
    units = product_units()
    for limit, kind in (
        (MAX_FILE_LINES, "files"),
        (MAX_CLASS_LINES, "classes"),
        (MAX_FUNCTION_LINES, "functions"),
    ):
        same = sorted((u for u in units if u.limit == limit), key=lambda u: -u.lines)
        over = [u for u in same if u.lines > limit]
        print(f"{kind} over {limit} lines: {len(over)}; the largest: {', '.join(map(str, same[:4]))}")
