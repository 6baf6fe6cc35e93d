"""The Trio server: the only module that imports Trio.

One task per connection. Like Kafka, a connection has at most one request in
flight (Kafka mutes the channel until the response is sent), which keeps
responses in request order without any reordering buffer, and bounds what a
client that never reads its responses can queue: nothing is read from it
meanwhile. A frame's memory follows the bytes received, within the broker-wide
`queued.max.request.bytes`; its announced length is only checked against
`socket.request.max.bytes`. Connection limits, the idle timeout and accept
back-off are Kafka's; the bookkeeping lives in `shim.limits`. A frame that
cannot be understood closes only its own connection, with one log line, and
lines about connections are rate-limited.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import logging
import math
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import outcome
import trio

from kafka_shim.controls import BrokerControls
from kafka_shim.protocol.api import API_VERSIONS_KEY
from kafka_shim.protocol.error_answers import NoErrorField, error_answer
from kafka_shim.protocol.file_records import FileRecords, Spliced
from kafka_shim.protocol.headers import parse_request_header, peek_api, response_frame, spliced_response_frame
from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.messages.produce import API as PRODUCE
from kafka_shim.protocol.redaction import redacted
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config import BrokerConfig
from kafka_shim.shim.context import RequestContext, Respond
from kafka_shim.shim.faults import FaultRule, RequestView
from kafka_shim.shim.handlers import Handler, handler_for
from kafka_shim.shim.handlers.api_versions import unsupported_version_answer
from kafka_shim.shim.limits import (
    HEAP_RELEASE_EVERY_S,
    ConnectionLimits,
    LogBudget,
    RequestMemory,
    parse_per_ip_overrides,
    release_free_heap,
)
from kafka_shim.shim.recording import RecordedRequest
from kafka_shim.shim.served_versions import ServedVersions, served_versions
from kafka_shim.shim.timer_failures import TICK_BACKOFF_S
from kafka_shim.storage.durability import wall_clock_ms
from kafka_shim.storage.log import PartitionLog

if TYPE_CHECKING:
    from kafka_shim.shim.listeners import Listener
    from kafka_shim.shim.security.listener_security import ListenerSecurity

log = logging.getLogger("kafka_shim.server")
# `--log-level DEBUG` traces every request and its answer, abbreviated: how a client that
# waits forever is told apart from a broker that never answered.
trace = logging.getLogger("kafka_shim.requests")
_TRACE_CHARS = 400

T = TypeVar("T")
_LENGTH = struct.Struct(">i")
_READ_CHUNK = 65536
# A client that starts TLS and stalls is dropped after this long.
_TLS_HANDSHAKE_TIMEOUT_S = 10.0
# Inside a frame larger than a read, ask for up to this much at once.
_LARGE_READ = 1 << 20
# Request memory beyond queued.max.request.bytes that only readers between frames or inside
# a frame of at most _READ_CHUNK may use: clients that fill the pool with large frames they
# never finish cannot lock out the small requests (ApiVersions, heartbeats) of everyone else.
_SMALL_FRAME_HEADROOM = 8 << 20
# accept() failing for want of file descriptors or memory: back off, doubling up to the max.
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_ACCEPT_BACKOFF_S = (0.01, 1.0)
_DERIVATION_THREADS = max(1, (os.cpu_count() or 2) - 1)
# Answers to pipelined requests held for one send, at most this many bytes, and only while the
# request behind them is one answered without waiting (never a Fetch or a join, which can wait
# for seconds: the answers before them go out at once, as Kafka sends each when it is ready).
_HELD_ANSWERS_BYTES = 1 << 20
# Produce, ListOffsets, Metadata, OffsetCommit, OffsetFetch, FindCoordinator, Heartbeat, ApiVersions.
_ANSWERED_AT_ONCE = frozenset({0, 2, 3, 8, 9, 10, 12, 18})
_API_KEY = struct.Struct(">h")
# A connection closed for a bad frame still gets the answers to the requests before it, within this.
_SEND_BEFORE_CLOSING_S = 1.0
# What Kafka clients do not need (the console) loads after the first Kafka answer, or this
# long after listening when no client has come by then.
_LOAD_AFTER_S = 1.0


def _one_line(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= _TRACE_CHARS else text[:_TRACE_CHARS] + "..."


# What else a client may speak to a Kafka port, told by the first 4 bytes where Kafka's frame
# length is expected: an HTTP request line (or HTTP/2's preface), a TLS handshake record.
_HTTP_STARTS = (b"GET ", b"POST", b"PUT ", b"HEAD", b"DELE", b"OPTI", b"PATC", b"CONN", b"TRAC", b"PRI ")


def foreign_protocol(prefix: bytes) -> str:
    """A hint naming the protocol a frame's first bytes belong to, or "" for none known."""
    if prefix[:4] in _HTTP_STARTS:
        return " (an HTTP request on a Kafka listener: point the client at a Kafka bootstrap server)"
    if prefix[:2] == b"\x16\x03":  # a TLS handshake record (ClientHello)
        return " (a TLS client on a plaintext listener?)"
    return ""


class ConnectionClosed(Exception):
    """The peer went away, or sent something we close the connection for."""

    def __init__(self, reason: str, level: int = logging.WARNING) -> None:
        super().__init__(reason)
        self.level = level


class Wakeup:
    """A broadcast signal: everyone waiting is released when it fires."""

    def __init__(self) -> None:
        self._event = trio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = trio.Event()

    async def wait(self, timeout_s: float) -> None:
        with trio.move_on_after(max(timeout_s, 0.0)):
            await self._event.wait()


class AppendWaiters:
    """Fetch long polls, keyed by the partition logs they wait on: an append
    wakes only the Fetches reading that partition (an offset commit, which
    appends to __consumer_offsets, must not re-run every consumer's Fetch)."""

    def __init__(self) -> None:
        self._waiting: dict[PartitionLog, set[trio.Event]] = {}

    def notify(self, log: PartitionLog) -> None:
        for event in self._waiting.pop(log, ()):
            event.set()

    async def wait(self, logs: Collection[PartitionLog], timeout_s: float) -> None:
        event = trio.Event()
        for log in logs:
            self._waiting.setdefault(log, set()).add(event)
        try:
            with trio.move_on_after(max(timeout_s, 0.0)):
                await event.wait()
        finally:
            for log in logs:
                waiting = self._waiting.get(log)
                if waiting is not None:
                    waiting.discard(event)
                    if not waiting:
                        del self._waiting[log]


class TrioRequestContext(RequestContext):
    def __init__(self, server: Server, client_host: str, peer: str, listener: BoundListener) -> None:
        self.broker = server.broker
        self._server = server
        self.client_host = client_host
        self.peer = peer
        self.listener = listener
        self.listener_name = listener.name
        self.security_protocol = "PLAINTEXT" if listener.security is None else listener.security.protocol
        self.zero_copy = listener.security is None
        self.api_version = 0
        self.correlation_id = 0
        self.client_id = None
        self.failure_delayed = False  # connection.failed.authentication.delay.ms, once

    async def deferred(self, start: Callable[[Respond[T]], None]) -> T:
        done = trio.Event()
        box: list[T] = []

        def respond(value: T) -> None:
            if not box:
                box.append(value)
                done.set()

        start(respond)
        self._server.wake_timers_if_sooner()
        await done.wait()
        return box[0]

    async def off_loop(self, work: Callable[[], None]) -> None:
        await trio.to_thread.run_sync(work, limiter=self._server.derivations)

    async def wait_for_append(self, logs: Collection[PartitionLog], timeout_ms: int) -> None:
        await self._server.appended.wait(logs, timeout_ms / 1000)

    def advertised_address(self) -> tuple[str, int]:
        return self.listener.advertised

    @property
    def node_id(self) -> int:
        return self.listener.node_id


class MemoryGate:
    """`RequestMemory` for Trio tasks: a reader that is granted nothing stops
    reading its socket until another connection's request is handled."""

    def __init__(self, capacity: int) -> None:
        self.pool = RequestMemory(capacity if capacity > 0 else sys.maxsize, _SMALL_FRAME_HEADROOM)
        self._released = Wakeup()
        self._waiting = 0

    async def reserve(self, wanted: int, small: bool) -> int:
        while True:
            granted = self.pool.reserve(wanted, small)
            if granted:
                return granted
            self._waiting += 1
            try:
                await self._released.wait(math.inf)
            finally:
                self._waiting -= 1

    def release(self, size: int) -> None:
        if size:
            self.pool.release(size)
            if self._waiting:
                self._released.fire()


class FrameReader:
    """Length-prefixed frames from a socket; memory follows the bytes received.

    A frame's length is checked against `max_frame` as soon as its prefix
    arrives, and its buffer grows only as its bytes do: every read is reserved
    in the broker-wide `MemoryGate` first and stays reserved until the frame has
    been handled, so an announced length costs nothing by itself. Works on the
    raw file descriptor rather than a SocketStream: on this request/response
    ping-pong the stream layer's bookkeeping was a measurable share of each
    round trip. `last_activity` and `waiting_on` are for the server's reaper, which
    closes connections idle for connections.max.idle.ms. `max_frame` (and the setting named
    in the refusal) is lowered to sasl.server.max.receive.size until a SASL connection has
    authenticated, so a frame announced past it closes the connection at its header.

    A peer that answered within `busy_poll_s` last time is polled, still yielding
    to every other task, for up to that long before the task parks in epoll: a CPU
    that goes idle between a response and the next request wakes late and cold
    (on this 2-core VM an OffsetCommit took 200 µs after a 1 ms idle gap, 85 µs
    after 0.1 ms), which halved a synchronous committer's rate. Peers that pause
    longer (heartbeats, long polls, idle connections) are never polled.
    """

    def __init__(
        self,
        sock: trio.socket.SocketType,
        max_frame: int,
        memory: MemoryGate,
        busy_poll_s: float = 0.0,
    ) -> None:
        self._sock = sock
        self.fileno = sock.fileno()
        self.max_frame = max_frame
        self.max_frame_setting = "socket.request.max.bytes"
        self._memory = memory
        self.last_activity = time.monotonic()
        # What the connection waits for: "a request", "request memory", "its responses to be
        # read", or "" while a request is being handled.
        self.waiting_on = "a request"
        self._buffer = bytearray()
        self._held = 0  # reserved in `memory`: the buffer, a frame being gathered, the last frame
        self._handed_out = 0  # the last frame's share of it, held until the frame is handled
        self._busy_poll_s = busy_poll_s
        self._peer_is_quick = False

    def mark_active(self, waiting_on: str = "a request") -> None:
        """Bytes moved: idleness counts from now."""
        self.last_activity = time.monotonic()
        self.waiting_on = waiting_on

    def frame_handled(self) -> None:
        self._memory.release(self._handed_out)
        self._held -= self._handed_out
        self._handed_out = 0

    def close(self) -> None:
        self._memory.release(self._held)
        self._held = self._handed_out = 0
        self._buffer = bytearray()

    async def _wait_for_memory(self, wanted: int, small: bool) -> int:
        """No request memory left: stop reading this connection until some is released.
        A peer that closes is still noticed (peeking costs no memory: 0 is returned); one
        whose bytes wait is closed by the reaper when connections.max.idle.ms passes, since
        nothing moves: frames that never finish cannot hold the others' memory forever."""
        self.waiting_on = "request memory"
        try:
            if not await self._sock.recv(1, socket.MSG_PEEK):
                return 0
            return await self._memory.reserve(wanted, small)
        finally:
            self.waiting_on = "a request"

    async def _receive(self, wanted: int, small: bool) -> bytes:
        """Up to `wanted` bytes, reserved in request memory before they are read;
        b"" when the peer closed."""
        started = time.monotonic()  # one clock for idleness and polling: a call less per read
        polling_until = started + self._busy_poll_s if self._peer_is_quick else 0.0
        parked_at = None if self._peer_is_quick else started
        waited = False
        while True:
            granted = self._memory.pool.reserve(wanted, small) or await self._wait_for_memory(wanted, small)
            if not granted:
                return b""
            try:
                chunk = os.read(self.fileno, granted)
            except BlockingIOError:
                self._memory.release(granted)
                if parked_at is None:
                    if time.monotonic() < polling_until:
                        await trio.lowlevel.checkpoint()
                        waited = True
                        continue
                    parked_at = time.monotonic()
                await trio.lowlevel.wait_readable(self.fileno)  # an int: no fileno() call
                waited = True
                continue
            except BaseException:
                self._memory.release(granted)
                raise
            self._memory.release(granted - len(chunk))
            self._held += len(chunk)
            self.last_activity = now = time.monotonic()
            if parked_at is not None:
                self._peer_is_quick = now - parked_at < self._busy_poll_s
            if not waited:
                # Found waiting: still let the others run first, or a peer pipelining
                # requests that need no answer (acks=0) would hold the loop.
                await trio.lowlevel.checkpoint()
            return chunk

    async def _fill(self, size: int) -> None:
        while len(self._buffer) < size:
            chunk = await self._receive(_READ_CHUNK, small=True)
            if not chunk:
                self._closed_by_peer(len(self._buffer))
            self._buffer += chunk

    @staticmethod
    def _closed_by_peer(pending: int) -> NoReturn:
        if pending:
            raise ConnectionClosed(f"peer closed mid-frame ({pending} bytes pending)")
        raise ConnectionClosed("")

    def whole_frame_buffered(self) -> bool:
        """Whether the next frame is already read whole: more requests came with the last read."""
        buffer = self._buffer
        return len(buffer) >= 4 and 4 + _LENGTH.unpack_from(buffer)[0] <= len(buffer)

    def answered_at_once_next(self) -> bool:
        """Whether the next frame is read whole and asks what is answered without waiting."""
        buffer = self._buffer
        return (
            len(buffer) >= 6
            and 4 + _LENGTH.unpack_from(buffer)[0] <= len(buffer)
            and _API_KEY.unpack_from(buffer, 4)[0] in _ANSWERED_AT_ONCE
        )

    async def next_frame(self) -> bytes:
        self.frame_handled()
        if not self._buffer:
            # The usual request: one read brings exactly one whole frame, which is handed out
            # as it came, without passing through the buffer.
            chunk = await self._receive(_READ_CHUNK, small=True)
            if not chunk:
                self._closed_by_peer(0)
            if len(chunk) > 4:
                (size,) = _LENGTH.unpack_from(chunk)
                if size == len(chunk) - 4 and size <= self.max_frame:
                    self._handed_out = len(chunk)
                    return chunk[4:]
            self._buffer += chunk
        await self._fill(4)
        (size,) = _LENGTH.unpack_from(self._buffer)
        if size < 0 or size > self.max_frame:
            hint = foreign_protocol(bytes(self._buffer[:4]))
            raise ConnectionClosed(
                f"frame length {size} outside 0..{self.max_frame} ({self.max_frame_setting}){hint}"
            )
        end = 4 + size
        if end > len(self._buffer) and end > _READ_CHUNK:
            frame = await self._gather(size)
        else:
            await self._fill(end)
            with memoryview(self._buffer) as view:
                frame = bytes(view[4:end])
            del self._buffer[:end]
        self._handed_out = end
        return frame

    async def _gather(self, size: int) -> bytes:
        """A frame larger than a read: its chunks as they arrive, joined once (the one
        copy a contiguous frame costs anyway), never a buffer of the announced size."""
        with memoryview(self._buffer) as view:
            parts = [bytes(view[4:])]
        self._buffer = bytearray()
        have = len(parts[0])
        while have < size:
            chunk = await self._receive(min(size - have, _LARGE_READ), small=False)
            if not chunk:
                self._closed_by_peer(have + 4)
            parts.append(chunk)
            have += len(chunk)
        return b"".join(parts)


class TlsFrameReader(FrameReader):
    """The same framing and request memory over TLS: bytes come decrypted from the SSLStream.
    No busy polling (the raw socket's readiness says nothing about whole TLS records); the raw
    socket still serves the reaper's hang-up check and the wait for request memory."""

    def __init__(self, stream: trio.SSLStream[trio.SocketStream], max_frame: int, memory: MemoryGate) -> None:
        super().__init__(stream.transport_stream.socket, max_frame, memory)
        self.stream = stream

    async def _receive(self, wanted: int, small: bool) -> bytes:
        granted = self._memory.pool.reserve(wanted, small) or await self._wait_for_memory(wanted, small)
        if not granted:
            return b""
        try:
            chunk = bytes(await self.stream.receive_some(granted))
        except BaseException:
            self._memory.release(granted)
            raise
        self._memory.release(granted - len(chunk))
        self._held += len(chunk)
        self.last_activity = time.monotonic()
        return chunk


class HeldAnswers:
    """Answers to pipelined requests, held while further whole requests wait in the read
    buffer, so that a client's burst is answered by one send (one syscall, one wake-up of the
    client) in request order. Bounded by _HELD_ANSWERS_BYTES; only plain bytes are held."""

    __slots__ = ("parts", "size")

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, answer: bytes) -> None:
        self.parts.append(answer)
        self.size += len(answer)

    def before(self, answer: bytes | Spliced) -> bytes | Spliced:
        """`answer` preceded by every held one (and nothing held any more)."""
        if not self.size:
            return answer
        held = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        if isinstance(answer, Spliced):
            return answer.prefixed(held)
        return held + answer


async def send_all(sock: trio.socket.SocketType, data: bytes | Spliced, reader: FrameReader) -> None:
    """A client that stops reading its responses is not read from either (the
    connection handles one request at a time); the reaper closes it once nothing has
    moved for connections.max.idle.ms. Spliced parts go out in order, records left in
    their files by sendfile (Kafka's zero-copy path)."""
    if isinstance(reader, TlsFrameReader):
        reader.mark_active("its responses to be read")
        await reader.stream.send_all(data if isinstance(data, bytes) else bytes(data))
        return
    if isinstance(data, Spliced):
        for part in data.parts:
            if isinstance(part, FileRecords):
                await _send_file(sock, part, reader)
            else:
                await send_all(sock, part, reader)
        return
    fd = reader.fileno
    try:
        sent = os.write(fd, data)
    except BlockingIOError:
        sent = 0
    if sent == len(data):  # nearly always: a response fits the socket's buffer
        return
    view = memoryview(data)[sent:]
    while view:
        try:
            sent = os.write(fd, view)
        except BlockingIOError:
            reader.mark_active("its responses to be read")
            await trio.lowlevel.wait_writable(sock)
            continue
        view = view[sent:]


async def _send_file(sock: trio.socket.SocketType, records: FileRecords, reader: FrameReader) -> None:
    try:
        for file_fd, offset, size in records.ranges:
            end = offset + size
            while offset < end:
                try:
                    sent = os.sendfile(reader.fileno, file_fd, offset, end - offset)
                except BlockingIOError:
                    reader.mark_active("its responses to be read")
                    await trio.lowlevel.wait_writable(sock)
                    continue
                if sent == 0:  # the file is shorter than the range: the frame cannot be finished
                    raise ConnectionClosed(f"record file ended {end - offset} bytes early")
                offset += sent
    finally:
        records.close()


@dataclass(frozen=True)
class BoundListener:
    """A listener's sockets, the address it is bound to, and what it advertises."""

    name: str
    sockets: list[trio.SocketListener]
    bound: tuple[str, int]
    advertised: tuple[str, int]
    security: ListenerSecurity | None = None  # None: PLAINTEXT
    node_id: int = 0  # the emulated broker it belongs to (shim.cluster)

    def describe(self) -> str:
        (host, port), (public_host, public_port) = self.bound, self.advertised
        return f"{host}:{port} ({self.name}, advertised as {public_host}:{public_port})"


def _listen_again(family: socket.AddressFamily, address: Any) -> trio.SocketListener:
    """A listening socket on an address bound before (SO_REUSEADDR, as Trio binds)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(socket.SOMAXCONN)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(trio.socket.from_stdlib_socket(sock))


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


def _route(api_key: int, api_version: int, served: ServedVersions) -> Route | None:
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


class Reaped:
    """A connection's cancel scope for the reaper, and why it was closed (empty for a
    client that disconnected while its request was held)."""

    def __init__(self) -> None:
        self.scope = trio.CancelScope()
        self.reason = ""
        self.level = logging.INFO


class Server:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.timers_changed = Wakeup()
        self._timer_sleeps_until = math.inf
        self.appended = AppendWaiters()
        broker.on_append = self.appended.notify
        # Advancing the broker's clock fires the deadlines it passed at once.
        broker.broker_clock.on_change = self._clock_moved
        config = broker.config
        self.memory = MemoryGate(config.queued_max_request_bytes)
        self.connections = ConnectionLimits(
            config.max_connections,
            config.max_connections_per_ip,
            parse_per_ip_overrides(config.max_connections_per_ip_overrides),
        )
        self._connection_ended = Wakeup()
        self._open: dict[FrameReader, Reaped] = {}
        self._log_budget = LogBudget()
        self._routes: dict[tuple[int, int], Route] = {}
        # Logins' key derivations (PLAIN's PBKDF2, which releases the GIL) run on worker
        # threads, this many at once: a flood of logins queues here, leaving a core to the loop.
        self.derivations = trio.CapacityLimiter(_DERIVATION_THREADS)
        self.console_urls: list[str] = []  # where the console listens, once it does
        self.schema_registry_urls: list[str] = []  # where the schema registry listens, once it does
        self.schema_registry_failure: str | None = None  # why it is not served, if it failed
        self._schema_registry_started = False
        # The emulated brokers (--brokers): each node's listeners, where their sockets were
        # bound (to bind them again when a stopped node starts), and the scope it runs in.
        self._node_listeners: dict[int, list[BoundListener]] = {}
        self._node_addresses: dict[int, list[list[tuple[socket.AddressFamily, Any]]]] = {}
        self._node_scopes: dict[int, trio.CancelScope] = {}
        self._nursery: trio.Nursery | None = None
        broker.cluster.on_leader_change = self.appended.notify
        self.control_urls: list[str] = []  # where the control endpoint listens, once it does
        # Set by the first answer any connection sends: what waits for it loads only then.
        self.kafka_answered = trio.Event()
        self._first_answer_pending = True

    async def bind(self) -> list[BoundListener]:
        """Bind every listener of every node outside any nursery, so a busy port is a plain
        OSError (its filename names the listener); the first listener is the broker's default
        advertised address (for contexts that came in on no listener)."""
        bound: list[BoundListener] = []
        try:
            for position, node in enumerate(self.broker.cluster.nodes.values()):
                for listener in self.broker.listeners:
                    bound.append(await self._bind_listener(listener.for_node(position), node.node_id))
        except BaseException:
            for each in bound:
                for sock in each.sockets:
                    sock.socket.close()
            raise
        for each in bound:
            self.broker.cluster.nodes[each.node_id].endpoints[each.name] = each.advertised
            self._node_listeners.setdefault(each.node_id, []).append(each)
            addresses = [(s.socket.family, s.socket.getsockname()) for s in each.sockets]
            self._node_addresses.setdefault(each.node_id, []).append(addresses)
        self.broker.advertised_host, self.broker.advertised_port = bound[0].advertised
        return bound

    async def _bind_listener(self, listener: Listener, node_id: int) -> BoundListener:
        host = listener.bind.host or "0.0.0.0"
        try:
            sockets = await trio.open_tcp_listeners(listener.bind.port, host=host)
        except OSError as exc:
            where = f"{host}:{listener.bind.port} (listener {listener.name})"
            raise OSError(exc.errno, exc.strerror, where) from exc
        host, port = sockets[0].socket.getsockname()[:2]
        advertised = listener.advertised_address(port)
        security = None
        if listener.protocol != "PLAINTEXT":  # plaintext brokers never import ssl
            from kafka_shim.shim.security.listener_security import listener_security

            security = listener_security(self.broker.config, listener)
        return BoundListener(listener.name, sockets, (host, port), advertised, security, node_id)

    async def serve(
        self, listeners: list[BoundListener], task_status: Any = trio.TASK_STATUS_IGNORED
    ) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._run_timers)
            nursery.start_soon(self._reap_connections)
            address = self.broker.config.control_listener
            if address is not None:  # the test broker's control endpoint (docs/test-broker.md)
                from kafka_shim.shim.control_server import serve_control

                self.control_urls = await nursery.start(serve_control, self, address)
                log.info("control endpoint on %s", ", ".join(self.control_urls))
            for node_id in self._node_listeners:
                self._start_node_task(node_id)
            task_status.started(listeners)
            if self.broker.config.console_listener is not None:
                nursery.start_soon(self._serve_console, self.broker.config.console_listener)
            if self.broker.config.schema_registry_listener is not None:
                nursery.start_soon(self._serve_schema_registry, self.broker.config.schema_registry_listener)

    def _start_node_task(self, node_id: int) -> None:
        assert self._nursery is not None
        scope = self._node_scopes[node_id] = trio.CancelScope()
        self._nursery.start_soon(self._run_node, node_id, scope)

    async def _run_node(self, node_id: int, scope: trio.CancelScope) -> None:
        """One emulated broker: its listeners' accept loops and its connections, all in one
        scope, so stopping it closes its connections and its ports."""
        listeners = self._node_listeners[node_id]
        try:
            with scope:
                async with trio.open_nursery() as nursery:
                    for listener in listeners:
                        for socket_listener in listener.sockets:
                            nursery.start_soon(self._accept_connections, listener, socket_listener, nursery)
        finally:
            for listener in listeners:
                for socket_listener in listener.sockets:
                    socket_listener.socket.close()

    def stop_node(self, node_id: int) -> None:
        """Stop emulated broker `node_id`: its connections close, its ports refuse, the
        partitions it led get new leaders (ClusterError for an unknown or stopped node)."""
        self.broker.cluster.stop(node_id)
        self._node_scopes.pop(node_id).cancel()
        for listener in self._node_listeners[node_id]:
            for socket_listener in listener.sockets:
                socket_listener.socket.close()
        log.info("broker %d stopped", node_id)

    def start_node(self, node_id: int) -> None:
        """Start a stopped emulated broker again on the ports it had."""
        cluster = self.broker.cluster
        if node_id not in self._node_listeners or node_id in self._node_scopes:
            cluster.start(node_id)  # its ClusterError: no such broker, or running
        rebound = [
            replace(listener, sockets=[_listen_again(family, address) for family, address in addresses])
            for listener, addresses in zip(
                self._node_listeners[node_id], self._node_addresses[node_id], strict=True
            )
        ]
        cluster.start(node_id)
        self._node_listeners[node_id] = rebound
        self._start_node_task(node_id)
        log.info("broker %d started", node_id)

    async def _load_after_kafka_answers(self, *modules: str) -> None:
        """Import `modules` once the Kafka listener has answered its first request (or
        _LOAD_AFTER_S after it listens, with no client yet), on a worker thread: they are what
        Kafka clients do not need (the console's stack costs ~0.3 s), and importing them on the
        loop would hold every Kafka request meanwhile."""
        with trio.move_on_after(_LOAD_AFTER_S):
            await self.kafka_answered.wait()
        for module in modules:
            await trio.to_thread.run_sync(importlib.import_module, module)

    async def _serve_console(self, address: str) -> None:
        """The web console and /metrics (docs/console.md). A port that cannot be bound is one
        warning: the broker serves Kafka without its console rather than not at all."""
        await self._load_after_kafka_answers("kafka_shim.shim.http_server", "kafka_shim.shim.console.app")
        from kafka_shim.shim.console.app import console_app
        from kafka_shim.shim.http_server import listener_tls, serve_asgi

        # Secured as the listeners are (shim.http_guard): TLS as the first TLS listener.
        tls = listener_tls(self.broker)
        try:
            app = console_app(self.broker)
            async with trio.open_nursery() as nursery:
                urls = await nursery.start(serve_asgi, app, address, "console listener", tls)
                self.console_urls = [url.replace("://0.0.0.0:", "://127.0.0.1:") for url in urls]
                # The address bound (0.0.0.0: every interface, in a container the one published).
                log.info("console on %s", ", ".join(f"{url}/console" for url in urls))
        except* OSError as failed:  # the nursery wraps it in an exception group
            reason = failed.exceptions[0]
            why = getattr(reason, "strerror", None) or reason
            log.warning("console not served: cannot listen on %s: %s", address, why)
        except* Exception as failed:  # whatever breaks the console, Kafka is still served
            log.error("console stopped: %r", failed.exceptions[0])
            log.debug("traceback", exc_info=failed)

    def start_schema_registry(self, address: str) -> None:
        """Serve the schema registry on `address` from now on (the pytest fixture's, started
        on first use); call on the broker's thread once it serves."""
        assert self._nursery is not None, "the server is not serving"
        if not self._schema_registry_started:
            self._schema_registry_started = True
            # Asked for now (the fixture's first use): no reason to wait for a client.
            self._nursery.start_soon(self._serve_schema_registry, address, False)

    async def _serve_schema_registry(self, address: str, wait_for_clients: bool = True) -> None:
        """The schema registry (docs/schema-registry.md), secured as the console is; its port
        bound at once, its stack loaded after the Kafka listener answers or a client comes
        (shim.deferred_http). A port that cannot be bound is one warning."""
        from kafka_shim.shim.deferred_http import bound, serve_deferred

        self._schema_registry_started = True
        broker = self.broker

        def app() -> Any:
            from kafka_shim.shim.schema_registry.app import registry_app

            return registry_app(broker)

        def tls() -> Any:
            from kafka_shim.shim.http_server import listener_tls

            return listener_tls(broker)

        try:
            listener = bound(address)
            async with trio.open_nursery() as nursery:
                urls = await nursery.start(
                    serve_deferred,
                    listener,
                    "schema registry listener",
                    ("kafka_shim.shim.schema_registry.app",),
                    app,
                    tls,
                    self.kafka_answered.wait if wait_for_clients else None,
                )
                self.schema_registry_urls = [url.replace("://0.0.0.0:", "://127.0.0.1:") for url in urls]
                log.info("schema registry on %s", ", ".join(urls))  # the address bound, as the console's
        except* OSError as failed:
            reason = failed.exceptions[0]
            self.schema_registry_failure = (
                f"cannot listen on {address}: {getattr(reason, 'strerror', None) or reason}"
            )
            log.warning("schema registry not served: %s", self.schema_registry_failure)
        except* Exception as failed:  # whatever breaks the registry, Kafka is still served
            self.schema_registry_failure = repr(failed.exceptions[0])
            log.error("schema registry stopped: %r", failed.exceptions[0])
            log.debug("traceback", exc_info=failed)

    def _clock_moved(self) -> None:
        self.broker.clock_moved()
        self.timers_changed.fire()

    def wake_timers_if_sooner(self) -> None:
        """Requests only ever move the next deadline earlier than the timer
        task sleeps for by scheduling something new; wake it only then."""
        if self.broker.deadline_sooner_than(self._timer_sleeps_until):
            self.timers_changed.fire()

    async def _run_timers(self) -> None:
        """Sleep until the next deadline (or a request sets a sooner one), fire what is due.
        Broker.tick logs and survives its own failures; should a tick raise anyway, the task
        logs it once (shim.timer_failures) and backs off rather than end the broker or spin."""
        broker = self.broker
        backoff_s = 0.0
        while True:
            try:
                deadline = broker.watch_deadlines()
                self._timer_sleeps_until = math.inf if deadline is None else deadline
                timeout = (self._timer_sleeps_until - broker.clock()) / 1000
                if timeout > 0:
                    await self.timers_changed.wait(timeout)
                broker.tick(broker.clock())
                backoff_s = 0.0
            except Exception as exc:
                broker.timer_failures.failed("timer task", exc)
                backoff_s = min(max(backoff_s * 2, TICK_BACKOFF_S[0]), TICK_BACKOFF_S[1])
                await trio.sleep(backoff_s)

    def _log_connection(self, level: int, message: str, *args: object) -> None:
        """One line per refused or closed connection, within the log budget."""
        held_back = self._log_budget.allow(time.monotonic())
        if held_back is None:
            return
        if held_back:
            message += " (%d more such lines held back)"
            args = (*args, held_back)
        log.log(level, message, *args)

    async def _accept_connections(
        self, listener: BoundListener, socket_listener: trio.SocketListener, nursery: trio.Nursery
    ) -> None:
        backoff_s = _ACCEPT_BACKOFF_S[0]
        while True:
            while self.connections.at_capacity():  # max.connections: the backlog waits, as in Kafka
                await self._connection_ended.wait(math.inf)
            try:
                stream = await socket_listener.accept()
            except trio.ClosedResourceError:
                return  # its broker was stopped: stop_node closed the socket at once, so it refuses
            except OSError as exc:
                if exc.errno not in _OUT_OF_RESOURCES:
                    raise
                self._log_connection(
                    logging.WARNING,
                    "cannot accept connections: %s; retrying in %.2f s",
                    os.strerror(exc.errno or 0),
                    backoff_s,
                )
                await trio.sleep(backoff_s)
                backoff_s = min(backoff_s * 2, _ACCEPT_BACKOFF_S[1])
                continue
            backoff_s = _ACCEPT_BACKOFF_S[0]
            try:
                host, port = stream.socket.getpeername()[:2]
            except OSError:  # gone already
                await stream.aclose()
                continue
            refusal = self.connections.admit(host)
            if refusal is not None:
                self._log_connection(
                    logging.WARNING, "refusing connection from %s:%d: %s", host, port, refusal
                )
                await stream.aclose()
                continue
            nursery.start_soon(self._serve_connection, listener, stream, host, port)

    async def _serve_connection(
        self, listener: BoundListener, stream: trio.SocketStream, peer_host: str, peer_port: int
    ) -> None:
        peer = f"{peer_host}:{peer_port}"
        sock = stream.socket
        config = self.broker.config
        ctx = TrioRequestContext(self, peer_host, peer, listener)
        security = listener.security
        reader: FrameReader | None = None
        held = HeldAnswers()
        try:
            await self._hold_throttled_connection(peer_host)
            tls = await self._secure(stream, security, ctx) if security is not None else None
            if tls is not None:
                reader = TlsFrameReader(tls, config.max_request_bytes, self.memory)
            else:
                reader = FrameReader(sock, config.max_request_bytes, self.memory, config.busy_poll_us / 1e6)
            if security is not None and security.sasl:  # as Kafka's SaslServerAuthenticator
                reader.max_frame = min(security.max_receive_size, reader.max_frame)
                reader.max_frame_setting = "sasl.server.max.receive.size before authentication"
            reaped = self._open[reader] = Reaped()
            with reaped.scope:
                while True:
                    frame = await reader.next_frame()
                    reader.waiting_on = ""
                    response: bytes | Spliced | None = None
                    if ctx.sasl is not None and not ctx.sasl.authenticated:
                        response = await self._before_authentication(ctx, security, frame)
                    if response is None:
                        response = await self._handle_frame(ctx, frame)
                        self.wake_timers_if_sooner()
                        if ctx.sasl is not None:
                            await self._delay_failed_login(ctx)
                            if ctx.sasl.authenticated:
                                reader.max_frame = config.max_request_bytes
                                reader.max_frame_setting = "socket.request.max.bytes"
                    reader.frame_handled()
                    if response is not None:
                        if (
                            type(response) is bytes
                            and reader.answered_at_once_next()
                            and not ctx.throttle_ms
                            and ctx.close_reason is None
                            and not self.broker.faults.active
                            and (ctx.sasl is None or ctx.sasl.authenticated)  # SASL is lock-step
                            and held.size + len(response) <= _HELD_ANSWERS_BYTES
                        ):
                            held.add(response)  # pipelined: answered with the next in one send
                            continue
                        await send_all(sock, held.before(response), reader)
                        if self._first_answer_pending:  # once per broker: an attribute check
                            self._first_answer_pending = False
                            self.kafka_answered.set()
                    elif held.size and not reader.whole_frame_buffered():  # acks=0 came last
                        await send_all(sock, held.before(b""), reader)
                    if ctx.throttle_ms:  # no coroutine per request on the common path
                        await self._mute_while_throttled(ctx)
                    reader.mark_active()
                    if ctx.close_reason is not None:
                        raise ConnectionClosed(ctx.close_reason)
            if reaped.reason:
                self._log_connection(reaped.level, "closing connection from %s: %s", peer, reaped.reason)
        except ConnectionClosed as exc:
            if held.size and reader is not None:  # what was answered before the frame that failed
                await self._send_before_closing(sock, held.before(b""), reader)
            await self._delay_failed_login(ctx)
            if str(exc):
                self._log_connection(exc.level, "closing connection from %s: %s", peer, exc)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            pass
        finally:
            self.broker.share_connection_closed(peer)  # its share session ends with it
            if reader is not None:
                del self._open[reader]
                reader.close()
            was_full = self.connections.at_capacity()
            self.connections.release(peer_host)
            if was_full:
                self._connection_ended.fire()
            with trio.move_on_after(0.1) as scope:
                scope.shield = True
                await stream.aclose()

    @staticmethod
    async def _send_before_closing(
        sock: trio.socket.SocketType, data: bytes | Spliced, reader: FrameReader
    ) -> None:
        with trio.move_on_after(_SEND_BEFORE_CLOSING_S) as scope:
            scope.shield = True
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                await send_all(sock, data, reader)

    async def _hold_throttled_connection(self, host: str) -> None:
        """KIP-612: a connection over its IP's connection_creation_rate is closed unserved,
        after the throttle time."""
        throttle_ms = self.broker.client_quotas.connection_throttle_ms(host, self.broker.clock())
        if throttle_ms > 0:
            await trio.sleep(throttle_ms / 1000)
            raise ConnectionClosed(f"connection_creation_rate of {host} exceeded", logging.INFO)

    @staticmethod
    async def _mute_while_throttled(ctx: TrioRequestContext) -> None:
        """KIP-219: a client over its quota has had its answer; the connection is not read
        for the throttle time (the reaper still sees a hang-up meanwhile)."""
        await trio.sleep(ctx.throttle_ms / 1000)
        ctx.throttle_ms = 0

    async def _secure(
        self, stream: trio.SocketStream, security: ListenerSecurity, ctx: TrioRequestContext
    ) -> trio.SSLStream[trio.SocketStream] | None:
        """A secured listener's connection: its SASL session (SASL listeners) and its TLS
        handshake (SSL, SASL_SSL), whose failure closes only this connection, with one line."""
        from kafka_shim.shim.security.principal import PrincipalError

        if security.sasl:
            ctx.sasl = security.new_session(self.broker.credentials, self.broker.delegation_tokens)
        if security.ssl_context is None:
            return None
        tls = trio.SSLStream(stream, security.ssl_context, server_side=True)
        where = f"TLS listener {ctx.listener.name}"
        try:
            with trio.fail_after(_TLS_HANDSHAKE_TIMEOUT_S):
                await tls.do_handshake()
        except trio.TooSlowError:
            raise ConnectionClosed(
                f"no TLS handshake within {_TLS_HANDSHAKE_TIMEOUT_S:g} s on {where}"
            ) from None
        except trio.BrokenResourceError as exc:
            cause = exc.__cause__ or exc
            plaintext = getattr(cause, "reason", None) in ("WRONG_VERSION_NUMBER", "HTTP_REQUEST")
            hint = " (a plaintext client?)" if plaintext else ""
            raise ConnectionClosed(f"TLS handshake failed on {where}{hint}: {cause}") from exc
        if not security.sasl:  # on SASL_SSL the principal is the SASL user's
            try:
                ctx.principal = security.certificate_principal(tls.getpeercert(binary_form=True))
            except PrincipalError as exc:
                raise ConnectionClosed(f"client certificate refused on {where}: {exc}") from exc
        return tls

    async def _delay_failed_login(self, ctx: TrioRequestContext) -> None:
        """Kafka's connection.failed.authentication.delay.ms: a failed login is answered and
        closed only after it, so a client that retries at once does not hammer the broker."""
        if ctx.sasl is not None and ctx.sasl.failure is not None and not ctx.failure_delayed:
            ctx.failure_delayed = True
            await trio.sleep(self.broker.config.failed_authentication_delay_ms / 1000)

    async def _before_authentication(
        self, ctx: TrioRequestContext, security: ListenerSecurity | None, frame: bytes
    ) -> bytes | None:
        """The pre-authentication gate of a SASL listener: frames are bounded by
        sasl.server.max.receive.size (the reader refuses a larger one at its header), and after
        a v0 SaslHandshake they are bare SASL tokens (answered here, size-prefixed). None: a
        Kafka request, for _handle_frame's gate."""
        session = ctx.sasl
        assert session is not None and security is not None
        if not session.raw_tokens:
            return None
        derivation = session.derivation(frame)
        if derivation is not None:
            await ctx.off_loop(derivation)
        answer = session.raw_token(frame, self.broker.clock())
        if session.failure is not None:
            raise ConnectionClosed(session.failure)
        if session.principal is not None:
            ctx.principal = session.principal
        return _LENGTH.pack(len(answer)) + answer

    async def _reap_connections(self) -> None:
        """Kafka's idle expiry, for every connection at once, so that a request costs no
        timer of its own: close connections on which nothing has moved for
        connections.max.idle.ms, and end the held requests (a join waiting for members,
        a long poll) of clients that have disconnected, which would otherwise keep their
        socket until the wait ran out (a fetch's max_wait_ms can make that weeks)."""
        idle_s = self.broker.config.connections_max_idle_ms / 1000
        heap_release_at = time.monotonic() + HEAP_RELEASE_EVERY_S
        while True:
            await trio.sleep(min(1.0, idle_s / 4))
            now = time.monotonic()
            if now >= heap_release_at:
                release_free_heap()
                heap_release_at = now + HEAP_RELEASE_EVERY_S
            busy: dict[int, Reaped] = {}
            for reader, reaped in self._open.items():
                if not reader.waiting_on:
                    busy[reader.fileno] = reaped
                elif now - reader.last_activity > idle_s:
                    reaped.reason = (
                        f"waited {idle_s * 1000:.0f} ms for {reader.waiting_on} (connections.max.idle.ms)"
                    )
                    # An idle client is ordinary; one stuck on memory or unread responses is not.
                    reaped.level = logging.INFO if reader.waiting_on == "a request" else logging.WARNING
                    reaped.scope.cancel()
            if busy:
                hangups = select.poll()
                for fd in busy:
                    hangups.register(fd, select.POLLRDHUP)
                for fd, _ in hangups.poll(0):
                    busy[fd].scope.cancel()

    async def _handle_frame(self, ctx: TrioRequestContext, frame: bytes) -> bytes | Spliced | None:
        try:
            api_key, api_version, correlation_id = peek_api(frame)
        except ProtocolError as exc:
            raise ConnectionClosed(str(exc)) from exc
        if ctx.sasl is not None:
            # Nothing but ApiVersions and the SASL exchange before authentication.
            refusal = ctx.sasl.refusal(api_key, self.broker.clock())
            if refusal is not None:
                raise ConnectionClosed(refusal)
        route = self._routes.get((api_key, api_version))
        if route is None:
            route = _route(api_key, api_version, self.broker.served)
            if route is None:
                return self._unserved(api_key, api_version, correlation_id)
            self._routes[api_key, api_version] = route
        handler = route.handler
        api = handler.api
        try:
            client_id, body_starts = parse_request_header(frame, route.flexible)
            body, _ = route.parse(frame, body_starts)
        except ProtocolError as exc:
            raise ConnectionClosed(f"malformed {api.name} v{api_version} request: {exc}") from exc
        ctx.api_version = api_version
        ctx.rule = handler.rule
        ctx.correlation_id = correlation_id
        ctx.client_id = client_id
        started = time.perf_counter()
        broker = self.broker
        if route.refused_by_newest:
            broker.old_version_clients.saw(client_id, api.name, api_version, ctx.peer, broker.clock())
        firing = None
        if broker.faults.active:  # the only cost of fault injection while no rule is set
            view = RequestView(
                api_key, api_version, client_id, ctx.principal, body, broker.topic_name, ctx.node_id
            )
            firing = broker.faults.decide(view, broker.clock())
        try:
            if firing is None:
                result = await handler.handle(ctx, body)
            else:
                result = await self._misbehave(firing.rule, ctx, handler, body)
        except ConnectionClosed:
            raise
        except ProtocolError as exc:
            # A request Kafka cannot even parse (CreateAcls with resource type 0...): it closes.
            raise ConnectionClosed(f"invalid {api.name} v{api_version} request: {exc}") from exc
        except Exception as exc:
            log.error("internal error in %s v%d: %r", api.name, api_version, exc)
            log.debug("traceback", exc_info=True)
            raise ConnectionClosed(f"internal error in {api.name}") from exc
        self.broker.observe_request(api.name, api_version, body, result, time.perf_counter() - started)
        if trace.isEnabledFor(logging.DEBUG):
            trace.debug(
                "%s v%d from %s client %s correlation %d: %s -> %s",
                api.name,
                api_version,
                ctx.peer,
                client_id,
                correlation_id,
                _one_line(redacted(api.request, body)),
                _one_line(redacted(api.response, result)),
            )
        if broker.recorder is not None:
            broker.recorder.record(
                RecordedRequest(
                    broker.clock(),
                    api_key,
                    api_version,
                    correlation_id,
                    client_id,
                    ctx.principal,
                    ctx.peer,
                    ctx.node_id,
                    body,
                    result,
                    None if firing is None else firing.rule.id,
                )
            )
        if result is None:
            return None
        try:
            encoded = route.build(result)
        except Exception as exc:
            log.error("cannot encode %s v%d response: %r", api.name, api_version, exc)
            raise ConnectionClosed(f"internal error encoding {api.name}") from exc
        if isinstance(encoded, Spliced):
            return spliced_response_frame(correlation_id, route.response_flexible, encoded)
        return response_frame(correlation_id, route.response_flexible, encoded)

    @staticmethod
    async def _misbehave(rule: FaultRule, ctx: TrioRequestContext, handler: Handler, body: Any) -> Any:
        """Carry out a fault rule that fired on this request instead of (or around) its handler.
        Delays are wall time: the client times its request on its own clock (shim.clock)."""
        if rule.action == "close":
            raise ConnectionClosed(f"fault rule {rule.id} closes the connection", logging.INFO)
        if rule.action == "no_answer":
            await trio.sleep_forever()  # until the client hangs up (the reaper notices) or we stop
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

    def _unserved(self, api_key: int, api_version: int, correlation_id: int) -> bytes:
        """An API without a handler closes the connection, as does a version it does not
        serve, except ApiVersions (answered with the supported ranges)."""
        handler = handler_for(api_key)
        if handler is None:
            raise ConnectionClosed(f"unknown api key {api_key}")
        if api_key == API_VERSIONS_KEY:
            return self._unsupported_api_versions(correlation_id)
        low, high = self.broker.served.ranges.get(api_key, (0, -1))
        name = handler.api.name
        # A version an older release served (KIP-896's removals): say how to serve it.
        hint = (
            "; a broker without --emulate serves it"
            if served_versions(None).serves(api_key, api_version)
            else ""
        )
        raise ConnectionClosed(f"unsupported {name} version {api_version} (supported {low}-{high}{hint})")

    def _unsupported_api_versions(self, correlation_id: int) -> bytes:
        """Kafka answers an unknown ApiVersions version with error 35 in a v0 body."""
        body = APIS[API_VERSIONS_KEY].response.build(unsupported_version_answer(), 0)
        return response_frame(correlation_id, False, body)


async def run_until_signalled(broker: Broker, on_listening: Callable[[list[BoundListener]], None]) -> None:
    server = Server(broker)
    listeners = await server.bind()
    async with trio.open_nursery() as nursery:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            await nursery.start(server.serve, listeners)
            on_listening(listeners)
            async for signum in signals:
                log.info("received %s, stopping", signal.Signals(signum).name)
                nursery.cancel_scope.cancel()
                break


class BrokerThread(BrokerControls):
    """An in-process broker on a background thread (the pytest plugin uses it), with the test
    broker's controls (kafka_shim.controls)."""

    def __init__(self, config: BrokerConfig, clock: Callable[[], int] = wall_clock_ms) -> None:
        self.broker = Broker(config, clock)  # clock: the wall time the broker's clock runs on
        self.server = Server(self.broker)
        self._started = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kafka-shim", daemon=True)
        self.listeners: list[BoundListener] = []  # once started

    @property
    def bootstrap(self) -> str:
        """Every broker's first listener (with --brokers, clients can start while one is down)."""
        first = self.broker.listeners[0].name
        nodes = self.broker.cluster.nodes.values()
        addresses = [node.endpoints[first] for node in nodes if first in node.endpoints]
        if not addresses:  # not started yet
            addresses = [(self.broker.advertised_host, self.broker.advertised_port)]
        return ",".join(f"{host}:{port}" for host, port in addresses)

    def controlled(self) -> Broker:
        return self.broker

    def controlled_server(self) -> Server:
        return self.server

    def start(self, timeout_s: float = 10.0) -> BrokerThread:
        self._thread.start()
        if not self._started.wait(timeout_s):
            raise RuntimeError("kafka-shim did not start in time")
        if self._error is not None:
            raise RuntimeError(f"kafka-shim failed to start: {self._error}") from self._error
        return self

    def _run(self) -> None:
        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            server = self.server
            self.listeners = listeners = await server.bind()
            with trio.CancelScope() as scope:
                self._cancel = scope
                async with trio.open_nursery() as nursery:
                    await nursery.start(server.serve, listeners)
                    self._started.set()

        try:
            trio.run(main)
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            self._started.set()

    def call(self, fn: Callable[[], T], timeout_s: float = 10.0) -> T:
        """fn() run on the broker's thread between requests: its state is not thread-safe.
        Unlike trio.from_thread, callable from a thread running its own Trio loop (a trio test)."""
        if self._token is None:
            raise RuntimeError("kafka-shim is not running")
        results: list[outcome.Outcome[T]] = []
        done = threading.Event()

        def run() -> None:
            results.append(outcome.capture(fn))
            done.set()

        self._token.run_sync_soon(run)
        if not done.wait(timeout_s):
            raise RuntimeError(f"kafka-shim did not run {fn!r} within {timeout_s} s")
        return results[0].unwrap()

    def stop(self, timeout_s: float = 10.0) -> None:
        if self._token is not None and self._cancel is not None and self._thread.is_alive():
            trio.from_thread.run_sync(self._cancel.cancel, trio_token=self._token)
        self._thread.join(timeout_s)
