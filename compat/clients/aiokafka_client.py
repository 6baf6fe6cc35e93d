"""aiokafka driver: `python -m compat.clients.aiokafka_client '<command json>'`.

(Not named `aiokafka.py`: that would shadow the library it imports.)
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.errors import TopicAlreadyExistsError

from compat.clients.runner import AssignmentTracker, run
from compat.schema import Command, decoded, emit, message_key, message_value

ASSIGNORS: dict[str, Any] = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}


def group_consumer(command: Command) -> AIOKafkaConsumer:
    if command.assignor not in ASSIGNORS:
        raise ValueError(f"aiokafka driver supports assignors {sorted(ASSIGNORS)}")
    return AIOKafkaConsumer(
        bootstrap_servers=command.bootstrap,
        client_id=command.client_id,
        group_id=command.group,
        group_instance_id=command.group_instance_id,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=command.session_timeout_ms,
        partition_assignment_strategy=(ASSIGNORS[command.assignor],),
    )


def generation_of(consumer: AIOKafkaConsumer) -> int:
    # aiokafka keeps the joined generation on its (private) coordinator.
    return int(consumer._coordinator.generation)


class AiokafkaOps:
    async def create_topic(self, command: Command) -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=command.bootstrap, client_id=command.client_id)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(command.topic, command.partitions, 1)])
        except TopicAlreadyExistsError:
            pass
        finally:
            await admin.close()
        emit("created", topic=command.topic)

    async def produce(self, command: Command) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=command.bootstrap, client_id=command.client_id)
        await producer.start()
        try:
            deliveries = [
                await producer.send(
                    command.topic,
                    key=message_key(i, command.key_count).encode(),
                    value=message_value(i).encode(),
                )
                for i in range(command.count)
            ]
            await asyncio.wait_for(asyncio.gather(*deliveries), command.timeout_s)
        finally:
            await producer.stop()
        emit("produced", count=len(deliveries))

    async def consume(self, command: Command) -> None:
        consumer = group_consumer(command)
        emit("subscribing", group=command.group)
        consumer.subscribe([command.topic])
        await consumer.start()
        try:
            received = 0
            deadline = time.monotonic() + command.timeout_s
            while received < command.count and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=200)
                for records in batches.values():
                    for record in records:
                        received += 1
                        emit(
                            "message",
                            partition=record.partition,
                            offset=record.offset,
                            key=decoded(record.key),
                            value=decoded(record.value),
                        )
            await consumer.commit()
            positions = {tp.partition: await consumer.position(tp) for tp in consumer.assignment()}
            emit("committed", offsets=positions)
        finally:
            await consumer.stop()

    async def offsets(self, command: Command) -> None:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=command.bootstrap, group_id=command.group, enable_auto_commit=False
        )
        await consumer.start()
        try:
            partitions = [TopicPartition(command.topic, p) for p in range(command.partitions)]
            committed = {tp.partition: await consumer.committed(tp) for tp in partitions}
            latest = await consumer.end_offsets(partitions)
        finally:
            await consumer.stop()
        emit(
            "offsets",
            committed={p: offset for p, offset in committed.items() if offset is not None},
            latest={tp.partition: offset for tp, offset in latest.items()},
        )

    async def member(self, command: Command, stop: threading.Event) -> None:
        consumer = group_consumer(command)
        tracker = AssignmentTracker()

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                tracker.remove(tp.partition for tp in revoked)

            def on_partitions_assigned(self, assigned: Any) -> None:
                tracker.replace((tp.partition for tp in assigned), generation_of(consumer))

        emit("subscribing", group=command.group)
        consumer.subscribe([command.topic], listener=Listener())
        await consumer.start()
        try:
            while not stop.is_set():
                await consumer.getmany(timeout_ms=100)
        finally:
            await consumer.stop()
        emit("closed")


if __name__ == "__main__":
    run(AiokafkaOps())
