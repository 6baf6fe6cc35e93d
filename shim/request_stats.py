"""Counts kept on the request path for /metrics: requests by API and version, error codes by API
(as Kafka's ErrorsPerSec counts them: every partition's too), latency buckets, and record bytes
in and out per topic. Plain dicts and lists, no metric objects: the path is benchmarked
(bench.handle_frame), and prometheus_client is imported only when /metrics is served
(shim.metrics reads these when scraped)."""

from __future__ import annotations

import bisect
from typing import Any

from kafka_shim.protocol.errors import ErrorCode

# Seconds; a dev broker answers most requests in well under a millisecond, a long-poll Fetch
# or a delayed JoinGroup in up to their timeouts.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def error_codes(response: dict[str, Any]) -> list[int]:
    """Every non-zero error code in a response, once per place it appears (top level first,
    then topics and partitions). Responses are plain dicts and lists, so exact type checks
    suffice: they cost a fraction of isinstance against the ABCs."""
    found: list[int] = []
    stack: list[Any] = [response]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            code = item.get("error_code")
            if code:
                found.append(code)
            for value in item.values():
                if type(value) is list and value and type(value[0]) is dict:
                    stack.extend(value)
    return found


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def _size(records: Any) -> int:
    return len(records) if type(records) in (bytes, bytearray, memoryview) else 0


class ApiStats:
    """One API's counts: by version, errors by code, latency buckets and their sum."""

    __slots__ = ("buckets", "errors", "latency_sum", "versions")

    def __init__(self) -> None:
        self.versions: dict[int, int] = {}
        self.errors: dict[int, int] = {}
        self.buckets = [0] * (len(LATENCY_BUCKETS) + 1)
        self.latency_sum = 0.0


class RequestStats:
    """Owned by the server's Trio thread; read by the collector on the same thread."""

    def __init__(self) -> None:
        self.apis: dict[str, ApiStats] = {}
        self.bytes_in: dict[str, int] = {}
        self.bytes_out: dict[str, int] = {}

    def observe(self, api: str, version: int, response: dict[str, Any] | None, seconds: float) -> list[int]:
        """Count the request; returns the error codes of its answer, the top-level one first."""
        stats = self.apis.get(api)
        if stats is None:
            stats = self.apis[api] = ApiStats()
        versions = stats.versions
        versions[version] = versions.get(version, 0) + 1
        stats.buckets[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        stats.latency_sum += seconds
        if response is None:
            return []
        codes = error_codes(response)
        if codes:
            errors = stats.errors
            for code in codes:
                errors[code] = errors.get(code, 0) + 1
        return codes

    def produced(self, request: Any) -> None:
        """Record bytes a Produce request carried, by topic."""
        bytes_in = self.bytes_in
        for topic in request.topic_data:
            size = sum(_size(p.records) for p in topic.partition_data)
            bytes_in[topic.name] = bytes_in.get(topic.name, 0) + size

    def fetched(self, response: dict[str, Any], topic_name: Any) -> None:
        """Record bytes a Fetch answer carried, by topic (`topic_name` maps a v13+ topic id)."""
        bytes_out = self.bytes_out
        for topic in response["responses"]:
            name = topic.get("topic") or topic_name(topic.get("topic_id"))
            size = sum(_size(p.get("records")) for p in topic["partitions"])
            if name is not None and size:
                bytes_out[name] = bytes_out.get(name, 0) + size
