"""A non-controller process's topics, kept those of the controller's catalog on disk.

With one process per emulated broker (shim.processes), only the controller (the first broker)
creates, grows, reconfigures and deletes topics; it writes its catalog (storage.data_dir) before
it answers. The other processes read that file when it changes and make their own copies of
the topics: the same names, ids, partition counts, replicas and configs, each process holding
data only for the partitions it leads (as a Kafka broker's log directory holds its replicas).
Internal topics are each process's own: a process writes the coordinators' records of what it
coordinates.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafka_shim.storage.data_dir import CATALOG_FILE, DataDir, TopicRecord
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.internal_topics import INTERNAL_TOPICS
from kafka_shim.storage.topics import TopicStore

log = logging.getLogger("kafka_shim.processes")


class CatalogFollower:
    def __init__(self, topics: TopicStore, controller_dir: Path) -> None:
        self._topics = topics
        self._controller = DataDir(controller_dir)
        self._catalog = controller_dir / CATALOG_FILE
        # The catalog file's identity when last applied (rewritten by rename: a new inode).
        self._applied: tuple[int, int, int] | None = None

    def sync(self) -> None:
        """Apply the controller's catalog if it changed since last time (one stat otherwise).
        A change that cannot be applied yet (a deleted topic's logs still being removed) is
        tried again at the next call; nothing here raises."""
        try:
            stat = os.stat(self._catalog)
        except FileNotFoundError:
            return
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if seen == self._applied:
            return
        try:
            self._apply(self._controller.read_catalog())
        except (StorageError, OSError, ValueError) as exc:
            log.warning("cannot follow the controller's topics yet (%s); trying again", exc)
            return
        self._applied = seen

    def sync_if_unknown(self, entries: Iterable[Any] | None) -> None:
        """`sync` if a request's topic entries name a topic (by name, or by id where the
        version has no name) this process does not know yet: a client that created a topic
        through the controller may reach this process before its next look at the catalog."""
        topics = self._topics
        for entry in entries or ():
            name = getattr(entry, "name", None) or getattr(entry, "topic", None)
            topic_id = getattr(entry, "topic_id", None)
            known = topics.get(name) if name else topic_id is None or topics.get_by_id(topic_id)
            if not known:
                self.sync()
                return

    def _apply(self, records: list[TopicRecord]) -> None:
        wanted = {r.name: r for r in records if r.name not in INTERNAL_TOPICS}
        gone = [
            topic.name
            for topic in self._topics
            if topic.name not in INTERNAL_TOPICS
            and (topic.name not in wanted or wanted[topic.name].topic_id != topic.topic_id)
        ]
        if gone:
            self._topics.delete_many(gone)
        for record in wanted.values():
            topic = self._topics.get(record.name)
            if topic is None:
                self._create(record)
                continue
            if record.partitions > len(topic.partitions):
                added = None if record.replicas is None else record.replicas[len(topic.partitions) :]
                self._topics.add_partitions(record.name, record.partitions, added)
            if record.configs != topic.configs:
                self._topics.set_configs(record.name, record.configs)

    def _create(self, record: TopicRecord) -> None:
        """The controller's topic made here with its id (clients compare ids across brokers)."""
        new = self._topics.reserve_topic(
            record.name, record.partitions, record.configs, assignment=record.replicas
        )
        new.topic.topic_id = record.topic_id
        try:
            self._topics.make([new])
        except StorageError:
            self._topics.release([new])
            raise
        self._topics.commit([new])
