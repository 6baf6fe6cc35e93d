"""The gate of a secured listener's connection, before its requests reach the dispatch step:
its TLS handshake and client certificate, its SASL session and the pre-authentication exchange
(bare SASL tokens after a v0 SaslHandshake), Kafka's delay after a failed login, and the
connection quotas (KIP-612 creation rate, KIP-219 muting while throttled)."""

from __future__ import annotations

import logging
import struct
from typing import TYPE_CHECKING

import trio

from kafka_shim.shim.broker import Broker
from kafka_shim.shim.net.context import TrioRequestContext
from kafka_shim.shim.net.framing import ConnectionClosed

if TYPE_CHECKING:
    from kafka_shim.shim.security.listener_security import ListenerSecurity

_LENGTH = struct.Struct(">i")
# A client that starts TLS and stalls is dropped after this long.
_TLS_HANDSHAKE_TIMEOUT_S = 10.0


async def secure(
    broker: Broker, stream: trio.SocketStream, security: ListenerSecurity, ctx: TrioRequestContext
) -> trio.SSLStream[trio.SocketStream] | None:
    """A secured listener's connection: its SASL session (SASL listeners) and its TLS
    handshake (SSL, SASL_SSL), whose failure closes only this connection, with one line."""
    from kafka_shim.shim.security.principal import PrincipalError

    if security.sasl:
        ctx.sasl = security.new_session(broker.credentials, broker.delegation_tokens)
    if security.ssl_context is None:
        return None
    tls = trio.SSLStream(stream, security.ssl_context, server_side=True)
    where = f"TLS listener {ctx.listener.name}"
    try:
        with trio.fail_after(_TLS_HANDSHAKE_TIMEOUT_S):
            await tls.do_handshake()
    except trio.TooSlowError:
        raise ConnectionClosed(f"no TLS handshake within {_TLS_HANDSHAKE_TIMEOUT_S:g} s on {where}") from None
    except trio.BrokenResourceError as exc:
        cause = exc.__cause__ or exc
        plaintext = getattr(cause, "reason", None) in ("WRONG_VERSION_NUMBER", "HTTP_REQUEST")
        hint = " (a plaintext client?)" if plaintext else ""
        raise ConnectionClosed(f"TLS handshake failed on {where}{hint}: {cause}") from exc
    if not security.sasl:  # on SASL_SSL the principal is the SASL user's
        try:
            ctx.principal = security.certificate_principal(tls.getpeercert(binary_form=True))
        except PrincipalError as exc:
            raise ConnectionClosed(f"client certificate refused on {where}: {exc}") from exc
    return tls


async def delay_failed_login(broker: Broker, ctx: TrioRequestContext) -> None:
    """Kafka's connection.failed.authentication.delay.ms: a failed login is answered and
    closed only after it, so a client that retries at once does not hammer the broker."""
    if ctx.sasl is not None and ctx.sasl.failure is not None and not ctx.failure_delayed:
        ctx.failure_delayed = True
        await trio.sleep(broker.config.failed_authentication_delay_ms / 1000)


async def before_authentication(broker: Broker, ctx: TrioRequestContext, frame: bytes) -> bytes | None:
    """The pre-authentication gate of a SASL listener: frames are bounded by
    sasl.server.max.receive.size (the reader refuses a larger one at its header), and after
    a v0 SaslHandshake they are bare SASL tokens (answered here, size-prefixed). None: a
    Kafka request, for the dispatch step (whose authenticate step asks the session too)."""
    session = ctx.sasl
    assert session is not None
    if not session.raw_tokens:
        return None
    derivation = session.derivation(frame)
    if derivation is not None:
        await ctx.off_loop(derivation)
    answer = session.raw_token(frame, broker.clock())
    if session.failure is not None:
        raise ConnectionClosed(session.failure)
    if session.principal is not None:
        ctx.principal = session.principal
    return _LENGTH.pack(len(answer)) + answer


async def hold_throttled_connection(broker: Broker, host: str) -> None:
    """KIP-612: a connection over its IP's connection_creation_rate is closed unserved,
    after the throttle time."""
    throttle_ms = broker.client_quotas.connection_throttle_ms(host, broker.clock())
    if throttle_ms > 0:
        await trio.sleep(throttle_ms / 1000)
        raise ConnectionClosed(f"connection_creation_rate of {host} exceeded", logging.INFO)


async def mute_while_throttled(ctx: TrioRequestContext) -> None:
    """KIP-219: a client over its quota has had its answer; the connection is not read
    for the throttle time (the reaper still sees a hang-up meanwhile)."""
    await trio.sleep(ctx.throttle_ms / 1000)
    ctx.throttle_ms = 0
