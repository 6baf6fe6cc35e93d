"""Fetch at Kafka's speed: broker CPU per MB fetched and MB/s, kafka-shim beside Tansu in the
same run, and the physical floor (sendfile of the same bytes over loopback).

    python -m bench.fetch_throughput [--messages 1000000] [--rounds 3] [--before-tree DIR]

Each broker gets N records of 100 B (one partition, produced by librdkafka in large batches),
then they are read back twice, from offset 0 to the end:
- by a raw Fetch client (Fetch v12, the Java consumer's fetch.max.bytes 50 MiB and
  max.partition.fetch.bytes 1 MiB, read_uncommitted): what the broker can serve, the client
  parsing nothing but the batch headers it needs for the next offset;
- by a librdkafka consumer (confluent-kafka, client defaults: read_committed), a real client.
For each: MB/s (MB = 10^6 bytes of record values, as Kafka's consumer perf tool counts data,
there in MiB) and the broker's process CPU (user + system, /proc) per MB over the read. The
floor serves the bytes the raw client received, from a file, with os.sendfile in 1 MiB
requests, to the same client loop over loopback: its CPU per MB is the server thread's.
`--before-tree` also runs kafka-shim from another checkout (e.g. the commit before a change),
as "before", in the same run. Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from statistics import median
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from bench.commits import create_topic
from bench.common import print_row, process_cpu_s, start_shim_from
from compat.targets import Broker, RunningBroker, TargetUnavailable, start_tansu
from kafka_shim.protocol.headers import RequestHeader
from kafka_shim.protocol.messages.fetch import API as FETCH
from kafka_shim.protocol.records import iter_headers

VALUE_BYTES = 100
MB = 1_000_000
FETCH_VERSION = 12
FETCH_MAX_BYTES = 50 * 1024 * 1024
PARTITION_MAX_BYTES = 1024 * 1024
_LENGTH = struct.Struct(">i")


def produce(broker: Broker, topic: str, count: int) -> None:
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "linger.ms": 20, "batch.size": 1_000_000, "acks": "1"}
    )
    value = b"x" * VALUE_BYTES
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(120) != 0:
        raise RuntimeError("producer did not deliver every record within 120 s")


class FetchClient:
    """One connection that fetches one partition from an offset to an end."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self._correlation = 0

    def close(self) -> None:
        self.sock.close()

    def _request(self, body: dict[str, Any]) -> bytes:
        self._correlation += 1
        header = RequestHeader.build(
            {
                "request_api_key": FETCH.key,
                "request_api_version": FETCH_VERSION,
                "correlation_id": self._correlation,
                "client_id": "bench",
            },
            2,
        )
        payload = header + FETCH.request.build(body, FETCH_VERSION)
        self.sock.sendall(_LENGTH.pack(len(payload)) + payload)
        size = _LENGTH.unpack(receive_exactly(self.sock, 4))[0]
        return receive_exactly(self.sock, size)

    def read_all(self, topic: str, end: int, keep: list[bytes] | None = None) -> None:
        """Fetch from 0 until `end` (the record bytes kept in `keep` if given)."""
        offset = 0
        while offset < end:
            frame = self._request(
                {
                    "replica_id": -1,
                    "max_wait_ms": 500,
                    "min_bytes": 1,
                    "max_bytes": FETCH_MAX_BYTES,
                    "isolation_level": 0,
                    "session_id": 0,
                    "session_epoch": -1,
                    "topics": [
                        {
                            "topic": topic,
                            "partitions": [
                                {
                                    "partition": 0,
                                    "fetch_offset": offset,
                                    "partition_max_bytes": PARTITION_MAX_BYTES,
                                }
                            ],
                        }
                    ],
                    "forgotten_topics_data": [],
                    "rack_id": "",
                }
            )
            response = FETCH.response.parse(frame[5:], FETCH_VERSION)  # after the v1 response header
            partition = response.responses[0].partitions[0]
            if partition.error_code:
                raise RuntimeError(f"fetch at {offset} answered error {partition.error_code}")
            records = partition.records or b""
            if keep is not None:
                keep.append(records)
            for batch in iter_headers(records):
                offset = batch.last_offset + 1


def receive_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray(size)
    view = memoryview(data)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if not n:
            raise ConnectionError("peer closed")
        got += n
    return bytes(data)


def timed(broker: RunningBroker, read: Callable[[], None]) -> tuple[float, float]:
    """(wall seconds, broker CPU seconds) of `read`."""
    assert broker.process is not None
    pid = broker.process.pid
    cpu = process_cpu_s(pid)
    started = time.perf_counter()
    read()
    return time.perf_counter() - started, process_cpu_s(pid) - cpu


def consume(broker: Broker, topic: str, count: int) -> None:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"g-{uuid.uuid4().hex[:8]}"})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        received = 0
        deadline = time.monotonic() + 300
        while received < count and time.monotonic() < deadline:
            received += sum(
                1 for m in consumer.consume(num_messages=100_000, timeout=1.0) if m.error() is None
            )
        if received != count:
            raise RuntimeError(f"consumed {received} of {count}")
    finally:
        consumer.close()


def raw_read(broker: RunningBroker, topic: str, count: int, keep: list[bytes] | None) -> tuple[float, float]:
    client = FetchClient(broker.bootstrap)
    try:
        return timed(broker, lambda: client.read_all(topic, count, keep))
    finally:
        client.close()


def floor(records: list[bytes]) -> tuple[float, float]:
    """(wall s, server CPU s) to sendfile `records`' bytes from a file over loopback to a
    client that reads them in 1 MiB requests, as the raw client does."""
    total = sum(len(chunk) for chunk in records)
    with tempfile.TemporaryFile() as file, socket.socket() as listener:
        for chunk in records:
            file.write(chunk)
        file.flush()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        cpu: list[float] = []

        def serve() -> None:
            connection, _ = listener.accept()
            started = time.thread_time()
            with connection:
                offset = 0
                while offset < total:
                    receive_exactly(connection, 4)  # the client's "request"
                    count = min(PARTITION_MAX_BYTES, total - offset)
                    connection.sendall(_LENGTH.pack(count))
                    end = offset + count
                    while offset < end:
                        offset += os.sendfile(connection.fileno(), file.fileno(), offset, end - offset)
            cpu.append(time.thread_time() - started)

        server = threading.Thread(target=serve)
        server.start()
        client = socket.create_connection(listener.getsockname())
        started = time.perf_counter()
        received = 0
        while received < total:
            client.sendall(b"\x00\x00\x00\x00")
            size = _LENGTH.unpack(receive_exactly(client, 4))[0]
            received += len(receive_exactly(client, size))
        wall = time.perf_counter() - started
        client.close()
        server.join()
        return wall, cpu[0]


@contextmanager
def shim_from(tree: str | None, args: tuple[str, ...]) -> Iterator[RunningBroker]:
    """kafka-shim started from `tree` (another checkout), or from this one."""
    broker = start_shim_from(tree, args)
    try:
        yield broker
    finally:
        broker.stop()


@contextmanager
def tansu() -> Iterator[RunningBroker]:
    broker = start_tansu()
    try:
        yield broker
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before-tree", help="also run kafka-shim from this checkout, as 'before'")
    parser.add_argument(
        "--busy-poll-us", help="kafka-shim's --busy-poll-us (default: its own): its polling counts as CPU"
    )
    args = parser.parse_args()
    count = args.messages
    megabytes = count * VALUE_BYTES / MB
    print(f"{count:,} records of {VALUE_BYTES} B ({megabytes:,.0f} MB of values), {args.rounds} rounds")
    raw: dict[str, list[tuple[float, float]]] = {}
    real: dict[str, list[tuple[float, float]]] = {}
    floors: list[tuple[float, float]] = []
    with ExitStack() as stack:
        shim_args = () if args.busy_poll_us is None else (f"--busy-poll-us={args.busy_poll_us}",)
        brokers = {"shim": stack.enter_context(shim_from(None, shim_args))}
        if args.before_tree:
            brokers["before"] = stack.enter_context(shim_from(args.before_tree, shim_args))
        try:
            brokers["tansu"] = stack.enter_context(tansu())
        except TargetUnavailable as exc:
            print(f"  tansu: unavailable ({str(exc).splitlines()[0]})")
        topics = {label: f"bench-fetch-{uuid.uuid4().hex[:8]}" for label in brokers}
        for label, broker in brokers.items():
            create_topic(broker.bootstrap, topics[label], 1)
            produce(broker, topics[label], count)
        kept: list[bytes] = []  # the shim's record bytes, for the floor
        for round_ in range(args.rounds):
            for label, broker in brokers.items():
                keep = kept if label == "shim" and round_ == 0 else None
                raw.setdefault(label, []).append(raw_read(broker, topics[label], count, keep))
                if label == "shim":
                    floors.append(floor(kept))
                topic = topics[label]
                real.setdefault(label, []).append(
                    timed(broker, lambda: consume(broker, topic, count))  # noqa: B023
                )
    for what, samples in (("raw Fetch client", raw), ("librdkafka consumer", real)):
        print_row(
            f"{what}: MB/s",
            {label: megabytes / median(wall for wall, _ in runs) for label, runs in samples.items()},
            "MB/s",
            higher_is_better=True,
        )
        print_row(
            f"{what}: broker CPU per MB",
            {label: 1e6 * median(cpu for _, cpu in runs) / megabytes for label, runs in samples.items()},
            "us/MB",
            higher_is_better=False,
        )
    print(
        f"{'floor (sendfile over loopback)':<40}MB/s {megabytes / median(w for w, _ in floors):,.1f}"
        f"  CPU {1e6 * median(c for _, c in floors) / megabytes:,.1f} us/MB"
    )


if __name__ == "__main__":
    main()
