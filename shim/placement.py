"""Replica placement checks of CreateTopics, CreatePartitions and auto-creation, in the order and
words of Kafka 3.9's controller (ReplicationControlManager.createTopic / createPartitions /
validateManualPartitionAssignment and StripedReplicaPlacer). `brokers` are the registered ones
(with --brokers N, every node, a stopped one included, as Kafka keeps it registered and fenced);
`running` the unfenced ones. A replication factor above the registered brokers is refused as
Kafka refuses it, on one broker as on N: a dev broker does not pretend to hold copies it has not."""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection, Sequence
from typing import Any

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


def new_topic_partitions(
    requested: Any, brokers: Collection[int], running: Collection[int], default_replication_factor: int
) -> int | None:
    """How many partitions a CreateTopics entry asks for (None: the broker's default), or the
    StorageError Kafka answers for its layout."""
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
        seen: set[int] = set()
        replication_factor = None
        for assignment in requested.assignments:
            if assignment.partition_index in seen:
                raise _invalid_assignment(
                    f"Found multiple manual partition assignments for partition {assignment.partition_index}"
                )
            seen.add(assignment.partition_index)
            check_replica_list(assignment.broker_ids, brokers, replication_factor)
            replication_factor = len(assignment.broker_ids)
            check_some_running(assignment.broker_ids, running, assignment.partition_index)
        if seen != set(range(len(seen))):
            raise StorageError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "partitions should be a consecutive 0-based integer sequence",
            )
        return len(seen)
    if requested.replication_factor < -1 or requested.replication_factor == 0:
        raise StorageError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "Replication factor must be larger than 0, or -1 to use the default value.",
        )
    if requested.num_partitions < -1 or requested.num_partitions == 0:
        raise StorageError(
            ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
        )
    check_replication_factor(
        default_replication_factor if requested.replication_factor == -1 else requested.replication_factor,
        brokers,
    )
    return None if requested.num_partitions == -1 else requested.num_partitions  # type: ignore[no-any-return]


def check_replication_factor(replication_factor: int, brokers: Collection[int]) -> None:
    """Kafka's placer, as createTopic words its refusal: no more replicas than registered
    brokers (tooling that asks for 3, as on a production cluster, gets Kafka's refusal from a
    one-broker one)."""
    if replication_factor > len(brokers):
        raise StorageError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"Unable to replicate the partition {replication_factor} time(s): The target replication "
            f"factor of {replication_factor} cannot be reached because only {len(brokers)} broker(s) "
            "are registered.",
        )


def auto_create(
    topics: TopicStore, name: str, brokers: Collection[int], replication_factor: int
) -> Topic | None:
    """Kafka's AutoTopicCreationManager: the topic with num.partitions and
    default.replication.factor, or None if it cannot be created. The controller refuses a
    factor above the registered brokers; Kafka only logs that (WARN, "Auto topic creation
    failed for ...") and its Metadata answer stays UNKNOWN_TOPIC_OR_PARTITION."""
    if topics.get(name) is None and topics.auto_create_enabled:
        try:
            check_replication_factor(replication_factor, brokers)
        except StorageError as exc:
            _warn_once(name, exc.message)
            return None
    return topics.auto_create(name)


@functools.lru_cache(maxsize=256)
def _warn_once(name: str, message: str) -> None:
    """One line per topic and reason, not one per Metadata retry (Kafka logs each attempt)."""
    log.warning(
        "Auto topic creation failed for %s with error 'INVALID_REPLICATION_FACTOR': %s.", name, message
    )
