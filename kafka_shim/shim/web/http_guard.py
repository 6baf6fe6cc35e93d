"""The rules every HTTP surface of the broker applies (the console and /metrics, the control
endpoint, the schema registry), as one ASGI middleware, `HttpGuard`, taking each request
through the same steps in one order:

1. Host. The Host header must be an IP address (the one the surface is bound to, or the one
   it is reached at through a published port), `localhost`, the name the surface was
   configured with (`--console NAME:PORT`) or a name the Kafka listeners advertise
   (advertised.listeners); any other name answers 421 Misdirected Request.
   A page whose own name a DNS server rebinds to 127.0.0.1 sends that name, so it cannot
   read a local surface (DNS rebinding).
2. Origin. A request carrying an Origin that is not the surface's own (its scheme, the Host
   it was sent to) answers 403: no other site's page may make one, with or without CORS.
3. Body. POST, PUT, PATCH and DELETE bodies must be JSON: a Content-Type other than
   `application/json` (or the surface's own JSON media types, `json_types`) answers 415, so
   no cross-site form or `text/plain` request ever reaches a handler. Once the login (4)
   passes, a body is read whole (at most `max_body_bytes`, else 413) and parsed before
   routing: not JSON, NaN, Infinity or an integer outside Kafka's 64-bit range answer 400
   naming the field; handlers read it as `json_body`.
4. Login. Where any listener speaks SASL, every request needs HTTP Basic credentials of a
   SASL user, checked against the salted credentials PLAIN logins are checked against, off
   the event loop; a failed login waits connection.failed.authentication.delay.ms before its
   401, as a Kafka listener's does. The principal (`User:name`; else User:ANONYMOUS, as a
   PLAINTEXT listener's clients are in Kafka) is left in the scope (`principal`).
5. Authorization. Every route declares the Kafka API row of shim.security.authorization it mirrors
   (`declare(route, mirrors("fetch", need(READ, TOPIC, "name")))`); the guard refuses (403)
   a principal the authorizer denies a check naming a path parameter's resource (or the
   cluster) and the handler asks the others (`allowed`, `visible`, `require`: a listing's
   hidden rows, a resource named in the body) within what its row declares. A route that
   declares nothing cannot be served: building the guard raises.

Every answer, refusals included, carries `X-Content-Type-Options: nosniff`.

A new surface wraps its Starlette application in one line, each route declared:

    routes = [declare(Route("/subjects", list_subjects), mirrors(SUBJECTS_ROW)), ...]
    app = Starlette(routes=routes, middleware=[guard(broker, routes, json_types=REGISTRY_TYPES)])
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import logging
import math
import urllib.parse
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol

import anyio
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kafka_shim.shim.security.authorization import RULES, Rule, UndeclaredCheck
from kafka_shim.shim.security.authorizer import ANONYMOUS, CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:
    from kafka_shim.shim.config.broker_config import BrokerConfig
    from kafka_shim.shim.config.listeners import Listener

P = ParamSpec("P")
log = logging.getLogger("kafka_shim.http")
audit = logging.getLogger("kafka_shim.authorizer")  # denials, as the Kafka listeners log them

JSON = "application/json"
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_BODY_BYTES = 1 << 20  # what any control or console request needs, many times over
REALM = 'Basic realm="kafka-shim", charset="UTF-8"'
# Kafka's longs: a JSON integer outside them is no offset, timestamp or count of anything.
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
INT32_MAX = (1 << 31) - 1  # Kafka's node ids and partition indexes
# Key derivations at once per surface (each costs milliseconds of CPU in a worker thread).
LOGIN_THREADS = 4
ACCESS = "kafka_shim_access"  # the attribute a declared route carries its Access in


class PlainLogins(Protocol):
    """What checks a login's password (shim.security.scram_store.CredentialStore)."""

    def verify_plain(self, name: str, password: str) -> bool: ...


class Authorizing(Protocol):
    """What decides an operation (shim.security.authorizer.Authorizer)."""

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool: ...


class Guarded(Protocol):
    """What the guard reads of the broker whose surface it guards (shim.broker.Broker; with a
    process per broker, the supervisor's stand-in: shim.processes.cluster_console)."""

    @property
    def config(self) -> BrokerConfig: ...
    @property
    def listeners(self) -> tuple[Listener, ...]: ...
    @property
    def advertised_host(self) -> str: ...
    @property
    def authorizer(self) -> Authorizing | None: ...
    @property
    def credentials(self) -> PlainLogins: ...


class Refused(Exception):
    """A request a handler refuses: its HTTP status and why (the guard's `require`)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Need:
    """One check of a route: an operation on a resource, named by a path parameter (the
    cluster's is implicit); `param=None`: the handler asks it itself (`allowed`, `visible`)."""

    operation: AclOperation
    resource: ResourceType
    param: str | None = None


def need(operation: AclOperation, resource: ResourceType, param: str | None = None) -> Need:
    return Need(operation, resource, param)


@dataclass(frozen=True)
class Access:
    """What a route asks: checks of the rows of the authorization table it mirrors (no row:
    only a login, for the page and its static files)."""

    rules: tuple[Rule, ...] = ()
    needs: tuple[Need, ...] = ()

    def __post_init__(self) -> None:
        for needed in self.needs:
            self.declaring(needed.operation, needed.resource)

    def declaring(self, operation: AclOperation, resource: ResourceType) -> Rule:
        """The row declaring the check (UndeclaredCheck where none does: a bug, never an answer)."""
        for rule in self.rules:
            if any(c.operation == operation and c.resource == resource for c in rule.checks):
                return rule
        rows = ", ".join(rule.follows for rule in self.rules) or "no row"
        raise UndeclaredCheck(f"{rows} declares no {operation.name} on {resource.name}")

    def __add__(self, other: Access) -> Access:
        """A route mirroring two APIs (a topic page: Metadata, and DescribeProducers)."""
        return Access(self.rules + other.rules, self.needs + other.needs)


def mirrors(row: str | Rule, *needs: Need) -> Access:
    """The access of a route mirroring API `row` (a key of shim.security.authorization.RULES, or a
    surface's own Rule) asking `needs`, each of which the row must declare."""
    return Access((RULES[row] if isinstance(row, str) else row,), needs)


LOGGED_IN = Access()


def declare(route: BaseRoute, access: Access) -> BaseRoute:
    setattr(route, ACCESS, access)
    return route


def _access_of(route: BaseRoute) -> Access:
    access = getattr(route, ACCESS, None)
    if not isinstance(access, Access):
        raise UndeclaredCheck(
            f"route {getattr(route, 'path', route)!r} declares no access (http_guard.declare)"
        )
    return access


# -- what handlers ask -------------------------------------------------------------------------


def principal_of(request: Request) -> str:
    return str(request.scope.get("state", {}).get("principal", ANONYMOUS))


def json_body(request: Request) -> Any:
    """The request's body as the guard parsed it (None: no body)."""
    return request.scope.get("state", {}).get("json")


def allowed(
    request: Request, operation: AclOperation, resource: ResourceType, name: str, log_denied: bool = True
) -> bool:
    """Whether the request's principal may do `operation` to the resource, a check its route's
    row must declare (UndeclaredCheck otherwise, a bug). A denial is logged as the Kafka
    listeners log one, except where a listing hides it (`visible`), as Kafka does."""
    state = request.scope.get("state", {})
    access: Access = state.get("access") or LOGGED_IN
    access.declaring(operation, resource)
    return _authorized(
        state["broker"], state["principal"], state["client_host"], operation, resource, name, log_denied
    )


def visible(
    request: Request, operation: AclOperation, resource: ResourceType, names: Iterable[str]
) -> set[str]:
    """Of `names`, those the principal may `operation`: what a listing shows (hidden checks)."""
    return {name for name in names if allowed(request, operation, resource, name, log_denied=False)}


def _authorized(
    broker: Guarded,
    principal: str,
    client_host: str,
    operation: AclOperation,
    resource: ResourceType,
    name: str,
    log_denied: bool = True,
) -> bool:
    authorizer = broker.authorizer
    if authorizer is None or authorizer.authorize(principal, client_host, operation, resource, name):
        return True
    if log_denied:
        audit.info(
            "Principal = %s is Denied operation = %s from host = %s on resource = %s:%s",
            principal, operation.name, client_host, resource.name, name,
        )  # fmt: skip
    return False


def denial(principal: str, operation: AclOperation, resource: ResourceType, name: str) -> str:
    if resource == ResourceType.CLUSTER:
        return f"{principal} may not {operation.name} the cluster"
    return f"{principal} may not {operation.name} {resource.name} {name}"


def require(request: Request, operation: AclOperation, resource: ResourceType, name: str) -> None:
    """Refused (403) unless the principal may `operation` the resource."""
    if not allowed(request, operation, resource, name):
        raise Refused(403, denial(principal_of(request), operation, resource, name))


# -- the steps ---------------------------------------------------------------------------------


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return str(value.decode("latin-1"))
    return None


def _is_address(host: str) -> bool:
    """An IP address, which no DNS server rebinds: a page sent to one is that address's own
    origin. (It covers the address a surface on 0.0.0.0 is reached at, a Docker host's
    published port included, which the process cannot know.)"""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _split_host(text: str) -> tuple[str, int | None]:
    """A Host header (or an Origin's netloc) as its lower-case name and port."""
    try:
        parsed = urllib.parse.urlsplit(f"//{text}")
        return (parsed.hostname or "").rstrip("."), parsed.port
    except ValueError:
        return "", None


def _credentials(scope: Scope) -> tuple[str, str] | None:
    value = _header(scope, b"authorization")
    if value is None or value[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(value[6:].encode("latin-1"), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


@dataclass(frozen=True)
class _OutOfRange:
    """A number JSON allows and no field of ours takes, left where it was for `parse_json`
    to name its field."""

    text: str


def _bounded_int(text: str) -> int | _OutOfRange:
    value = int(text)
    return value if LONG_MIN <= value <= LONG_MAX else _OutOfRange(text)


def _finite_float(text: str) -> float | _OutOfRange:
    value = float(text)
    return value if math.isfinite(value) else _OutOfRange(text)


def _refused_number(value: Any, where: str) -> str | None:
    """Where the first out-of-range number is, and what it is."""
    if isinstance(value, _OutOfRange):
        shown = value.text if len(value.text) <= 40 else value.text[:20] + "..."
        return f"{where or 'the body'}: {shown} is not a number in range (finite, within 64 bits)"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _refused_number(item, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def parse_json(raw: bytes) -> Any:
    """A body as JSON with bounded numbers: ValueError naming the field that is wrong."""
    if not raw.strip():
        return None
    parsed = json.loads(raw, parse_constant=_OutOfRange, parse_int=_bounded_int, parse_float=_finite_float)
    refused = _refused_number(parsed, "")
    if refused is not None:
        raise ValueError(refused)
    return parsed


def _media_type(scope: Scope) -> str | None:
    value = _header(scope, b"content-type")
    return None if value is None else value.split(";")[0].strip().lower()


class HttpGuard:
    """ASGI middleware applying the module's rules to every HTTP request of one surface."""

    def __init__(
        self,
        app: ASGIApp,
        broker: Guarded,
        routes: Collection[BaseRoute],
        surface: str,
        json_types: Collection[str] = (JSON,),
        bound_host: str | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.app = app
        self.broker = broker
        self.routes = [(route, _access_of(route)) for route in routes]
        self.surface = surface
        self.json_types = frozenset(json_types)
        # The names the broker is known by: the host of the address the surface was configured
        # with (HOST:PORT, not a wildcard) and the Kafka listeners' advertised hosts (what a
        # container is reached by in a compose network: advertised.listeners names it).
        named = {_split_host(bound_host)[0] if bound_host else "", broker.advertised_host}
        named |= {listener.advertised.host for listener in broker.listeners}
        self.hosts = LOOPBACK | {name.lower() for name in named if name not in ("", "0.0.0.0", "::")}
        self.max_body_bytes = max_body_bytes
        self._login_threads: anyio.CapacityLimiter | None = None  # made in the serving loop

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # no surface speaks it: refused before any rule is skipped
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        send = _nosniff(send)
        refusal = self._misdirected(scope) or self._foreign(scope) or self._not_json(scope)
        principal = ANONYMOUS
        if refusal is None:
            principal, refusal = await self._login(scope)
        body = b""  # read once logged in: no body is held for a client that has not
        if refusal is None and scope["method"] in BODY_METHODS:
            body, refusal = await self._body(scope, receive)
        if refusal is None:
            refusal = self._unauthorized(scope, principal)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive) if scope["method"] in BODY_METHODS else receive, send)

    def _misdirected(self, scope: Scope) -> Response | None:
        host = _split_host(_header(scope, b"host") or "")[0]
        if host in self.hosts or _is_address(host):
            return None
        return PlainTextResponse(f"the {self.surface} is not served as {host or 'no Host'!r}", 421)

    def _foreign(self, scope: Scope) -> Response | None:
        origin = _header(scope, b"origin")
        if origin is None:
            return None
        scheme = scope.get("scheme", "http")
        default = 443 if scheme == "https" else 80
        parsed = urllib.parse.urlsplit(origin)
        host, port = _split_host(_header(scope, b"host") or "")
        try:
            theirs = (parsed.scheme, (parsed.hostname or "").rstrip("."), parsed.port or default)
        except ValueError:
            theirs = ("", "", 0)
        if theirs == (scheme, host, port or default):
            return None
        return PlainTextResponse(f"requests from {origin[:100]} are refused (another origin)", 403)

    def _not_json(self, scope: Scope) -> Response | None:
        if scope["method"] not in BODY_METHODS:
            return None
        media = _media_type(scope)
        has_body = (_header(scope, b"content-length") or "0") != "0" or _header(
            scope, b"transfer-encoding"
        ) is not None
        if media in self.json_types or (media is None and not has_body):
            return None
        accepted = ", ".join(sorted(self.json_types))
        return JSONResponse({"error": f"the body must be JSON (Content-Type: {accepted})"}, 415)

    async def _body(self, scope: Scope, receive: Receive) -> tuple[bytes, Response | None]:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"", PlainTextResponse("the request ended early", 400)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return b"", JSONResponse({"error": f"the body is over {self.max_body_bytes} bytes"}, 413)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        raw = b"".join(chunks)
        try:
            scope.setdefault("state", {})["json"] = parse_json(raw)
        except json.JSONDecodeError as exc:
            return raw, JSONResponse({"error": f"the body is not JSON: {exc}"}, 400)
        except (ValueError, RecursionError) as exc:  # a number out of range; nesting too deep
            return raw, JSONResponse({"error": str(exc) or "the body is nested too deeply"}, 400)
        return raw, None

    async def _login(self, scope: Scope) -> tuple[str, Response | None]:
        """Who asks, or the 401 answering a missing or wrong login."""
        if not needs_login(self.broker):
            return ANONYMOUS, None
        given = _credentials(scope)
        if given is None:
            return ANONYMOUS, _unauthenticated("log in as a SASL user")
        user, password = given
        if self._login_threads is None:
            self._login_threads = anyio.CapacityLimiter(LOGIN_THREADS)
        valid = await anyio.to_thread.run_sync(
            self.broker.credentials.verify_plain, user, password, limiter=self._login_threads
        )
        if not valid:
            client = (scope.get("client") or ("",))[0]
            log.info(
                "failed login of %r from %s to the %s: invalid username or password",
                user,
                client,
                self.surface,
            )
            # As a Kafka listener answers a failed login: late, so guessing costs time.
            await anyio.sleep(self.broker.config.failed_authentication_delay_ms / 1000)
            return ANONYMOUS, _unauthenticated("invalid username or password")
        return f"User:{user}", None

    def _unauthorized(self, scope: Scope, principal: str) -> Response | None:
        """The route's checks on the resources its path names; the principal is left in the
        scope for the handler's own (`allowed`)."""
        client_host = str((scope.get("client") or ("",))[0])
        state = scope.setdefault("state", {})
        state.update(principal=principal, client_host=client_host, broker=self.broker)
        for route, access in self.routes:
            try:
                match, child = route.matches(scope)
            except ValueError:  # a path's number Python will not read (over 4300 digits)
                return PlainTextResponse("a number in the path is out of range", 400)
            if match == Match.FULL:
                state["access"] = access
                params = child.get("path_params", {})
                return self._denied(principal, client_host, access, params)
        return None  # no route: the application answers 404 (or 405)

    def _denied(
        self, principal: str, client_host: str, access: Access, params: dict[str, Any]
    ) -> Response | None:
        authorizer = self.broker.authorizer
        if authorizer is None:
            return None
        for needed in access.needs:
            if needed.resource == ResourceType.CLUSTER:
                name = CLUSTER_NAME
            elif needed.param is not None:
                name = str(params[needed.param])
            else:
                continue
            if not _authorized(self.broker, principal, client_host, needed.operation, needed.resource, name):
                return PlainTextResponse(denial(principal, needed.operation, needed.resource, name), 403)
        return None


def needs_login(broker: Guarded) -> bool:
    return any(listener.sasl for listener in broker.listeners)


def _unauthenticated(message: str) -> Response:
    return PlainTextResponse(message, 401, {"WWW-Authenticate": REALM})


def _nosniff(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (k, v) for k, v in message.get("headers", ()) if k.lower() != b"x-content-type-options"
            ]
            message = {**message, "headers": [*headers, (b"x-content-type-options", b"nosniff")]}
        await send(message)

    return sending


def _replay(body: bytes, then: Receive) -> Receive:
    """The body the guard read, handed to the application as if it came off the wire; then
    whatever the connection says next (a disconnect)."""
    given = False

    async def receive() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await then()

    return receive


def _middleware(cls: Callable[Concatenate[ASGIApp, P], ASGIApp]) -> Callable[P, Middleware]:
    def make(*args: P.args, **kwargs: P.kwargs) -> Middleware:
        return Middleware(cls, *args, **kwargs)

    return make


# The guard as Starlette middleware for an application serving `routes`: HttpGuard's parameters
# after `app`.
guard = _middleware(HttpGuard)
