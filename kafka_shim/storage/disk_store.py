"""Topics on disk: opens (and recovers) every partition log of a data
directory at start, persists topic definitions, runs housekeeping, and
closes cleanly. `shim.broker.Broker` builds one when given a data dir."""

from __future__ import annotations

import gc
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage.data_dir import DataDir, TopicRecord
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.durability import DiskOptions
from kafka_shim.storage.errors import StorageError, StorageStartupError
from kafka_shim.storage.housekeeping import Housekeeper
from kafka_shim.storage.log import AppendHook
from kafka_shim.storage.log_config import DEFAULT_BROKER_VALUE, LogConfig
from kafka_shim.storage.removal import LogRemover, orphan_partitions
from kafka_shim.storage.topic_configs import BrokerValue
from kafka_shim.storage.topics import LOGS_PER_FREEZE, Topic, TopicStore, keep_out_of_collections
from kafka_shim.storage.unopened_log import UnopenedDiskLog

log = logging.getLogger("kafka_shim.storage")

# What a new log starts with until its topic's config is set (resolving it per partition
# would cost more than making the partition).
_UNCONFIGURED = LogConfig.of_topic({}, DEFAULT_BROKER_VALUE)


class DiskStore:
    def __init__(
        self,
        path: Path,
        options: DiskOptions,
        *,
        on_append: AppendHook = lambda log: None,
        broker_value: BrokerValue = DEFAULT_BROKER_VALUE,
        default_partitions: int = 1,
        auto_create: bool = True,
    ) -> None:
        self.data_dir = DataDir(path)
        self.options = options
        self._on_append = on_append
        self.data_dir.lock()
        self.remover = LogRemover()
        try:
            self.topics = TopicStore(
                self._new_log,
                default_partitions=default_partitions,
                auto_create=auto_create,
                broker_value=broker_value,
                catalog=self,
                remover=self.remover,
            )
            started = time.monotonic()
            clean = self.data_dir.was_clean()
            records = self.data_dir.read_catalog()
            for record in records:
                self.topics.restore(self._open_topic(record, clean))
            # The logs opened live as long as their topics. A paused collector walks nothing
            # meanwhile, and whoever paused it freezes what start-up made (`python -m
            # kafka_shim` does once its listener is bound): a full collection here cost a start
            # with 1,000 partitions ~15 ms of its ~33 ms in Broker().
            if self.topics.partition_count >= LOGS_PER_FREEZE and gc.isenabled():
                keep_out_of_collections()
            self.data_dir.mark_running()
            # Partitions deleted (or made for a change never recorded) before a stop.
            counts = {record.name: record.partitions for record in records}
            for name, directories in orphan_partitions(path, counts).items():
                self.remover.remove(name, (), directories)
        except BaseException:
            self.remover.stop()
            self.data_dir.unlock()
            raise
        if records:
            log.info(
                "opened %d topic(s) from %s in %.0f ms (%s shutdown)",
                len(records),
                path,
                (time.monotonic() - started) * 1000,
                "clean" if clean else "unclean",
            )
        self._housekeeper = Housekeeper(self.logs, options)
        self._housekeeper.start()

    def _open_topic(self, record: TopicRecord, clean: bool) -> Topic:
        config = self.topics.log_config(record.configs)
        logs: list[DiskLog] = []
        for index in range(record.partitions):
            directory = self.data_dir.partition_path(record.name, index)
            if directory.is_dir() and clean:  # nothing to recover: opened on first use
                logs.append(UnopenedDiskLog(directory, config, self.options, self._on_append))
            elif directory.is_dir():  # recovered before the listener answers
                logs.append(
                    DiskLog.open(directory, config, self.options, clean=False, on_append=self._on_append)
                )
            else:
                # Created in the catalog, crashed before the directory existed.
                logs.append(DiskLog.create(directory, config, self.options, self._on_append))
        return Topic(record.name, record.topic_id, list(logs), dict(record.configs), record.replicas)

    def _new_log(self, topic: str, partition: int) -> DiskLog:
        """A new partition's log; TopicStore.make gives it its topic's config."""
        path = self.data_dir.partition_path(topic, partition)
        try:
            return DiskLog.create(path, _UNCONFIGURED, self.options, self._on_append)
        except OSError as exc:
            raise StorageError(
                ErrorCode.KAFKA_STORAGE_ERROR, f"cannot create {path}: {exc.strerror}"
            ) from exc

    def save(self, topics: list[Topic]) -> None:
        records = [
            TopicRecord(t.name, t.topic_id, len(t.partitions), dict(t.configs), t.replicas) for t in topics
        ]
        try:
            self.data_dir.write_catalog(records)
        except OSError as exc:
            raise StorageError(
                ErrorCode.KAFKA_STORAGE_ERROR, f"cannot save the topic catalog: {exc}"
            ) from exc

    @property
    def log_dir(self) -> str:
        """The absolute path of the one log directory (Kafka's `log.dirs` with one entry), made
        absolute as Java's File.getAbsolutePath does (symbolic links kept)."""
        return str(self.data_dir.path.absolute())

    def volume_bytes(self) -> tuple[int, int]:
        """The total and the usable bytes of the volume holding the log directory, as Java's
        FileStore reports them (usable: what this process may still write)."""
        stats = os.statvfs(self.data_dir.path)
        return stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize

    def logs(self) -> Iterator[DiskLog]:
        for topic in self.topics:
            for partition_log in topic.partitions:
                if isinstance(partition_log, DiskLog):
                    yield partition_log

    def flush(self) -> None:
        """fsync every log now (e.g. before acknowledging under a stricter rule)."""
        self._housekeeper.flush_all()

    def close(self) -> None:
        """Stop housekeeping, flush and close every log, mark the shutdown clean (unless a log
        could not be written: the next start then recovers as after a crash)."""
        self._housekeeper.stop()
        self.remover.stop()
        clean = [disk_log.close() for disk_log in self.logs()]
        if all(clean):
            try:
                self.data_dir.mark_clean()
            except OSError as exc:
                log.error("cannot mark %s as shut down cleanly: %s", self.data_dir.path, exc)
        self.data_dir.unlock()


__all__ = ["DiskStore", "StorageStartupError"]
