"""The registry's HTTP routes (Starlette), served on their own listener from the broker's event
loop (shim.server): each parses its request, asks `access` and calls `registry` or `changes`.
Answers carry Confluent's media type; refusals Confluent's `{"error_code", "message"}`."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kafka_shim.shim.authorizer import ANONYMOUS
from kafka_shim.shim.schema_registry import access, changes, errors, formats
from kafka_shim.shim.schema_registry.access import Access
from kafka_shim.shim.schema_registry.errors import RegistryError
from kafka_shim.shim.schema_registry.registry import Registry, parse_version, schema_json
from kafka_shim.shim.schema_registry.store import SchemaStore

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker

log = logging.getLogger("kafka_shim.schema_registry")

MEDIA_TYPE = "application/vnd.schemaregistry.v1+json"
# The request bodies Confluent's registry takes (its Jersey resources' @Consumes).
JSON_TYPES = (
    "application/vnd.schemaregistry.v1+json",
    "application/vnd.schemaregistry+json",
    "application/json",
    "application/octet-stream",
)
MAX_BODY_BYTES = 8 << 20  # schemas are small; a body past this is refused 413

Handler = Callable[[Request], Awaitable[Any]]


class RegistryResponse(JSONResponse):
    media_type = MEDIA_TYPE

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "false").strip().lower() == "true"


def _schema_id(request: Request) -> int:
    text = request.path_params["id"]
    try:
        return int(text)
    except ValueError:
        raise errors.schema_not_found(f"Schema {text} not found") from None


async def _body(request: Request) -> Any:
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in JSON_TYPES:
        raise RegistryError(415, 415, f"HTTP 415 Unsupported Media Type: send one of {', '.join(JSON_TYPES)}")
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise RegistryError(413, 413, f"the body exceeds {MAX_BODY_BYTES} bytes")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise RegistryError(400, 400, f"the body is not JSON: {exc}") from None


def _access(broker: Broker, request: Request) -> Access:
    principal = str(request.scope.get("state", {}).get("principal", ANONYMOUS))
    return Access(broker, principal, request.client.host if request.client is not None else "")


def registry_app(broker: Broker) -> Starlette:
    config = broker.config
    registry = Registry(
        SchemaStore(broker, config.schema_registry_topic), config.schema_registry_compatibility_level
    )
    registry.store.catch_up()  # read the topic back before the first request
    routes = [Route(path, endpoint, methods=methods) for path, methods, endpoint in _routes(broker, registry)]
    app = Starlette(
        routes=routes,
        middleware=_middleware(broker),
        exception_handlers={RegistryError: _refused, HTTPException: _http_refused, Exception: _failed},
    )
    app.state.registry = registry
    return app


def _middleware(broker: Broker) -> list[Middleware]:
    """HTTP Basic login of a SASL user where a listener speaks SASL (the console's rule)."""
    from kafka_shim.shim.console.access import ConsoleAccess

    class RegistryLogin(ConsoleAccess):
        def _unauthorized(self, scope: Any, principal: str) -> Any:
            return None  # each route asks the ACLs itself (shim.schema_registry.access)

    if any(listener.sasl for listener in broker.listeners):
        return [Middleware(RegistryLogin, broker=broker)]
    return []


async def _refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RegistryError)
    return RegistryResponse(exc.body(), exc.status)


async def _http_refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return RegistryResponse(
        {"error_code": exc.status_code, "message": f"HTTP {exc.status_code} {exc.detail}"}, exc.status_code
    )


async def _failed(request: Request, exc: Exception) -> Response:
    log.error("schema registry: %s %s failed: %r", request.method, request.url.path, exc, exc_info=exc)
    return RegistryResponse(
        {"error_code": 50001, "message": f"Error in the backend data store - {exc!r}"}, 500
    )


def _routes(broker: Broker, registry: Registry) -> list[tuple[str, list[str], Handler]]:
    def answer(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            result = await handler(request)
            return result if isinstance(result, Response) else RegistryResponse(result)

        return endpoint

    async def root(request: Request) -> Any:
        return {}

    async def schema_types(request: Request) -> Any:
        return list(formats.SCHEMA_TYPES)

    async def subjects(request: Request) -> Any:
        who = _access(broker, request)
        names = registry.subjects(
            request.query_params.get("subjectPrefix", ""),
            deleted=_flag(request, "deleted"),
            deleted_only=_flag(request, "deletedOnly"),
        )
        return [name for name in names if who.may(access.READ_SUBJECT, name)]

    async def versions(request: Request) -> Any:
        subject = request.path_params["subject"]
        _access(broker, request).require(access.READ_SUBJECT, subject)
        return [v.version for v in registry.versions_of(subject, deleted=_flag(request, "deleted"))]

    async def version(request: Request) -> Any:
        subject = request.path_params["subject"]
        _access(broker, request).require(access.READ_SUBJECT, subject)
        number = parse_version(request.path_params["version"])
        return schema_json(registry.version(subject, number, deleted=_flag(request, "deleted")))

    async def version_schema(request: Request) -> Any:
        subject = request.path_params["subject"]
        _access(broker, request).require(access.READ_SUBJECT, subject)
        number = parse_version(request.path_params["version"])
        text = registry.version(subject, number, deleted=_flag(request, "deleted")).schema
        return Response(text, media_type=MEDIA_TYPE)

    async def referenced_by(request: Request) -> Any:
        subject = request.path_params["subject"]
        _access(broker, request).require(access.READ_SUBJECT, subject)
        return registry.referenced_by(subject, parse_version(request.path_params["version"]))

    def visible_id(request: Request) -> int:
        schema_id = _schema_id(request)
        who = _access(broker, request)
        holders = registry.id_holders(schema_id, deleted=True)
        if not any(who.may(access.READ_SUBJECT, value.subject) for value in holders):
            raise errors.denied(
                who.principal, "DESCRIBE", f"the topics of the subjects holding schema {schema_id}"
            )
        return schema_id

    async def by_id(request: Request) -> Any:
        schema_id = visible_id(request)
        params = request.query_params
        return registry.schema_by_id(schema_id, params.get("subject"), params.get("format"))

    async def by_id_schema(request: Request) -> Any:
        schema_id = visible_id(request)
        return Response(
            registry.by_id(schema_id, request.query_params.get("subject")).schema, media_type=MEDIA_TYPE
        )

    async def id_subjects(request: Request) -> Any:
        schema_id = visible_id(request)
        who = _access(broker, request)
        found = registry.id_holders(schema_id, deleted=_flag(request, "deleted"))
        return sorted({v.subject for v in found if who.may(access.READ_SUBJECT, v.subject)})

    async def id_versions(request: Request) -> Any:
        schema_id = visible_id(request)
        who = _access(broker, request)
        found = registry.id_holders(schema_id, deleted=_flag(request, "deleted"))
        return [
            {"subject": v.subject, "version": v.version}
            for v in found
            if who.may(access.READ_SUBJECT, v.subject)
        ]

    async def all_schemas(request: Request) -> Any:
        who = _access(broker, request)
        found = registry.all_schemas(
            request.query_params.get("subjectPrefix", ""),
            deleted=_flag(request, "deleted"),
            latest_only=_flag(request, "latestOnly"),
        )
        return [schema_json(v) for v in found if who.may(access.READ_SUBJECT, v.subject)]

    async def register(request: Request) -> Any:
        subject = request.path_params["subject"]
        _access(broker, request).require(access.REGISTER, subject)
        return await changes.register(registry, subject, await _body(request))

    async def lookup(request: Request) -> Any:
        subject = request.path_params["subject"]
        _access(broker, request).require(access.READ_SUBJECT, subject)
        return registry.lookup(subject, await _body(request), deleted=_flag(request, "deleted"))

    async def delete_subject(request: Request) -> Any:
        subject = request.path_params["subject"]
        _access(broker, request).require(access.DELETE_SUBJECT, subject)
        return await changes.delete_subject(registry, subject, _flag(request, "permanent"))

    async def delete_version(request: Request) -> Any:
        subject = request.path_params["subject"]
        _access(broker, request).require(access.DELETE_SUBJECT, subject)
        number = parse_version(request.path_params["version"])
        return await changes.delete_version(registry, subject, number, _flag(request, "permanent"))

    async def check(request: Request) -> Any:
        subject = request.path_params["subject"]
        _access(broker, request).require(access.READ_SUBJECT, subject)
        text = request.path_params.get("version")
        number = None if text is None else parse_version(text)
        messages = registry.check(subject, number, await _body(request))
        result: dict[str, Any] = {"is_compatible": not messages}
        if _flag(request, "verbose"):
            result["messages"] = messages
        return result

    async def config(request: Request) -> Any:
        subject = request.path_params.get("subject")
        who = _access(broker, request)
        if request.method == "GET":
            who.require(access.DESCRIBE_CONFIG, subject)
            if (
                subject is not None
                and registry.state.config(subject) is None
                and not _flag(request, "defaultToGlobal")
            ):
                raise errors.subject_compatibility_not_configured(subject)
            return {"compatibilityLevel": registry.level(subject)}
        who.require(access.ALTER_CONFIG, subject)
        if request.method == "PUT":
            return await changes.set_level(registry, subject, await _body(request))
        return await changes.delete_level(registry, subject)

    async def mode(request: Request) -> Any:
        subject = request.path_params.get("subject")
        who = _access(broker, request)
        if request.method == "GET":
            who.require(access.DESCRIBE_CONFIG, subject)
            if (
                subject is not None
                and registry.state.mode(subject) is None
                and not _flag(request, "defaultToGlobal")
            ):
                raise errors.subject_mode_not_configured(subject)
            return {"mode": registry.mode(subject)}
        who.require(access.ALTER_CONFIG, subject)
        if request.method == "PUT":
            return await changes.set_mode(registry, subject, await _body(request), _flag(request, "force"))
        if subject is None:
            raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")
        return await changes.delete_mode(registry, subject)

    async def contexts(request: Request) -> Any:
        return [":.:"]  # the default context, the only one served

    table: list[tuple[str, list[str], Handler]] = [
        ("/", ["GET"], root),
        ("/schemas/types", ["GET"], schema_types),
        ("/schemas", ["GET"], all_schemas),
        ("/schemas/ids/{id}", ["GET"], by_id),
        ("/schemas/ids/{id}/schema", ["GET"], by_id_schema),
        ("/schemas/ids/{id}/subjects", ["GET"], id_subjects),
        ("/schemas/ids/{id}/versions", ["GET"], id_versions),
        ("/subjects", ["GET"], subjects),
        ("/subjects/{subject}", ["POST"], lookup),
        ("/subjects/{subject}", ["DELETE"], delete_subject),
        ("/subjects/{subject}/versions", ["GET"], versions),
        ("/subjects/{subject}/versions", ["POST"], register),
        ("/subjects/{subject}/versions/{version}", ["GET"], version),
        ("/subjects/{subject}/versions/{version}", ["DELETE"], delete_version),
        ("/subjects/{subject}/versions/{version}/schema", ["GET"], version_schema),
        ("/subjects/{subject}/versions/{version}/referencedby", ["GET"], referenced_by),
        ("/compatibility/subjects/{subject}/versions", ["POST"], check),
        ("/compatibility/subjects/{subject}/versions/{version}", ["POST"], check),
        ("/config", ["GET", "PUT", "DELETE"], config),
        ("/config/{subject}", ["GET", "PUT", "DELETE"], config),
        ("/mode", ["GET", "PUT"], mode),
        ("/mode/{subject}", ["GET", "PUT", "DELETE"], mode),
        ("/contexts", ["GET"], contexts),
    ]
    return [(path, methods, answer(handler)) for path, methods, handler in table]
