"""An HTTP surface served after the Kafka listeners without refusing an early client (the
schema registry: a serializer registers its schema before its first produce).

Its port is bound at once (a plain socket: nothing imported), and its stack (Hypercorn,
Starlette, the surface's own modules) is imported on a worker thread on the first of three:
the Kafka listener answers, a client connects to the surface's port, or LOAD_AFTER_S passes.
Hypercorn then takes the socket over and serves the connections that waited. Light on
purpose: the server imports it before its first Kafka answer."""

from __future__ import annotations

import importlib
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import trio

log = logging.getLogger("kafka_shim.server")

LOAD_AFTER_S = 1.0  # as the console: with no client at all, load this long after listening


def bound(address: str) -> socket.socket:
    """A listening socket on HOST:PORT (an empty host: loopback); OSError if it cannot be."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise OSError(0, f"{address!r} is not HOST:PORT")
    listener = socket.create_server((host.strip("[]") or "127.0.0.1", int(port)))
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


async def serve_deferred(
    listener: socket.socket,
    what: str,
    modules: tuple[str, ...],
    make_app: Callable[[], Any],
    tls: Callable[[], Any],
    kafka_answered: Callable[[], Awaitable[object]] | None,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the app `make_app()` builds on `listener` once loaded (at once without
    `kafka_answered`); started() hands over its URLs. The listener is Hypercorn's from then."""
    try:
        if kafka_answered is not None:
            with trio.move_on_after(LOAD_AFTER_S):
                await _first_of(kafka_answered, lambda: trio.lowlevel.wait_readable(listener))
        for module in ("kafka_shim.shim.web.http_server", *modules):
            await trio.to_thread.run_sync(importlib.import_module, module)
        from kafka_shim.shim.web.http_server import serve_asgi

        app = make_app()
        context = tls()
        fd = listener.detach()  # Hypercorn's from here (fd://): it closes it when it stops
        await serve_asgi(app, f"fd://{fd}", what, context, task_status=task_status)
    finally:
        if listener.fileno() != -1:
            listener.close()
