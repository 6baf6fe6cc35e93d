"""Running a broker: until a signal (the command line), or on a background thread (the
pytest plugin, the test broker's controls)."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from typing import TypeVar

import outcome
import trio

from kafka_shim.controls import BrokerControls
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.net.listening import BoundListener
from kafka_shim.shim.net.server import Server
from kafka_shim.storage.durability import wall_clock_ms

log = logging.getLogger("kafka_shim.server")
T = TypeVar("T")


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
