"""What one listener's connections run by: its TLS context, SASL mechanisms and session
lifetime, and how a client certificate becomes a principal. Built once per listener, at start;
every inconsistency is refused then, as a ConfigError naming the listener."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Protocol

from kafka_shim.protocol.settings import list_items
from kafka_shim.shim.config.errors import ConfigError
from kafka_shim.shim.config.listeners import Listener
from kafka_shim.shim.security.delegation_tokens import DelegationTokens
from kafka_shim.shim.security.principal import (
    ANONYMOUS,
    PrincipalError,
    Rule,
    certificate_subject,
    map_subject,
    parse_rules,
)
from kafka_shim.shim.security.sasl import SaslSession
from kafka_shim.shim.security.scram_store import CredentialStore
from kafka_shim.shim.security.tls import TlsConfigError, TlsSettings, server_context


class ListenerSettings(TlsSettings, Protocol):
    """The settings a listener's security is built from (shim.config.broker_config.BrokerConfig
    is read as this: the configuration calls `check_listeners`, so this does not import it)."""

    @property
    def ssl_principal_mapping_rules(self) -> str: ...
    @property
    def sasl_enabled_mechanisms(self) -> str: ...
    @property
    def connections_max_reauth_ms(self) -> int: ...
    @property
    def sasl_server_max_receive_size(self) -> int: ...
    def for_listener(self, name: str) -> ListenerSettings: ...


@dataclass(frozen=True)
class ListenerSecurity:
    protocol: str
    ssl_context: ssl.SSLContext | None  # None: plaintext
    sasl_mechanisms: tuple[str, ...]  # empty: no SASL on this listener
    max_reauth_ms: int
    max_receive_size: int  # largest frame before authentication
    principal_rules: tuple[Rule, ...]

    @property
    def sasl(self) -> bool:
        return bool(self.sasl_mechanisms)

    def new_session(
        self, credentials: CredentialStore, tokens: DelegationTokens | None = None
    ) -> SaslSession:
        return SaslSession(self.sasl_mechanisms, credentials, self.max_reauth_ms, tokens)

    def certificate_principal(self, der: bytes | None) -> str:
        """The principal of a TLS connection: the client certificate's mapped subject, or
        User:ANONYMOUS without one (PrincipalError if no mapping rule applies)."""
        if der is None:
            return ANONYMOUS
        return map_subject(certificate_subject(der), self.principal_rules)


PLAINTEXT = ListenerSecurity("PLAINTEXT", None, (), 0, 0, ())


def listener_security(config: ListenerSettings, listener: Listener) -> ListenerSecurity:
    """`listener`'s security from the broker's settings and its listener.name.* overrides."""
    if listener.protocol == "PLAINTEXT":
        return PLAINTEXT
    own = config.for_listener(listener.name)
    try:
        context = server_context(own, listener.name) if listener.tls else None
        rules = parse_rules(own.ssl_principal_mapping_rules)
    except (TlsConfigError, PrincipalError) as exc:
        raise ConfigError(str(exc)) from exc
    mechanisms = tuple(list_items(own.sasl_enabled_mechanisms)) if listener.sasl else ()
    return ListenerSecurity(
        listener.protocol,
        context,
        mechanisms,
        own.connections_max_reauth_ms,
        own.sasl_server_max_receive_size,
        rules,
    )


def check_listeners(config: ListenerSettings, listeners: tuple[Listener, ...]) -> None:
    """Refuse at start what could not be served (ConfigError)."""
    for listener in listeners:
        listener_security(config, listener)


__all__ = ["ANONYMOUS", "PLAINTEXT", "ListenerSecurity", "check_listeners", "listener_security"]
