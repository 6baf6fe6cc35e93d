"""Replica placement of CreateTopics, CreatePartitions and auto-creation, and its checks, in the
order and words of Kafka 3.9's controller (ReplicationControlManager.createTopic /
createPartitions / validateManualPartitionAssignment and StripedReplicaPlacer). `brokers` are
the registered ones (with --brokers N, every node, a stopped one included, as Kafka keeps it
registered and fenced); `running` the unfenced ones. A replication factor above the registered
brokers is refused as Kafka refuses it, on one broker as on N: a dev broker does not pretend to
hold copies it has not."""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.topics import Topic, TopicStore

log = logging.getLogger(__name__)


def _invalid_assignment(message: str) -> StorageError:
    return StorageError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, message)


def check_replica_list(
    replicas: Sequence[int], brokers: Collection[int], replication_factor: int | None
) -> None:
    """One partition's manual replica list: not empty, registered brokers, each once, and as many
    replicas as the partitions before it (`replication_factor`, None for the first)."""
    if not replicas:
        raise StorageError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes an empty replica list.",
        )
    previous = None
    for broker in sorted(replicas):
        if broker not in brokers:
            raise _invalid_assignment(
                f"The manual partition assignment includes broker {broker}, but no such broker is registered."
            )
        if broker == previous:
            raise _invalid_assignment(
                f"The manual partition assignment includes the broker {broker} more than once."
            )
        previous = broker
    if replication_factor is not None and len(replicas) != replication_factor:
        raise _invalid_assignment(
            f"The manual partition assignment includes a partition with {len(replicas)} replica(s), but this "
            f"is not consistent with previous partitions, which have {replication_factor} replica(s)."
        )


def check_some_running(replicas: Sequence[int], running: Collection[int], partition: int) -> None:
    """A manual assignment must name at least one unfenced broker for each partition."""
    if not any(broker in running for broker in replicas):
        raise _invalid_assignment(
            f"All brokers specified in the manual partition assignment for partition {partition} "
            "are fenced or in controlled shutdown."
        )


@dataclass(frozen=True)
class NewLayout:
    """What a CreateTopics entry asks for: a partition count (None: the broker's default), a
    replication factor, and a manual assignment (each partition's replicas) or None."""

    partitions: int | None
    replication_factor: int
    assignment: list[list[int]] | None


def new_topic_layout(
    requested: Any, brokers: Collection[int], running: Collection[int], default_replication_factor: int
) -> NewLayout:
    """A CreateTopics entry's layout, or the StorageError Kafka answers for it."""
    if requested.assignments:
        if requested.replication_factor != -1:
            raise StorageError(
                ErrorCode.INVALID_REQUEST,
                "A manual partition assignment was specified, but replication factor was not set to -1.",
            )
        if requested.num_partitions != -1:
            raise StorageError(
                ErrorCode.INVALID_REQUEST,
                "A manual partition assignment was specified, but numPartitions was not set to -1.",
            )
        assigned: dict[int, list[int]] = {}
        replication_factor = None
        for assignment in requested.assignments:
            if assignment.partition_index in assigned:
                raise _invalid_assignment(
                    f"Found multiple manual partition assignments for partition {assignment.partition_index}"
                )
            assigned[assignment.partition_index] = list(assignment.broker_ids)
            check_replica_list(assignment.broker_ids, brokers, replication_factor)
            replication_factor = len(assignment.broker_ids)
            check_some_running(assignment.broker_ids, running, assignment.partition_index)
        if set(assigned) != set(range(len(assigned))):
            raise StorageError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "partitions should be a consecutive 0-based integer sequence",
            )
        assert replication_factor is not None
        return NewLayout(len(assigned), replication_factor, [assigned[i] for i in range(len(assigned))])
    if requested.replication_factor < -1 or requested.replication_factor == 0:
        raise StorageError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "Replication factor must be larger than 0, or -1 to use the default value.",
        )
    if requested.num_partitions < -1 or requested.num_partitions == 0:
        raise StorageError(
            ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
        )
    replication_factor = (
        default_replication_factor if requested.replication_factor == -1 else requested.replication_factor
    )
    check_replication_factor(replication_factor, brokers, running)
    partitions = None if requested.num_partitions == -1 else requested.num_partitions
    return NewLayout(partitions, replication_factor, None)


def check_replication_factor(
    replication_factor: int, brokers: Collection[int], running: Collection[int]
) -> None:
    """The placer's refusals as Kafka's createTopic words them (tooling that asks for 3, as on a
    production cluster, gets Kafka's refusal from a one-broker broker)."""
    try:
        check_placeable(replication_factor, len(brokers), len(running))
    except StorageError as exc:
        raise StorageError(
            exc.code, f"Unable to replicate the partition {replication_factor} time(s): {exc.message}"
        ) from None


def auto_create(topics: TopicStore, name: str) -> Topic | None:
    """Kafka's AutoTopicCreationManager: the topic with num.partitions and
    default.replication.factor, or None if it cannot be created. The controller refuses a
    factor above the registered brokers; Kafka only logs that (WARN, "Auto topic creation
    failed for ...") and its Metadata answer stays UNKNOWN_TOPIC_OR_PARTITION."""
    try:
        return topics.auto_create(name)
    except StorageError as exc:
        if exc.code != ErrorCode.INVALID_REPLICATION_FACTOR:
            raise
        _warn_once(name, exc.message or "")
        return None


@functools.lru_cache(maxsize=256)
def _warn_once(name: str, message: str) -> None:
    """One line per topic and reason, not one per Metadata retry (Kafka logs each attempt)."""
    log.warning(
        "Auto topic creation failed for %s with error 'INVALID_REPLICATION_FACTOR': %s.", name, message
    )


# -- automatic placement ------------------------------------------------------------------------


class Draws(Protocol):
    """The random choices a placement makes (random.Random has both)."""

    def randrange(self, start: int, /) -> int: ...

    def shuffle(self, x: list[Any]) -> None: ...


@dataclass(frozen=True)
class UsableBroker:
    """A registered broker as the placer sees it: a stopped one is fenced."""

    node_id: int
    rack: str | None
    fenced: bool


class _Turns:
    """Brokers handed out in turn from an offset: each new round (partition) starts one further
    on and may hand each broker out once."""

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.offset = self.taken = self.round = 0

    def next(self, round_: int) -> int | None:
        if not self.ids:
            return None
        if round_ != self.round:
            self.round, self.taken = round_, 0
            self.offset = (self.offset + 1) % len(self.ids)
        if self.taken >= len(self.ids):
            return None
        self.taken += 1
        return self.ids[(self.taken - 1 + self.offset) % len(self.ids)]


class _Rack:
    def __init__(self) -> None:
        self.fenced = _Turns()
        self.unfenced = _Turns()

    def next(self, round_: int) -> int | None:
        """An unfenced broker while there are any this round, else a fenced one."""
        found = self.unfenced.next(round_)
        return found if found is not None else self.fenced.next(round_)


class StripedPlacer:
    """Kafka's StripedReplicaPlacer (metadata/placement): racks in sorted order (no rack first),
    each partition's leader the next unfenced broker from a rack offset that moves one rack per
    partition, its followers one from each following rack in turn (unfenced before fenced);
    within a rack brokers in turn from an offset that moves one per partition. Racks and brokers
    are reshuffled once as many partitions as unfenced brokers have been placed. The random
    offsets and shuffles come from `draws` (Kafka: a Random; the racks' draws in sorted order
    where Kafka's come in its HashMap's)."""

    def __init__(self, brokers: Sequence[UsableBroker], draws: Draws) -> None:
        self._draws = draws
        racks: dict[str | None, _Rack] = {}
        for broker in brokers:
            rack = racks.setdefault(broker.rack, _Rack())
            (rack.fenced if broker.fenced else rack.unfenced).ids.append(broker.node_id)
        # In sorted order, the order the racks' draws are made in; _names is reshuffled.
        self._racks = {
            name: racks[name] for name in sorted(racks, key=lambda name: (name is not None, name or ""))
        }
        self._names = list(self._racks)
        for rack in self._racks.values():
            for turns in (rack.fenced, rack.unfenced):
                turns.ids.sort()
                if turns.ids:
                    turns.offset = draws.randrange(len(turns.ids))
        self.total = len(brokers)
        self.unfenced = sum(not broker.fenced for broker in brokers)
        self._offset = draws.randrange(len(self._names)) if self._names else 0
        self._round = 0

    def place(self, replication_factor: int) -> list[int]:
        """One partition's replicas, the leader first."""
        check_placeable(replication_factor, self.total, self.unfenced)
        if self._round == self.unfenced and self.unfenced > 1:
            self._draws.shuffle(self._names)
            for rack_brokers in self._racks.values():
                self._draws.shuffle(rack_brokers.fenced.ids)
                self._draws.shuffle(rack_brokers.unfenced.ids)
            self._round = 0
        if self._offset == len(self._names):
            self._offset = 0
        leader_rack = self._offset
        while (leader := self._racks[self._names[leader_rack]].unfenced.next(self._round)) is None:
            leader_rack = (leader_rack + 1) % len(self._names)
        replicas = [leader]
        rack = self._offset
        skip: int | None = leader_rack  # the leader's rack gives no follower before the others
        while len(replicas) < replication_factor:
            found = None
            if rack == skip:
                skip = None
            else:
                found = self._racks[self._names[rack]].next(self._round)
            rack = (rack + 1) % len(self._names)
            if found is not None:
                replicas.append(found)
        self._round += 1
        self._offset += 1
        return replicas


def check_placeable(replication_factor: int, registered: int, unfenced: int) -> None:
    """The placer's refusals, in its order and words (INVALID_REPLICATION_FACTOR)."""
    if replication_factor <= 0:
        raise StorageError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"Invalid replication factor {replication_factor}: the replication factor must be positive.",
        )
    if unfenced == 0:
        raise StorageError(ErrorCode.INVALID_REPLICATION_FACTOR, "All brokers are currently fenced.")
    if replication_factor > registered:
        raise StorageError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"The target replication factor of {replication_factor} cannot be reached because only "
            f"{registered} broker(s) are registered.",
        )
