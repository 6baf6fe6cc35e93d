"""Broker CPU for one idle consumer of 1,000 partitions, with and without incremental fetch
sessions (KIP-227), kafka-shim beside Tansu in the same run.

    python -m bench.fetch_sessions [--partitions 1000] [--seconds 10] [--rounds 3]

The consumer is kafka-python 3.0.12 (its `enable_incremental_fetch_sessions` switches
sessions on and off; librdkafka never uses them) assigned every partition of an empty
topic, polling in a thread: each Fetch long-polls 500 ms (fetch_max_wait_ms) and returns
nothing. After a warm-up (offsets looked up, the first full fetch), the broker's CPU time
(user + system, from /proc/<pid>/stat) is read before and after `--seconds`. Without a
session every Fetch names all partitions and is answered with all of them; with one, an
idle Fetch names none and is answered with none. Both modes run on the same two broker
processes, interleaved round by round.
"""

from __future__ import annotations

import argparse
import threading
import time
import uuid
from statistics import median

from kafka import KafkaConsumer, TopicPartition

from bench.commits import create_topic
from bench.common import measure_interleaved, print_row, process_cpu_s
from compat.targets import Broker, RunningBroker

MODES = {"sessions": True, "no sessions": False}
WARM_UP_S = 3.0


def idle_consumer_cpu(broker: Broker, topic: str, partitions: int, seconds: float, sessions: bool) -> float:
    """Broker CPU seconds spent while one idle consumer of `partitions` polls for `seconds`."""
    assert isinstance(broker, RunningBroker) and broker.process is not None
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        auto_offset_reset="latest",
        enable_auto_commit=False,
        enable_incremental_fetch_sessions=sessions,
    )
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            assert not consumer.poll(timeout_ms=200), "the topic is meant to stay empty"

    consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
    poller = threading.Thread(target=poll, name="idle-consumer")
    poller.start()
    try:
        time.sleep(WARM_UP_S)
        before = process_cpu_s(broker.process.pid)
        time.sleep(seconds)
        return process_cpu_s(broker.process.pid) - before
    finally:
        stop.set()
        poller.join()
        consumer.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0, help="measured idle time per sample")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    topic = f"bench-idle-{uuid.uuid4().hex[:8]}"
    prepared: set[str] = set()

    def measure(broker: Broker) -> dict[str, float]:
        if broker.name not in prepared:
            create_topic(broker.bootstrap, topic, args.partitions)
            prepared.add(broker.name)
        return {
            mode: idle_consumer_cpu(broker, topic, args.partitions, args.seconds, sessions)
            for mode, sessions in MODES.items()
        }

    samples = measure_interleaved(measure, args.rounds)
    print(
        f"one idle kafka-python consumer of {args.partitions} partitions, broker CPU over "
        f"{args.seconds:g} s, median of {args.rounds} rounds"
    )
    medians = {
        mode: {name: median(sample[mode] for sample in runs) for name, runs in samples.items()}
        for mode in MODES
    }
    for mode, results in medians.items():
        print_row(f"broker CPU ms, {mode}", {k: v * 1000 for k, v in results.items()}, "ms", False)
    for name in samples:
        with_sessions, without = medians["sessions"][name], medians["no sessions"][name]
        ratio = f"{without / with_sessions:.1f}x" if with_sessions else "n/a (no CPU measured with sessions)"
        print(f"  {name}: CPU without sessions / with sessions = {ratio}")


if __name__ == "__main__":
    main()
