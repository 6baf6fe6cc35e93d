"""How one broker process reaches another over the Kafka listeners they share (shim.processes.peer),
as Kafka's brokers talk over an inter-broker listener: the first PLAINTEXT listener, else the
first secured one the process can pass, with TLS trusting the brokers' own certificate chain
(every process presents the same one) and SASL as the first --user."""

from __future__ import annotations

import ssl
from collections.abc import Generator, Sequence
from dataclasses import dataclass

from kafka_shim.protocol.settings import list_items
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.config.listeners import Listener

# SCRAM first: the password never crosses the connection; PLAIN where it is the only one.
PEER_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN")


class UnprovenServer(Exception):
    """A SCRAM server's answers did not prove it knows the user's credential."""


@dataclass(frozen=True)
class PeerLogin:
    """A SASL login: the mechanism and the user's name and password (from --user)."""

    mechanism: str
    username: str
    password: str

    def tokens(self) -> Generator[bytes, bytes, None]:
        """The client's SaslAuthenticate tokens, each sent with the server's last answer;
        UnprovenServer when a SCRAM server's answers do not prove it knows the credential."""
        if self.mechanism == "PLAIN":
            yield f"\0{self.username}\0{self.password}".encode()
            return
        import scramp  # only for a SCRAM login: ~60 ms of a broker process's start otherwise

        client = scramp.ScramClient([self.mechanism], self.username, self.password)
        try:
            server_first = yield client.get_client_first().encode()
            client.set_server_first(server_first.decode())
            server_final = yield client.get_client_final().encode()
            client.set_server_final(server_final.decode())
        except scramp.ScramException as exc:
            raise UnprovenServer(str(exc)) from exc


@dataclass(frozen=True)
class PeerRoute:
    """The listener a peer call goes to and what it takes to pass it."""

    listener: str
    ssl_context: ssl.SSLContext | None  # None: no TLS
    login: PeerLogin | None  # None: no SASL


def peer_route(config: BrokerConfig, listeners: Sequence[Listener]) -> PeerRoute | None:
    """The route of this broker's peer calls: PLAINTEXT first, else the first secured listener
    this process can pass; None when there is none (every listener needs a client certificate,
    or SASL without a --user or with no mechanism a peer speaks)."""
    ordered = sorted(listeners, key=lambda listener: listener.protocol != "PLAINTEXT")
    return next((route for route in map(lambda each: _route(config, each), ordered) if route), None)


def _route(config: BrokerConfig, listener: Listener) -> PeerRoute | None:
    own = config.for_listener(listener.name)
    login = None
    if listener.sasl:
        enabled = list_items(own.sasl_enabled_mechanisms)
        mechanism = next((name for name in PEER_MECHANISMS if name in enabled), None)
        if mechanism is None or not config.users:
            return None
        username, password = config.users[0]
        login = PeerLogin(mechanism, username, password)
    context = None
    if listener.tls:
        if own.ssl_client_auth == "required":
            return None  # a broker process has no client certificate of its own
        context = _client_context(own)
    return PeerRoute(listener.name, context, login)


def _client_context(own: BrokerConfig) -> ssl.SSLContext:
    """A TLS client context that trusts the certificates of the brokers' own keystore (the CA
    in its chain): the settings every process presents its certificate from. Checked at
    start (shim.security.listener_security), so they load."""
    if own.ssl_keystore_location is not None:
        context = ssl.create_default_context(cafile=own.ssl_keystore_location)
    else:
        context = ssl.create_default_context(cadata=own.ssl_keystore_certificate_chain)
    # A chain without its root still verifies: what is trusted is what every process presents.
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    return context
