"""aiokafka driver: `python -m compat.clients.aiokafka_client '<command json>'`.

(Not named `aiokafka.py`: that would shadow the library it imports.)
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from compat.clients.admin_steps import Unsupported, run_admin
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

ASSIGNORS: dict[str, Any] = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}


def group_consumer(command: Command) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(**group_consumer_options(command, ASSIGNORS, "aiokafka"))


def generation_of(consumer: AIOKafkaConsumer) -> int:
    # aiokafka keeps the joined generation on its (private) coordinator.
    return int(consumer._coordinator.generation)


class AiokafkaOps:
    async def create_topic(self, command: Command) -> None:
        admin = AIOKafkaAdminClient(
            **security_options(command), bootstrap_servers=command.bootstrap, client_id=command.client_id
        )
        await admin.start()
        try:
            await admin.create_topics([NewTopic(command.topic, command.partitions, 1)])
        except TopicAlreadyExistsError:
            pass
        finally:
            await admin.close()
        emit("created", topic=command.topic)

    async def produce(self, command: Command) -> None:
        producer = AIOKafkaProducer(
            **security_options(command), bootstrap_servers=command.bootstrap, client_id=command.client_id
        )
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
                        emit_message(record.partition, record.offset, record.key, record.value)
            await consumer.commit()
            positions = {tp.partition: await consumer.position(tp) for tp in consumer.assignment()}
            emit("committed", offsets=positions)
        finally:
            await consumer.stop()

    async def offsets(self, command: Command) -> None:
        consumer = AIOKafkaConsumer(
            **security_options(command),
            bootstrap_servers=command.bootstrap,
            group_id=command.group,
            enable_auto_commit=False,
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

    async def admin(self, command: Command) -> None:
        api = AiokafkaAdmin(command)
        await api.admin.start()
        await run_admin(api, command)

    async def transact(self, command: Command) -> None:
        consumer = group_consumer(replace(command, isolation="read_committed"))
        producer = AIOKafkaProducer(
            bootstrap_servers=command.bootstrap, transactional_id=command.transactional_id
        )
        consumer.subscribe([command.topic])
        await consumer.start()
        await producer.start()  # InitProducerId with the transactional id
        try:
            committed = aborted = transactions = 0
            deadline = time.monotonic() + command.timeout_s
            while committed < command.count and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=200, max_records=TRANSACTION_RECORDS)
                records = [r for batch in batches.values() for r in batch]
                if not records:
                    continue
                transactions += 1
                for commit in (False, True) if transactions % ABORT_EVERY == 0 else (True,):
                    await producer.begin_transaction()
                    sent = [
                        await producer.send(command.output, key=record.key, value=record.value)
                        for record in records
                    ]
                    if commit:
                        positions = {tp: await consumer.position(tp) for tp in consumer.assignment()}
                        await producer.send_offsets_to_transaction(positions, command.group)
                        await producer.commit_transaction()
                        committed += len(records)
                    else:
                        await asyncio.gather(*sent)  # the aborted copies reach the log first
                        await producer.abort_transaction()
                        aborted += len(records)
                    emit("transaction", outcome="commit" if commit else "abort", records=len(records))
            emit("transacted", committed=committed, aborted=aborted)
        finally:
            await producer.stop()
            await consumer.stop()

    async def fence(self, command: Command) -> None:
        before, zombie_value, after, late = (value.encode() for value in FENCE_VALUES)
        config = {"bootstrap_servers": command.bootstrap, "transactional_id": command.transactional_id}
        zombie, successor = AIOKafkaProducer(**config), AIOKafkaProducer(**config)
        await zombie.start()
        try:
            async with zombie.transaction():
                await zombie.send_and_wait(command.output, value=before)
            await zombie.begin_transaction()
            await zombie.send_and_wait(command.output, value=zombie_value)
            await successor.start()  # InitProducerId with the same transactional id fences the zombie
            async with successor.transaction():
                await successor.send_and_wait(command.output, value=after)
            try:
                await zombie.send_and_wait(command.output, value=late)
                await zombie.commit_transaction()
            except KafkaError as error:
                emit("fenced", error=f"{type(error).__name__}: {error}")
                return
            raise AssertionError("the fenced producer committed")
        finally:
            await successor.stop()
            await zombie.stop()


class AiokafkaAdmin:
    def __init__(self, command: Command) -> None:
        self.admin = AIOKafkaAdminClient(
            **security_options(command), bootstrap_servers=command.bootstrap, client_id=command.client_id
        )

    async def create_topics(self, names: list[str], partitions: int) -> None:
        await self.admin.create_topics([NewTopic(name, partitions, 1) for name in names])

    async def delete_topics(self, names: list[str]) -> None:
        await self.admin.delete_topics(names)

    async def list_topics(self) -> list[str]:
        return list(await self.admin.list_topics())

    def alter_offsets(self, group: str, topic: str, offsets: dict[int, int]) -> None:
        raise Unsupported("AIOKafkaAdminClient 0.14 has no alter consumer group offsets")

    async def list_offsets(self, group: str, topic: str) -> dict[int, int]:
        offsets = await self.admin.list_consumer_group_offsets(group)
        return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == topic}

    async def list_groups(self) -> list[str]:
        return [str(group[0]) for group in await self.admin.list_consumer_groups()]

    async def describe_groups(self, groups: list[str]) -> dict[str, tuple[str, int]]:
        described: dict[str, tuple[str, int]] = {}
        # One group per request: aiokafka 0.14 decodes the DescribeGroups v3 response with the
        # v2 schema (no per-group authorized_operations), which misreads every group after the
        # first; a single group's trailing field is harmlessly left unread.
        responses = [
            response for group in groups for response in await self.admin.describe_consumer_groups([group])
        ]
        for response in responses:
            # Raw DescribeGroups response rows: (error_code, group, state, protocol_type, protocol, members)
            for _error, name, state, _type, _protocol, members, *_ in response.groups:
                described[name] = (group_state(state), len(members))
        return described

    def delete_groups(self, groups: list[str]) -> None:
        raise Unsupported("AIOKafkaAdminClient 0.14 has no delete consumer groups")

    def error_name(self, exc: BaseException) -> str | None:
        return str(exc.message) if isinstance(exc, KafkaError) and getattr(exc, "errno", None) else None

    async def close(self) -> None:
        await self.admin.close()


if __name__ == "__main__":
    run(AiokafkaOps())
