"""Storage throughput and recovery: kafka-shim on disk beside kafka-shim in
memory and Tansu (memory storage), measured in the same run with the same
confluent-kafka client; then recovery time after ~1 GB of topic data.

    python -m bench.storage [--messages 200000] [--size 1000] [--recovery-gb 1.0]

Produce: acks=all, linger.ms=5, one topic of one partition, to completion.
Consume: a fresh assigned consumer reading it all back from offset 0.
Recovery: the time from exec to "listening" for a data dir holding the data,
after a clean stop (indexes trusted) and after kill -9 (the active segment
is re-read and CRC-checked batch by batch).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from compat.targets import RunningBroker, TargetUnavailable, launch, start_shim, start_tansu

TOPIC = "bench-storage"


@dataclass
class Rates:
    produce_mb_s: float
    produce_msg_s: float
    consume_mb_s: float
    consume_msg_s: float


def start_disk(data_dir: Path, *extra: str) -> RunningBroker:
    argv = [
        sys.executable,
        "-m",
        "kafka_shim",
        "--data-dir",
        str(data_dir),
        "--port",
        "0",
        "--host",
        "127.0.0.1",
    ]
    return launch("shim-disk", [*argv, *extra])


def produce(bootstrap: str, messages: int, size: int, topic: str = TOPIC) -> float:
    """Seconds to produce `messages` values of `size` bytes, every one acknowledged."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "queue.buffering.max.kbytes": 512 * 1024,
            "log_level": 0,
        }
    )
    failures: list[object] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            failures.append(error)

    value = b"v" * size
    started = time.monotonic()
    for _ in range(messages):
        while True:
            try:
                producer.produce(topic, value, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.005)
        producer.poll(0)
    remaining = producer.flush(120)
    elapsed = time.monotonic() - started
    if remaining or failures:
        raise RuntimeError(f"{remaining} unsent, {len(failures)} failed: {failures[:3]}")
    return elapsed


def consume(bootstrap: str, messages: int, topic: str = TOPIC) -> float:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-storage",
            "enable.auto.commit": False,
            "fetch.max.bytes": 50 * 1024 * 1024,
            "max.partition.fetch.bytes": 10 * 1024 * 1024,
            "log_level": 0,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    seen = 0
    started = time.monotonic()
    deadline = started + 60
    while seen < messages and time.monotonic() < deadline:
        seen += sum(1 for m in consumer.consume(num_messages=100_000, timeout=0.5) if m.error() is None)
    elapsed = time.monotonic() - started
    consumer.close()
    if seen < messages:
        raise RuntimeError(f"consumed {seen} of {messages}")
    return elapsed


def measure(start: Callable[[], RunningBroker], messages: int, size: int) -> Rates | str:
    try:
        broker = start()
    except TargetUnavailable as exc:
        return f"unavailable: {str(exc).splitlines()[0]}"
    with broker:
        megabytes = messages * size / 1e6
        try:
            produced = produce(broker.bootstrap, messages, size)
            consumed = consume(broker.bootstrap, messages)
        except RuntimeError as exc:
            return f"failed: {exc}"
    return Rates(megabytes / produced, messages / produced, megabytes / consumed, messages / consumed)


def time_to_listening(data_dir: Path) -> float:
    os.sync()  # earlier stages' writeback must not be timed as start-up
    started = time.monotonic()
    broker = start_disk(data_dir)
    elapsed = time.monotonic() - started
    broker.stop()
    return elapsed


def recovery(work: Path, gigabytes: float) -> dict[str, float]:
    data_dir = work / "recovery"
    size = 100_000
    messages = int(gigabytes * 1e9 / size)
    broker = start_disk(data_dir)
    produce(broker.bootstrap, messages, size)
    broker.stop()  # clean: the marker is written, indexes trusted
    clean = time_to_listening(data_dir)
    broker = start_disk(data_dir)
    broker.signal_and_wait(signal.SIGKILL)
    unclean = time_to_listening(data_dir)
    empty = time_to_listening(work / "empty")
    stored = sum(p.stat().st_size for p in data_dir.rglob("*.log")) / 1e9
    return {
        "GB on disk": stored,
        "empty data dir": empty,
        "after clean stop": clean,
        "after kill -9": unclean,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--recovery-gb", type=float, default=1.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-storage-"))
    try:
        targets: dict[str, Callable[[], RunningBroker]] = {
            "shim --data-dir": lambda: start_disk(work / "throughput"),
            "shim --data-dir --fsync always": lambda: start_disk(work / "always", "--fsync", "always"),
            "shim --memory": start_shim,
            "tansu (memory)": start_tansu,
        }
        print(f"{args.messages} messages of {args.size} bytes, confluent-kafka {acks_note()}")
        print(f"{'broker':<34}{'produce MB/s':>14}{'msg/s':>10}{'consume MB/s':>14}{'msg/s':>10}")
        for name, start in targets.items():
            rates = measure(start, args.messages, args.size)
            if isinstance(rates, str):
                print(f"{name:<34}{rates}")
                continue
            print(
                f"{name:<34}{rates.produce_mb_s:>14.1f}{rates.produce_msg_s:>10.0f}"
                f"{rates.consume_mb_s:>14.1f}{rates.consume_msg_s:>10.0f}"
            )
        if args.recovery_gb > 0:
            print(f"\nstart-up to 'listening' (s), shim on disk, {args.recovery_gb:g} GB in one partition:")
            for label, value in recovery(work, args.recovery_gb).items():
                print(f"  {label:<20}{value:>8.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def acks_note() -> str:
    return "acks=all, linger.ms=5"


if __name__ == "__main__":
    main()
