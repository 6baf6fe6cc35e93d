"""Topics: names, ids, partitions (one PartitionLog each) and per-topic configs."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.log_config import DEFAULT_BROKER_VALUE, LogConfig
from kafka_shim.storage.topic_configs import BrokerValue, invalid_config

# Kafka's limits (org.apache.kafka.common.internals.Topic).
MAX_NAME_LENGTH = 249
_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")
# Kafka caps one request's new partitions far below this; a dev broker keeps
# memory bounded against a typo such as 10**9.
MAX_PARTITIONS = 10_000

NewLog = Callable[[str, int], PartitionLog]
"""Makes the log of (topic name, partition index)."""

Replicas = list[list[int]]
"""Each partition's replica broker ids, its preferred leader first."""


class Placer(Protocol):
    """Where `count` new partitions of topic `name` have their replicas, `replication_factor`
    copies each (None: the broker's default); None for a topic kept on every broker.
    StorageError (INVALID_REPLICATION_FACTOR) when they cannot be placed."""

    def __call__(self, name: str, count: int, replication_factor: int | None) -> Replicas | None: ...


def invalid_topic_name(name: str | None) -> str | None:
    """Why `name` cannot name a topic, or None if it can, in Kafka's words (Topic.validate)."""
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > MAX_NAME_LENGTH:
        reason = f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    elif not _LEGAL_NAME.fullmatch(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return None
    return f"Topic name is invalid: {reason}"


def check_configs(configs: Mapping[str, str | None]) -> None:
    """A new topic's config overrides, refused with INVALID_CONFIG."""
    for key, value in configs.items():
        reason = invalid_config(key, value)
        if reason is not None:
            raise StorageError(ErrorCode.INVALID_CONFIG, reason)


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionLog]
    configs: dict[str, str] = field(default_factory=dict)
    # Where each partition's copies are (the placer's answer, recorded with the topic); None:
    # on every broker, as the internal topics and topics recorded before replicas were are.
    replicas: Replicas | None = None

    def partition(self, index: int) -> PartitionLog | None:
        return self.partitions[index] if 0 <= index < len(self.partitions) else None


class Catalog(Protocol):
    """Where topic definitions persist (a durable store); called after every change."""

    def save(self, topics: list[Topic]) -> None: ...


class TopicStore:
    def __init__(
        self,
        new_log: NewLog,
        *,
        default_partitions: int = 1,
        auto_create: bool = True,
        broker_value: BrokerValue = DEFAULT_BROKER_VALUE,
        catalog: Catalog | None = None,
        placer: Placer | None = None,
    ) -> None:
        self._new_log = new_log
        # The broker sets it once it knows its brokers (None: replicas are not recorded).
        self.placer = placer
        self.default_partitions = default_partitions
        self.auto_create_enabled = auto_create
        self.broker_value = broker_value
        self._catalog = catalog
        self._by_name: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}

    def _save(self, changed: Topic | None = None, *, without: str | None = None) -> None:
        """Write the catalog as it will be with `changed` in (or topic `without` gone), before
        memory changes: StorageError (a full disk) leaves the topics as they were."""
        if self._catalog is None:
            return
        topics = {name: topic for name, topic in self._by_name.items() if name != without}
        if changed is not None:
            topics[changed.name] = changed
        self._catalog.save(list(topics.values()))

    @staticmethod
    def _discard(logs: list[PartitionLog]) -> None:
        """Logs made for a change the catalog could not record."""
        for partition_log in logs:
            partition_log.delete()

    def log_config(self, overrides: Mapping[str, str]) -> LogConfig:
        return LogConfig.of_topic(overrides, self.broker_value)

    def _configure(self, topic: Topic, logs: list[PartitionLog]) -> list[PartitionLog]:
        """`logs` (of `topic`) given the topic's current configs."""
        config = self.log_config(topic.configs)
        for partition_log in logs:
            partition_log.configure(config)
        return logs

    def _new_logs(self, topic: Topic, indexes: range) -> list[PartitionLog]:
        made: list[PartitionLog] = []
        try:
            for index in indexes:
                made.append(self._new_log(topic.name, index))
        except StorageError:
            self._discard(made)
            raise
        return self._configure(topic, made)

    def reconfigure(self) -> None:
        """Every log's config resolved anew: a broker config its topic defaults to changed."""
        for topic in self._by_name.values():
            self._configure(topic, topic.partitions)

    def restore(self, topic: Topic) -> None:
        """Adopt a topic read back from a catalog, its logs already open."""
        self._configure(topic, topic.partitions)
        self._by_name[topic.name] = topic
        self._by_id[topic.topic_id] = topic

    def __iter__(self) -> Iterator[Topic]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)

    def get(self, name: str | None) -> Topic | None:
        return self._by_name.get(name) if name is not None else None

    def get_by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return self._by_id.get(topic_id)

    def partition(self, name: str, index: int) -> PartitionLog | None:
        topic = self._by_name.get(name)
        return topic.partition(index) if topic is not None else None

    def check_name(self, name: str) -> None:
        """A new topic's name: legal and free (Kafka checks these first, then configs)."""
        reason = invalid_topic_name(name)
        if reason is not None:
            raise StorageError(ErrorCode.INVALID_TOPIC_EXCEPTION, reason)
        if name in self._by_name:
            raise StorageError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")

    def check_new(
        self, name: str, num_partitions: int | None = None, configs: Mapping[str, str | None] | None = None
    ) -> int:
        """Validate a topic creation in Kafka's order; returns the partition count it would get."""
        self.check_name(name)
        check_configs(configs or {})
        count = self.default_partitions if num_partitions in (None, -1) else num_partitions
        assert count is not None
        if count <= 0:
            raise StorageError(
                ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
            )
        if count > MAX_PARTITIONS:
            raise StorageError(
                ErrorCode.INVALID_PARTITIONS,
                f"partition count {count} is over this broker's {MAX_PARTITIONS}",
            )
        return count

    def create(
        self,
        name: str,
        num_partitions: int | None = None,
        configs: Mapping[str, str | None] | None = None,
        *,
        replication_factor: int | None = None,
        assignment: Replicas | None = None,
    ) -> Topic:
        """A new topic, its replicas from a manual `assignment` (one list per partition) or else
        placed with `replication_factor` copies (None: the broker's default)."""
        count = self.check_new(name, num_partitions, configs)
        replicas = self._replicas(name, count, replication_factor, assignment)
        overrides = {k: v for k, v in (configs or {}).items() if v is not None}
        topic = Topic(name, uuid.uuid4(), [], overrides, replicas)
        topic.partitions = self._new_logs(topic, range(count))
        try:
            self._save(topic)
        except StorageError:
            self._discard(topic.partitions)
            raise
        self._by_name[name] = topic
        self._by_id[topic.topic_id] = topic
        return topic

    def _replicas(
        self, name: str, count: int, replication_factor: int | None, assignment: Replicas | None
    ) -> Replicas | None:
        if assignment is not None:
            return [list(replicas) for replicas in assignment]
        return None if self.placer is None else self.placer(name, count, replication_factor)

    def auto_create(self, name: str) -> Topic | None:
        """The topic, created with defaults if auto-creation is on and the name is legal."""
        topic = self._by_name.get(name)
        if topic is None and self.auto_create_enabled and invalid_topic_name(name) is None:
            topic = self.create(name)
        return topic

    def delete(self, name: str) -> Topic:
        topic = self._by_name.get(name)
        if topic is None:
            raise StorageError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {name!r}")
        self._save(without=name)
        del self._by_name[name]
        del self._by_id[topic.topic_id]
        for partition_log in topic.partitions:
            partition_log.delete()
        return topic

    def set_configs(self, name: str, overrides: Mapping[str, str]) -> Topic:
        """Replace topic `name`'s config overrides (validated by the caller)."""
        topic = self._by_name.get(name)
        if topic is None:
            raise StorageError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {name!r}")
        self._save(replace(topic, configs=dict(overrides)))
        topic.configs = dict(overrides)
        self._configure(topic, topic.partitions)
        return topic

    def check_partition_count(self, name: str, count: int) -> Topic:
        """Topic `name`, if it may grow to `count` partitions (Kafka's messages)."""
        topic = self._by_name.get(name)
        if topic is None:
            raise StorageError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
        current = len(topic.partitions)
        if count == current:
            raise StorageError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
        if count < current:
            raise StorageError(
                ErrorCode.INVALID_PARTITIONS,
                f"The topic {name} currently has {current} partition(s); {count} would not be an increase.",
            )
        if count > MAX_PARTITIONS:
            raise StorageError(
                ErrorCode.INVALID_PARTITIONS,
                f"partition count {count} is over this broker's {MAX_PARTITIONS}",
            )
        return topic

    def add_partitions(self, name: str, count: int, assignment: Replicas | None = None) -> Topic:
        """Grow topic `name` to `count` partitions, the new ones on `assignment` or placed with
        as many copies as the topic's first partition has (Kafka's createPartitions)."""
        topic = self.check_partition_count(name, count)
        current = len(topic.partitions)
        replicas = topic.replicas
        if replicas is not None:
            added_replicas = self._replicas(name, count - current, len(replicas[0]), assignment)
            replicas = [*replicas, *(added_replicas or [])]
        added = self._new_logs(topic, range(current, count))
        try:
            self._save(replace(topic, partitions=[*topic.partitions, *added], replicas=replicas))
        except StorageError:
            self._discard(added)
            raise
        topic.partitions.extend(added)
        topic.replicas = replicas
        return topic

    def set_replicas(self, name: str, replicas: Replicas) -> Topic:
        """Topic `name`'s partitions now have `replicas` (a completed reassignment)."""
        topic = self._by_name.get(name)
        if topic is None:
            raise StorageError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {name!r}")
        self._save(replace(topic, replicas=replicas))
        topic.replicas = replicas
        return topic
