"""The project's import graph, read from its source files with `ast` (tests/test_layers.py
checks the layer rules on it; `python -m tests.import_graph` prints its import circles, of which
there is none since #29).

Read with `ast` rather than by a grapher such as import-linter's grimp because a rule here
needs each import's kind (eager, lazy, TYPE_CHECKING).

Every import counts, wherever it is written (a function's lazy import and a TYPE_CHECKING
block's included): a lazy import still makes one module know another. Each is marked eager or
not: an eager one runs when its module is imported, so it carries what that module loads."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "kafka_shim"


@dataclass(frozen=True)
class Import:
    target: str  # the module (or, for an outside package, the name) imported
    line: int
    eager: bool  # run when the importer is imported (module level, not under TYPE_CHECKING)
    type_only: bool = False  # under `if TYPE_CHECKING:`: read by the type checker, never run


@dataclass
class Graph:
    files: dict[str, Path] = field(default_factory=dict)  # module name -> its file
    imports: dict[str, list[Import]] = field(default_factory=dict)  # module -> what it imports

    def internal(self, module: str) -> set[str]:
        """The project's modules `module` imports."""
        return {i.target for i in self.imports[module] if i.target in self.files}


def _module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _source_files() -> Iterator[Path]:
    yield from sorted((ROOT / PACKAGE).rglob("*.py"))


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    yield base
    for alias in node.names:
        yield f"{base}.{alias.name}"  # a submodule, when one of that name exists


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _eager_nodes(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The import statements run at import time: module level, within if/try blocks, except
    under `if TYPE_CHECKING:`."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node):
                yield from _eager_nodes(node.body)
            yield from _eager_nodes(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _eager_nodes(block)


def build() -> Graph:
    graph = Graph()
    parsed: dict[str, tuple[ast.Module, bool]] = {}
    for path in _source_files():
        name = _module_name(path)
        graph.files[name] = path
        parsed[name] = (ast.parse(path.read_text(), str(path)), path.name == "__init__.py")
    for name, (tree, is_package) in parsed.items():
        found: list[Import] = []
        eager = {id(node) for node in _eager_nodes(tree.body)}
        type_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _is_type_checking(node)
            for statement in node.body
            for inner in ast.walk(statement)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            candidates = list(_imported(node, name, is_package))
            if isinstance(node, ast.ImportFrom):
                # `from a import b`: the submodule a.b when it is one, else the module a.
                submodules = [c for c in candidates[1:] if c in graph.files]
                candidates = submodules or candidates[:1]
            found += [
                Import(target, node.lineno, id(node) in eager, id(node) in type_only) for target in candidates
            ]
        graph.imports[name] = found
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative): each is a set of modules that import one another in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    edges = {module: sorted(graph.internal(module)) for module in graph.files}
    for root in sorted(graph.files):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            module, position = work.pop()
            if position == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            targets = edges[module]
            if position < len(targets):
                work.append((module, position + 1))
                target = targets[position]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


if __name__ == "__main__":
    found = circles(build())
    for circle in found:
        print(f"{len(circle)} modules: {', '.join(circle)}")
    if not found:
        print("no import circle")
