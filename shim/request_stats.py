"""Counts kept on the request path for /metrics: requests by API and version, error codes by API,
latency buckets, record bytes per topic. Plain dicts and one bisect per request, no metric
objects (the path is benchmarked, and prometheus_client is imported only when /metrics is
served: shim.metrics reads these when scraped)."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from kafka_shim.protocol.errors import ErrorCode

# Seconds; a dev broker answers most requests in well under a millisecond, a long-poll Fetch
# or a delayed JoinGroup in up to their timeouts.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def error_codes(response: Any) -> set[int]:
    """Every non-zero error code anywhere in a response (top level, per topic, per partition)."""
    found: set[int] = set()
    stack = [response]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, value in item.items():
                if key == "error_code":
                    if value:
                        found.add(int(value))
                elif isinstance(value, list | tuple | Mapping):
                    stack.append(value)
        elif isinstance(item, list | tuple):
            stack.extend(v for v in item if isinstance(v, Mapping | list | tuple))
    return found


def first_error(response: Any) -> str:
    """The name of the response's error (its top-level one, else any), or NONE."""
    top = response.get("error_code") if isinstance(response, Mapping) else None
    if top:
        return error_name(int(top))
    codes = error_codes(response)
    return error_name(min(codes)) if codes else "NONE"


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


class RequestStats:
    """Counts of requests by API and version, errors by API and code, and latency buckets.
    Owned by the server's Trio thread; read by the collector on the same thread."""

    def __init__(self) -> None:
        self.requests: defaultdict[tuple[str, int], int] = defaultdict(int)
        self.errors: defaultdict[tuple[str, int], int] = defaultdict(int)
        self.buckets: dict[str, list[int]] = {}
        self.latency_sum: defaultdict[str, float] = defaultdict(float)
        self.bytes_in: defaultdict[str, int] = defaultdict(int)
        self.bytes_out: defaultdict[str, int] = defaultdict(int)

    def observe(self, api: str, version: int, response: Any, seconds: float) -> None:
        self.requests[api, version] += 1
        if response is not None:
            for code in error_codes(response):
                self.errors[api, code] += 1
        counts = self.buckets.get(api)
        if counts is None:
            counts = self.buckets[api] = [0] * (len(LATENCY_BUCKETS) + 1)
        counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.latency_sum[api] += seconds

    def topic_bytes(self, topic: str, bytes_in: int = 0, bytes_out: int = 0) -> None:
        if bytes_in:
            self.bytes_in[topic] += bytes_in
        if bytes_out:
            self.bytes_out[topic] += bytes_out
