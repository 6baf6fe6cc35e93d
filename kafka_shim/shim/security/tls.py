"""The server's TLS context for one listener, from Kafka's ssl.* settings (PEM only).

ssl.cipher.suites takes Kafka's (IANA) names, translated to OpenSSL's, or OpenSSL's own.
Python's ssl cannot narrow TLS 1.3 suites, so TLS 1.3 names are accepted and all of
OpenSSL's TLS 1.3 suites stay enabled.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from typing import Protocol

from kafka_shim.protocol.settings import list_items

_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_KEY_EXCHANGES = {"ECDHE_ECDSA": "ECDHE-ECDSA-", "ECDHE_RSA": "ECDHE-RSA-", "DHE_RSA": "DHE-RSA-", "RSA": ""}
_TLS13_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")


class TlsConfigError(ValueError):
    pass


class TlsSettings(Protocol):
    """The ssl.* settings of one listener (shim.config.broker_config.BrokerConfig is read as
    this: the configuration calls these checks, so they do not import it)."""

    @property
    def ssl_keystore_location(self) -> str | None: ...
    @property
    def ssl_keystore_certificate_chain(self) -> str | None: ...
    @property
    def ssl_keystore_key(self) -> str | None: ...
    @property
    def ssl_key_password(self) -> str | None: ...
    @property
    def ssl_truststore_location(self) -> str | None: ...
    @property
    def ssl_truststore_certificates(self) -> str | None: ...
    @property
    def ssl_client_auth(self) -> str: ...
    @property
    def ssl_enabled_protocols(self) -> str: ...
    @property
    def ssl_cipher_suites(self) -> str: ...


def openssl_cipher_name(name: str) -> str:
    """TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 -> ECDHE-RSA-AES128-GCM-SHA256; others unchanged."""
    kx, sep, rest = name.removeprefix("TLS_").partition("_WITH_")
    if not name.startswith("TLS_") or not sep or kx not in _KEY_EXCHANGES:
        return name
    cipher = rest.replace("AES_128_", "AES128-").replace("AES_256_", "AES256-")
    cipher = cipher.replace("CHACHA20_POLY1305_SHA256", "CHACHA20-POLY1305").replace("CBC_", "")
    return _KEY_EXCHANGES[kx] + cipher.replace("_", "-")


def _pem_file(text: str) -> str:
    """Python's ssl loads keys only from files: PEM given inline goes to a private temp file."""
    handle, path = tempfile.mkstemp(suffix=".pem")
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(text)
    return path


def _load_key_and_chain(context: ssl.SSLContext, config: TlsSettings, listener: str) -> None:
    password = config.ssl_key_password
    if config.ssl_keystore_location is not None:
        try:
            context.load_cert_chain(config.ssl_keystore_location, password=password)
        except (OSError, ssl.SSLError) as exc:
            raise TlsConfigError(
                f"listener {listener}: cannot load ssl.keystore.location "
                f"{config.ssl_keystore_location}: {exc}"
            ) from exc
        return
    if config.ssl_keystore_certificate_chain is None or config.ssl_keystore_key is None:
        raise TlsConfigError(
            f"listener {listener} uses TLS: set ssl.keystore.location (a PEM file with the key and "
            "certificate chain) or ssl.keystore.certificate.chain and ssl.keystore.key "
            "(`kafka-shim dev-certs DIR` writes a local CA and a broker certificate)"
        )
    chain, key = _pem_file(config.ssl_keystore_certificate_chain), _pem_file(config.ssl_keystore_key)
    try:
        context.load_cert_chain(chain, key, password=password)
    except ssl.SSLError as exc:
        raise TlsConfigError(
            f"listener {listener}: bad ssl.keystore.certificate.chain or key: {exc}"
        ) from exc
    finally:
        os.unlink(chain)
        os.unlink(key)


def _load_trust(context: ssl.SSLContext, config: TlsSettings, listener: str) -> bool:
    try:
        if config.ssl_truststore_location is not None:
            context.load_verify_locations(cafile=config.ssl_truststore_location)
        elif config.ssl_truststore_certificates is not None:
            context.load_verify_locations(cadata=config.ssl_truststore_certificates)
        else:
            return False
    except (OSError, ssl.SSLError) as exc:
        raise TlsConfigError(f"listener {listener}: cannot load the truststore: {exc}") from exc
    return True


def server_context(config: TlsSettings, listener: str) -> ssl.SSLContext:
    """The TLS server context of `listener` (config: that listener's settings)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    versions = sorted(_VERSIONS[name] for name in list_items(config.ssl_enabled_protocols))
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    _load_key_and_chain(context, config, listener)
    trusted = _load_trust(context, config, listener)
    context.verify_mode = _CLIENT_AUTH[config.ssl_client_auth]
    if config.ssl_client_auth != "none" and not trusted:
        raise TlsConfigError(
            f"listener {listener}: ssl.client.auth={config.ssl_client_auth} needs ssl.truststore.location "
            "(or ssl.truststore.certificates): the CA client certificates are checked against"
        )
    suites = [name for name in list_items(config.ssl_cipher_suites) if name not in _TLS13_SUITES]
    if suites:
        names = [openssl_cipher_name(name) for name in suites]
        try:
            context.set_ciphers(":".join(names))
        except ssl.SSLError as exc:
            raise TlsConfigError(
                f"listener {listener}: no usable cipher in ssl.cipher.suites: {exc}"
            ) from exc
        enabled = {cipher["name"] for cipher in context.get_ciphers()}
        unknown = [suite for suite, name in zip(suites, names, strict=True) if name not in enabled]
        if unknown:
            raise TlsConfigError(f"listener {listener}: unknown ssl.cipher.suites {', '.join(unknown)}")
    return context
