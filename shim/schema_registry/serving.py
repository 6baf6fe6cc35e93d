"""Serving the registry from the broker's server (shim.server), after the Kafka listeners.

Its port is bound at once (a socket, no imports), so a client that asks the registry first
(a serializer registers its schema before the first produce) is not refused: the registry's
stack (Starlette, Hypercorn, the store) is imported, on a worker thread, as soon as the first
of three happens: the Kafka listener answers, a client connects to the registry's port, or
_LOAD_AFTER_S passes. Its pending connection is then served. A port that cannot be bound is
one warning; whatever breaks the registry, Kafka is still served."""

from __future__ import annotations

import importlib
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from kafka_shim.shim.server import Server

log = logging.getLogger("kafka_shim.server")

LOAD_AFTER_S = 1.0  # as the console: with no client at all, load this long after listening
MODULES = ("kafka_shim.shim.http_server", "kafka_shim.shim.schema_registry.app")


def _bound(address: str) -> socket.socket:
    """A listening socket on HOST:PORT (an empty host: loopback), OSError if it cannot be."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise OSError(0, f"{address!r} is not HOST:PORT")
    listener = socket.create_server((host.strip("[]") or "127.0.0.1", int(port)), reuse_port=False)
    listener.setblocking(False)
    return listener


async def _first_of(*waits: Callable[[], Awaitable[object]]) -> None:
    """Return once the first of `waits` returns."""
    async with trio.open_nursery() as nursery:

        async def then_stop(wait: Callable[[], Awaitable[object]]) -> None:
            await wait()
            nursery.cancel_scope.cancel()

        for wait in waits:
            nursery.start_soon(then_stop, wait)


async def serve_registry(server: Server, address: str, wait_for_clients: bool) -> None:
    broker = server.broker
    try:
        listener = _bound(address)
    except OSError as exc:
        server.schema_registry_failure = f"cannot listen on {address}: {exc.strerror or exc}"
        log.warning("schema registry not served: %s", server.schema_registry_failure)
        return
    try:
        if wait_for_clients:
            with trio.move_on_after(LOAD_AFTER_S):
                await _first_of(server.kafka_answered.wait, lambda: trio.lowlevel.wait_readable(listener))
        for module in MODULES:
            await trio.to_thread.run_sync(importlib.import_module, module)
        from kafka_shim.shim.http_server import listener_tls, serve_asgi
        from kafka_shim.shim.schema_registry.app import registry_app

        app = registry_app(broker)
        async with trio.open_nursery() as nursery:
            # Hypercorn takes the bound socket over (fd://): it closes it when it stops.
            urls = await nursery.start(
                serve_asgi, app, f"fd://{listener.detach()}", "schema registry listener", listener_tls(broker)
            )
            server.schema_registry_urls = [url.replace("://0.0.0.0:", "://127.0.0.1:") for url in urls]
            log.info("schema registry on %s", ", ".join(server.schema_registry_urls))
    except Exception as exc:  # whatever breaks the registry, Kafka is still served
        server.schema_registry_failure = repr(exc)
        log.error("schema registry stopped: %r", exc)
        log.debug("traceback", exc_info=exc)
    finally:
        if listener.fileno() != -1:
            listener.close()
