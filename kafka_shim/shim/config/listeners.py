"""Kafka's `listeners`, `advertised.listeners` and `listener.security.protocol.map`.

A listener is a named endpoint (`NAME://host:port`) the broker binds; its security protocol
comes from the map (by name, as in Kafka); its advertised endpoint (same name) is what
Metadata, FindCoordinator and DescribeCluster tell a client that connected to it. So one
listener can serve a container network and another the host's mapped port.

As in Kafka: names are case-insensitive (upper-cased), an empty host binds every (IPv4)
interface and is advertised as this machine's name, an advertised port of 0 is the port the
listener was bound to, 0.0.0.0 is never advertised. One broker, so every listener must be
advertised (Kafka would answer clients on an unadvertised one LISTENER_NOT_FOUND).
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, replace

# Kafka's SecurityProtocol names (shim.security serves the three secured ones).
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
TLS_PROTOCOLS = ("SSL", "SASL_SSL")
SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
WILDCARD_HOSTS = ("0.0.0.0", "::")

_ENDPOINT = re.compile(
    r"^(?P<name>[^:/]+)://(?:\[(?P<ipv6>[0-9a-fA-F:.%]*)\]|(?P<host>[\w.\-%]*)):(?P<port>\d+)$"
)


class ListenerError(ValueError):
    """A listener spec that cannot be served, with a message naming the config."""


@dataclass(frozen=True)
class Endpoint:
    name: str
    host: str  # "" = every interface (bind) / this machine's name (advertised)
    port: int  # 0 = any free port (bind) / the bound port (advertised)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


@dataclass(frozen=True)
class Listener:
    name: str
    protocol: str
    bind: Endpoint
    advertised: Endpoint

    @property
    def tls(self) -> bool:
        return self.protocol in TLS_PROTOCOLS

    @property
    def sasl(self) -> bool:
        return self.protocol in SASL_PROTOCOLS

    def for_node(self, position: int) -> Listener:
        """This listener as the emulated broker at `position` (shim.testbroker.cluster) serves it: fixed
        ports shifted by the position (9092, 9093, ...), port 0 still any free port."""
        if position == 0:
            return self
        bind, public = self.bind, self.advertised
        return replace(
            self,
            bind=replace(bind, port=bind.port + position if bind.port else 0),
            advertised=replace(public, port=public.port + position if public.port else 0),
        )

    def advertised_address(self, bound_port: int) -> tuple[str, int]:
        """Where clients that connected to this listener are told to connect."""
        host = self.advertised.host or socket.getfqdn()
        return host, self.advertised.port or bound_port


def parse_endpoints(text: str, key: str) -> tuple[Endpoint, ...]:
    """`NAME://host:port,...` (IPv6 hosts in brackets); names must differ."""
    endpoints: list[Endpoint] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        match = _ENDPOINT.match(item)
        if match is None:
            raise ListenerError(f"{key}: cannot parse {item!r} as NAME://host:port")
        port = int(match["port"])
        if port > 65535:
            raise ListenerError(f"{key}: {item!r}: {port} is not a TCP port")
        host = match["ipv6"] if match["ipv6"] is not None else match["host"]
        endpoints.append(Endpoint(match["name"].upper(), host, port))
    names = [e.name for e in endpoints]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        repeated = ", ".join(duplicates)
        raise ListenerError(f"{key}: each listener must have a different name; repeated: {repeated}")
    return tuple(endpoints)


def parse_protocol_map(text: str) -> dict[str, str]:
    """`NAME:PROTOCOL,...` as in Kafka's listener.security.protocol.map."""
    protocols: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, protocol = item.partition(":")
        if not sep or not name.strip() or not protocol.strip():
            raise ListenerError(
                f"listener.security.protocol.map: map entry {item!r} should be of form NAME:PROTOCOL"
            )
        protocol = protocol.strip().upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise ListenerError(
                f"listener.security.protocol.map: unknown security protocol {protocol!r} "
                f"(Kafka's are {', '.join(SECURITY_PROTOCOLS)})"
            )
        protocols[name.strip().upper()] = protocol
    return protocols


def resolve(listeners: str, advertised_listeners: str | None, protocol_map: str) -> tuple[Listener, ...]:
    """The listeners to serve, each with its protocol and advertised endpoint; every
    inconsistency between the three configs is refused here, at start."""
    bound = parse_endpoints(listeners, "listeners")
    if not bound:
        raise ListenerError("listeners: at least one listener is needed")
    ports = [e.port for e in bound if e.port != 0]
    reused = sorted({port for port in ports if ports.count(port) > 1})
    if reused:
        raise ListenerError(
            f"listeners: each listener must have a different port; {', '.join(map(str, reused))} "
            f"repeated in {listeners!r}"
        )
    advertised = bound
    if advertised_listeners is not None:
        advertised = parse_endpoints(advertised_listeners, "advertised.listeners")
    names = [e.name for e in bound]
    strays = [e.name for e in advertised if e.name not in names]
    if strays:
        raise ListenerError(
            f"advertised.listeners listener names must be equal to or a subset of the ones defined in "
            f"listeners. Found {', '.join(strays)}; the listeners are {', '.join(names)}"
        )
    by_name = {e.name: e for e in advertised}
    protocols = parse_protocol_map(protocol_map)
    resolved = []
    for endpoint in bound:
        public = by_name.get(endpoint.name)
        if public is None:
            raise ListenerError(
                f"listener {endpoint.name} is not in advertised.listeners: a single broker must tell "
                f"clients on every listener where to connect (add {endpoint.name}://HOST:PORT)"
            )
        if public.host in WILDCARD_HOSTS:
            raise ListenerError(
                f"advertised.listeners cannot use the nonroutable meta-address {public.host} "
                f"(listener {endpoint.name}): advertise a routable host name or address "
                "(advertised.listeners, or --advertised-host with --host)"
            )
        protocol = protocols.get(endpoint.name)
        if protocol is None:
            raise ListenerError(
                f"no security protocol defined for listener {endpoint.name} in "
                f"listener.security.protocol.map ({protocol_map!r})"
            )
        resolved.append(Listener(endpoint.name, protocol, endpoint, public))
    return tuple(resolved)
