"""The broker's HTTP side: an ASGI application served by Hypercorn's Trio worker in the broker's
own event loop (a server module: it may import Trio), so its handlers read the broker's state
between Kafka requests, without locks or copies."""

from __future__ import annotations

import logging
import ssl
from typing import TYPE_CHECKING, Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

if TYPE_CHECKING:
    from kafka_shim.shim.web.http_guard import Guarded

log = logging.getLogger("kafka_shim.http")


class AcceptFailures(logging.Filter):
    """Trio's accept loop (which Hypercorn serves with) logs a traceback every 0.1 s while
    accept fails for want of capacity (EMFILE: the process is out of file descriptors), about
    ten a second for as long as it lasts: this lets one line through per `interval_s`, without
    the traceback, counting the ones it held back."""

    def __init__(self, interval_s: float = 60.0) -> None:
        super().__init__()
        self.interval_s = interval_s
        self._next_at = 0.0
        self._held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.created < self._next_at:
            self._held += 1
            return False
        held, self._held = self._held, 0
        self._next_at = record.created + self.interval_s
        message = f"an HTTP listener cannot accept: {record.getMessage()}"
        if held:
            message += f" ({held} more since the last line)"
        record.msg, record.args = f"{message}; logged at most every {self.interval_s:.0f} s", ()
        record.exc_info = record.exc_text = None
        return True


ACCEPT_LOG = logging.getLogger("trio.serve_listeners")
if not any(isinstance(each, AcceptFailures) for each in ACCEPT_LOG.filters):
    ACCEPT_LOG.addFilter(AcceptFailures())


def listener_tls(broker: Guarded) -> ssl.SSLContext | None:
    """The TLS context an HTTP surface is served with: the first TLS listener's (its keystore
    and client-certificate requirement), so it is as private as the Kafka listeners; None
    where no listener speaks TLS. `broker`: a broker, or with a process per broker the
    supervisor's stand-in for the cluster (shim.processes.cluster_console.ClusterGuarded)."""
    listener = next((listener for listener in broker.listeners if listener.tls), None)
    if listener is None:
        return None
    from kafka_shim.shim.security.tls import server_context

    return server_context(broker.config.for_listener(listener.name), listener.name)


def parse_address(text: str, what: str) -> tuple[str, int]:
    """HOST:PORT (port 0: a free one; an empty host: loopback); ValueError naming what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{what} {text!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


class _TlsConfig(Config):
    """Hypercorn's config with a TLS context made elsewhere (a Kafka listener's: PEM keystores
    inline or in files, client-certificate checks), instead of its own from file paths."""

    def __init__(self, context: ssl.SSLContext) -> None:
        super().__init__()
        self._context = context

    @property
    def ssl_enabled(self) -> bool:
        return True

    def create_ssl_context(self) -> ssl.SSLContext:
        self._context.set_alpn_protocols(["http/1.1"])
        return self._context


async def serve_asgi(
    app: Any,
    address: str,
    what: str,
    tls: ssl.SSLContext | None = None,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `app` on `address` (over TLS with `tls`); started() hands over its URLs.
    `fd://N`: on a socket already listening, which Hypercorn takes over."""
    config = Config() if tls is None else _TlsConfig(tls)
    if address.startswith("fd://"):
        config.bind = [address]
    else:
        host, port = parse_address(address, what)
        config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = log
    config.graceful_timeout = 0.5
    await serve(app, config, task_status=task_status)
