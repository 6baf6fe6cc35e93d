"""Counts kept on the request path for /metrics: requests by API and version, error codes by API
(as Kafka's ErrorsPerSec counts them: every partition's too), latency buckets, and record bytes
in and out per topic. Plain dicts and lists, no metric objects: the path is benchmarked
(bench.handle_frame), and prometheus_client is imported only when /metrics is served
(shim.web.metrics reads these when scraped)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.schema import Array, Field, Message, Struct

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.produce import ProduceRequestData

# Seconds; a dev broker answers most requests in well under a millisecond, a long-poll Fetch
# or a delayed JoinGroup in up to their timeouts.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_FIRST_BOUND = LATENCY_BUCKETS[0]


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


# Finds a response's non-zero error codes into a list; made from its message's schema.
ErrorFinder = Callable[[Any, list[int]], None]


def _error_paths(fields: Iterable[Field]) -> tuple[bool, dict[str, Any]]:
    """Whether these fields (of any version) hold an error_code, and the arrays of structs
    that hold one somewhere inside: {name: their own (has, arrays)}."""
    has = False
    arrays: dict[str, list[Field]] = {}
    for field in fields:
        if field.name == "error_code":
            has = True
        elif isinstance(field.type, Array) and isinstance(field.type.element, Struct):
            arrays.setdefault(field.name, []).extend(field.type.element.fields)
    inside = {name: _error_paths(each) for name, each in arrays.items()}
    return has, {name: paths for name, paths in inside.items() if paths[0] or paths[1]}


def _finder_source(has: bool, arrays: dict[str, Any], item: str, depth: int, lines: list[str]) -> None:
    pad = "    " * depth
    if has:
        lines += [f"{pad}code = {item}.get('error_code')", f"{pad}if code:", f"{pad}    found.append(code)"]
    for n, (name, (inner_has, inner)) in enumerate(arrays.items()):
        child = f"e{depth}_{n}"
        lines.append(f"{pad}for {child} in {item}.get({name!r}) or ():")
        _finder_source(inner_has, inner, child, depth + 1, lines)


def error_finder(message: Message) -> ErrorFinder:
    """Straight-line code visiting only where `message` can hold an error code (Heartbeat: one
    field; OffsetCommit: its topics' partitions), top level first: the general walk
    (`error_codes`) visits every list of every response instead."""
    has, arrays = _error_paths(message.fields)
    lines = ["def find(response, found):", "    pass"]
    _finder_source(has, arrays, "response", 1, lines)
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), f"<error finder {message.name}>", "exec"), namespace)
    return namespace["find"]  # type: ignore[no-any-return]


# Each code's name, read once: ErrorCode(code).name cost 0.46 us on 3.11 (the enum's call and
# its name property), for each group request the journal notes that was answered an error (a
# heartbeat told of a rebalance); an answer without one is noted "NONE" without asking.
_ERROR_NAMES = {code.value: code.name for code in ErrorCode}


def error_name(code: int) -> str:
    name = _ERROR_NAMES.get(code)
    return str(code) if name is None else name


def _size(records: Any) -> int:
    return len(records) if type(records) in (bytes, bytearray, memoryview) else 0


class ApiStats:
    """One API's counts: by version, errors by code, latency buckets and their sum."""

    __slots__ = ("buckets", "errors", "find_errors", "latency_sum", "versions")

    def __init__(self, find_errors: ErrorFinder) -> None:
        self.versions: dict[int, int] = {}
        self.errors: dict[int, int] = {}
        self.buckets = [0] * (len(LATENCY_BUCKETS) + 1)
        self.latency_sum = 0.0
        self.find_errors = find_errors


def _any_errors(response: Any, found: list[int]) -> None:
    found += error_codes(response)


class RequestStats:
    """Owned by the server's Trio thread; read by the collector on the same thread."""

    def __init__(self) -> None:
        self.apis: dict[str, ApiStats] = {}
        self.bytes_in: dict[str, int] = {}
        self.bytes_out: dict[str, int] = {}

    def _new_api(self, api: str) -> ApiStats:
        from kafka_shim.protocol.messages import APIS

        declared = next((each for each in APIS.values() if each.name == api), None)
        stats = self.apis[api] = ApiStats(
            _any_errors if declared is None else error_finder(declared.response)
        )
        return stats

    def as_json(self) -> dict[str, Any]:
        """The counts as JSON (a broker process's share of the cluster's /metrics:
        shim.processes.view_service); `add_json` adds them up again."""
        return {
            "requests": {
                name: {
                    "versions": {str(v): n for v, n in per_api.versions.items()},
                    "errors": {str(code): n for code, n in per_api.errors.items()},
                    "buckets": list(per_api.buckets),
                    "latency_sum": per_api.latency_sum,
                }
                for name, per_api in self.apis.items()
            },
            "bytes_in": dict(self.bytes_in),
            "bytes_out": dict(self.bytes_out),
        }

    def add_json(self, counts: dict[str, Any]) -> None:
        """Another's `as_json` counts added to these (the supervisor's sum over the processes)."""
        for api, raw in counts["requests"].items():
            # A sum is never given a response: no error finder made (nor the messages imported).
            stats = self.apis.get(api)
            if stats is None:
                stats = self.apis[api] = ApiStats(_any_errors)
            for version, count in raw["versions"].items():
                stats.versions[int(version)] = stats.versions.get(int(version), 0) + count
            for code, count in raw["errors"].items():
                stats.errors[int(code)] = stats.errors.get(int(code), 0) + count
            stats.buckets = [
                mine + theirs for mine, theirs in zip(stats.buckets, raw["buckets"], strict=True)
            ]
            stats.latency_sum += raw["latency_sum"]
        for per_topic, raw_topics in (
            (self.bytes_in, counts["bytes_in"]),
            (self.bytes_out, counts["bytes_out"]),
        ):
            for topic, count in raw_topics.items():
                per_topic[topic] = per_topic.get(topic, 0) + count

    def observe(self, api: str, version: int, response: dict[str, Any] | None, seconds: float) -> list[int]:
        """Count the request; returns the error codes of its answer, the top-level one first."""
        stats = self.apis.get(api) or self._new_api(api)
        versions = stats.versions
        versions[version] = versions.get(version, 0) + 1
        # Most requests fall in the first bucket: one comparison instead of a search.
        stats.buckets[0 if seconds <= _FIRST_BOUND else bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        stats.latency_sum += seconds
        codes: list[int] = []
        if response is not None:
            stats.find_errors(response, codes)
            if codes:
                errors = stats.errors
                for code in codes:
                    errors[code] = errors.get(code, 0) + 1
        return codes

    def produced(self, request: ProduceRequestData) -> None:
        """Record bytes a Produce request carried, by topic."""
        bytes_in = self.bytes_in
        for topic in request.topic_data:
            size = 0
            for partition in topic.partition_data:  # a loop, not sum() over a generator: 0.2 µs less
                size += _size(partition.records)
            bytes_in[topic.name] = bytes_in.get(topic.name, 0) + size

    def fetched(self, response: dict[str, Any], topic_name: Any) -> None:
        """Record bytes a Fetch answer carried, by topic (`topic_name` maps a v13+ topic id)."""
        bytes_out = self.bytes_out
        for topic in response["responses"]:
            name = topic.get("topic") or topic_name(topic.get("topic_id"))
            size = sum(_size(p.get("records")) for p in topic["partitions"])
            if name is not None and size:
                bytes_out[name] = bytes_out.get(name, 0) + size
