"""The registry's storage: the compacted `_schemas` topic, as Confluent's KafkaStore keeps it.

Reads: before every request the state catches up with the topic from the offset it last read
to the high watermark (at start, from the beginning), so it survives restarts and crashes as
the topic does, and records another writer appended (a Confluent registry pointed at the same
topic, a `kafka-console-producer`) are seen too. Writes: one batch through the partition
service Produce uses (shim.partitions: validated, then appended), fsynced unless the broker
runs with `--fsync never`, then applied by catching up: an operation is answered only once its
record is durable and read.
Writes are serialized by one lock, so two registrations cannot take the same id."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.record_codec import build_keyed_batch, decode_batches
from kafka_shim.shim.partitions.append import append
from kafka_shim.shim.partitions.errors import PartitionRefused
from kafka_shim.shim.partitions.validation import validated
from kafka_shim.shim.schema_registry.errors import invalid_schema, store_error
from kafka_shim.shim.schema_registry.state import RegistryState
from kafka_shim.storage.errors import StorageError

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.storage.log import PartitionLog

log = logging.getLogger("kafka_shim.schema_registry")

# Confluent's kafkastore.topic default and the topic configs it creates the topic with.
SCHEMAS_TOPIC = "_schemas"
TOPIC_CONFIGS = {"cleanup.policy": "compact"}
REPLICATION_FACTOR = 3  # Confluent's kafkastore.topic.replication.factor, capped by the brokers
READ_CHUNK_BYTES = 1 << 20

Record = tuple[bytes, bytes | None]


class SchemaStore:
    def __init__(self, broker: Broker, topic: str = SCHEMAS_TOPIC) -> None:
        self.broker = broker
        self.topic = topic
        self.state = RegistryState()
        self._topic_id: uuid.UUID | None = None
        self._next_offset = 0
        self._write_lock = anyio.Lock()

    def _partition(self, *, create: bool) -> PartitionLog | None:
        topics = self.broker.topics
        topic = topics.get(self.topic)
        if topic is None and create:
            try:
                topic = topics.create(self.topic, 1, TOPIC_CONFIGS, assignment=self._assignment())
            except StorageError as exc:
                raise store_error(
                    f"cannot create topic {self.topic}: {exc.message or exc.code.name}"
                ) from exc
            log.info("created the schemas topic %s", self.topic)
        if topic is None:
            self._forget()
            return None
        if topic.topic_id != self._topic_id:  # new, or deleted and created again: read it anew
            self._forget()
            self._topic_id = topic.topic_id
        self._check_led_here()
        return topic.partition(0)

    def _assignment(self) -> list[list[int]] | None:
        """A broker process (Broker.local_node) creates the topic led by itself, so the
        registry's reads and writes stay in its own log; one process places it as any topic."""
        node = self.broker.local_node
        if node is None:
            return None
        others = sorted(n for n in self.broker.cluster.nodes if n != node)
        return [[node, *others][:REPLICATION_FACTOR]]

    def _check_led_here(self) -> None:
        """With a process per broker the registry's process must lead partition 0: another's
        log is not here (a topic made before, by a client's auto-creation)."""
        node = self.broker.local_node
        leader = self.broker.cluster.leader(self.topic, 0)
        if node is not None and leader != node:
            message = (
                f"{self.topic} partition 0 is led by broker {leader}; the schema registry runs "
                f"in broker {node}'s process and can read and write it only where it leads it"
            )
            log.error("%s", message)
            raise store_error(message)

    def _forget(self) -> None:
        self.state = RegistryState()
        self._topic_id = None
        self._next_offset = 0

    def catch_up(self) -> RegistryState:
        """The state with every record the topic holds applied."""
        partition = self._partition(create=False)
        if partition is None:
            return self.state
        self._next_offset = max(self._next_offset, partition.log_start_offset)
        while self._next_offset < partition.high_watermark:
            try:
                data = partition.read(self._next_offset, READ_CHUNK_BYTES)
            except StorageError as exc:
                raise store_error(f"cannot read {self.topic}: {exc.message or exc.code.name}") from exc
            if not data:
                break
            for batch in decode_batches(data):
                if batch.header.is_control:
                    self._next_offset = batch.header.last_offset + 1
                    continue
                for record in batch.records:
                    if record.offset >= self._next_offset:
                        self.state.apply(record.key, record.value)
                        self._next_offset = record.offset + 1
                self._next_offset = max(self._next_offset, batch.header.last_offset + 1)
        return self.state

    @property
    def write_lock(self) -> anyio.Lock:
        """Held from an operation's decision to its record's write: see `write`."""
        return self._write_lock

    async def write(self, batch: Sequence[Record]) -> None:
        """Append `batch` (key, value or None for a tombstone) as one batch, wait until it is
        durable, and apply it. Call holding `write_lock`, having decided on a caught-up state."""
        partition = self._partition(create=True)
        topic = self.broker.topics.get(self.topic)
        assert partition is not None and topic is not None
        broker_value = self.broker.config.kafka_value
        records = build_keyed_batch(list(batch), 0, self.broker.clock()).data
        try:  # as a Produce's batch: validated (max.message.bytes...), then appended
            batches = validated(topic, 0, records, broker_value, legacy_allowed=False)
            append(topic, partition, batches, broker_value, self.broker.clock)
        except PartitionRefused as refused:
            if refused.code == ErrorCode.MESSAGE_TOO_LARGE:
                raise invalid_schema(f"too large for topic {self.topic}: {refused.message}") from refused
            raise store_error(
                f"cannot write {self.topic}: {refused.message or refused.code.name}"
            ) from refused
        except StorageError as exc:
            raise store_error(f"cannot write {self.topic}: {exc.message or exc.code.name}") from exc
        if self.broker.config.data_dir is not None and self.broker.config.fsync != "never":
            try:
                await anyio.to_thread.run_sync(partition.flush)
            except OSError as exc:
                raise store_error(f"cannot fsync {self.topic}: {exc}") from exc
        self.catch_up()
