"""The layer rules of docs/architecture.md, checked on the import graph of the source files
(tests/import_graph.py says why it reads files rather than running import-linter). The rules
name rooms (shim/net/, shim/web/, shim/handlers/, ...), so a module added to a room is held
to its room's rules without editing this file.

A rule forbids chains, not only direct imports: a module may not import what it must not know,
whether where it is used (a lazy import) or at import time, nor load it through the modules it
imports (their import-time imports; a lazy import elsewhere, such as config's of listener
security, is that module's business). Every rule holds with no exception: a change that breaks
one changes its shape, not this file."""

from __future__ import annotations

import pytest

from tests.import_graph import Graph, build, circles

PROTOCOL = "kafka_shim.protocol"
STORAGE = "kafka_shim.storage"
SHIM = "kafka_shim.shim"
PIPELINE = "kafka_shim.pipeline"
VIEWS = "kafka_shim.protocol.views"  # protocol.viewgen's typed views of the requests
BROKER = "kafka_shim.shim.broker"
COORDINATORS = ("kafka_shim.shim.coordinator", "kafka_shim.shim.transactions.coordinator")
# The network side, the only modules that may import Trio: the net room (listeners, framing,
# the gates, the dispatch step, timers, BrokerThread), its old import path shim.server, the
# HTTP servers of the web and test-broker rooms, and what runs a loop: the command line and a
# broker process of --process-per-broker, its calls to the other processes (the
# controller's topic creation, transaction markers and checks) and its wait for the lock of
# the cluster's metadata.
NETWORK_SIDE = (
    "kafka_shim.shim.net",
    "kafka_shim.shim.server",
    "kafka_shim.shim.web.http_server",
    "kafka_shim.shim.web.deferred_http",
    "kafka_shim.shim.testbroker.control_server",
    "kafka_shim.shim.cli.main",
    "kafka_shim.shim.processes.node",
    "kafka_shim.shim.processes.forwarding",
    "kafka_shim.shim.processes.peer",
    "kafka_shim.shim.processes.marker_sender",
    "kafka_shim.shim.processes.verification",
    "kafka_shim.shim.processes.transaction_ends",
    "kafka_shim.shim.processes.view_wire",
    "kafka_shim.shim.processes.view_service",
    "kafka_shim.shim.processes.cluster_console",
    "kafka_shim.shim.processes.cluster_metadata",
)
# What the broker (the state every service shares) must not know, by room: the API layer
# (handlers and the context they get), the web room (console, views, metrics, HTTP), the
# network side, the command line, the broker processes, the schema registry and the test
# broker's control endpoint.
ABOVE_THE_BROKER = (
    "kafka_shim.shim.handlers",
    "kafka_shim.shim.context",
    "kafka_shim.shim.web",
    "kafka_shim.shim.net",
    "kafka_shim.shim.server",
    "kafka_shim.shim.cli",
    "kafka_shim.shim.processes",
    "kafka_shim.shim.schema_registry",
    "kafka_shim.shim.testbroker.control_api",
    "kafka_shim.shim.testbroker.control_server",
)


@pytest.fixture(scope="module")
def graph() -> Graph:
    built = build()
    # Every rule below passes on a graph that read nothing: make sure it read the product.
    assert BROKER in built.files and "kafka_shim.shim.config.broker_config" in built.internal(BROKER)
    return built


def _within(module: str, packages: tuple[str, ...] | str) -> bool:
    if isinstance(packages, str):
        packages = (packages,)
    return any(module == p or module.startswith(p + ".") for p in packages)


def _chains(
    graph: Graph, sources: list[str], forbidden: tuple[str, ...], *, at_import: bool = False
) -> list[list[str]]:
    """For each source, the shortest import chain to each forbidden module or outside package
    it reaches: any import of its own (only its eager ones if `at_import`), then the eager
    imports of the modules it imports."""
    found = []
    for source in sources:
        parent: dict[str, str] = {}
        queue = [source]
        seen = {source}
        while queue:
            module = queue.pop(0)
            for imported in graph.imports[module]:
                if (module != source or at_import) and not imported.eager:
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
    """Nothing outside the network side imports Trio, nor loads it at import time through
    what it imports: the state, the coordinators and the handlers run the same under any
    loop, and the broker's parts can be driven (and tested) without one."""
    outside = [m for m in graph.files if not _within(m, NETWORK_SIDE)]
    importers = sorted(m for m in outside if any(_within(i.target, "trio") for i in graph.imports[m]))
    assert not importers, f"Trio imported outside the network side: {importers}"
    # What starts a broker (the pytest plugin, kafka_shim.controls) imports the network side
    # where it does so, never when it is imported.
    chains = _chains(graph, outside, ("trio",), at_import=True)
    assert not chains, f"Trio loaded at import time outside the network side:\n{_show(chains)}"


def test_broker_knows_nothing_above_it(graph: Graph) -> None:
    chains = _chains(graph, [BROKER], ABOVE_THE_BROKER)
    assert not chains, f"the broker reaches what is above it:\n{_show(chains)}"


def test_the_typed_views_are_for_the_type_checker_alone(graph: Graph) -> None:
    """protocol/views/ (generated typing.Protocols, some 70 ms to import) never load in a
    running broker: every module outside them names them under `if TYPE_CHECKING:` only."""
    outside = [m for m in graph.files if not _within(m, VIEWS)]
    loaded = sorted(
        f"{m}:{i.line}"
        for m in outside
        for i in graph.imports[m]
        if _within(i.target, VIEWS) and not i.type_only
    )
    assert not loaded, f"the typed views imported where they run: {loaded}"


def test_no_import_circle(graph: Graph) -> None:
    """No two modules import each other, directly or round a circle, counting every import
    (lazy and TYPE_CHECKING ones too): what a module needs of one that uses it is handed in
    (a Protocol of what it reads, as shim.net.connections.Accepting)."""
    found = circles(graph)
    assert not found, f"import circles (break them; see docs/architecture.md):\n{found}"
