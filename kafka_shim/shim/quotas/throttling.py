"""The quotas enforced: produce and fetch byte rates, what the Produce and Fetch handlers
call, and the connection creation rate of an IP, what the server asks on a new connection.

Kafka records a Produce request's size and a Fetch response's size against the quota the
client is held to (shim.quotas.client_quotas), answers at once with `throttle_time_ms`, and mutes
the connection for that long (KIP-219: the server stops reading it; `ctx.throttle_ms`). A
throttled fetch is answered without data, its bytes taken back, as Kafka does. A connection
over its IP's `connection_creation_rate` is not counted, not served, and closed after its
throttle time (at most one quota window), as Kafka's ConnectionQuotas does (KIP-612).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.quotas.client_quotas import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE
from kafka_shim.shim.quotas.manager import ClientQuotaEnforcement
from kafka_shim.shim.security.authorizer import ANONYMOUS

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.produce import ProduceRequestData

__all__ = ["ClientQuotaEnforcement", "fetch_byte_budget", "throttle_fetch", "throttle_produce"]

PRINCIPAL_PREFIX = "User:"


def _user(ctx: RequestContext) -> str:
    # Kafka's quota entities name the principal's name (ANONYMOUS on an unauthenticated listener).
    return (ctx.principal or ANONYMOUS).removeprefix(PRINCIPAL_PREFIX)


def _throttle(ctx: RequestContext, key: str, size: int) -> tuple[int, Callable[[], None]]:
    quotas = ctx.broker.client_quotas
    throttle_ms, unrecord = quotas.record(key, _user(ctx), ctx.client_id or "", size, ctx.now_ms())
    ctx.throttle_ms = max(ctx.throttle_ms, throttle_ms)
    return throttle_ms, unrecord


def throttle_produce(ctx: RequestContext, request: ProduceRequestData) -> int:
    """Record a Produce request's record bytes; its throttle_time_ms."""
    if not ctx.broker.client_quotas.active:
        return 0
    size = sum(len(p.records or b"") for topic in request.topic_data for p in topic.partition_data)
    return _throttle(ctx, PRODUCER_BYTE_RATE, size)[0]


def fetch_byte_budget(ctx: RequestContext, max_bytes: int) -> int:
    """A Fetch's max_bytes, capped at what the client's consumer_byte_rate allows over the
    quota window (Kafka's getMaxValueInQuotaWindow): a larger response would be throttled,
    answered without data, and asked for again, for ever."""
    quotas = ctx.broker.client_quotas
    found = (
        quotas.store.quota_for(_user(ctx), ctx.client_id or "", CONSUMER_BYTE_RATE) if quotas.active else None
    )
    if found is None:
        return max_bytes
    return min(max_bytes, quotas.managers[CONSUMER_BYTE_RATE].max_bytes_in_window(found[0]))


def throttle_fetch(ctx: RequestContext, response: Mapping[str, Any], size: int) -> dict[str, Any]:
    """The Fetch response as sent: with its throttle time, and without data if throttled."""
    if not ctx.broker.client_quotas.active:
        return {**response, "throttle_time_ms": 0}
    throttle_ms, unrecord = _throttle(ctx, CONSUMER_BYTE_RATE, size)
    if throttle_ms == 0:
        return {**response, "throttle_time_ms": 0}
    unrecord()
    return {**response, "throttle_time_ms": throttle_ms, "responses": []}
