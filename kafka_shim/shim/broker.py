"""The broker's state, shared by all handlers: config, topics, groups, clock."""

from __future__ import annotations

import base64
import logging
import uuid
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.config.dynamic import BrokerValues, DynamicBrokerConfigs
from kafka_shim.shim.config.group_configs import GroupConfigs
from kafka_shim.shim.controller.features import TRANSACTION_VERSION
from kafka_shim.shim.controller.kept import open_feature_levels
from kafka_shim.shim.coordinator import GroupCoordinator
from kafka_shim.shim.coordinator.consumer import Result
from kafka_shim.shim.coordinator.consumer.classic import MigratingCoordinator
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.share.config import ShareGroupConfig
from kafka_shim.shim.groups import COORDINATOR_RETRY_BACKOFF_MS, GroupService, coordinator_error
from kafka_shim.shim.groups.journal import GroupJournal
from kafka_shim.shim.partitions.logs import open_logs
from kafka_shim.shim.quotas.kept import open_client_quotas
from kafka_shim.shim.request_observer import RequestObserver
from kafka_shim.shim.request_stats import RequestStats
from kafka_shim.shim.security.kept import open_authorizer, open_credentials, open_delegation_tokens
from kafka_shim.shim.served_versions import OldVersionClients, served_versions
from kafka_shim.shim.share.partitions import SharePartitions
from kafka_shim.shim.share.service import ShareService
from kafka_shim.shim.testbroker.clock import BrokerClock
from kafka_shim.shim.testbroker.cluster import GROUP_KEY, Cluster
from kafka_shim.shim.testbroker.faults import FaultRules, load_fault_rules
from kafka_shim.shim.testbroker.recording import RequestRecorder
from kafka_shim.shim.timer_failures import TimerFailures
from kafka_shim.shim.timers import BrokerTimers
from kafka_shim.shim.transactions.coordinator import TransactionConfig
from kafka_shim.shim.transactions.markers import COORDINATOR_EPOCH, write_markers
from kafka_shim.shim.transactions.service import TransactionService
from kafka_shim.storage.durability import wall_clock_ms
from kafka_shim.storage.log import AppendHook
from kafka_shim.storage.memory import MEMORY_LOG_DIR
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC
from kafka_shim.storage.producer_state import ProducerIdAllocator
from kafka_shim.storage.share_state_log import SHARE_STATE_TOPIC
from kafka_shim.storage.transaction_log import TRANSACTION_TOPIC, TransactionLog

if TYPE_CHECKING:  # imported where built: the Kafka listener answers before they load
    from kafka_shim.shim.partitions.fetch_sessions import FetchSessionCache

T = TypeVar("T")

log = logging.getLogger(__name__)

# Re-exported: the transaction and share handlers map a failed append with it, and tests
# wait out the retry of an unwritten deadline.
__all__ = ["COORDINATOR_RETRY_BACKOFF_MS", "Broker", "coordinator_error"]


def new_cluster_id() -> str:
    # Kafka's form: a random UUID in 22 characters of URL-safe base64.
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")


class Broker:
    def __init__(self, config: BrokerConfig, clock: Callable[[], int] | BrokerClock = wall_clock_ms) -> None:
        # The emulated release's defaults apply to what the command line did not set.
        config = config.with_release_defaults().with_cluster_defaults()
        self.config = config
        # The API versions served, of the emulated release's (--emulate), or of every release.
        self.served = served_versions(config.emulate)
        # Without --emulate: the clients using versions Kafka 4 removed (KIP-896), for the console.
        self.old_version_clients = OldVersionClients()
        # The one `now` of every coordinator, retention and expiry (shim.testbroker.clock): tests advance it.
        self.broker_clock = clock if isinstance(clock, BrokerClock) else BrokerClock(clock)
        self.clock = clock = self.broker_clock.now
        # The test broker's fault rules (shim.testbroker.faults), checked by the server before each handler,
        # and its request recording (shim.testbroker.recording), None unless asked for.
        self.faults = FaultRules()
        # Timer work that raised, logged once per kind (BrokerTimers.tick never raises).
        self.timer_failures = TimerFailures()
        if config.fault_rules_file is not None:
            load_fault_rules(self.faults, config.fault_rules_file)
        self.recorder = (
            RequestRecorder(config.record_requests, config.trace_file)
            if config.record_requests or config.trace_file is not None
            else None
        )
        self.node_id = config.node_id
        # What to bind and advertise (ConfigError if the listener configs disagree).
        self.listeners = config.listener_endpoints()
        # The first listener's advertised address; the server sets it once it is bound (an
        # advertised port 0 means the bound port, an empty host this machine's name).
        first = self.listeners[0]
        self.advertised_host, self.advertised_port = first.advertised_address(first.bind.port)
        # What the console and /metrics show beyond the state itself: request counts and
        # latencies, and each group's history (fed by the server and the group deadlines).
        self.request_stats = RequestStats()
        self.group_journal = GroupJournal()
        # The server replaces this with a wake-up for Fetch long polls.
        self.on_append: AppendHook = lambda log: None
        # The topic-partition logs, in memory or on disk; each append wakes Fetch long polls
        # through on_append, looked up at call time because the server replaces it.
        self.topics, self.storage = open_logs(
            config, clock, lambda log: self.on_append(log), BrokerValues(lambda: self.config)
        )
        data_dir = self.storage.data_dir if self.storage else None
        # Dynamic broker configs (shim.config.dynamic) over the configuration it started with.
        self.static_config = config
        self.dynamic_configs = DynamicBrokerConfigs(data_dir, self.node_id)
        self.config = self.dynamic_configs.effective(config)
        self.topics.max_partitions = self.config.max_partitions
        self.topics.reconfigure()
        # SASL users' SCRAM credentials and delegation tokens (KIP-48), kept beside the topics.
        self.credentials = open_credentials(config)
        self.delegation_tokens = open_delegation_tokens(config)
        self.cluster_id = data_dir.cluster_id(new_cluster_id) if data_dir else new_cluster_id()
        # Seeded from the clock so ids from before an in-memory restart,
        # still held by running producers, are not handed out again.
        self.producer_ids = ProducerIdAllocator(next_id=clock())
        # KIP-932 share groups: membership beside the other group types (its records in
        # __consumer_offsets too), each share partition's delivery state in
        # __share_group_state, and the members' share sessions. A group's own share.*
        # configs (IncrementalAlterConfigs on the GROUP resource) override the broker's.
        self.group_configs = GroupConfigs(data_dir, ShareGroupConfig.from_broker(config))
        # Every group request goes through the group service (shim.groups), which picks the
        # group's coordinator and writes its records to __consumer_offsets before its answer.
        self.group_service = GroupService(
            self.config,
            self.topics,
            clock,
            self.group_configs.share_config_of,
            lambda key, now: self.shares.lock_expired(key, now),
            self.group_journal,
            lambda: self.share_partitions,
        )
        # Counts each answered request and notes a member's in its group's journal (the
        # dispatch step's account step).
        self.observe_request = RequestObserver(
            self.request_stats, self.group_journal, self.group_service.shape, self.topic_name, clock
        ).observe
        # The ACLs (None without authorizer.class.name: every request is allowed, as in
        # Kafka), and client quotas kept beside them with the byte rates held to them.
        self.authorizer = open_authorizer(self.config, data_dir)
        self.client_quotas = open_client_quotas(config, data_dir)
        # KIP-932 share groups' delivery state and sessions.
        self.shares = ShareService(
            self.config,
            self.topics,
            self.group_configs.share_config_of,
            self.group_service.set_deadline,
            lambda log: self.on_append(log),
            clock,
        )
        # Finalized feature levels: UpdateFeatures switches what the broker serves.
        self.features = open_feature_levels(self.config, data_dir, clock(), self._features_changed)
        # The transaction coordinator likewise, over __transaction_state; transactions found
        # preparing to commit or abort get their markers before the broker serves anyone.
        self._load_transactions()
        # The emulated brokers (--brokers): who leads each partition, who coordinates what.
        self.cluster = Cluster(
            [config.node_id + i for i in range(config.brokers)],
            config.racks,
            self.topics,
            self._coordinator_partitions,
        )
        self.topics.placer = self._place
        self.timers = BrokerTimers(self, in_memory=self.storage is None)

    def _place(self, name: str, count: int, replication_factor: int | None) -> list[list[int]] | None:
        """New partitions' replicas (TopicStore.placer): default.replication.factor copies
        unless the request asks for a number."""
        if replication_factor is None:
            replication_factor = self.config.default_replication_factor
        return self.cluster.place(name, count, replication_factor)

    def _load_transactions(self) -> None:
        """The transaction coordinator, replayed from __transaction_state."""
        transaction_version = self.features.level(TRANSACTION_VERSION)
        self.transaction_log = TransactionLog(
            self.topics, self.config.transaction_state_log_num_partitions, transaction_version
        )
        self.transactions = TransactionService(
            transaction_config(self.config)._replace(transaction_version=transaction_version),
            self.producer_ids.allocate,
            self.transaction_log,
            self.clock,
            lambda markers, now: write_markers(
                self,
                markers.producer_id,
                markers.producer_epoch,
                COORDINATOR_EPOCH,
                markers.commit,
                markers.partitions,
                now,
            ),
            self.timer_failures.failed,
        )
        self.transactions.load(self.transaction_log.replay(), self.clock())

    def internal_topic_deleted(self, name: str) -> None:
        """A client deleted an internal topic, as Kafka lets one with DELETE on it. Kafka's
        coordinators then resign its partitions (BrokerMetadataPublisher.updateCoordinator):
        their groups, share-partition states or transactions are forgotten, joins and syncs
        held for a group are answered NOT_COORDINATOR, and the topic is made anew when a
        record next needs it."""
        if name == OFFSETS_TOPIC:
            self.group_service.unload(self.config)
        elif name == TRANSACTION_TOPIC:
            self._load_transactions()
        elif name == SHARE_STATE_TOPIC:
            self.shares.state_topic_deleted()

    @cached_property
    def fetch_sessions(self) -> FetchSessionCache:
        """Incremental fetch sessions (KIP-227), evicted only to make room for new ones; made
        by the first Fetch, not before the listener answers."""
        from kafka_shim.shim.partitions.fetch_sessions import FetchSessionCache

        return FetchSessionCache(self.static_config.max_incremental_fetch_session_cache_slots)

    def _features_changed(self, levels: Mapping[str, int]) -> None:
        """Keep the new levels and serve the new transaction.version: the coordinator's own
        aborts and the __transaction_state value version follow it (ApiVersions, and with it
        the Produce / EndTxn / TxnOffsetCommit versions clients use, reads the levels)."""
        if self.storage is not None:
            self.storage.data_dir.write_features(dict(levels))
        level = levels[TRANSACTION_VERSION]
        self.transactions.config = self.transactions.config._replace(transaction_version=level)
        self.transaction_log.transaction_version = level

    # What handlers, the console and the transaction markers reach most (dozens of places).

    @property
    def groups(self) -> GroupCoordinator:
        return self.group_service.classic

    @property
    def consumer_groups(self) -> MigratingCoordinator:
        return self.group_service.consumer

    @property
    def share_partitions(self) -> SharePartitions:
        return self.shares.partitions

    def apply(self, outcome: Outcome[T] | Result[T]) -> T:
        return self.group_service.effects.apply(outcome)

    def set_broker_configs(self, scope: str, overrides: dict[str, str], validate_only: bool) -> None:
        """`scope`'s dynamic broker configs replaced (AlterError if the result is not valid):
        kept in the data directory, then in force, every log's config resolved anew."""
        config = self.dynamic_configs.effective(
            self.static_config, self.dynamic_configs.with_scope(scope, overrides)
        )
        if validate_only:
            return
        self.dynamic_configs.replace(scope, overrides)
        self.config = config
        self.topics.reconfigure()

    def _coordinator_partitions(self, key_type: int) -> int:
        """The partition count of the internal topic placing a key type's coordinators."""
        if key_type == GROUP_KEY:
            return self.group_service.offsets_log.partitions
        return self.transaction_log.partitions

    @property
    def log_dir(self) -> str:
        """The one log directory's name (DescribeLogDirs, AlterReplicaLogDirs): the data
        directory's absolute path; MEMORY_LOG_DIR for an in-memory broker."""
        return MEMORY_LOG_DIR if self.storage is None else self.storage.log_dir

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self.topics.get_by_id(topic_id)
        return None if topic is None else topic.name

    def close(self) -> None:
        """Flush and release storage (a clean shutdown)."""
        if self.storage is not None:
            self.storage.close()
        if self.recorder is not None:
            self.recorder.close()


def transaction_config(config: BrokerConfig) -> TransactionConfig:
    return TransactionConfig(
        max_timeout_ms=config.transaction_max_timeout_ms,
        id_expiration_ms=config.transactional_id_expiration_ms,
        max_ids=config.max_transactional_ids,
        expiration_check_interval_ms=config.transaction_id_expiration_check_interval_ms,
        transaction_version=config.transaction_version,
        init_keeps_start_ms=config.release.init_keeps_transaction_start,
    )
