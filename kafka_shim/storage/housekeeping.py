"""The background thread of a disk store: interval fsyncs, retention (every
log.retention.check.interval.ms), the log cleaner (every log.cleaner.backoff.ms: the
compacted logs cleaner_manager finds dirty enough, the filthiest first), producer expiry
(every producer.id.expiration.check.interval.ms).

Storage has no event loop (only the server imports Trio), so periodic work
runs on one daemon thread; each log's own lock serialises it with appends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from kafka_shim.storage.cleaner import clean, clean_if_dirty
from kafka_shim.storage.cleaner_manager import Cleanable, CleanerCheckpoints
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy

log = logging.getLogger("kafka_shim.storage")


class Housekeeper:
    def __init__(self, logs: Callable[[], Iterable[DiskLog]], options: DiskOptions) -> None:
        self._logs = logs
        self._options = options
        self.checkpoints = CleanerCheckpoints()
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
        cleaner_backoff_ms = max(options.cleaner_backoff_ms, 1)  # Kafka allows 0: no busy loop here
        periods = [
            options.retention_check_interval_ms,
            cleaner_backoff_ms,
            options.producer_id_expiration_check_interval_ms,
        ]
        tick_s = min([*periods, options.fsync_interval_ms] if flushing else periods) / 1000
        started = time.monotonic()
        next_retention = started + options.retention_check_interval_ms / 1000
        next_cleaning = started + cleaner_backoff_ms / 1000
        next_expiry = started + options.producer_id_expiration_check_interval_ms / 1000
        while not self._stop.wait(tick_s):
            if flushing:
                self.flush_all()
            if time.monotonic() >= next_retention:
                next_retention = time.monotonic() + options.retention_check_interval_ms / 1000
                for disk_log in self._logs():
                    self._each(disk_log, DiskLog.apply_retention)
            if time.monotonic() >= next_cleaning:
                self.clean_dirty_logs()
                next_cleaning = time.monotonic() + cleaner_backoff_ms / 1000
            if time.monotonic() >= next_expiry:
                next_expiry = time.monotonic() + options.producer_id_expiration_check_interval_ms / 1000
                for disk_log in self._logs():
                    self._each(disk_log, DiskLog.expire_producers)

    def clean_dirty_logs(self) -> int:
        """One wake of Kafka's cleaner: every compacted log dirty enough, the filthiest first;
        how many were cleaned."""
        now = self._options.clock()
        due: list[tuple[Cleanable, DiskLog]] = []
        for disk_log in self._logs():
            if not disk_log.config.compacts:
                continue
            try:
                found = clean_if_dirty(disk_log, now, self.checkpoints)
            except Exception as exc:  # its segments went meanwhile, or a read failed: next wake
                log.error("the cleaner's look at %s failed: %r", disk_log.directory.name, exc)
                continue
            if found is not None:
                due.append((found, disk_log))
        due.sort(key=lambda item: item[0].ratio, reverse=True)
        for taken, disk_log in due:
            if self._each(disk_log, lambda d: clean(d, now)):
                self.checkpoints.cleaned_to(disk_log, taken.uncleanable)
        return len(due)

    @staticmethod
    def _each(disk_log: DiskLog, work: Callable[[DiskLog], object]) -> bool:
        """One log's work, True if done; a failure (a full disk) is logged and retried at the
        next pass, the other logs' work goes on."""
        try:
            work(disk_log)
        except Exception as exc:
            log.error("storage housekeeping of %s failed: %r", disk_log.directory.name, exc)
            log.debug("traceback", exc_info=True)
            return False
        return True

    def flush_all(self) -> None:
        for disk_log in self._logs():
            # Its own flush: a log unopened since a clean start has nothing to flush and is
            # not opened for it (storage.unopened_log).
            self._each(disk_log, lambda each: each.flush())
