"""confluent-kafka (librdkafka) driver: `python -m compat.clients.confluent '<command json>'`."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    NewTopic,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from compat.clients.admin_steps import run_admin
from compat.clients.runner import AssignmentTracker, close_requested, run
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
    share_acknowledgement,
)


def security(command: Command) -> dict[str, Any]:
    """How to connect: librdkafka takes `command.security` by its own names (the Java
    client's PEM keystore aside)."""
    return {k: v for k, v in command.security.items() if k != "ssl.keystore.location"}


def connection(command: Command) -> dict[str, Any]:
    """Where and how to connect."""
    return {"bootstrap.servers": command.bootstrap, "client.id": command.client_id, **security(command)}


def group_consumer(command: Command) -> Consumer:
    config: dict[str, Any] = {
        **connection(command),
        "group.id": command.group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "isolation.level": command.isolation,
    }
    if command.group_protocol == "consumer":
        # KIP-848: the broker assigns and times sessions; librdkafka refuses the classic settings.
        config.update({"group.protocol": "consumer", "group.remote.assignor": command.assignor})
    else:
        config.update(
            {
                "session.timeout.ms": command.session_timeout_ms,
                "partition.assignment.strategy": command.assignor,
            }
        )
    if command.group_instance_id:
        config["group.instance.id"] = command.group_instance_id
    return Consumer(config)


def share_member(command: Command) -> None:
    """The ``share_member`` op with librdkafka's share consumer (confluent-kafka 2.16+)."""
    import confluent_kafka  # ShareConsumer and AcknowledgeType are new in 2.16

    types = {
        "accept": confluent_kafka.AcknowledgeType.ACCEPT,
        "release": confluent_kafka.AcknowledgeType.RELEASE,
    }
    stop = close_requested()
    consumer = confluent_kafka.ShareConsumer(
        {**connection(command), "group.id": command.group, "share.acknowledgement.mode": "explicit"}
    )
    consumer.subscribe([command.topic])
    while not stop.is_set():
        for message in consumer.poll(0.2) or []:
            if message.error() is not None:
                continue
            value = (message.value() or b"").decode()
            count = message.delivery_count() or 0
            ack = share_acknowledgement(value, count)
            consumer.acknowledge(message, types[ack])
            emit("share_delivery", value=value, count=count, ack=ack)
        consumer.commit_sync()
    consumer.close()
    emit("closed")


class ConfluentOps:
    share_member = staticmethod(share_member)

    def create_user(self, command: Command) -> None:
        admin = AdminClient(connection(command))
        mechanism = ScramMechanism[command.mechanism.replace("-", "_")]
        credential = ScramCredentialInfo(mechanism, 4096)
        upsert = UserScramCredentialUpsertion(command.user, credential, command.password.encode())
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(timeout=command.timeout_s)
        emit("user_created", user=command.user)

    def create_topic(self, command: Command) -> None:
        admin = AdminClient(connection(command))
        futures = admin.create_topics([NewTopic(command.topic, num_partitions=command.partitions)])
        try:
            futures[command.topic].result(timeout=command.timeout_s)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
        emit("created", topic=command.topic)

    def produce(self, command: Command) -> None:
        errors: list[KafkaError] = []
        producer = Producer(connection(command) | {"error_cb": errors.append})
        failures: list[str] = []

        def delivered(error: KafkaError | None, _message: Any) -> None:
            if error is not None:
                failures.append(str(error))

        for i in range(command.count):
            producer.produce(
                command.topic,
                key=message_key(i, command.key_count),
                value=message_value(i),
                on_delivery=delivered,
            )
            producer.poll(0)
        deadline = time.monotonic() + command.timeout_s
        remaining = producer.flush(0)
        while remaining and time.monotonic() < deadline:
            remaining = producer.flush(0.2)
            refused = [error for error in errors if error.code() == KafkaError._AUTHENTICATION]
            if refused:  # as an application would: a refused login does not get better by retrying
                raise KafkaException(refused[0])
        if failures or remaining:
            raise RuntimeError(f"{len(failures)} failed, {remaining} undelivered: {failures[:3]}")
        emit("produced", count=command.count)

    def consume(self, command: Command) -> None:
        consumer = group_consumer(command)
        emit("subscribing", group=command.group)
        consumer.subscribe([command.topic])
        received = 0
        deadline = time.monotonic() + command.timeout_s
        while received < command.count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                raise KafkaException(message.error())
            received += 1
            emit_message(message.partition(), message.offset(), message.key(), message.value())
        committed = consumer.commit(asynchronous=False)
        emit("committed", offsets={tp.partition: tp.offset for tp in committed or []})
        consumer.close()

    def offsets(self, command: Command) -> None:
        consumer = Consumer(connection(command) | {"group.id": command.group})
        partitions = [TopicPartition(command.topic, p) for p in range(command.partitions)]
        committed = consumer.committed(partitions, timeout=command.timeout_s)
        latest = {
            tp.partition: consumer.get_watermark_offsets(tp, timeout=command.timeout_s)[1]
            for tp in partitions
        }
        consumer.close()
        emit(
            "offsets",
            # librdkafka reports "no committed offset" as OFFSET_INVALID (-1001).
            committed={tp.partition: tp.offset for tp in committed if tp.offset >= 0},
            latest=latest,
        )

    def member(self, command: Command, stop: threading.Event) -> None:
        tracker = AssignmentTracker()
        consumer = group_consumer(command)
        # Cooperative and KIP-848 rebalances hand over increments; eager ones replace the whole set.
        cooperative = command.assignor == "cooperative-sticky" or command.group_protocol == "consumer"

        def on_assign(_consumer: Consumer, partitions: list[TopicPartition]) -> None:
            owned = (tp.partition for tp in partitions)
            if cooperative:
                tracker.add(owned)
            else:
                tracker.replace(owned)

        def on_revoke(_consumer: Consumer, partitions: list[TopicPartition]) -> None:
            tracker.remove(tp.partition for tp in partitions)

        emit("subscribing", group=command.group)
        # librdkafka takes a subscription starting with ^ as a regular expression.
        subscription = f"^{command.topic_pattern}" if command.topic_pattern else command.topic
        consumer.subscribe([subscription], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
        while not stop.is_set():
            message = consumer.poll(0.1)
            if message is not None and message.error():
                raise KafkaException(message.error())
        consumer.close()
        emit("closed")

    def admin(self, command: Command) -> Any:
        return run_admin(ConfluentAdmin(command), command)

    def transact(self, command: Command) -> None:
        consumer = group_consumer(replace(command, isolation="read_committed"))
        producer = Producer(
            {"bootstrap.servers": command.bootstrap, "transactional.id": command.transactional_id}
        )
        producer.init_transactions(command.timeout_s)
        consumer.subscribe([command.topic])
        committed = aborted = transactions = 0
        deadline = time.monotonic() + command.timeout_s
        while committed < command.count and time.monotonic() < deadline:
            messages = consumer.consume(TRANSACTION_RECORDS, 0.2)
            for message in messages:
                if message.error():
                    raise KafkaException(message.error())
            if not messages:
                continue
            transactions += 1
            for commit in (False, True) if transactions % ABORT_EVERY == 0 else (True,):
                producer.begin_transaction()
                for message in messages:
                    producer.produce(command.output, key=message.key(), value=message.value())
                if commit:
                    positions = consumer.position(consumer.assignment())
                    metadata = consumer.consumer_group_metadata()
                    producer.send_offsets_to_transaction(positions, metadata, command.timeout_s)
                    producer.commit_transaction(command.timeout_s)
                    committed += len(messages)
                else:
                    producer.flush(command.timeout_s)  # an abort purges what was not sent yet
                    producer.abort_transaction(command.timeout_s)
                    aborted += len(messages)
                emit("transaction", outcome="commit" if commit else "abort", records=len(messages))
        emit("transacted", committed=committed, aborted=aborted)
        consumer.close()

    def fence(self, command: Command) -> None:
        before, zombie_value, after, late = FENCE_VALUES
        config = {"bootstrap.servers": command.bootstrap, "transactional.id": command.transactional_id}
        zombie = Producer(config)
        zombie.init_transactions(command.timeout_s)
        zombie.begin_transaction()
        zombie.produce(command.output, value=before)
        zombie.commit_transaction(command.timeout_s)
        zombie.begin_transaction()
        zombie.produce(command.output, value=zombie_value)
        zombie.flush(command.timeout_s)
        successor = Producer(config)
        successor.init_transactions(command.timeout_s)
        successor.begin_transaction()
        successor.produce(command.output, value=after)
        successor.commit_transaction(command.timeout_s)
        try:
            zombie.produce(command.output, value=late)
            zombie.commit_transaction(command.timeout_s)
        except KafkaException as error:
            emit("fenced", error=f"{type(error).__name__}: {error}")
            return
        raise AssertionError("the fenced producer committed")


class ConfluentAdmin:
    def __init__(self, command: Command) -> None:
        self.admin = AdminClient(connection(command))
        self.timeout_s = command.timeout_s

    def wait_all(self, futures: dict[Any, Any]) -> list[Any]:
        return [future.result(timeout=self.timeout_s) for future in futures.values()]

    def create_topics(self, names: list[str], partitions: int) -> None:
        self.wait_all(self.admin.create_topics([NewTopic(name, num_partitions=partitions) for name in names]))

    def delete_topics(self, names: list[str]) -> None:
        self.wait_all(self.admin.delete_topics(names))

    def list_topics(self) -> list[str]:
        return list(self.admin.list_topics(timeout=self.timeout_s).topics)

    def alter_offsets(self, group: str, topic: str, offsets: dict[int, int]) -> None:
        request = ConsumerGroupTopicPartitions(
            group, [TopicPartition(topic, p, o) for p, o in offsets.items()]
        )
        for result in self.wait_all(self.admin.alter_consumer_group_offsets([request])):
            for tp in result.topic_partitions:
                if tp.error is not None:
                    raise KafkaException(tp.error)

    def list_offsets(self, group: str, topic: str) -> dict[int, int]:
        (result,) = self.wait_all(
            self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
        )
        return {tp.partition: tp.offset for tp in result.topic_partitions if tp.topic == topic}

    def list_groups(self) -> list[str]:
        listed = self.admin.list_consumer_groups().result(timeout=self.timeout_s)
        return [group.group_id for group in listed.valid]

    def describe_groups(self, groups: list[str]) -> dict[str, tuple[str, int]]:
        described = self.wait_all(self.admin.describe_consumer_groups(groups))
        return {info.group_id: (group_state(info.state.name), len(info.members)) for info in described}

    def delete_groups(self, groups: list[str]) -> None:
        self.wait_all(self.admin.delete_consumer_groups(groups))

    def error_name(self, exc: BaseException) -> str | None:
        return exc.args[0].name() if isinstance(exc, KafkaException) and exc.args else None

    def close(self) -> None:
        """AdminClient has no close: its handle goes with the process."""


if __name__ == "__main__":
    run(ConfluentOps())
