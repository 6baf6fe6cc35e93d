"""The background thread of a disk store: interval fsyncs, retention and
compaction (every log.retention.check.interval.ms), producer expiry (every
producer.id.expiration.check.interval.ms).

Storage has no event loop (only the server imports Trio), so periodic work
runs on one daemon thread; each log's own lock serialises it with appends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from kafka_shim.storage.cleaner import clean
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy

log = logging.getLogger("kafka_shim.storage")


class Housekeeper:
    def __init__(self, logs: Callable[[], Iterable[DiskLog]], options: DiskOptions) -> None:
        self._logs = logs
        self._options = options
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kafka-shim-storage", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        options = self._options
        flushing = options.fsync is FsyncPolicy.INTERVAL
        periods = [options.retention_check_interval_ms, options.producer_id_expiration_check_interval_ms]
        tick_s = min([*periods, options.fsync_interval_ms] if flushing else periods) / 1000
        next_retention = time.monotonic() + options.retention_check_interval_ms / 1000
        next_expiry = time.monotonic() + options.producer_id_expiration_check_interval_ms / 1000
        while not self._stop.wait(tick_s):
            if flushing:
                self.flush_all()
            if time.monotonic() >= next_retention:
                next_retention = time.monotonic() + options.retention_check_interval_ms / 1000
                for disk_log in self._logs():
                    self._each(disk_log, self._retain)
            if time.monotonic() >= next_expiry:
                next_expiry = time.monotonic() + options.producer_id_expiration_check_interval_ms / 1000
                for disk_log in self._logs():
                    self._each(disk_log, DiskLog.expire_producers)

    def _retain(self, disk_log: DiskLog) -> None:
        disk_log.apply_retention()
        if disk_log.config.compacts:
            clean(disk_log, self._options.clock())

    @staticmethod
    def _each(disk_log: DiskLog, work: Callable[[DiskLog], object]) -> None:
        """One log's work; a failure (a full disk) is logged and retried at the next pass,
        the other logs' work goes on."""
        try:
            work(disk_log)
        except Exception as exc:
            log.error("storage housekeeping of %s failed: %r", disk_log.directory.name, exc)
            log.debug("traceback", exc_info=True)

    def flush_all(self) -> None:
        for disk_log in self._logs():
            self._each(disk_log, DiskLog.flush)
