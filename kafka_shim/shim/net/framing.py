"""Framing: Kafka's length-prefixed frames read from a socket within the broker-wide
request memory (`queued.max.request.bytes`; a frame's announced length is only checked against
`socket.request.max.bytes`), and answers written back, pipelined ones held for one send, records
left in their files by sendfile. A frame that cannot be understood closes only its connection.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import struct
import sys
import time
from typing import NoReturn

import trio

from kafka_shim.protocol.file_records import FileRecords, Spliced
from kafka_shim.shim.limits import RequestMemory
from kafka_shim.shim.net import polling
from kafka_shim.shim.net.waiting import Wakeup

_LENGTH = struct.Struct(">i")
_READ_CHUNK = 65536
# Inside a frame larger than a read, ask for up to this much at once.
_LARGE_READ = 1 << 20
# Request memory beyond queued.max.request.bytes that only readers between frames or inside
# a frame of at most _READ_CHUNK may use: clients that fill the pool with large frames they
# never finish cannot lock out the small requests (ApiVersions, heartbeats) of everyone else.
_SMALL_FRAME_HEADROOM = 8 << 20
# Answers to pipelined requests held for one send, at most this many bytes, and only while the
# request behind them is one answered without waiting (never a Fetch or a join, which can wait
# for seconds: the answers before them go out at once, as Kafka sends each when it is ready).
HELD_ANSWERS_BYTES = 1 << 20
# Produce, ListOffsets, Metadata, OffsetCommit, OffsetFetch, FindCoordinator, Heartbeat, ApiVersions.
_ANSWERED_AT_ONCE = frozenset({0, 2, 3, 8, 9, 10, 12, 18})
_API_KEY = struct.Struct(">h")
# A connection whose next request is already there when it reads (the client sent it while its
# answer was being written, or pipelines) reads it without a pass through the scheduler, which
# costs a syscall (epoll_wait) and 3 µs or more, for up to this long since it last yielded or
# waited: the other connections and the timers wait at most this long (and one request) on it.
_YIELD_EVERY_S = 200e-6
# A peer is polled after a kind of request only if its next one came within this share of
# busy_poll_s last time: spinning costs CPU for as long as it lasts, and a gap near the budget
# (a transactional producer's EndTxn after a Produce on another connection, 0.3-0.4 ms) was
# spun through whole, or in vain, to save one wake-up.
_QUICK_SHARE = 0.5


def _api_bit(frame: bytes, at: int) -> int:
    """The busy-poll bit of the request whose API key is at `at` (any int16 a peer sends)."""
    return 1 << (_API_KEY.unpack_from(frame, at)[0] & 63)


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

    A peer whose next request came within half of `busy_poll_s` last time (_QUICK_SHARE) is
    polled, still yielding to every other task, for up to `busy_poll_s` before the task parks
    in epoll: a CPU that goes idle between a response and the next request wakes late and
    cold (on this 2-core VM an OffsetCommit took 200 µs after a 1 ms idle gap, 85 µs after
    0.1 ms), which halved a synchronous committer's rate. Peers that pause
    longer (heartbeats, long polls, idle connections) are never polled. Quickness is kept per
    kind of request last read: a transactional producer sends Produce and EndTxn within
    ~0.1 ms of the answers before them, but its next AddPartitionsToTxn ~1.3 ms after EndTxn's
    answer (the application builds the next transaction), so one flag for the connection
    spun 0.5 ms in vain after every EndTxn. Its thread polls no more for a while after a poll that was
    preempted (shim.net.polling: the core is shared, and a spinning process would take it
    from the peer or another process). A request already
    there when the reader looks is read without yielding (see _YIELD_EVERY_S).
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
        # A bit per kind of request (_api_bit) whose next request came quickly last time, and
        # the bit of the last request read (none before the first). Bits, not a set: a set is
        # ~200 bytes more per connection; two kinds sharing a bit only share a guess.
        self._quick_after = 0
        self._last_api_bit = 0
        self._yield_by = 0.0  # found a request waiting before then: read it without yielding
        self._polling = polling.for_this_thread()  # made on its Trio loop's thread

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

    async def _receive(self, wanted: int, small: bool, first: bool = False) -> bytes:
        """Up to `wanted` bytes, reserved in request memory before they are read;
        b"" when the peer closed. `first`: the read of a frame's first bytes, whose wait is the
        gap after the last request (the rest of a frame comes at the network's pace)."""
        started = time.monotonic()  # one clock for idleness and polling: a call less per read
        quick = self._quick_after & self._last_api_bit
        polling_until = started + self._busy_poll_s if quick else 0.0
        if started < self._polling.off_until:  # preempted while polling lately: the core is shared
            polling_until = 0.0
        parked_at = None if quick else started
        waited = False
        cpu_polled_from, polled_from = -1.0, 0.0  # time.thread_time(), .monotonic() as polling began
        while True:
            granted = self._memory.pool.reserve(wanted, small) or await self._wait_for_memory(wanted, small)
            if not granted:
                return b""
            try:
                chunk = os.read(self.fileno, granted)
            except BlockingIOError:
                self._memory.release(granted)
                if parked_at is None:
                    now = time.monotonic()
                    if now < polling_until and (cpu_polled_from >= 0 or self._polling.may_poll(now)):
                        if cpu_polled_from < 0:
                            cpu_polled_from, polled_from = time.thread_time(), now
                        await trio.lowlevel.checkpoint()
                        waited = True
                        continue
                    parked_at = now
                    if cpu_polled_from >= 0:
                        self._polling.polled(polled_from, cpu_polled_from, now)
                await trio.lowlevel.wait_readable(self.fileno)  # an int: no fileno() call
                waited = True
                continue
            except BaseException:
                self._memory.release(granted)
                raise
            self._memory.release(granted - len(chunk))
            self._held += len(chunk)
            self.last_activity = now = time.monotonic()
            if waited:
                # Judged by the wait for a frame's first bytes only: one within a frame says
                # nothing of the gap between requests.
                if first and now - started < self._busy_poll_s * _QUICK_SHARE:
                    self._quick_after |= self._last_api_bit
                elif first:
                    self._quick_after &= ~self._last_api_bit
                if parked_at is None:  # polled until it came
                    self._polling.polled(polled_from, cpu_polled_from, now)
                self._yield_by = now + _YIELD_EVERY_S
            elif now >= self._yield_by:
                # Found waiting for a while on end: let the others run, or a peer pipelining
                # requests that need no answer (acks=0) would hold the loop.
                await trio.lowlevel.checkpoint()
                self._yield_by = time.monotonic() + _YIELD_EVERY_S
            else:
                await trio.lowlevel.checkpoint_if_cancelled()  # the reaper's cancel still lands
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
        if self._handed_out:  # the connection's loop has released it already, as a rule
            self.frame_handled()
        if not self._buffer:
            # The usual request: one read brings exactly one whole frame, which is handed out
            # as it came, without passing through the buffer.
            chunk = await self._receive(_READ_CHUNK, True, True)
            if not chunk:
                self._closed_by_peer(0)
            if len(chunk) > 4:
                (size,) = _LENGTH.unpack_from(chunk)
                if size == len(chunk) - 4 and size <= self.max_frame:
                    self._handed_out = len(chunk)
                    if size >= 2:
                        self._last_api_bit = _api_bit(chunk, 4)
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
        if size >= 2:
            self._last_api_bit = _api_bit(frame, 0)
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

    async def _receive(self, wanted: int, small: bool, first: bool = False) -> bytes:
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
    client) in request order. Bounded by HELD_ANSWERS_BYTES; only plain bytes are held."""

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


def write_at_once(reader: FrameReader, data: bytes) -> int:
    """As many bytes of `data` as the socket takes now, without waiting (0 for a TLS
    connection): what send_all does first, without its coroutine, for the usual answer."""
    if isinstance(reader, TlsFrameReader):
        return 0
    try:
        return os.write(reader.fileno, data)
    except BlockingIOError:
        return 0


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
    sent = write_at_once(reader, data)
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
