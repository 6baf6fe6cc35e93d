"""Kill -9 the broker during a storm of real clients, restart it on the same
data directory, and check every acknowledged write came back.

    harness = CrashHarness(data_dir)
    for round in harness.rounds(20, storm_factory, rng):   # start, storm, kill -9, restart
        ...

A storm is anything with `start(bootstrap)`, `acknowledged()`, `stop()` and
`verify(bootstrap)` (see `ProduceStorm`): it remembers what the broker
acknowledged while it ran, and after the restart checks the broker still has
it. The crash comes at a random moment after every storm's first
acknowledgement, so no round is wasted on clients still connecting. Part B's commit storm
plugs in beside the produce storms.

Storms take their topics, groups and transactional ids from `harness.name(...)`, which adds
a token of this run. Clients of a killed broker outlive it (a consumer closing in the
background waits for its in-flight commit), and a broker restarted with --port 0 may get a
port such a client still retries: the kernel hands ports out again, to this run or to another
one on the same machine. With names shared between runs, a commit left over from another run
of this test is applied, as Kafka applies it, to the group of the same name here and moves an
acknowledged offset back (what failed a CI run: committed 11 after 16 was acknowledged). A
stale client of an earlier round of this run may still reach a later broker; it only repeats
what that round attempted, which the storms' checks allow.
"""

from __future__ import annotations

import contextlib
import random
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from compat.targets import RunningBroker, launch


class Storm(Protocol):
    def start(self, bootstrap: str) -> None: ...
    def acknowledged(self) -> int: ...
    def stop(self) -> None: ...
    def verify(self, bootstrap: str) -> None: ...


@dataclass
class Ledger:
    """Acknowledged records: (topic, partition, offset) -> value, from client callbacks."""

    acked: dict[tuple[str, int, int], bytes] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, topic: str, partition: int, offset: int, value: bytes) -> None:
        with self.lock:
            self.acked[(topic, partition, offset)] = value

    def snapshot(self) -> dict[tuple[str, int, int], bytes]:
        with self.lock:
            return dict(self.acked)


class CrashHarness:
    def __init__(self, data_dir: Path, extra_args: Sequence[str] = ()) -> None:
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.broker: RunningBroker | None = None
        self.restarts: list[float] = []  # seconds from exec to "listening"
        self.run = secrets.token_hex(4)

    def name(self, what: str) -> str:
        """`what`, made this run's own (see the module docstring)."""
        return f"{what}-{self.run}"

    def start(self) -> str:
        argv = [
            sys.executable,
            "-m",
            "kafka_shim",
            "--data-dir",
            str(self.data_dir),
            "--port",
            "0",
            # Not the console's fixed default port: brokers of other tests may hold it.
            "--console",
            "off",
            *self.extra_args,
        ]
        started = time.monotonic()
        self.broker = launch("shim", [*argv, "--host", "127.0.0.1"])
        self.restarts.append(time.monotonic() - started)
        return self.broker.bootstrap

    def kill(self) -> None:
        assert self.broker is not None
        self.broker.signal_and_wait(signal.SIGKILL)

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()

    def output(self) -> str:
        return "\n".join(self.broker.output) if self.broker is not None else ""

    def rounds(
        self,
        count: int,
        make_storms: Callable[[int], list[Storm]],
        rng: random.Random,
        storm_s: tuple[float, float],
    ) -> Iterator[int]:
        """Each round: storms run against the broker, which is killed -9 at a
        random moment; the restarted broker verifies every storm. Yields the
        round number after its verification."""
        bootstrap = self.start()
        try:
            for number in range(count):
                storms = make_storms(number)
                for storm in storms:
                    storm.start(bootstrap)
                deadline = time.monotonic() + 30
                while not all(storm.acknowledged() for storm in storms):
                    assert time.monotonic() < deadline, "no acknowledgement within 30 s"
                    time.sleep(0.01)
                time.sleep(rng.uniform(*storm_s))  # the random moment of the crash
                self.kill()
                for storm in storms:
                    storm.stop()
                bootstrap = self.start()
                for storm in storms:
                    storm.verify(bootstrap)
                yield number
        finally:
            self.stop()


@dataclass
class Consumed:
    """What a reader found: (partition, offset) -> value."""

    records: dict[tuple[int, int], bytes | None]


def read_topic(bootstrap: str, topic: str, until: dict[int, int], timeout_s: float = 20.0) -> Consumed:
    """Every record of `topic` up to offset `until[partition]` (exclusive), by a real client."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "crash-verifier", "enable.auto.commit": False}
    )
    records: dict[tuple[int, int], bytes | None] = {}
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in until])
        deadline = time.monotonic() + timeout_s
        remaining = {p for p, end in until.items() if end > 0}
        while remaining and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=10_000, timeout=0.2):
                if message.error() is not None:
                    continue
                partition, offset = message.partition(), message.offset()
                assert partition is not None and offset is not None  # set on every consumed record
                records[(partition, offset)] = message.value()
                if offset + 1 >= until.get(partition, 0):
                    remaining.discard(partition)
    finally:
        consumer.close()
    return Consumed(records)


def _close_quietly(producer: object) -> None:
    from kafka.errors import KafkaError

    # Sends the crash cut off fail; they are not in the ledger anyway.
    with contextlib.suppress(KafkaError):
        producer.close(timeout=5)  # type: ignore[attr-defined]


class ProduceStorm:
    """`clients` acks=all producers (alternating confluent-kafka and
    kafka-python) sending numbered values to `topic` as fast as they can."""

    def __init__(self, topic: str, clients: int = 4, value_size: int = 100) -> None:
        self.topic = topic
        self.clients = clients
        self.padding = b"p" * value_size
        self.ledger = Ledger()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self, bootstrap: str) -> None:
        for index in range(self.clients):
            run = self._confluent if index % 2 == 0 else self._kafka_python
            thread = threading.Thread(target=run, args=(bootstrap, index), daemon=True)
            thread.start()
            self._threads.append(thread)

    def acknowledged(self) -> int:
        with self.ledger.lock:
            return len(self.ledger.acked)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)

    def _value(self, client: int, number: int) -> bytes:
        return b"%d-%d-" % (client, number) + self.padding

    def _confluent(self, bootstrap: str, client: int) -> None:
        from confluent_kafka import KafkaError, Message, Producer

        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2, "log_level": 0})

        def delivered(error: KafkaError | None, message: Message) -> None:
            if error is None:
                topic, partition, offset, value = (
                    message.topic(),
                    message.partition(),
                    message.offset(),
                    message.value(),
                )
                # A delivered record has all four; the stubs only know they may be None.
                assert topic is not None and partition is not None and offset is not None
                assert value is not None
                self.ledger.record(topic, partition, offset, value)

        number = 0
        while not self._stop.is_set():
            try:
                producer.produce(self.topic, self._value(client, number), on_delivery=delivered)
                number += 1
            except BufferError:
                producer.poll(0.01)
            producer.poll(0)
        producer.poll(0)  # collect acknowledgements that already arrived
        # The rest went down with the broker: drop them rather than let the
        # producer's destructor wait out message.timeout.ms for them.
        producer.purge()
        producer.flush(0)

    def _kafka_python(self, bootstrap: str, client: int) -> None:
        from kafka import KafkaProducer
        from kafka.errors import KafkaError

        try:
            # Short timeouts: after the crash pending sends fail fast, so close() completes.
            producer = KafkaProducer(
                bootstrap_servers=bootstrap,
                acks="all",
                linger_ms=2,
                retries=0,
                request_timeout_ms=1000,
                delivery_timeout_ms=1500,
                max_block_ms=1000,  # send() must not outlive the broker by a minute
            )
        except KafkaError:
            return  # the broker died before this client connected
        number = 0
        while not self._stop.is_set():
            value = self._value(client, number)
            try:
                future = producer.send(self.topic, value)
            except KafkaError:
                break
            future.add_callback(
                lambda meta, v=value: self.ledger.record(meta.topic, meta.partition, meta.offset, v)
            )
            number += 1
            if number % 200 == 0:
                time.sleep(0.001)  # let the sender thread drain
        threading.Thread(target=_close_quietly, args=(producer,), daemon=True).start()

    def verify(self, bootstrap: str) -> None:
        acked = self.ledger.snapshot()
        assert acked, f"no write to {self.topic} was acknowledged before the crash"
        until: dict[int, int] = {}
        for _, partition, offset in acked:
            until[partition] = max(until.get(partition, 0), offset + 1)
        found = read_topic(bootstrap, self.topic, until).records
        missing = [(key, value[:12]) for key, value in acked.items() if found.get(key[1:]) != value]
        assert not missing, (
            f"{len(missing)} of {len(acked)} acknowledged records lost or moved: {missing[:5]}"
        )


class CommitStorm:
    """`clients` confluent-kafka consumers, each its own group, synchronously
    committing ever-higher offsets of `topic` partition 0. A commit that
    returned is acknowledged; after a crash the broker must return at least
    the last acknowledged offset and at most the one that was in flight."""

    def __init__(self, topic: str, clients: int = 3) -> None:
        self.topic = topic
        self.clients = clients
        self._acknowledged: dict[str, int] = {}
        self._attempted: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def group(self, client: int) -> str:
        return f"{self.topic}-committer-{client}"

    def start(self, bootstrap: str) -> None:
        for client in range(self.clients):
            thread = threading.Thread(target=self._commit, args=(bootstrap, client), daemon=True)
            thread.start()
            self._threads.append(thread)

    def acknowledged(self) -> int:
        with self._lock:
            return len(self._acknowledged)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)

    def _commit(self, bootstrap: str, client: int) -> None:
        from confluent_kafka import Consumer, KafkaError, TopicPartition

        group = self.group(client)
        answered = threading.Event()
        errors: list[KafkaError | None] = []

        def on_commit(error: KafkaError | None, partitions: object) -> None:
            errors.append(error)
            answered.set()

        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "enable.auto.commit": False,
                "on_commit": on_commit,
                "log_level": 0,
            }
        )
        offset = 0
        try:
            while not self._stop.is_set():
                offset += 1
                with self._lock:
                    self._attempted[group] = offset
                # One commit in flight, waited for as a synchronous commit is; issued
                # asynchronously because librdkafka retries a synchronous one for as
                # long as the broker is down, and the storm must stop at the crash.
                answered.clear()
                consumer.commit(offsets=[TopicPartition(self.topic, 0, offset)], asynchronous=True)
                while not answered.is_set():
                    if self._stop.is_set():
                        return
                    consumer.poll(0.02)
                if errors[-1] is not None:
                    return
                with self._lock:
                    self._acknowledged[group] = offset
        finally:
            threading.Thread(target=consumer.close, daemon=True).start()

    def verify(self, bootstrap: str) -> None:
        from confluent_kafka import Consumer, TopicPartition

        with self._lock:
            acknowledged = dict(self._acknowledged)
            attempted = dict(self._attempted)
        assert acknowledged, f"no commit on {self.topic} was acknowledged before the crash"
        for group, offset in acknowledged.items():
            consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 0})
            try:
                committed = consumer.committed([TopicPartition(self.topic, 0)], timeout=20)[0].offset
            finally:
                consumer.close()
            assert offset <= committed <= attempted[group], (
                f"{group}: committed offset {committed} after the crash, acknowledged {offset}, "
                f"attempted at most {attempted[group]}"
            )
