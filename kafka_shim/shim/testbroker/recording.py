"""Request recording of the test broker: the last N requests and their answers, queryable with
the fault rules' match (`requests(api="OffsetCommit", group="g")`), and optionally written as
JSON lines to a trace file.

Off unless asked for (`--record-requests N`, `--trace-file`, the pytest fixture): a recording
holds each request's parsed body, record batches included (credentials, SCRAM salts and
password configs hidden: protocol.redaction), until N newer ones push it out or
together they hold more than RECORDED_BYTES.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from kafka_shim.protocol.file_records import FileRecords
from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.named import TopicNames
from kafka_shim.protocol.redaction import holds_sensitive, redacted
from kafka_shim.protocol.schema import Parsed
from kafka_shim.shim.testbroker.faults import MATCH_KEYS, FaultSpecError, Match, RequestView

log = logging.getLogger(__name__)

# Bytes fields (record batches, assignments) longer than this are traced by their size alone.
TRACED_BYTES = 4096
# The bytes (record batches, mostly) the kept requests may hold together: the oldest go first
# past it, so a produce-heavy test keeps a bounded recording whatever N says.
RECORDED_BYTES = 64 << 20


def bytes_held(value: Any) -> int:
    """The bytes fields' sizes in a parsed request or answer (a Fetch's file ranges hold none)."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bytes | bytearray):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return total


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request as it came and what it was answered (None: no answer, as for acks=0)."""

    at_ms: int  # the broker's clock
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    principal: str
    peer: str
    node_id: int  # the (emulated) broker it came to
    request: Parsed  # as parsed, credentials hidden (protocol.redaction)
    response: Any
    fault_rule: int | None  # the rule that answered instead of the handler, if one did

    @property
    def api(self) -> str:
        return APIS[self.api_key].name

    def view(self, topic_names: TopicNames) -> RequestView:
        return RequestView(
            self.api_key,
            self.api_version,
            self.client_id,
            self.principal,
            self.request,
            topic_names,
            self.node_id,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "at_ms": self.at_ms,
            "api": self.api,
            "version": self.api_version,
            "correlation_id": self.correlation_id,
            "client_id": self.client_id,
            "principal": self.principal,
            "peer": self.peer,
            "broker": self.node_id,
            "fault_rule": self.fault_rule,
            "request": jsonable(self.request),
            "response": jsonable(self.response),
        }


def jsonable(value: Any) -> Any:
    """A parsed message as JSON: bytes in base64 (or their size, past TRACED_BYTES), UUIDs as text."""
    if isinstance(value, Mapping):
        return {str(key): jsonable(each) for key, each in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(each) for each in value]
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        return base64.b64encode(data).decode() if len(data) <= TRACED_BYTES else f"<{len(data)} bytes>"
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, FileRecords):  # a Fetch's records sent from their files: never short
        return f"<{len(value)} bytes>"
    return value


def open_trace_file(path: Path) -> IO[str]:
    """The trace file, appended to a line at a time; created 0600 (it names users, topics and
    what was sent). An existing one keeps its mode: a warning says if others may read it."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    mode = os.fstat(fd).st_mode
    if mode & 0o077:
        log.warning("trace file %s can be read by others (mode %04o): chmod 600 it", path, mode & 0o777)
    return os.fdopen(fd, "a", encoding="utf-8", buffering=1)


class RequestRecorder:
    """The last `capacity` requests of one broker, oldest first. Owned by the broker's event loop."""

    def __init__(
        self, capacity: int, trace_file: Path | None = None, max_bytes: int = RECORDED_BYTES
    ) -> None:
        self.recorded: deque[RecordedRequest] = deque(maxlen=max(capacity, 0))
        self._sizes: deque[int] = deque()  # bytes_held of each recorded entry, in step
        self._held = 0
        self.max_bytes = max_bytes
        self._trace: IO[str] | None = None
        if trace_file is not None:
            self._trace = open_trace_file(trace_file)

    def record(self, entry: RecordedRequest) -> None:
        """Keep `entry` (and trace it), its credentials and password configs hidden."""
        api = APIS[entry.api_key]
        if holds_sensitive(api.request) or holds_sensitive(api.response):
            entry = replace(
                entry,
                request=redacted(api.request, entry.request),
                response=redacted(api.response, entry.response),
            )
        if self.recorded.maxlen:
            if len(self.recorded) == self.recorded.maxlen:
                self._held -= self._sizes.popleft()
            size = bytes_held(entry.request) + bytes_held(entry.response)
            self.recorded.append(entry)
            self._sizes.append(size)
            self._held += size
            while self._held > self.max_bytes and len(self.recorded) > 1:
                self.recorded.popleft()
                self._held -= self._sizes.popleft()
        if self._trace is not None:
            self._trace.write(json.dumps(entry.to_json()) + "\n")

    def query(self, spec: Mapping[str, Any], topic_names: TopicNames) -> list[RecordedRequest]:
        """The recorded requests `spec` (a fault rule's match keys) matches, oldest first."""
        unknown = set(spec) - set(MATCH_KEYS)
        if unknown:
            known = ", ".join(MATCH_KEYS)
            raise FaultSpecError(f"unknown key(s) {', '.join(sorted(unknown))}; queries take {known}")
        match = Match.from_spec(spec)
        return [entry for entry in self.recorded if match.matches(entry.view(topic_names))]

    def clear(self) -> None:
        self.recorded.clear()
        self._sizes.clear()
        self._held = 0

    def __iter__(self) -> Iterator[RecordedRequest]:
        return iter(self.recorded)

    def close(self) -> None:
        if self._trace is not None:
            self._trace.close()
            self._trace = None
