"""The broker's state, shared by all handlers: config, topics, groups, clock."""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Callable

from kafka_shim.shim.config import BrokerConfig
from kafka_shim.shim.coordinator import CoordinatorConfig, GroupCoordinator
from kafka_shim.shim.security.scram_store import CredentialStore
from kafka_shim.storage.disk_store import DiskStore
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy
from kafka_shim.storage.log import AppendHook
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.offsets_log import OffsetsLog
from kafka_shim.storage.producer_state import ProducerIdAllocator
from kafka_shim.storage.topics import TopicStore


def new_cluster_id() -> str:
    # Kafka's form: a random UUID in 22 characters of URL-safe base64.
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class Broker:
    def __init__(self, config: BrokerConfig, clock: Callable[[], int] = wall_clock_ms) -> None:
        self.config = config
        self.clock = clock
        self.node_id = config.node_id
        # What to bind and advertise (ConfigError if the listener configs disagree).
        self.listeners = config.listener_endpoints()
        # The first listener's advertised address; the server sets it once it is bound (an
        # advertised port 0 means the bound port, an empty host this machine's name).
        first = self.listeners[0]
        self.advertised_host, self.advertised_port = first.advertised_address(first.bind.port)
        # The server replaces this with a wake-up for Fetch long polls.
        self.on_append: AppendHook = lambda log: None
        # Filled in by the storage and coordinator layers:
        # Topic-partition logs; every append wakes Fetch long polls through
        # the hook, looked up at call time because the server replaces it.
        self.storage: DiskStore | None = None
        if config.data_dir is None:
            self.topics = TopicStore(
                lambda topic, partition: MemoryLog(lambda log: self.on_append(log)),
                default_partitions=config.num_partitions,
                auto_create=config.auto_create_topics,
                broker_value=config.known_value,
            )
        else:
            # StorageStartupError (locked, corrupt) propagates: the CLI reports it.
            self.storage = DiskStore(
                config.data_dir,
                disk_options(config, clock),
                on_append=lambda log: self.on_append(log),
                broker_value=config.known_value,
                default_partitions=config.num_partitions,
                auto_create=config.auto_create_topics,
            )
            self.topics = self.storage.topics
        # SASL users: SCRAM credentials kept beside the topics (in memory for --memory);
        # --user sets theirs anew at every start.
        self.credentials = CredentialStore(config.data_dir)
        for name, password in config.users:
            self.credentials.set_password(name, password)
        self.cluster_id = (
            self.storage.data_dir.cluster_id(new_cluster_id) if self.storage else new_cluster_id()
        )
        # Seeded from the clock so ids from before an in-memory restart,
        # still held by running producers, are not handed out again.
        self.producer_ids = ProducerIdAllocator(next_id=clock())
        self.groups = GroupCoordinator(CoordinatorConfig.from_broker(config))
        # The coordinator's records go to __consumer_offsets (appended before the
        # call that made them answers); start-up replays them: one write and one recovery path.
        self.offsets_log = OffsetsLog(self.topics, config.offsets_topic_num_partitions)
        self.groups.load(self.offsets_log.replay(), clock())
        self.groups.on_records = lambda: self.offsets_log.append(self.groups.take_records(), self.clock())

    def close(self) -> None:
        """Flush and release storage (a clean shutdown)."""
        if self.storage is not None:
            self.storage.close()


def disk_options(config: BrokerConfig, clock: Callable[[], int]) -> DiskOptions:
    return DiskOptions(
        fsync=FsyncPolicy(config.fsync),
        fsync_interval_ms=config.log_flush_interval_ms,
        retention_check_interval_ms=config.log_retention_check_interval_ms,
        truncate_corrupt=config.truncate_corrupt,
        clock=clock,
    )
