"""The Trio server: the broker's listeners, emulated brokers' start and stop, the timer task,
and the parts it is built of (shim.net's connections, dispatch step and HTTP surfaces)."""

from __future__ import annotations

import logging
import math
import os
import socket
from dataclasses import replace
from typing import Any

import trio

from kafka_shim.shim.broker import Broker
from kafka_shim.shim.coordinator_loading import COORDINATOR_MODULES
from kafka_shim.shim.limits import ConnectionLimits, LogBudget
from kafka_shim.shim.net import surfaces
from kafka_shim.shim.net.connections import Connections
from kafka_shim.shim.net.dispatch import Dispatch
from kafka_shim.shim.net.framing import MemoryGate
from kafka_shim.shim.net.listening import BoundListener, bind_listener, listen_again
from kafka_shim.shim.net.waiting import AppendWaiters, Wakeup
from kafka_shim.shim.timer_failures import TICK_BACKOFF_S

log = logging.getLogger("kafka_shim.server")

_DERIVATION_THREADS = max(1, (os.cpu_count() or 2) - 1)


class Server:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.timers_changed = Wakeup()
        self._timer_sleeps_until = math.inf
        self.appended = AppendWaiters()
        broker.on_append = self.appended.notify
        # Advancing the broker's clock fires the deadlines it passed at once.
        broker.broker_clock.on_change = self._clock_moved
        self.dispatch = Dispatch(broker)
        self.served = Connections(self)
        # Logins' key derivations (PLAIN's PBKDF2, which releases the GIL) run on worker
        # threads, this many at once: a flood of logins queues here, leaving a core to the loop.
        self.derivations = trio.CapacityLimiter(_DERIVATION_THREADS)
        self.console_urls: list[str] = []  # where the console listens, once it does
        self.schema_registry_urls: list[str] = []  # where the schema registry listens, once it does
        self.schema_registry_failure: str | None = None  # why it is not served, if it failed
        self.schema_registry_started = False
        # The registry's socket when bound before this server (by the processes' supervisor).
        self.schema_registry_socket: socket.socket | None = None
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
        self.first_answer_pending = True

    @property
    def memory(self) -> MemoryGate:
        """The broker-wide request memory (queued.max.request.bytes)."""
        return self.served.memory

    @property
    def connections(self) -> ConnectionLimits:
        """max.connections and its per-IP limits, with the connections open."""
        return self.served.limits

    @property
    def _log_budget(self) -> LogBudget:
        return self.served.log_budget

    async def bind(self) -> list[BoundListener]:
        """Bind every listener of every node outside any nursery, so a busy port is a plain
        OSError (its filename names the listener); the first listener is the broker's default
        advertised address (for contexts that came in on no listener)."""
        bound: list[BoundListener] = []
        try:
            for position, node in enumerate(self.broker.cluster.nodes.values()):
                for listener in self.broker.listeners:
                    bound.append(
                        await bind_listener(self.broker.config, listener.for_node(position), node.node_id)
                    )
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

    async def serve(
        self, listeners: list[BoundListener], task_status: Any = trio.TASK_STATUS_IGNORED
    ) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._run_timers)
            nursery.start_soon(self.served.reap)
            config = self.broker.config
            if config.control_listener is not None:  # the test broker's control endpoint
                await surfaces.start_control_endpoint(self, nursery, config.control_listener)
            for node_id in self._node_listeners:
                self._start_node_task(node_id)
            task_status.started(listeners)
            if config.console_listener is not None:
                nursery.start_soon(surfaces.serve_console, self, config.console_listener)
            if config.schema_registry_listener is not None:
                nursery.start_soon(
                    surfaces.serve_schema_registry,
                    self,
                    config.schema_registry_listener,
                    True,
                    self.schema_registry_socket,
                )

    def start_schema_registry(self, address: str) -> None:
        """Serve the schema registry on `address` from now on (the pytest fixture's, started
        on first use); call on the broker's thread once it serves."""
        assert self._nursery is not None, "the server is not serving"
        if not self.schema_registry_started:
            self.schema_registry_started = True
            # Asked for now (the fixture's first use): no reason to wait for a client.
            self._nursery.start_soon(surfaces.serve_schema_registry, self, address, False)

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
                            nursery.start_soon(self.served.accept, listener, socket_listener, nursery)
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
            replace(listener, sockets=[listen_again(family, address) for family, address in addresses])
            for listener, addresses in zip(
                self._node_listeners[node_id], self._node_addresses[node_id], strict=True
            )
        ]
        cluster.start(node_id)
        self._node_listeners[node_id] = rebound
        self._start_node_task(node_id)
        log.info("broker %d started", node_id)

    def _clock_moved(self) -> None:
        self.broker.timers.clock_moved()
        self.timers_changed.fire()

    def wake_timers_if_sooner(self) -> None:
        """Requests only ever move the next deadline earlier than the timer
        task sleeps for by scheduling something new; wake it only then."""
        if self.broker.timers.deadline_sooner_than(self._timer_sleeps_until):
            self.timers_changed.fire()

    async def _run_timers(self) -> None:
        """Once the Kafka listener has answered (or soon after it listens, with no client), load
        the coordinators (a request may have already), then sleep until the next deadline (or
        a request sets a sooner one) and fire what is due. BrokerTimers.tick logs and survives
        its own failures; should a tick raise anyway, the task logs it once
        (shim.timer_failures) and backs off rather than end the broker or spin."""
        broker = self.broker
        await surfaces.load_after_kafka_answers(self, *COORDINATOR_MODULES)
        broker.timer_failures.run("coordinator load", broker.coordinators.load)  # else retried below
        backoff_s = 0.0
        while True:
            try:
                deadline = broker.timers.watch_deadlines()
                self._timer_sleeps_until = math.inf if deadline is None else deadline
                timeout = (self._timer_sleeps_until - broker.clock()) / 1000
                if timeout > 0:
                    await self.timers_changed.wait(timeout)
                broker.timers.tick(broker.clock())
                backoff_s = 0.0
            except Exception as exc:
                broker.timer_failures.failed("timer task", exc)
                backoff_s = min(max(backoff_s * 2, TICK_BACKOFF_S[0]), TICK_BACKOFF_S[1])
                await trio.sleep(backoff_s)
