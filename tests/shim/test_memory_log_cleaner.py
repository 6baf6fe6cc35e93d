"""--memory: the broker's timer wakes the log cleaner every log.cleaner.backoff.ms of the
broker's clock (storage.memory_compaction.clean_user_topics), as the housekeeper does on disk;
retention keeps its own log.retention.check.interval.ms."""

from __future__ import annotations

from kafka_shim.storage.memory import MemoryLog
from tests.batches import batch, read_records
from tests.helpers import Harness


def test_the_cleaner_wakes_every_log_cleaner_backoff_ms_of_the_brokers_clock() -> None:
    h = Harness(log_cleaner_backoff_ms=15_000)
    configs = {"cleanup.policy": "compact", "segment.bytes": "200", "min.cleanable.dirty.ratio": "0.01"}
    h.broker.topics.create("compacted", 1, configs)
    log = h.broker.topics.partition("compacted", 0)
    assert isinstance(log, MemoryLog)
    for i in range(12):
        log.append(batch(b"v%d" % i, key=b"k%d" % (i % 3)))
    log.append(batch(b"last", key=b"other"))
    before = len(read_records(log.read(0, 1 << 20)))
    h.broker.timers.tick(h.clock.now)  # not yet a backoff since the start
    assert len(read_records(log.read(0, 1 << 20))) == before == 13
    h.clock.now += 15_000
    h.broker.timers.tick(h.clock.now)
    values = [value for _, _, value in read_records(log.read(0, 1 << 20))]
    assert values[-4:] == [b"v9", b"v10", b"v11", b"last"] and len(values) < before
