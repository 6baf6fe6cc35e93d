"""The HTTP surfaces' start-up beside the Kafka listeners: the test broker's control endpoint,
the web console (and /metrics), the schema registry. Each is secured as the listeners are
(shim.web.http_guard); a port that cannot be bound is one warning, and whatever breaks one of them,
Kafka is still served. What Kafka clients do not need loads after the first Kafka answer."""

from __future__ import annotations

import importlib
import logging
import socket
from typing import TYPE_CHECKING, Any, Protocol

import trio

if TYPE_CHECKING:  # the protocol only types this module: the control API loads when used
    from kafka_shim.shim.testbroker.control_api import Controlled

    class Hosting(Controlled, Protocol):
        """What the surfaces need of the server that starts them (shim.net.server.Server):
        what the control endpoint drives, the first Kafka answer to wait for, and where to
        say each surface listens. The server hands itself in; nothing here imports it."""

        kafka_answered: trio.Event
        control_urls: list[str]
        console_urls: list[str]
        schema_registry_urls: list[str]
        schema_registry_failure: str | None  # why the registry is not served, if it failed
        schema_registry_started: bool


log = logging.getLogger("kafka_shim.server")
# What Kafka clients do not need (the console) loads after the first Kafka answer, or this
# long after listening when no client has come by then.
_LOAD_AFTER_S = 1.0


async def start_control_endpoint(server: Hosting, nursery: trio.Nursery, address: str) -> None:
    """The test broker's control endpoint (docs/test-broker.md), listening before the server
    reports itself started."""
    from kafka_shim.shim.testbroker.control_server import serve_control

    server.control_urls = await nursery.start(serve_control, server, address)
    log.info("control endpoint on %s", ", ".join(server.control_urls))


async def load_after_kafka_answers(server: Hosting, *modules: str) -> None:
    """Import `modules` once the Kafka listener has answered its first request (or
    _LOAD_AFTER_S after it listens, with no client yet), on a worker thread: they are what
    the first answer does not need (the console's stack costs ~0.3 s, the coordinators'
    code ~25 ms), and importing them on the loop would hold every Kafka request meanwhile."""
    with trio.move_on_after(_LOAD_AFTER_S):
        await server.kafka_answered.wait()
    for module in modules:
        await trio.to_thread.run_sync(importlib.import_module, module)


async def serve_console(server: Hosting, address: str) -> None:
    """The web console and /metrics (docs/console.md). A port that cannot be bound is one
    warning: the broker serves Kafka without its console rather than not at all."""
    await load_after_kafka_answers(
        server, "kafka_shim.shim.web.http_server", "kafka_shim.shim.web.console.app"
    )
    from kafka_shim.shim.web.console.app import console_app
    from kafka_shim.shim.web.http_server import listener_tls, serve_asgi

    # Secured as the listeners are (shim.web.http_guard): TLS as the first TLS listener.
    tls = listener_tls(server.broker)
    try:
        app = console_app(server.broker)
        async with trio.open_nursery() as nursery:
            urls = await nursery.start(serve_asgi, app, address, "console listener", tls)
            server.console_urls = [url.replace("://0.0.0.0:", "://127.0.0.1:") for url in urls]
            # The address bound (0.0.0.0: every interface, in a container the one published).
            log.info("console on %s", ", ".join(f"{url}/console" for url in urls))
    except* OSError as failed:  # the nursery wraps it in an exception group
        reason = failed.exceptions[0]
        why = getattr(reason, "strerror", None) or reason
        log.warning("console not served: cannot listen on %s: %s", address, why)
    except* Exception as failed:  # whatever breaks the console, Kafka is still served
        log.error("console stopped: %r", failed.exceptions[0])
        log.debug("traceback", exc_info=failed)


async def serve_schema_registry(
    server: Hosting, address: str, wait_for_clients: bool = True, listener: socket.socket | None = None
) -> None:
    """The schema registry (docs/schema-registry.md), secured as the console is; its port
    bound at once (or `listener`, already bound on `address`: the supervisor's, with a process
    per broker), its stack loaded after the Kafka listener answers or a client comes
    (shim.web.deferred_http). A port that cannot be bound is one warning."""
    from kafka_shim.shim.web.deferred_http import bound, serve_deferred

    server.schema_registry_started = True
    broker = server.broker

    def app() -> Any:
        from kafka_shim.shim.schema_registry.app import registry_app

        return registry_app(broker)

    def tls() -> Any:
        from kafka_shim.shim.web.http_server import listener_tls

        return listener_tls(broker)

    try:
        if listener is None:
            listener = bound(address)
        async with trio.open_nursery() as nursery:
            urls = await nursery.start(
                serve_deferred,
                listener,
                "schema registry listener",
                ("kafka_shim.shim.schema_registry.app",),
                app,
                tls,
                server.kafka_answered.wait if wait_for_clients else None,
            )
            server.schema_registry_urls = [url.replace("://0.0.0.0:", "://127.0.0.1:") for url in urls]
            log.info("schema registry on %s", ", ".join(urls))  # the address bound, as the console's
    except* OSError as failed:
        reason = failed.exceptions[0]
        server.schema_registry_failure = (
            f"cannot listen on {address}: {getattr(reason, 'strerror', None) or reason}"
        )
        log.warning("schema registry not served: %s", server.schema_registry_failure)
    except* Exception as failed:  # whatever breaks the registry, Kafka is still served
        server.schema_registry_failure = repr(failed.exceptions[0])
        log.error("schema registry stopped: %r", failed.exceptions[0])
        log.debug("traceback", exc_info=failed)
