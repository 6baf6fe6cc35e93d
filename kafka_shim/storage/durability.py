"""When appended bytes are forced to stable storage.

Every append reaches the OS (an unbuffered `os.write`) before the log returns,
so an acknowledged write survives a kill -9 of the broker in every mode. The
fsync policy decides what survives a power loss or kernel crash:

- `always`: fsync before the append returns (before Produce or an offset
  commit is acknowledged);
- `interval`: a background thread fsyncs logs written since the last pass
  every `fsync_interval_ms` (Kafka's log.flush.interval.ms);
- `never`: left to the OS, as Apache Kafka does by default.

Whatever the policy, a segment is fsynced (with its indexes) when it is rolled
and every log when the broker stops cleanly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from kafka_shim.protocol.settings import broker_default


class FsyncPolicy(Enum):
    ALWAYS = "always"
    INTERVAL = "interval"
    NEVER = "never"


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class DiskOptions:
    fsync: FsyncPolicy = FsyncPolicy.INTERVAL
    fsync_interval_ms: int = broker_default("log.flush.interval.ms")
    retention_check_interval_ms: int = broker_default("log.retention.check.interval.ms")
    cleaner_dedupe_buffer_size: int = broker_default("log.cleaner.dedupe.buffer.size")
    cleaner_backoff_ms: int = broker_default("log.cleaner.backoff.ms")
    producer_id_expiration_ms: int = broker_default("producer.id.expiration.ms")
    producer_id_expiration_check_interval_ms: int = broker_default("producer.id.expiration.check.interval.ms")
    truncate_corrupt: bool = False  # recovery may drop data after a corrupt batch
    clock: Callable[[], int] = wall_clock_ms
