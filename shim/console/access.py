"""Who may see the console: it is secured as the Kafka listeners are.

- Where a listener speaks SASL, every console request needs HTTP Basic credentials of a SASL
  user (checked against the same salted SCRAM credentials PLAIN logins are, off the event loop).
- Where a listener speaks TLS, the console is served over TLS with that listener's context
  (its keystore, and its client-certificate requirement): see shim.server.
- Where an authorizer is configured, the console's principal must be allowed DESCRIBE on the
  cluster, as an admin client needs to list what the console shows. That principal is the SASL
  user; without a SASL listener it is User:ANONYMOUS, as a PLAINTEXT listener's clients are in
  Kafka. Under TLS it is User:ANONYMOUS too, stricter than a Kafka listener: the HTTP server
  does not hand over the client certificate, so its subject cannot be mapped.
Without SASL and without an authorizer nothing is asked, as Kafka asks nothing there.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

import anyio
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from kafka_shim.shim.authorizer import ANONYMOUS, CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker

REALM = 'Basic realm="kafka-shim", charset="UTF-8"'
# Key derivations at once (each costs milliseconds of CPU in a worker thread).
LOGIN_THREADS = anyio.CapacityLimiter(4)


def _needs_login(broker: Broker) -> bool:
    return any(listener.sasl for listener in broker.listeners)


def secured(broker: Broker) -> bool:
    """Whether console requests are checked at all (`ConsoleAccess`)."""
    return _needs_login(broker) or broker.authorizer is not None


def _credentials(scope: Scope) -> tuple[str, str] | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization" and value[:6].lower() == b"basic ":
            try:
                user, sep, password = (
                    base64.b64decode(value[6:], validate=True).decode("utf-8").partition(":")
                )
            except (binascii.Error, UnicodeDecodeError):
                return None
            return (user, password) if sep else None
    return None


class ConsoleAccess:
    """ASGI middleware: HTTP Basic credentials of a SASL user where SASL is spoken, then the
    authorizer's say on the principal; it leaves the principal in the scope for actions."""

    def __init__(self, app: ASGIApp, broker: Broker) -> None:
        self.app = app
        self.broker = broker

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        principal, refusal = await self._principal(scope)
        if refusal is None:
            refusal = self._unauthorized(scope, principal)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal  # what actions are authorized as
        await self.app(scope, receive, send)

    async def _principal(self, scope: Scope) -> tuple[str, Any]:
        """Who asks, or the 401 answering a missing or wrong login."""
        if not _needs_login(self.broker):
            return ANONYMOUS, None
        given = _credentials(scope)
        if given is None:
            return "", PlainTextResponse("log in as a SASL user", 401, {"WWW-Authenticate": REALM})
        user, password = given
        credentials = self.broker.credentials
        valid = await anyio.to_thread.run_sync(
            credentials.verify_plain, user, password, limiter=LOGIN_THREADS
        )
        if not valid:
            return "", PlainTextResponse("invalid username or password", 401, {"WWW-Authenticate": REALM})
        return f"User:{user}", None

    def _unauthorized(self, scope: Scope, principal: str) -> Any:
        authorizer = self.broker.authorizer
        host = (scope.get("client") or ("",))[0]
        if authorizer is not None and not authorizer.authorize(
            principal, host, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME
        ):
            return PlainTextResponse(f"{principal} may not DESCRIBE the cluster", 403)
        return None
