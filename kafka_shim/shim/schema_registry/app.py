"""The registry's HTTP routes (Starlette), served on their own listener from the broker's event
loop (shim.net): each parses its request, asks `access` and calls `registry` or `changes`.
Answers carry Confluent's media type; refusals Confluent's `{"error_code", "message"}`."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kafka_shim.shim.schema_registry import access, changes, errors, formats
from kafka_shim.shim.schema_registry.access import ALTERS_CONFIG, DELETES, DESCRIBES_CONFIG, READS, REGISTERS
from kafka_shim.shim.schema_registry.errors import RegistryError
from kafka_shim.shim.schema_registry.registry import Registry, parse_version, schema_json
from kafka_shim.shim.schema_registry.store import SchemaStore
from kafka_shim.shim.security.authorization import Rule
from kafka_shim.shim.web import http_guard
from kafka_shim.shim.web.http_guard import LOGGED_IN, declare, json_body, mirrors, principal_of

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
MAX_BODY_BYTES = 8 << 20  # a schema with its references, many times over

Handler = Callable[[Request], Awaitable[Any]]


class RegistryResponse(JSONResponse):
    media_type = MEDIA_TYPE

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "false").strip().lower() == "true"


def _page(request: Request, items: list[Any]) -> list[Any]:
    """`?offset=&limit=` as Confluent pages its listings (limit -1 or absent: all)."""
    try:
        offset = max(int(request.query_params.get("offset", "0")), 0)
        limit = int(request.query_params.get("limit", "-1"))
    except ValueError:
        raise errors.unprocessable("offset and limit must be integers") from None
    return items[offset:] if limit < 0 else items[offset : offset + limit]


def _schema_id(request: Request) -> int:
    text = request.path_params["id"]
    try:
        return int(text)
    except ValueError:
        raise errors.schema_not_found(f"Schema {text} not found") from None


def _body(request: Request) -> Any:
    """The body, JSON of one of Confluent's media types, as shim.web.http_guard parsed it."""
    body = json_body(request)
    if body is None:
        raise errors.unprocessable("the request needs a JSON body")
    return body


def registry_app(broker: Broker) -> Starlette:
    config = broker.config
    registry = Registry(
        SchemaStore(broker, config.schema_registry_topic), config.schema_registry_compatibility_level
    )
    registry.store.catch_up()  # read the topic back before the first request
    routes = [
        declare(Route(path, endpoint, methods=methods), _access(rules))
        for path, methods, rules, endpoint in _routes()
    ]
    guard = http_guard.guard(
        broker,
        routes,
        "schema registry",
        json_types=JSON_TYPES,
        bound_host=config.schema_registry_listener,
        max_body_bytes=MAX_BODY_BYTES,
    )
    app = Starlette(
        routes=routes,
        middleware=[guard],
        exception_handlers={RegistryError: _refused, HTTPException: _http_refused, Exception: _failed},
    )
    app.state.registry = registry
    return app


def _access(rules: tuple[Rule, ...]) -> http_guard.Access:
    """What a route may ask: its rows' checks (none: only a login)."""
    found = LOGGED_IN
    for rule in rules:
        found = found + mirrors(rule)
    return found


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


def _registry(request: Request) -> Registry:
    registry: Registry = request.app.state.registry
    return registry


def _answer(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        result = await handler(request)
        return result if isinstance(result, Response) else RegistryResponse(result)

    return endpoint


async def root(request: Request) -> Any:
    return {}


async def schema_types(request: Request) -> Any:
    return list(formats.SCHEMA_TYPES)


async def subjects(request: Request) -> Any:
    names = _registry(request).subjects(
        request.query_params.get("subjectPrefix", ""),
        deleted=_flag(request, "deleted"),
        deleted_only=_flag(request, "deletedOnly"),
    )
    return _page(request, [name for name in names if access.may(request, access.READ_SUBJECT, name)])


async def versions(request: Request) -> Any:
    subject = request.path_params["subject"]
    access.require(request, access.READ_SUBJECT, subject)
    if _flag(request, "deletedOnly"):
        return [v.version for v in _registry(request).versions_of(subject, deleted=True) if v.deleted]
    return _page(
        request,
        [v.version for v in _registry(request).versions_of(subject, deleted=_flag(request, "deleted"))],
    )


async def version(request: Request) -> Any:
    subject = request.path_params["subject"]
    access.require(request, access.READ_SUBJECT, subject)
    number = parse_version(request.path_params["version"])
    return schema_json(_registry(request).version(subject, number, deleted=_flag(request, "deleted")))


async def version_schema(request: Request) -> Any:
    subject = request.path_params["subject"]
    access.require(request, access.READ_SUBJECT, subject)
    number = parse_version(request.path_params["version"])
    text = _registry(request).version(subject, number, deleted=_flag(request, "deleted")).schema
    return Response(text, media_type=MEDIA_TYPE)


async def referenced_by(request: Request) -> Any:
    subject = request.path_params["subject"]
    access.require(request, access.READ_SUBJECT, subject)
    return _registry(request).referenced_by(subject, parse_version(request.path_params["version"]))


def visible_id(request: Request) -> int:
    schema_id = _schema_id(request)
    holders = _registry(request).id_holders(schema_id, deleted=True)
    if not any(access.may(request, access.READ_SUBJECT, value.subject) for value in holders):
        raise errors.denied(
            principal_of(request), "DESCRIBE", f"the topics of the subjects holding schema {schema_id}"
        )
    return schema_id


async def by_id(request: Request) -> Any:
    schema_id = visible_id(request)
    params = request.query_params
    found = _registry(request).schema_by_id(schema_id, params.get("subject"), params.get("format"))
    if _flag(request, "fetchMaxId"):
        found["maxId"] = _registry(request).state.max_id  # the highest id the registry has given
    return found


async def by_id_schema(request: Request) -> Any:
    schema_id = visible_id(request)
    return Response(
        _registry(request).by_id(schema_id, request.query_params.get("subject")).schema, media_type=MEDIA_TYPE
    )


async def id_subjects(request: Request) -> Any:
    schema_id = visible_id(request)
    found = _registry(request).id_holders(schema_id, deleted=_flag(request, "deleted"))
    return sorted({v.subject for v in found if access.may(request, access.READ_SUBJECT, v.subject)})


async def id_versions(request: Request) -> Any:
    schema_id = visible_id(request)
    found = _registry(request).id_holders(schema_id, deleted=_flag(request, "deleted"))
    return [
        {"subject": v.subject, "version": v.version}
        for v in found
        if access.may(request, access.READ_SUBJECT, v.subject)
    ]


async def all_schemas(request: Request) -> Any:
    found = _registry(request).all_schemas(
        request.query_params.get("subjectPrefix", ""),
        deleted=_flag(request, "deleted"),
        latest_only=_flag(request, "latestOnly"),
    )
    return _page(
        request, [schema_json(v) for v in found if access.may(request, access.READ_SUBJECT, v.subject)]
    )


async def register(request: Request) -> Any:
    subject = request.path_params["subject"]
    access.require(request, access.REGISTER, subject)
    return await changes.register(_registry(request), subject, _body(request))


async def lookup(request: Request) -> Any:
    subject = request.path_params["subject"]
    access.require(request, access.READ_SUBJECT, subject)
    return _registry(request).lookup(subject, _body(request), deleted=_flag(request, "deleted"))


async def delete_subject(request: Request) -> Any:
    subject = request.path_params["subject"]
    access.require(request, access.DELETE_SUBJECT, subject)
    return await changes.delete_subject(_registry(request), subject, _flag(request, "permanent"))


async def delete_version(request: Request) -> Any:
    subject = request.path_params["subject"]
    access.require(request, access.DELETE_SUBJECT, subject)
    number = parse_version(request.path_params["version"])
    return await changes.delete_version(_registry(request), subject, number, _flag(request, "permanent"))


async def check(request: Request) -> Any:
    subject = request.path_params["subject"]
    access.require(request, access.READ_SUBJECT, subject)
    text = request.path_params.get("version")
    number = None if text is None else parse_version(text)
    messages = _registry(request).check(subject, number, _body(request))
    result: dict[str, Any] = {"is_compatible": not messages}
    if _flag(request, "verbose"):
        result["messages"] = messages
    return result


async def config(request: Request) -> Any:
    subject = request.path_params.get("subject")
    if request.method == "GET":
        access.require(request, access.DESCRIBE_CONFIG, subject)
        if (
            subject is not None
            and _registry(request).state.config(subject) is None
            and not _flag(request, "defaultToGlobal")
        ):
            raise errors.subject_compatibility_not_configured(subject)
        return {"compatibilityLevel": _registry(request).level(subject)}
    access.require(request, access.ALTER_CONFIG, subject)
    if request.method == "PUT":
        return await changes.set_level(_registry(request), subject, _body(request))
    return await changes.delete_level(_registry(request), subject)


async def mode(request: Request) -> Any:
    subject = request.path_params.get("subject")
    if request.method == "GET":
        access.require(request, access.DESCRIBE_CONFIG, subject)
        if (
            subject is not None
            and _registry(request).state.mode(subject) is None
            and not _flag(request, "defaultToGlobal")
        ):
            raise errors.subject_mode_not_configured(subject)
        return {"mode": _registry(request).mode(subject)}
    access.require(request, access.ALTER_CONFIG, subject)
    if request.method == "PUT":
        return await changes.set_mode(_registry(request), subject, _body(request), _flag(request, "force"))
    if subject is None:
        raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")
    return await changes.delete_mode(_registry(request), subject)


async def contexts(request: Request) -> Any:
    return [":.:"]  # the default context, the only one served


def _routes() -> list[tuple[str, list[str], tuple[Rule, ...], Handler]]:
    """Every route: its path, methods, the registry's rows it mirrors, its handler."""
    config_rules = (DESCRIBES_CONFIG, ALTERS_CONFIG)
    table: list[tuple[str, list[str], tuple[Rule, ...], Handler]] = [
        ("/", ["GET"], (), root),
        ("/schemas/types", ["GET"], (), schema_types),
        ("/schemas", ["GET"], (READS,), all_schemas),
        ("/schemas/ids/{id}", ["GET"], (READS,), by_id),
        ("/schemas/ids/{id}/schema", ["GET"], (READS,), by_id_schema),
        ("/schemas/ids/{id}/subjects", ["GET"], (READS,), id_subjects),
        ("/schemas/ids/{id}/versions", ["GET"], (READS,), id_versions),
        ("/subjects", ["GET"], (READS,), subjects),
        ("/subjects/{subject}", ["POST"], (READS,), lookup),
        ("/subjects/{subject}", ["DELETE"], (DELETES,), delete_subject),
        ("/subjects/{subject}/versions", ["GET"], (READS,), versions),
        ("/subjects/{subject}/versions", ["POST"], (REGISTERS,), register),
        ("/subjects/{subject}/versions/{version}", ["GET"], (READS,), version),
        ("/subjects/{subject}/versions/{version}", ["DELETE"], (DELETES,), delete_version),
        ("/subjects/{subject}/versions/{version}/schema", ["GET"], (READS,), version_schema),
        ("/subjects/{subject}/versions/{version}/referencedby", ["GET"], (READS,), referenced_by),
        ("/compatibility/subjects/{subject}/versions", ["POST"], (READS,), check),
        ("/compatibility/subjects/{subject}/versions/{version}", ["POST"], (READS,), check),
        ("/config", ["GET", "PUT", "DELETE"], config_rules, config),
        ("/config/{subject}", ["GET", "PUT", "DELETE"], config_rules, config),
        ("/mode", ["GET", "PUT"], config_rules, mode),
        ("/mode/{subject}", ["GET", "PUT", "DELETE"], config_rules, mode),
        ("/contexts", ["GET"], (), contexts),
    ]
    return [(path, methods, rules, _answer(handler)) for path, methods, rules, handler in table]
