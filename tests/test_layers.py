"""The layer rules of docs/architecture.md, checked on the import graph of the source files
(tests/import_graph.py says why it reads files rather than running import-linter).

A rule forbids chains, not only direct imports: a module may not import what it must not know,
whether where it is used (a lazy import) or at import time, nor load it through the modules it
imports (their import-time imports; a lazy import elsewhere, such as config's of listener
security, is that module's business). Where a rule does not hold today the violation is listed below with
its reason; the test fails when the list would have to grow, and when an entry is fixed (so
that the list shrinks with the code)."""

from __future__ import annotations

import pytest

from tests.import_graph import Graph, build, circles

PROTOCOL = "kafka_shim.protocol"
STORAGE = "kafka_shim.storage"
SHIM = "kafka_shim.shim"
PIPELINE = "kafka_shim.pipeline"
BROKER = "kafka_shim.shim.broker"
COORDINATORS = ("kafka_shim.shim.coordinator", "kafka_shim.shim.transactions.coordinator")
# The network side: the only modules that may import Trio (shim.net: listeners, framing, the
# gate, the dispatch step, timers; the HTTP servers of the console, metrics, registry and control
# endpoint, and the command line that runs them).
NETWORK_SIDE = frozenset(
    {
        "kafka_shim.shim.cli.main",
        "kafka_shim.shim.processes.node",
        "kafka_shim.shim.testbroker.control_server",
        "kafka_shim.shim.web.deferred_http",
        "kafka_shim.shim.web.http_server",
        *(
            f"kafka_shim.shim.net.{module}"
            for module in (
                "connections",
                "context",
                "dispatch",
                "framing",
                "gate",
                "listening",
                "running",
                "server",
                "surfaces",
                "waiting",
            )
        ),
    }
)
# What the broker (the state every service shares) must not know: the API layer (handlers
# and the context they get), the console's views and every web or network module.
API_AND_WEB = (
    "kafka_shim.shim.handlers",
    "kafka_shim.shim.context",
    "kafka_shim.shim.web.views",
    "kafka_shim.shim.web.console",
    "kafka_shim.shim.web.metrics",
    "kafka_shim.shim.web.http_server",
    "kafka_shim.shim.web.http_guard",
    "kafka_shim.shim.web.deferred_http",
    "kafka_shim.shim.testbroker.control_api",
    "kafka_shim.shim.testbroker.control_server",
    "kafka_shim.shim.schema_registry",
    "kafka_shim.shim.net",
    "kafka_shim.shim.server",
)

# Known violations. Import circles left, each closed only by a lazy or TYPE_CHECKING import
# (none is an import-time circle): refused to grow, and a new one fails the test; remove an
# entry with its fix.
KNOWN_CIRCLES = [
    # The schema compiles its codec on first use (a lazy import of codegen, which walks the
    # schema's constructs); codegen names the schema's classes.
    {"kafka_shim.protocol.codegen", "kafka_shim.protocol.schema"},
    # Listener security is imported only by a broker with secured listeners (start-up time);
    # it reads the BrokerConfig it checks, and raises config's ConfigError.
    {
        "kafka_shim.shim.config.broker_config",
        "kafka_shim.shim.security.listener_security",
        "kafka_shim.shim.security.tls",
    },
    # The server starts the console and control endpoint after its first answer (lazy
    # imports, shim.net.surfaces); they drive the server (its emulated brokers' start and stop,
    # named by type only). To go when the test broker's front ends have their own room.
    {
        "kafka_shim.shim.web.console.app",
        "kafka_shim.shim.testbroker.control_api",
        "kafka_shim.shim.testbroker.control_server",
        "kafka_shim.shim.net.server",
        "kafka_shim.shim.net.surfaces",
    },
]


@pytest.fixture(scope="module")
def graph() -> Graph:
    return build()


def _within(module: str, packages: tuple[str, ...] | frozenset[str] | str) -> bool:
    if isinstance(packages, str):
        packages = (packages,)
    return any(module == p or module.startswith(p + ".") for p in packages)


def _chains(graph: Graph, sources: list[str], forbidden: tuple[str, ...]) -> list[list[str]]:
    """For each source, the shortest import chain to each forbidden module or outside package
    it reaches: any import of its own, then the eager imports of the modules it imports."""
    found = []
    for source in sources:
        parent: dict[str, str] = {}
        queue = [source]
        seen = {source}
        while queue:
            module = queue.pop(0)
            for imported in graph.imports[module]:
                if module != source and not imported.eager:
                    continue
                target = imported.target
                if _within(target, forbidden):
                    chain = [target, module]
                    while chain[-1] != source:
                        chain.append(parent[chain[-1]])
                    found.append(chain[::-1])
                elif target in graph.files and target not in seen:
                    seen.add(target)
                    parent[target] = module
                    queue.append(target)
    return found


def _show(chains: list[list[str]]) -> str:
    return "\n".join(" -> ".join(chain) for chain in chains)


def test_protocol_and_storage_never_import_shim(graph: Graph) -> None:
    sources = [m for m in graph.files if _within(m, (PROTOCOL, STORAGE))]
    chains = _chains(graph, sources, (SHIM, PIPELINE))
    assert not chains, f"protocol/ and storage/ know nothing above them:\n{_show(chains)}"


def test_coordinators_import_neither_storage_nor_broker_nor_trio(graph: Graph) -> None:
    sources = [m for m in graph.files if _within(m, COORDINATORS)]
    chains = _chains(graph, sources, (STORAGE, BROKER, "trio"))
    assert not chains, f"coordinators are pure (no storage, broker, Trio):\n{_show(chains)}"


def test_only_the_network_side_imports_trio(graph: Graph) -> None:
    importers = {m for m, imports in graph.imports.items() if any(_within(i.target, "trio") for i in imports)}
    outside = sorted(importers - NETWORK_SIDE)
    assert not outside, f"Trio imported outside the network side: {outside}"


def test_broker_knows_no_handler_view_or_web_module(graph: Graph) -> None:
    chains = _chains(graph, [BROKER], API_AND_WEB)
    assert not chains, f"the broker reaches the API or web layer:\n{_show(chains)}"


def test_no_new_import_circle(graph: Graph) -> None:
    found = [set(circle) for circle in circles(graph)]
    new = [sorted(c) for c in found if not any(c <= known for known in KNOWN_CIRCLES)]
    assert not new, f"import circles (break them; see docs/architecture.md):\n{new}"
    fixed = [sorted(k) for k in KNOWN_CIRCLES if not any(c <= k for c in found)]
    assert not fixed, f"fixed: remove {fixed} from KNOWN_CIRCLES"
