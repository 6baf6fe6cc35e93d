"""Replica placement checks of CreateTopics and CreatePartitions, in the order and words of Kafka
3.9's controller (ReplicationControlManager.createTopic / validateManualPartitionAssignment and
StripedReplicaPlacer). Every partition lives on this one broker, so a layout either names only it,
once per partition, or is refused as Kafka refuses it on a one-broker cluster."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage.errors import StorageError


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


def new_topic_partitions(
    requested: Any, brokers: Collection[int], default_replication_factor: int
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
    """Kafka's placer: no more replicas than registered brokers (tooling that asks for 3, as on
    a production cluster, gets Kafka's refusal from a one-broker one)."""
    if replication_factor > len(brokers):
        raise StorageError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"Unable to replicate the partition {replication_factor} time(s): The target replication "
            f"factor of {replication_factor} cannot be reached because only {len(brokers)} broker(s) "
            "are registered.",
        )
