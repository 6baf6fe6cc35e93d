"""Topics: names, ids, partitions (one PartitionLog each) and per-topic configs."""

from __future__ import annotations

import gc
import re
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
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

# Every this many logs made (or opened at start), what lives is moved out of the cyclic
# collector's walks; fewer are not worth it.
LOGS_PER_FREEZE = 1_000


def keep_out_of_collections() -> None:
    """Collect, then move every object still alive out of the cyclic garbage collector's
    walks (gc.freeze). A partition log is some 24 tracked objects living until its topic is
    deleted; a full collection walks them all with the GIL held, from whichever thread
    allocates (4 s for 30,000 partitions on a busy machine: a stall of every client) and
    finds no cycle among them. The collection before costs what was made since the last
    freeze; reference counting still frees what is frozen (a deleted topic's logs)."""
    gc.collect()
    gc.freeze()


NewLog = Callable[[str, int], PartitionLog]
"""Makes the log of (topic name, partition index); any thread may call it."""

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


def too_many_for_one_request(asked: int, cap: int) -> str | None:
    """Why a request asking for `asked` new partitions in all is refused whole, as Kafka 4.x's
    controller refuses more than its batch (controller.max.records.per.batch, `cap`), or None."""
    if asked <= cap:
        return None
    return (
        "Excessively large number of partitions per request "
        f"({asked} asked; controller.max.records.per.batch={cap})."
    )


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


class Remover(Protocol):
    """Where deleted topics' logs go to be closed and removed (storage.removal on disk)."""

    def remove(self, name: str, logs: Collection[PartitionLog]) -> None: ...

    def removing(self, name: str) -> bool:
        """Whether logs of topic `name` are still being removed (the name is not free yet)."""
        ...


class _RemoveNow:
    """Logs held in memory go at once: nothing to wait for."""

    @staticmethod
    def remove(name: str, logs: Collection[PartitionLog]) -> None:
        for partition_log in logs:
            partition_log.delete()

    @staticmethod
    def removing(name: str) -> bool:
        return False


@dataclass
class NewPartitions:
    """New partitions of one topic (a new topic, or more of an existing one): checked, placed
    and reserved by the store's owner, their logs then made by `TopicStore.make` on any
    thread, recorded by `TopicStore.commit` or given up by `TopicStore.release`."""

    topic: Topic  # the new topic (no partitions yet), or the one growing (unchanged until commit)
    first: int  # the index of the first new partition
    count: int  # the topic's partition count once recorded
    replicas: Replicas | None  # the whole topic's replicas once recorded
    config: LogConfig
    logs: list[PartitionLog] = field(default_factory=list)

    @property
    def added(self) -> int:
        return self.count - self.first


class TopicStore:
    """The topics. Its owner, the broker's event loop (or whoever built it, with no loop), is
    the one thread that reads and changes them; other threads only make new logs (`make`)
    for partitions the owner reserved, which nobody sees before `commit` adopts them. Every
    change is written to the catalog first, then made in memory: a catalog that cannot be
    written leaves the topics as they were."""

    def __init__(
        self,
        new_log: NewLog,
        *,
        default_partitions: int = 1,
        auto_create: bool = True,
        broker_value: BrokerValue = DEFAULT_BROKER_VALUE,
        catalog: Catalog | None = None,
        placer: Placer | None = None,
        remover: Remover | None = None,
        max_partitions: int | None = None,
    ) -> None:
        self._new_log = new_log
        # The broker sets it once it knows its brokers (None: replicas are not recorded).
        self.placer = placer
        self.default_partitions = default_partitions
        self.auto_create_enabled = auto_create
        self.broker_value = broker_value
        # max.partitions: the most partitions all topics together may have (None: no cap).
        self.max_partitions = max_partitions
        self._catalog = catalog
        self._remover: Remover = remover or _RemoveNow()
        self._by_name: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}
        self._partition_count = 0
        # Names whose new partitions are being made (reserved, not yet committed).
        self._reserved: dict[str, NewPartitions] = {}
        # Each set of topic overrides resolved once until the broker values change
        # (`reconfigure`): a start opening 100 topics of the same overrides resolves them once.
        self._log_configs: dict[frozenset[tuple[str, str]], LogConfig] = {}

    def _save(self, changed: Iterable[Topic] = (), *, without: Collection[str] = ()) -> None:
        """Write the catalog as it will be with `changed` in (and the topics named `without`
        gone), before memory changes: StorageError (a full disk) leaves the topics as they were."""
        if self._catalog is None:
            return
        topics = {name: topic for name, topic in self._by_name.items() if name not in without}
        for topic in changed:
            topics[topic.name] = topic
        self._catalog.save(list(topics.values()))

    def _discard(self, name: str, logs: list[PartitionLog]) -> None:
        """Logs made for a change the catalog could not record."""
        if logs:
            self._remover.remove(name, logs)

    def log_config(self, overrides: Mapping[str, str]) -> LogConfig:
        key = frozenset(overrides.items())
        config = self._log_configs.get(key)
        if config is None:
            config = self._log_configs[key] = LogConfig.of_topic(overrides, self.broker_value)
        return config

    def _configure(self, topic: Topic, logs: list[PartitionLog]) -> list[PartitionLog]:
        """`logs` (of `topic`) given the topic's current configs."""
        config = self.log_config(topic.configs)
        for partition_log in logs:
            partition_log.configure(config)
        return logs

    def reconfigure(self) -> None:
        """Every log's config resolved anew: a broker config its topic defaults to changed."""
        self._log_configs.clear()
        for topic in self._by_name.values():
            self._configure(topic, topic.partitions)

    def restore(self, topic: Topic) -> None:
        """Adopt a topic read back from a catalog, its logs already open."""
        self._configure(topic, topic.partitions)
        self._by_name[topic.name] = topic
        self._by_id[topic.topic_id] = topic
        self._partition_count += len(topic.partitions)

    def __iter__(self) -> Iterator[Topic]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)

    @property
    def partition_count(self) -> int:
        """The partitions of every topic, internal ones included."""
        return self._partition_count

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
        if name in self._by_name or name in self._reserved:
            raise StorageError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        if self._remover.removing(name):  # ZooKeeper-era Kafka's answer while it deleted one
            raise StorageError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' is marked for deletion.")

    def check_new(
        self, name: str, num_partitions: int | None = None, configs: Mapping[str, str | None] | None = None
    ) -> int:
        """Validate a topic creation in Kafka's order; returns the partition count it would get."""
        self.check_name(name)
        check_configs(configs or {})
        count = self.new_topic_partitions(num_partitions)
        if count <= 0:
            raise StorageError(
                ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
            )
        self._check_room(count)
        return count

    def new_topic_partitions(self, num_partitions: int | None) -> int:
        """The partitions a new topic gets for a requested count (None or -1: num.partitions)."""
        if num_partitions is None or num_partitions == -1:
            return self.default_partitions
        return num_partitions

    def _check_room(self, added: int) -> None:
        """POLICY_VIOLATION when `added` more partitions would pass max.partitions (counting
        those being made for other requests)."""
        if self.max_partitions is None:
            return
        total = self._partition_count + sum(r.added for r in self._reserved.values())
        if total + added > self.max_partitions:
            raise StorageError(
                ErrorCode.POLICY_VIOLATION,
                f"Adding {added} partition(s) would bring this broker to {total + added} partitions, "
                f"over max.partitions={self.max_partitions}.",
            )

    # -- new partitions: reserve (owner), make (any thread), commit (owner) -------------

    def reserve_topic(
        self,
        name: str,
        num_partitions: int | None = None,
        configs: Mapping[str, str | None] | None = None,
        *,
        replication_factor: int | None = None,
        assignment: Replicas | None = None,
    ) -> NewPartitions:
        """A new topic checked and placed, its name taken until `commit` or `release`; its
        replicas from a manual `assignment` (one list per partition) or else placed with
        `replication_factor` copies (None: the broker's default)."""
        count = self.check_new(name, num_partitions, configs)
        replicas = self._replicas(name, count, replication_factor, assignment)
        overrides = {k: v for k, v in (configs or {}).items() if v is not None}
        topic = Topic(name, uuid.uuid4(), [], overrides, replicas)
        return self._reserve(NewPartitions(topic, 0, count, replicas, self.log_config(overrides)))

    def reserve_growth(self, name: str, count: int, assignment: Replicas | None = None) -> NewPartitions:
        """Topic `name` checked to grow to `count` partitions, the new ones on `assignment` or
        placed with as many copies as the topic's first partition has (Kafka's
        createPartitions); the topic keeps its partitions until `commit`."""
        topic = self.check_partition_count(name, count)
        current = len(topic.partitions)
        self._check_room(count - current)
        replicas = topic.replicas
        if replicas is not None:
            added_replicas = self._replicas(name, count - current, len(replicas[0]), assignment)
            replicas = [*replicas, *(added_replicas or [])]
        return self._reserve(NewPartitions(topic, current, count, replicas, self.log_config(topic.configs)))

    def _reserve(self, new: NewPartitions) -> NewPartitions:
        self._reserved[new.topic.name] = new
        return new

    def make(self, reserved: Iterable[NewPartitions]) -> None:
        """Make the logs of `reserved` partitions; on any thread (nothing here is shared yet).
        StorageError (a full disk) leaves none of them behind."""
        made: list[NewPartitions] = []
        try:
            for new in reserved:
                made.append(new)
                name, config = new.topic.name, new.config
                for index in range(new.first, new.count):
                    made_log = self._new_log(name, index)
                    made_log.configure(config)
                    new.logs.append(made_log)
                    if len(new.logs) % LOGS_PER_FREEZE == 0:
                        keep_out_of_collections()
        except StorageError:
            for new in made:
                for partition_log in new.logs:
                    partition_log.delete()
                new.logs.clear()
            raise

    def commit(self, reserved: list[NewPartitions]) -> None:
        """Record made partitions: one catalog write for all, then memory. A growth whose
        topic was deleted meanwhile is dropped. StorageError if the catalog cannot be
        written: nothing is recorded and the made logs are removed."""
        live = [new for new in reserved if new.first == 0 or self._by_name.get(new.topic.name) is new.topic]
        for new in reserved:
            if new not in live:
                self._discard(new.topic.name, new.logs)
        grown = [
            new.topic
            if new.first == 0
            else replace(new.topic, partitions=[*new.topic.partitions, *new.logs], replicas=new.replicas)
            for new in live
        ]
        for new in live:
            if new.first == 0:
                new.topic.partitions = new.logs
        try:
            self._save(grown)
        except StorageError:
            for new in live:
                self._discard(new.topic.name, new.logs)
                if new.first == 0:
                    new.topic.partitions = []
            raise
        finally:
            self.release(reserved)
        for new in live:
            topic = new.topic
            if new.first == 0:
                self._by_name[topic.name] = topic
                self._by_id[topic.topic_id] = topic
            else:
                topic.partitions.extend(new.logs)
            topic.replicas = new.replicas
            self._partition_count += new.added

    def release(self, reserved: Iterable[NewPartitions]) -> None:
        """Give up reservations (a validation, a failure, or after `commit`)."""
        for new in reserved:
            if self._reserved.get(new.topic.name) is new:
                del self._reserved[new.topic.name]

    def abandon(self, reserved: Iterable[NewPartitions]) -> None:
        """Give up reservations not committed, removing logs made for them (a no-op for
        those `commit` recorded or `make` already cleaned up)."""
        for new in reserved:
            if self._reserved.get(new.topic.name) is new:
                del self._reserved[new.topic.name]
                self._discard(new.topic.name, new.logs)
                new.logs = []

    # -- one change at a time, on the owner's thread ------------------------------------

    def create(
        self,
        name: str,
        num_partitions: int | None = None,
        configs: Mapping[str, str | None] | None = None,
        *,
        replication_factor: int | None = None,
        assignment: Replicas | None = None,
    ) -> Topic:
        """A new topic, made here and now (internal and auto-created topics, tools, tests)."""
        new = self.reserve_topic(
            name, num_partitions, configs, replication_factor=replication_factor, assignment=assignment
        )
        return self._make_and_commit(new)

    def _make_and_commit(self, new: NewPartitions) -> Topic:
        """`new`'s logs made and recorded here and now; its reservation given up on failure."""
        try:
            self.make([new])
        except StorageError:
            self.release([new])
            raise
        self.commit([new])
        return new.topic

    def _replicas(
        self, name: str, count: int, replication_factor: int | None, assignment: Replicas | None
    ) -> Replicas | None:
        if assignment is not None:
            return [list(replicas) for replicas in assignment]
        return None if self.placer is None else self.placer(name, count, replication_factor)

    def auto_create(self, name: str) -> Topic | None:
        """The topic, created with defaults if auto-creation is on and the name is legal and
        free (not being created or removed: the client retries until it is)."""
        topic = self._by_name.get(name)
        if topic is None and self.auto_create_enabled and invalid_topic_name(name) is None:
            try:
                topic = self.create(name)
            except StorageError as exc:
                if exc.code not in (ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.POLICY_VIOLATION):
                    raise
                return None
        return topic

    def delete(self, name: str) -> Topic:
        return self.delete_many([name])[0]

    def delete_many(self, names: list[str]) -> list[Topic]:
        """Topics `names` gone from the catalog (one write) and from memory; their logs are
        closed and removed afterwards (storage.removal), their names taken until then."""
        topics = []
        for name in names:
            topic = self._by_name.get(name)
            if topic is None:
                raise StorageError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {name!r}")
            topics.append(topic)
        self._save(without=set(names))
        for topic in topics:
            del self._by_name[topic.name]
            del self._by_id[topic.topic_id]
            self._partition_count -= len(topic.partitions)
            self._remover.remove(topic.name, topic.partitions)
        return topics

    def set_configs(self, name: str, overrides: Mapping[str, str]) -> Topic:
        """Replace topic `name`'s config overrides (validated by the caller)."""
        topic = self._by_name.get(name)
        if topic is None:
            raise StorageError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {name!r}")
        self._save([replace(topic, configs=dict(overrides))])
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
        if name in self._reserved:  # Kafka's controller would take one request after the other
            raise StorageError(
                ErrorCode.INVALID_PARTITIONS,
                f"Topic {name} is already growing to {self._reserved[name].count} partitions "
                "for another request; ask again once that one is answered.",
            )
        return topic

    def add_partitions(self, name: str, count: int, assignment: Replicas | None = None) -> Topic:
        """Grow topic `name` to `count` partitions here and now (see `reserve_growth`)."""
        return self._make_and_commit(self.reserve_growth(name, count, assignment))

    def set_replicas(self, name: str, replicas: Replicas) -> Topic:
        """Topic `name`'s partitions now have `replicas` (a completed reassignment)."""
        topic = self._by_name.get(name)
        if topic is None:
            raise StorageError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {name!r}")
        self._save([replace(topic, replicas=replicas)])
        topic.replicas = replicas
        return topic
