"""The quotas enforced: produce and fetch byte rates, what the Produce and Fetch handlers
call, and the connection creation rate of an IP, what the server asks on a new connection.

Kafka records a Produce request's size and a Fetch response's size against the quota the
client is held to (shim.client_quotas), answers at once with `throttle_time_ms`, and mutes
the connection for that long (KIP-219: the server stops reading it; `ctx.throttle_ms`). A
throttled fetch is answered without data, its bytes taken back, as Kafka does. A connection
over its IP's `connection_creation_rate` is not counted, not served, and closed after its
throttle time (at most one quota window), as Kafka's ConnectionQuotas does (KIP-612).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kafka_shim.shim.authorizer import ANONYMOUS
from kafka_shim.shim.client_quotas import (
    CONNECTION_CREATION_RATE,
    CONSUMER_BYTE_RATE,
    PRODUCER_BYTE_RATE,
    ClientQuotas,
)
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.quota_manager import QuotaManager

PRINCIPAL_PREFIX = "User:"


class ClientQuotaEnforcement:
    """The broker's client quotas and one rate manager per enforced quota type."""

    def __init__(self, store: ClientQuotas, samples: int, window_ms: int) -> None:
        self.store = store
        self.window_ms = window_ms
        self.managers = {
            key: QuotaManager(samples, window_ms)
            for key in (PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, CONNECTION_CREATION_RATE)
        }

    @property
    def active(self) -> bool:
        """Whether any quota is set (else the hot paths skip measuring)."""
        return bool(self.store.quotas)

    def connection_throttle_ms(self, ip: str, now: int) -> int:
        """0 to accept a new connection from `ip`; else how long to hold it before closing."""
        quota = self.store.ip_quota(ip) if self.active else None
        if quota is None:
            return 0
        manager = self.managers[CONNECTION_CREATION_RATE]
        throttle_ms = manager.record((ip, ""), quota, 1, now)
        if throttle_ms == 0:
            return 0
        manager.unrecord((ip, ""), 1, now)
        return min(throttle_ms, self.window_ms)

    def record(
        self, key: str, user: str, client_id: str, size: int, now: int
    ) -> tuple[int, Callable[[], None]]:
        """The throttle time for `size` more bytes, and how to take them back."""
        found = self.store.quota_for(user, client_id, key)
        if found is None:
            return 0, lambda: None
        quota, tags = found
        manager = self.managers[key]
        return manager.record(tags, quota, size, now), lambda: manager.unrecord(tags, size, now)


def _user(ctx: RequestContext) -> str:
    # Kafka's quota entities name the principal's name (ANONYMOUS on an unauthenticated listener).
    return (ctx.principal or ANONYMOUS).removeprefix(PRINCIPAL_PREFIX)


def _throttle(ctx: RequestContext, key: str, size: int) -> tuple[int, Callable[[], None]]:
    quotas = ctx.broker.client_quotas
    throttle_ms, unrecord = quotas.record(key, _user(ctx), ctx.client_id or "", size, ctx.now_ms())
    ctx.throttle_ms = max(ctx.throttle_ms, throttle_ms)
    return throttle_ms, unrecord


def throttle_produce(ctx: RequestContext, request: Any) -> int:
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
