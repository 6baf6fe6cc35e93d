"""Listening sockets: a listener bound, and bound again when its emulated broker restarts."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

if TYPE_CHECKING:
    from kafka_shim.shim.config.broker_config import BrokerConfig
    from kafka_shim.shim.config.listeners import Listener
    from kafka_shim.shim.security.listener_security import ListenerSecurity


@dataclass(frozen=True)
class BoundListener:
    """A listener's sockets, the address it is bound to, and what it advertises."""

    name: str
    sockets: list[trio.SocketListener]
    bound: tuple[str, int]
    advertised: tuple[str, int]
    security: ListenerSecurity | None = None  # None: PLAINTEXT
    node_id: int = 0  # the emulated broker it belongs to (shim.testbroker.cluster)

    def describe(self) -> str:
        (host, port), (public_host, public_port) = self.bound, self.advertised
        return f"{host}:{port} ({self.name}, advertised as {public_host}:{public_port})"


def listen_again(family: socket.AddressFamily, address: Any) -> trio.SocketListener:
    """A listening socket on an address bound before (SO_REUSEADDR, as Trio binds)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(socket.SOMAXCONN)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(trio.socket.from_stdlib_socket(sock))


async def bind_listener(config: BrokerConfig, listener: Listener, node_id: int) -> BoundListener:
    """`listener` bound for emulated broker `node_id`; a busy port is an OSError whose filename
    names the listener."""
    host = listener.bind.host or "0.0.0.0"
    try:
        sockets = await trio.open_tcp_listeners(listener.bind.port, host=host)
    except OSError as exc:
        where = f"{host}:{listener.bind.port} (listener {listener.name})"
        raise OSError(exc.errno, exc.strerror, where) from exc
    host, port = sockets[0].socket.getsockname()[:2]
    advertised = listener.advertised_address(port)
    security = security_of(config, listener)
    return BoundListener(listener.name, sockets, (host, port), advertised, security, node_id)


def security_of(config: BrokerConfig, listener: Listener) -> ListenerSecurity | None:
    """What `listener`'s connections run by (TLS context, SASL mechanisms); None for PLAINTEXT."""
    if listener.protocol == "PLAINTEXT":  # plaintext brokers never import ssl
        return None
    from kafka_shim.shim.security.listener_security import listener_security

    return listener_security(config, listener)
