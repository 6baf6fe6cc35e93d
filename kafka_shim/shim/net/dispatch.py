"""The dispatch step: the one path every Kafka request takes, between its frame and its answer.

In order: decode (the header, the version's route, the body), authenticate (a SASL connection
asks nothing but ApiVersions and the SASL exchange before it has logged in: the SASL gate's
verdict), authorize (the handler's row of shim.security.authorization, set on the request context, which
the handler checks each resource against), fault rules (the test broker's, when any is set),
handle, account (request stats: broker.observe_request), record (the recorder's entry and the
DEBUG trace, both redacted by protocol.redaction when shown), encode. It lives on the network
side because it awaits Trio: a fault rule's delay, and its no-answer action, wait on the loop
(tests/test_layers.py lets only the network side import Trio).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from kafka_shim.protocol.api import API_VERSIONS_KEY
from kafka_shim.protocol.error_answers import NoErrorField, error_answer
from kafka_shim.protocol.file_records import Spliced
from kafka_shim.protocol.headers import parse_request_header, peek_api, response_frame, spliced_response_frame
from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.messages.produce import API as PRODUCE
from kafka_shim.protocol.redaction import redacted
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.handlers import Handler, handler_for
from kafka_shim.shim.handlers.api_versions import unsupported_version_answer
from kafka_shim.shim.net.context import TrioRequestContext
from kafka_shim.shim.net.framing import ConnectionClosed
from kafka_shim.shim.served_versions import ServedVersions, served_versions
from kafka_shim.shim.testbroker.faults import FaultRule, RequestView
from kafka_shim.shim.testbroker.recording import RecordedRequest

log = logging.getLogger("kafka_shim.server")
# `--log-level DEBUG` traces every request and its answer, abbreviated: how a client that
# waits forever is told apart from a broker that never answered.
trace = logging.getLogger("kafka_shim.requests")
_TRACE_CHARS = 400


def _one_line(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= _TRACE_CHARS else text[:_TRACE_CHARS] + "..."


@dataclass(frozen=True, slots=True)
class Route:
    """What serving one version of one API takes, looked up once per request."""

    handler: Handler
    parse: Callable[[bytes, int], tuple[Any, int]]
    build: Callable[[Any], bytes | Spliced]
    flexible: bool
    response_flexible: bool
    # A version the newest release refuses (KIP-896), served without --emulate: logged once per
    # client id (shim.served_versions.OldVersionClients).
    refused_by_newest: bool = False


def route_for(api_key: int, api_version: int, served: ServedVersions) -> Route | None:
    """None: no handler, or a version the emulated release does not serve."""
    handler = handler_for(api_key)
    if handler is None or not served.serves(api_key, api_version):
        return None
    api = handler.api
    request, response = api.request.codec(api_version), api.response.codec(api_version)
    return Route(
        handler,
        request.parse,
        response.build,
        api.is_flexible(api_version),
        api.response_header_flexible(api_version),
        served.refused_by_newest(api_key, api_version),
    )


class Dispatch:
    """The broker's dispatch step, with the routes it has looked up (one per API version)."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self._routes: dict[tuple[int, int], Route] = {}

    async def handle_frame(self, ctx: TrioRequestContext, frame: bytes) -> bytes | Spliced | None:
        """The answer to one request frame (None: none is sent, as for acks=0); ConnectionClosed
        for a frame that closes its connection."""
        try:  # decode
            api_key, api_version, correlation_id = peek_api(frame)
        except ProtocolError as exc:
            raise ConnectionClosed(str(exc)) from exc
        broker = self.broker
        if ctx.sasl is not None:  # authenticate: nothing but ApiVersions and SASL before login
            refusal = ctx.sasl.refusal(api_key, broker.clock())
            if refusal is not None:
                raise ConnectionClosed(refusal)
        route = self._routes.get((api_key, api_version))
        if route is None:
            route = route_for(api_key, api_version, broker.served)
            if route is None:
                return unserved(broker.served, api_key, api_version, correlation_id)
            self._routes[api_key, api_version] = route
        handler = route.handler
        api = handler.api
        try:
            client_id, body_starts = parse_request_header(frame, route.flexible)
            body, _ = route.parse(frame, body_starts)
        except ProtocolError as exc:
            raise ConnectionClosed(f"malformed {api.name} v{api_version} request: {exc}") from exc
        ctx.api_version = api_version
        ctx.rule = handler.rule  # authorize: the handler checks each resource against its row
        ctx.correlation_id = correlation_id
        ctx.client_id = client_id
        started = time.perf_counter()
        if route.refused_by_newest:
            broker.old_version_clients.saw(client_id, api.name, api_version, ctx.peer, broker.clock())
        firing = None
        if broker.faults.active:  # the only cost of fault injection while no rule is set
            view = RequestView(
                api_key, api_version, client_id, ctx.principal, body, broker.topic_name, ctx.node_id
            )
            firing = broker.faults.decide(view, broker.clock())
        try:  # handle
            if firing is None:
                result = await handler.handle(ctx, body)
            else:
                result = await misbehave(firing.rule, ctx, handler, body)
        except ConnectionClosed:
            raise
        except ProtocolError as exc:
            # A request Kafka cannot even parse (CreateAcls with resource type 0...): it closes.
            raise ConnectionClosed(f"invalid {api.name} v{api_version} request: {exc}") from exc
        except Exception as exc:
            log.error("internal error in %s v%d: %r", api.name, api_version, exc)
            log.debug("traceback", exc_info=True)
            raise ConnectionClosed(f"internal error in {api.name}") from exc
        broker.observe_request(api.name, api_version, body, result, time.perf_counter() - started)  # account
        if broker.recorder is not None or trace.isEnabledFor(logging.DEBUG):
            self._record(ctx, route, body, result, None if firing is None else firing.rule)
        if firing is not None and firing.rule.action == "drop_answer":  # handled, recorded, unanswered
            dropped = f"fault rule {firing.rule.id} drops the answer to {api.name}"
            raise ConnectionClosed(dropped, logging.INFO)
        if result is None:
            return None
        try:  # encode
            encoded = route.build(result)
        except Exception as exc:
            log.error("cannot encode %s v%d response: %r", api.name, api_version, exc)
            raise ConnectionClosed(f"internal error encoding {api.name}") from exc
        if isinstance(encoded, Spliced):
            return spliced_response_frame(correlation_id, route.response_flexible, encoded)
        return response_frame(correlation_id, route.response_flexible, encoded)

    def _record(
        self, ctx: TrioRequestContext, route: Route, body: Any, result: Any, fired: FaultRule | None
    ) -> None:
        """The DEBUG trace line and the recorder's entry of a request handled (both show what
        they hold redacted: protocol.redaction)."""
        api = route.handler.api
        if trace.isEnabledFor(logging.DEBUG):
            trace.debug(
                "%s v%d from %s client %s correlation %d: %s -> %s",
                api.name,
                ctx.api_version,
                ctx.peer,
                ctx.client_id,
                ctx.correlation_id,
                _one_line(redacted(api.request, body)),
                _one_line(redacted(api.response, result)),
            )
        broker = self.broker
        if broker.recorder is not None:
            broker.recorder.record(
                RecordedRequest(
                    broker.clock(),
                    api.key,
                    ctx.api_version,
                    ctx.correlation_id,
                    ctx.client_id,
                    ctx.principal,
                    ctx.peer,
                    ctx.node_id,
                    body,
                    result,
                    None if fired is None else fired.id,
                )
            )


async def misbehave(rule: FaultRule, ctx: TrioRequestContext, handler: Handler, body: Any) -> Any:
    """Carry out a fault rule that fired on this request instead of (or around) its handler.
    Delays are wall time: the client times its request on its own clock (shim.testbroker.clock)."""
    if rule.action == "close":
        raise ConnectionClosed(f"fault rule {rule.id} closes the connection", logging.INFO)
    if rule.action == "no_answer":
        await trio.sleep_forever()  # until the client hangs up (the reaper notices) or we stop
    if rule.action == "drop_answer":
        return await handler.handle(ctx, body)  # the dispatch step closes instead of answering
    if rule.action == "delay":
        result = await handler.handle(ctx, body)
        await trio.sleep(rule.delay_ms / 1000)
        return result
    assert rule.error is not None
    await trio.sleep(rule.delay_ms / 1000)
    if handler.api is PRODUCE and body.acks == 0:
        return None  # acks=0: no answer, error or not
    try:
        return error_answer(handler.api, ctx.api_version, body, rule.error, top=rule.top_level)
    except NoErrorField as exc:  # e.g. a Produce of no partitions: refuse clearly
        raise ConnectionClosed(f"fault rule {rule.id}: {exc}") from exc


def unserved(served: ServedVersions, api_key: int, api_version: int, correlation_id: int) -> bytes:
    """An API without a handler closes the connection, as does a version it does not
    serve, except ApiVersions (answered with the supported ranges)."""
    handler = handler_for(api_key)
    if handler is None:
        raise ConnectionClosed(f"unknown api key {api_key}")
    if api_key == API_VERSIONS_KEY:
        # Kafka answers an unknown ApiVersions version with error 35 in a v0 body.
        body = APIS[API_VERSIONS_KEY].response.build(unsupported_version_answer(), 0)
        return response_frame(correlation_id, False, body)
    low, high = served.ranges.get(api_key, (0, -1))
    name = handler.api.name
    # A version an older release served (KIP-896's removals): say how to serve it.
    hint = (
        "; a broker without --emulate serves it" if served_versions(None).serves(api_key, api_version) else ""
    )
    raise ConnectionClosed(f"unsupported {name} version {api_version} (supported {low}-{high}{hint})")
