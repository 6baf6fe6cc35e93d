"""kafka-python driver: `python -m compat.clients.kafka_python '<command json>'`."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

import kafka.errors
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.errors import TopicAlreadyExistsError
from kafka.structs import OffsetAndMetadata

from compat.clients.admin_steps import run_admin
from compat.clients.runner import AssignmentTracker, group_consumer_options, run, security_options
from compat.schema import (
    ABORT_EVERY,
    FENCE_VALUES,
    TRANSACTION_RECORDS,
    Command,
    emit,
    emit_message,
    group_state,
    message_key,
    message_value,
)

# A `member` only holds its partitions, and a swarm runs hundreds in one process: each
# kafka-python consumer is two Python threads (its own and its network selector's), and with
# poll() every 100 ms and empty fetches held 500 ms (the defaults) 60 idle members took 0.64
# of a core here, so 300 starved a 2-core machine and stretched a swarm past its deadline.
# Polling each second and letting the broker hold an empty fetch 5 s: 0.23 for 60.
MEMBER_POLL_MS = 1000
MEMBER_FETCH_MAX_WAIT_MS = 5000

ASSIGNORS: dict[str, Any] = {
    "range": RangePartitionAssignor,
    "roundrobin": RoundRobinPartitionAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
}


def group_consumer(command: Command, **options: Any) -> KafkaConsumer:
    return KafkaConsumer(**group_consumer_options(command, ASSIGNORS, "kafka-python"), **options)


def subscribe(consumer: KafkaConsumer, topic: str, listener: ConsumerRebalanceListener | None = None) -> None:
    """Subscribe, then learn the topic's partitions before the first poll.

    kafka-python 3.0.12 never collects a join round that completes outside poll(); a
    leader whose rejoin was asked for by a metadata change alone is stranded by it
    (tests/compat/test_kafka_python_join.py reproduces both cases). A new group's first
    join, made before the topic's metadata arrived, is such a case: the leader assigns
    nothing, then rejoins when the partitions show up. With the metadata known first,
    that rejoin never happens. An application can do the same.
    """
    consumer.subscribe([topic], listener=listener)
    consumer.partitions_for_topic(topic)


def generation_of(consumer: KafkaConsumer) -> int:
    # kafka-python has no public accessor for the generation the member joined.
    return int(consumer._coordinator._generation.generation_id)


class KafkaPythonOps:
    def create_topic(self, command: Command) -> None:
        admin = KafkaAdminClient(
            **security_options(command), bootstrap_servers=command.bootstrap, client_id=command.client_id
        )
        try:
            admin.create_topics([NewTopic(command.topic, command.partitions, 1)])
        except TopicAlreadyExistsError:
            pass
        finally:
            admin.close()
        emit("created", topic=command.topic)

    def produce(self, command: Command) -> None:
        producer = KafkaProducer(
            **security_options(command),
            bootstrap_servers=command.bootstrap,
            client_id=command.client_id,
            bootstrap_timeout_ms=int(command.timeout_s * 1000),  # else 30 s, whatever the command says
        )
        futures = [
            producer.send(
                command.topic,
                key=message_key(i, command.key_count).encode(),
                value=message_value(i).encode(),
            )
            for i in range(command.count)
        ]
        producer.flush(timeout=command.timeout_s)
        for future in futures:
            future.get(timeout=command.timeout_s)  # raises the delivery error, if any
        producer.close()
        emit("produced", count=len(futures))

    def consume(self, command: Command) -> None:
        consumer = group_consumer(command)
        emit("subscribing", group=command.group)
        subscribe(consumer, command.topic)
        received = 0
        deadline = time.monotonic() + command.timeout_s
        while received < command.count and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=200).values():
                for record in records:
                    received += 1
                    emit_message(record.partition, record.offset, record.key, record.value)
        consumer.commit()
        emit("committed", offsets={tp.partition: consumer.position(tp) for tp in consumer.assignment()})
        consumer.close()

    def offsets(self, command: Command) -> None:
        consumer = KafkaConsumer(
            **security_options(command),
            bootstrap_servers=command.bootstrap,
            group_id=command.group,
            enable_auto_commit=False,
        )
        partitions = [TopicPartition(command.topic, p) for p in range(command.partitions)]
        committed = {tp.partition: consumer.committed(tp) for tp in partitions}
        latest = consumer.end_offsets(partitions)
        consumer.close()
        emit(
            "offsets",
            committed={p: offset for p, offset in committed.items() if offset is not None},
            latest={tp.partition: offset for tp, offset in latest.items()},
        )

    def member(self, command: Command, stop: threading.Event) -> None:
        consumer = group_consumer(command, fetch_max_wait_ms=MEMBER_FETCH_MAX_WAIT_MS)
        tracker = AssignmentTracker()

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                tracker.remove(tp.partition for tp in revoked)

            def on_partitions_assigned(self, assigned: Any) -> None:
                # Cooperative rebalances hand over increments; eager ones the whole set.
                owned = (tp.partition for tp in assigned)
                if command.assignor == "cooperative-sticky":
                    tracker.add(owned, generation_of(consumer))
                else:
                    tracker.replace(owned, generation_of(consumer))

        emit("subscribing", group=command.group)
        subscribe(consumer, command.topic, Listener())
        while not stop.is_set():
            consumer.poll(timeout_ms=MEMBER_POLL_MS)
        consumer.close()
        emit("closed")

    def admin(self, command: Command) -> Any:
        return run_admin(KafkaPythonAdmin(command), command)

    def transact(self, command: Command) -> None:
        consumer = group_consumer(replace(command, isolation="read_committed"))
        producer = KafkaProducer(
            bootstrap_servers=command.bootstrap, transactional_id=command.transactional_id
        )
        producer.init_transactions()
        subscribe(consumer, command.topic)
        committed = aborted = transactions = 0
        deadline = time.monotonic() + command.timeout_s
        while committed < command.count and time.monotonic() < deadline:
            records = [r for batch in consumer.poll(200, TRANSACTION_RECORDS).values() for r in batch]
            if not records:
                continue
            transactions += 1
            for commit in (False, True) if transactions % ABORT_EVERY == 0 else (True,):
                producer.begin_transaction()
                for record in records:
                    producer.send(command.output, key=record.key, value=record.value)
                if commit:
                    positions = {
                        tp: OffsetAndMetadata(consumer.position(tp), "", -1) for tp in consumer.assignment()
                    }
                    producer.send_offsets_to_transaction(positions, consumer.group_metadata())
                    producer.commit_transaction()
                    committed += len(records)
                else:
                    producer.flush()  # an abort drops what was not sent yet: the copies must reach the log
                    producer.abort_transaction()
                    aborted += len(records)
                emit("transaction", outcome="commit" if commit else "abort", records=len(records))
        emit("transacted", committed=committed, aborted=aborted)
        producer.close()
        consumer.close(autocommit=False)

    def fence(self, command: Command) -> None:
        before, zombie_value, after, late = (value.encode() for value in FENCE_VALUES)
        config = {"bootstrap_servers": command.bootstrap, "transactional_id": command.transactional_id}
        zombie = KafkaProducer(**config)
        zombie.init_transactions()
        zombie.begin_transaction()
        zombie.send(command.output, value=before)
        zombie.commit_transaction()
        zombie.begin_transaction()
        zombie.send(command.output, value=zombie_value)
        zombie.flush()
        successor = KafkaProducer(**config)
        successor.init_transactions()
        successor.begin_transaction()
        successor.send(command.output, value=after)
        successor.commit_transaction()
        successor.close()
        try:
            zombie.send(command.output, value=late)
            zombie.commit_transaction()
        except kafka.errors.KafkaError as error:
            emit("fenced", error=f"{type(error).__name__}: {error}")
            return
        finally:
            zombie.close(timeout=5)
        raise AssertionError("the fenced producer committed")


def raise_named(error_name: str) -> None:
    """kafka-python's group admin calls return error class names: raise the class."""
    if error_name not in ("OK", "NoError"):
        raise getattr(kafka.errors, error_name)()


class KafkaPythonAdmin:
    def __init__(self, command: Command) -> None:
        self.admin = KafkaAdminClient(
            **security_options(command), bootstrap_servers=command.bootstrap, client_id=command.client_id
        )

    def create_topics(self, names: list[str], partitions: int) -> None:
        self.admin.create_topics([NewTopic(name, partitions, 1) for name in names])

    def delete_topics(self, names: list[str]) -> None:
        self.admin.delete_topics(names)

    def list_topics(self) -> list[str]:
        return list(self.admin.list_topics())

    def alter_offsets(self, group: str, topic: str, offsets: dict[int, int]) -> None:
        errors = self.admin.alter_group_offsets(
            group, {TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()}
        )
        for error in errors.values():
            raise_named(error.__name__)

    def list_offsets(self, group: str, topic: str) -> dict[int, int]:
        offsets = self.admin.list_group_offsets({group: None}).get(group, {})
        return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == topic}

    def list_groups(self) -> list[str]:
        return [group["group_id"] for group in self.admin.list_groups()]

    def describe_groups(self, groups: list[str]) -> dict[str, tuple[str, int]]:
        described = self.admin.describe_groups(groups)
        return {
            name: (group_state(info["group_state"]), len(info["members"])) for name, info in described.items()
        }

    def delete_groups(self, groups: list[str]) -> None:
        for error_name in self.admin.delete_groups(groups).values():
            raise_named(error_name)

    def error_name(self, exc: BaseException) -> str | None:
        return exc.message if isinstance(exc, kafka.errors.BrokerResponseError) else None

    def close(self) -> None:
        self.admin.close()


if __name__ == "__main__":
    run(KafkaPythonOps())
