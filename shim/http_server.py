"""The broker's HTTP side: an ASGI application served by Hypercorn's Trio worker in the broker's
own event loop (a server module: it may import Trio), so its handlers read the broker's state
between Kafka requests, without locks or copies."""

from __future__ import annotations

import logging
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

log = logging.getLogger("kafka_shim.http")


def parse_address(text: str, what: str) -> tuple[str, int]:
    """HOST:PORT (port 0: a free one; an empty host: loopback); ValueError naming what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{what} {text!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


async def serve_asgi(
    app: Any, address: str, what: str, task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve `app` on `address`; started() hands over the URLs it listens on."""
    host, port = parse_address(address, what)
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = log
    config.graceful_timeout = 0.5
    await serve(app, config, task_status=task_status)
