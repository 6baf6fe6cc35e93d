"""The broker: the composition root. It builds every service from a BrokerConfig and holds the
references handlers, the console and the server reach them by; each service owns its state and
behaviour in its room (shim.groups, shim.share, shim.transactions, shim.partitions, shim.security,
shim.quotas, shim.config, shim.controller, shim.testbroker, shim.timers). It knows no handler,
view or network module (tests/test_layers.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.config.dynamic import BrokerValues, DynamicBrokerConfigs
from kafka_shim.shim.config.group_configs import GroupConfigs
from kafka_shim.shim.controller.features import TRANSACTION_VERSION
from kafka_shim.shim.controller.kept import open_feature_levels
from kafka_shim.shim.coordinator.share.config import ShareGroupConfig
from kafka_shim.shim.coordinator_loading import Coordinators
from kafka_shim.shim.groups.journal import GroupJournal
from kafka_shim.shim.partitions.logs import open_logs
from kafka_shim.shim.quotas.kept import open_client_quotas
from kafka_shim.shim.request_observer import RequestObserver
from kafka_shim.shim.request_stats import RequestStats
from kafka_shim.shim.security.kept import open_authorizer, open_credentials, open_delegation_tokens
from kafka_shim.shim.served_versions import OldVersionClients, served_versions
from kafka_shim.shim.testbroker.clock import BrokerClock
from kafka_shim.shim.testbroker.cluster import Cluster
from kafka_shim.shim.testbroker.faults import FaultRules, load_fault_rules
from kafka_shim.shim.testbroker.recording import RequestRecorder
from kafka_shim.shim.timer_failures import TimerFailures
from kafka_shim.shim.timers import BrokerTimers
from kafka_shim.storage.data_dir import DataDir, new_cluster_id
from kafka_shim.storage.durability import wall_clock_ms
from kafka_shim.storage.log import AppendHook
from kafka_shim.storage.memory import MEMORY_LOG_DIR
from kafka_shim.storage.producer_state import ProducerIdAllocator

if TYPE_CHECKING:  # imported where built: the Kafka listener answers before they load
    from kafka_shim.shim.coordinator.consumer.classic import MigratingCoordinator
    from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
    from kafka_shim.shim.groups.service import GroupService
    from kafka_shim.shim.partitions.fetch_sessions import FetchSessionCache
    from kafka_shim.shim.share.partitions import SharePartitions
    from kafka_shim.shim.share.service import ShareService
    from kafka_shim.shim.transactions.pending_markers import PendingMarkers
    from kafka_shim.shim.transactions.service import TransactionService
    from kafka_shim.storage.transaction_log import TransactionLog


class Broker:
    # A broker process of --process-per-broker sets it before the transaction coordinator
    # loads: the markers of partitions other processes lead wait there for their sender
    # (shim.processes.marker_sender). None: every marker is written here.
    markers_elsewhere: PendingMarkers | None = None
    # A broker process of --process-per-broker: its node id. What it writes as a client would
    # (the schema registry's `_schemas`) it writes only where it leads. None: every node's
    # partitions are here.
    local_node: int | None = None

    def __init__(
        self,
        config: BrokerConfig,
        clock: Callable[[], int] | BrokerClock = wall_clock_ms,
        metadata_dir: Path | None = None,
    ) -> None:
        # The emulated release's defaults apply to what the command line did not set.
        config = config.with_release_defaults().with_cluster_defaults()
        self.config = self.static_config = config
        # The one `now` of every coordinator, retention and expiry (shim.testbroker.clock): tests advance it.
        self.broker_clock = clock if isinstance(clock, BrokerClock) else BrokerClock(clock)
        self.clock = self.broker_clock.now
        self._build_front(config)
        self._open_kept_state(config, metadata_dir)
        self._build_services()

    def _build_front(self, config: BrokerConfig) -> None:
        """What the server and the test broker's surfaces use around each request."""
        # The API versions served, of the emulated release's (--emulate), or of every release;
        # without --emulate, the clients using versions Kafka 4 removed (KIP-896), for the console.
        self.served = served_versions(config.emulate)
        self.old_version_clients = OldVersionClients()
        # The test broker's fault rules, checked before each handler, and its request recording
        # (None unless asked for); timer work that raised, logged once per kind.
        self.faults = FaultRules()
        if config.fault_rules_file is not None:
            load_fault_rules(self.faults, config.fault_rules_file)
        self.recorder = (
            RequestRecorder(config.record_requests, config.trace_file)
            if config.record_requests or config.trace_file is not None
            else None
        )
        self.timer_failures = TimerFailures()
        self.node_id = config.node_id
        # What to bind and advertise (ConfigError if the listener configs disagree). The first
        # listener's advertised address; the server sets it once it is bound (an advertised
        # port 0 means the bound port, an empty host this machine's name).
        self.listeners = config.listener_endpoints()
        first = self.listeners[0]
        self.advertised_host, self.advertised_port = first.advertised_address(first.bind.port)
        # What the console and /metrics show beyond the state: request counts and latencies,
        # each group's history.
        self.request_stats = RequestStats()
        self.group_journal = GroupJournal()
        # The server replaces this with a wake-up for Fetch long polls.
        self.on_append: AppendHook = lambda log: None

    def _open_kept_state(self, config: BrokerConfig, metadata_dir: Path | None) -> None:
        """The logs, and what the broker keeps beside them (in memory for --memory). The
        cluster's metadata (ACLs, client quotas, SCRAM credentials, delegation tokens, feature
        levels) is kept in the data directory, or in `metadata_dir`: with a process per broker
        the controller's, which every process reads and writes (shim.processes.cluster_metadata),
        as Kafka's brokers follow the controller's metadata log; the process that writes it
        first sets --user's credentials there, not this one."""
        # Each append wakes Fetch long polls through on_append, looked up at call time because
        # the server replaces it; topic configs default to the broker configs in force.
        self.topics, self.storage = open_logs(
            config, self.clock, lambda log: self.on_append(log), BrokerValues(lambda: self.config)
        )
        data_dir = self.storage.data_dir if self.storage else None
        self.metadata_dir = data_dir if metadata_dir is None else DataDir(metadata_dir)
        metadata_path = None if self.metadata_dir is None else self.metadata_dir.path
        # Dynamic broker configs (shim.config.dynamic) over the configuration it started with.
        self.dynamic_configs = DynamicBrokerConfigs(data_dir, self.node_id)
        self.config = self.dynamic_configs.effective(config)
        self.topics.max_partitions = self.config.max_partitions
        self.topics.reconfigure()
        self.credentials = open_credentials(config, metadata_path, set_users=metadata_dir is None)
        self.delegation_tokens = open_delegation_tokens(config, metadata_path)
        self.cluster_id = data_dir.cluster_id(new_cluster_id) if data_dir else new_cluster_id()
        # Seeded from the clock so ids from before an in-memory restart, still held by running
        # producers, are not handed out again.
        self.producer_ids = ProducerIdAllocator(next_id=self.clock())
        # A group's own configs (its share.* values override the broker's).
        self.group_configs = GroupConfigs(data_dir, ShareGroupConfig.from_broker(config))
        self.authorizer = open_authorizer(self.config, self.metadata_dir)
        self.client_quotas = open_client_quotas(config, self.metadata_dir)
        # Finalized feature levels: UpdateFeatures switches what the broker serves.
        self.features = open_feature_levels(
            self.config, self.metadata_dir, self.clock(), self._features_changed
        )

    def _build_services(self) -> None:
        """The coordinators' services over the internal topics, and who leads what."""
        config, clock = self.config, self.clock
        # The group service, the share-group service and the transaction coordinator: loaded
        # on first use or once the listener has answered (shim.coordinator_loading).
        self.coordinators = Coordinators(self)
        self.observe_request = RequestObserver(
            self.request_stats,
            self.group_journal,
            lambda group_id: self.group_service.shape(group_id),
            self.topic_name,
            clock,
        ).observe
        # The emulated brokers (--brokers): who leads each partition, who coordinates what.
        self.cluster = Cluster(
            [config.node_id + i for i in range(config.brokers)],
            config.racks,
            self.topics,
            lambda key_type: (
                (
                    self.group_service.offsets_log if key_type == GROUP_KEY_TYPE else self.transaction_log
                ).partitions
            ),
        )
        self.topics.placer = lambda name, count, factor: self.cluster.place(
            name, count, self.config.default_replication_factor if factor is None else factor
        )
        self.timers = BrokerTimers(self, in_memory=self.storage is None)

    @property
    def group_service(self) -> GroupService:
        return self.coordinators.group_service()

    @property
    def shares(self) -> ShareService:
        return self.coordinators.shares()

    @property
    def transactions(self) -> TransactionService:
        return self.coordinators.transactions()[1]

    @property
    def transaction_log(self) -> TransactionLog:
        return self.coordinators.transactions()[0]

    def internal_topic_deleted(self, name: str) -> None:
        """A client deleted an internal topic, as Kafka lets one with DELETE on it. Kafka's
        coordinators then resign its partitions (BrokerMetadataPublisher.updateCoordinator):
        their groups, share-partition states or transactions are forgotten, joins and syncs
        held for a group are answered NOT_COORDINATOR, and the topic is made anew when a
        record next needs it."""
        self.coordinators.internal_topic_deleted(name)

    def _features_changed(self, levels: Mapping[str, int]) -> None:
        """Keep the new levels and serve the new transaction.version: the coordinator's own
        aborts and the __transaction_state value version follow it (ApiVersions, and with it
        the Produce / EndTxn / TxnOffsetCommit versions clients use, reads the levels)."""
        if self.metadata_dir is not None:
            self.metadata_dir.write_features(dict(levels))
        self.coordinators.transaction_version_changed(levels[TRANSACTION_VERSION])

    def follow_features(self, finalized: Mapping[str, int], epoch: int) -> None:
        """Levels another broker process finalized (shim.processes.cluster_metadata), served
        as if UpdateFeatures had changed them here."""
        self.features.replace(finalized, epoch)
        self.coordinators.transaction_version_changed(self.features.level(TRANSACTION_VERSION))

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

    @cached_property
    def fetch_sessions(self) -> FetchSessionCache:
        """Incremental fetch sessions (KIP-227), evicted only to make room for new ones; made
        by the first Fetch, not before the listener answers."""
        from kafka_shim.shim.partitions.fetch_sessions import FetchSessionCache

        return FetchSessionCache(self.static_config.max_incremental_fetch_session_cache_slots)

    # What handlers, the console and tests reach in dozens of places.

    @property
    def groups(self) -> GroupCoordinator:
        return self.group_service.classic

    @property
    def consumer_groups(self) -> MigratingCoordinator:
        return self.group_service.consumer

    @property
    def share_partitions(self) -> SharePartitions:
        return self.shares.partitions

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
