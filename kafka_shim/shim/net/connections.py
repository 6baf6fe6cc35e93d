"""Connections: the accept loops, one task per connection, and the reaper.

Like Kafka, a connection has at most one request in flight (Kafka mutes the channel until the
response is sent), which keeps responses in request order without any reordering buffer, and
bounds what a client that never reads its responses can queue: nothing is read from it
meanwhile. Connection limits, the idle timeout and accept back-off are Kafka's; the bookkeeping
lives in `shim.limits`. Lines about connections are rate-limited.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import math
import os
import select
import time
from typing import Protocol

import trio

from kafka_shim.protocol.file_records import Spliced
from kafka_shim.shim.limits import (
    HEAP_RELEASE_EVERY_S,
    ConnectionLimits,
    LogBudget,
    parse_per_ip_overrides,
    release_free_heap,
)
from kafka_shim.shim.net import gate
from kafka_shim.shim.net.context import Serving, TrioRequestContext
from kafka_shim.shim.net.dispatch import Dispatch
from kafka_shim.shim.net.framing import (
    HELD_ANSWERS_BYTES,
    ConnectionClosed,
    FrameReader,
    HeldAnswers,
    MemoryGate,
    TlsFrameReader,
    send_all,
    write_at_once,
)
from kafka_shim.shim.net.listening import BoundListener
from kafka_shim.shim.net.waiting import Wakeup

log = logging.getLogger("kafka_shim.server")

# accept() failing for want of file descriptors or memory: back off, doubling up to the max.
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_ACCEPT_BACKOFF_S = (0.01, 1.0)
# A connection closed for a bad frame still gets the answers to the requests before it, within this.
_SEND_BEFORE_CLOSING_S = 1.0


class Accepting(Serving, Protocol):
    """What connections need of the server that accepts them (shim.net.server.Server)."""

    dispatch: Dispatch
    kafka_answered: trio.Event  # set by the first answer any connection sends
    first_answer_pending: bool


class Reaped:
    """A connection's cancel scope for the reaper, and why it was closed (empty for a
    client that disconnected while its request was held)."""

    def __init__(self) -> None:
        self.scope = trio.CancelScope()
        self.reason = ""
        self.level = logging.INFO


class Connections:
    """Every Kafka connection of a server: admitted within the connection limits, read within
    its request memory, each request passed to the server's dispatch step."""

    def __init__(self, server: Accepting) -> None:
        self._server = server
        self.broker = broker = server.broker
        config = broker.config
        self.memory = MemoryGate(config.queued_max_request_bytes)
        self.limits = ConnectionLimits(
            config.max_connections,
            config.max_connections_per_ip,
            parse_per_ip_overrides(config.max_connections_per_ip_overrides),
        )
        self._ended = Wakeup()
        self._open: dict[FrameReader, Reaped] = {}
        self.log_budget = LogBudget()

    def log_connection(self, level: int, message: str, *args: object) -> None:
        """One line per refused or closed connection, within the log budget."""
        held_back = self.log_budget.allow(time.monotonic())
        if held_back is None:
            return
        if held_back:
            message += " (%d more such lines held back)"
            args = (*args, held_back)
        log.log(level, message, *args)

    async def accept(
        self, listener: BoundListener, socket_listener: trio.SocketListener, nursery: trio.Nursery
    ) -> None:
        backoff_s = _ACCEPT_BACKOFF_S[0]
        while True:
            while self.limits.at_capacity():  # max.connections: the backlog waits, as in Kafka
                await self._ended.wait(math.inf)
            try:
                stream = await socket_listener.accept()
            except trio.ClosedResourceError:
                return  # its broker was stopped: stop_node closed the socket at once, so it refuses
            except OSError as exc:
                if exc.errno not in _OUT_OF_RESOURCES:
                    raise
                self.log_connection(
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
            refusal = self.limits.admit(host)
            if refusal is not None:
                self.log_connection(
                    logging.WARNING, "refusing connection from %s:%d: %s", host, port, refusal
                )
                await stream.aclose()
                continue
            nursery.start_soon(self.serve, listener, stream, host, port)

    async def _open_reader(self, stream: trio.SocketStream, ctx: TrioRequestContext) -> FrameReader:
        """The connection's frame reader, once the gate has let it in (TLS, SASL session)."""
        config = self.broker.config
        security = ctx.listener.security
        await gate.hold_throttled_connection(self.broker, ctx.client_host)
        tls = await gate.secure(self.broker, stream, security, ctx) if security is not None else None
        reader: FrameReader
        if tls is not None:
            reader = TlsFrameReader(tls, config.max_request_bytes, self.memory)
        else:
            reader = FrameReader(
                stream.socket, config.max_request_bytes, self.memory, config.busy_poll_us / 1e6
            )
        if security is not None and security.sasl:  # as Kafka's SaslServerAuthenticator
            reader.max_frame = min(security.max_receive_size, reader.max_frame)
            reader.max_frame_setting = "sasl.server.max.receive.size before authentication"
        return reader

    async def serve(
        self, listener: BoundListener, stream: trio.SocketStream, peer_host: str, peer_port: int
    ) -> None:
        peer = f"{peer_host}:{peer_port}"
        ctx = TrioRequestContext(self._server, peer_host, peer, listener)
        reader: FrameReader | None = None
        held = HeldAnswers()
        try:
            reader = await self._open_reader(stream, ctx)
            reaped = self._open[reader] = Reaped()
            with reaped.scope:
                await self._answer_requests(ctx, stream.socket, reader, held)
            if reaped.reason:
                self.log_connection(reaped.level, "closing connection from %s: %s", peer, reaped.reason)
        except ConnectionClosed as exc:
            if held.size and reader is not None:  # what was answered before the frame that failed
                await _send_before_closing(stream.socket, held.before(b""), reader)
            await gate.delay_failed_login(self.broker, ctx)
            if str(exc):
                self.log_connection(exc.level, "closing connection from %s: %s", peer, exc)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            pass
        finally:
            shares = self.broker.coordinators.loaded_shares()
            if shares is not None:  # its share session ends with it
                shares.connection_closed(peer)
            if reader is not None:
                del self._open[reader]
                reader.close()
            was_full = self.limits.at_capacity()
            self.limits.release(peer_host)
            if was_full:
                self._ended.fire()
            with trio.move_on_after(0.1) as scope:
                scope.shield = True
                await stream.aclose()

    async def _answer_requests(
        self, ctx: TrioRequestContext, sock: trio.socket.SocketType, reader: FrameReader, held: HeldAnswers
    ) -> None:
        """Read a frame, pass it through the gate and the dispatch step, send its answer (held
        for one send with those of pipelined requests behind it): until the connection closes."""
        server = self._server
        broker = self.broker
        config = broker.config
        handle_frame = server.dispatch.handle_frame
        while True:
            frame = await reader.next_frame()
            reader.waiting_on = ""
            response: bytes | Spliced | None = None
            if ctx.sasl is not None and not ctx.sasl.authenticated:
                response = await gate.before_authentication(broker, ctx, frame)
            if response is None:
                response = await handle_frame(ctx, frame)
                server.wake_timers_if_sooner()
                if ctx.sasl is not None:
                    if ctx.sasl.failure is not None:  # no coroutine per request once logged in
                        await gate.delay_failed_login(broker, ctx)
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
                    and not broker.faults.active
                    and (ctx.sasl is None or ctx.sasl.authenticated)  # SASL is lock-step
                    and held.size + len(response) <= HELD_ANSWERS_BYTES
                ):
                    held.add(response)  # pipelined: answered with the next in one send
                    continue
                answers = held.before(response)
                if type(answers) is not bytes:
                    await send_all(sock, answers, reader)
                elif (sent := write_at_once(reader, answers)) < len(answers):  # a full socket, TLS
                    await send_all(sock, answers[sent:], reader)
                if server.first_answer_pending:  # once per broker: an attribute check
                    server.first_answer_pending = False
                    server.kafka_answered.set()
            elif held.size and not reader.whole_frame_buffered():  # acks=0 came last
                await send_all(sock, held.before(b""), reader)
            if ctx.throttle_ms:  # no coroutine per request on the common path
                await gate.mute_while_throttled(ctx)
            reader.mark_active()
            if ctx.close_reason is not None:
                raise ConnectionClosed(ctx.close_reason)

    async def reap(self) -> None:
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


async def _send_before_closing(
    sock: trio.socket.SocketType, data: bytes | Spliced, reader: FrameReader
) -> None:
    with trio.move_on_after(_SEND_BEFORE_CLOSING_S) as scope:
        scope.shield = True
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await send_all(sock, data, reader)
