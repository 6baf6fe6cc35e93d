"""The broker's coordinators, loaded on first use: the group service (shim.groups, over
__consumer_offsets), the share-group service (shim.share, over __share_group_state) and the
transaction coordinator (shim.transactions, over __transaction_state).

Their code is a tenth of the broker's start-up CPU (~23 ms) and none of it is needed to answer a
client's first ApiVersions, so the Kafka listener answers first: the server imports
COORDINATOR_MODULES on a worker thread once it has answered (or soon after it listens, with no
client yet), then loads them before its timer task runs; a request that needs one before then
loads it on the spot. Kafka likewise loads a coordinator's state after the broker starts
serving (it answers COORDINATOR_LOAD_IN_PROGRESS meanwhile; here the request waits)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from kafka_shim.protocol.internal_topics import OFFSETS_TOPIC, SHARE_STATE_TOPIC, TRANSACTION_TOPIC
from kafka_shim.protocol.releases import TRANSACTION_VERSION

if TYPE_CHECKING:
    from kafka_shim.shim.config.broker_config import BrokerConfig
    from kafka_shim.shim.config.group_configs import GroupConfigs
    from kafka_shim.shim.controller.features import FeatureLevels
    from kafka_shim.shim.groups.journal import GroupJournal
    from kafka_shim.shim.groups.service import GroupService
    from kafka_shim.shim.share.service import ShareService
    from kafka_shim.shim.timer_failures import TimerFailures
    from kafka_shim.shim.transactions.markers import MarkerWriter
    from kafka_shim.shim.transactions.pending_markers import PendingMarkers
    from kafka_shim.shim.transactions.service import TransactionService
    from kafka_shim.storage.log import AppendHook
    from kafka_shim.storage.producer_state import ProducerIdAllocator
    from kafka_shim.storage.topics import TopicStore
    from kafka_shim.storage.transaction_log import TransactionLog

    class CoordinatedBroker(MarkerWriter, Protocol):
        """What loading the coordinators needs of the broker (shim.broker.Broker is one), read
        when they load; named here so that the broker and this module do not import each other."""

        clock: Callable[[], int]
        on_append: AppendHook

        @property
        def config(self) -> BrokerConfig: ...
        @property
        def topics(self) -> TopicStore: ...
        @property
        def features(self) -> FeatureLevels: ...
        @property
        def producer_ids(self) -> ProducerIdAllocator: ...
        @property
        def group_configs(self) -> GroupConfigs: ...
        @property
        def group_journal(self) -> GroupJournal: ...
        @property
        def timer_failures(self) -> TimerFailures: ...
        @property
        def markers_elsewhere(self) -> PendingMarkers | None: ...


# What the coordinators are made of, imported by the server off the event loop.
COORDINATOR_MODULES = (
    "kafka_shim.shim.groups.service",
    "kafka_shim.shim.share.service",
    "kafka_shim.shim.transactions.kept",
)


class Coordinators:
    """One broker's coordinators, each made (and its internal topic replayed) when first asked
    for; `load` makes them all."""

    def __init__(self, broker: CoordinatedBroker) -> None:
        self._broker = broker
        self._group_service: GroupService | None = None
        self._shares: ShareService | None = None
        self._transactions: tuple[TransactionLog, TransactionService] | None = None

    def load(self) -> None:
        """Make every coordinator not made yet."""
        self.group_service()
        self.shares()
        self.transactions()

    def group_service(self) -> GroupService:
        """Every group request goes through the group service, which picks the group's
        coordinator and writes its records to __consumer_offsets before its answer."""
        if self._group_service is None:
            from kafka_shim.shim.groups.service import GroupService

            broker = self._broker
            self._group_service = GroupService(
                broker.config,
                broker.topics,
                broker.clock,
                broker.group_configs.share_config_of,
                lambda key, now: self.shares().lock_expired(key, now),
                broker.group_journal,
                lambda: self.shares().partitions,
            )
        return self._group_service

    def shares(self) -> ShareService:
        """KIP-932 share groups' delivery state (__share_group_state) and sessions."""
        if self._shares is None:
            from kafka_shim.shim.share.service import ShareService

            broker = self._broker
            self._shares = ShareService(
                broker.config,
                broker.topics,
                broker.group_configs.share_config_of,
                self.group_service().set_deadline,
                lambda log: broker.on_append(log),
                broker.clock,
            )
        return self._shares

    def loaded_shares(self) -> ShareService | None:
        """The share-group service if loaded (a closed connection has no session otherwise)."""
        return self._shares

    def transactions(self) -> tuple[TransactionLog, TransactionService]:
        """__transaction_state and the transaction coordinator over it, at the finalized level;
        transactions found preparing to commit or abort get their markers as it loads."""
        if self._transactions is None:
            self._open_transactions()
        assert self._transactions is not None
        return self._transactions

    def _open_transactions(self) -> None:
        from kafka_shim.shim.transactions.kept import open_transactions

        broker = self._broker
        self._transactions = open_transactions(
            broker.config,
            broker.features.level(TRANSACTION_VERSION),
            broker.topics,
            broker.producer_ids.allocate,
            broker,
            broker.clock,
            broker.timer_failures.failed,
            broker.markers_elsewhere,
        )

    def deadline_sooner_than(self, at: float) -> bool:
        """Whether a loaded coordinator set a deadline earlier than `at` (it runs after every
        request, and loads nothing: a coordinator not loaded has none)."""
        groups = self._group_service
        if groups is not None and groups.effects.deadlines.scheduled_low < at:
            return True
        deadline = None if self._transactions is None else self._transactions[1].next_deadline()
        return deadline is not None and deadline < at

    def transaction_version_changed(self, level: int) -> None:
        """UpdateFeatures set transaction.version (a coordinator not loaded reads it as it loads)."""
        if self._transactions is not None:
            transaction_log, transactions = self._transactions
            transactions.config = transactions.config._replace(transaction_version=level)
            transaction_log.transaction_version = level

    def internal_topic_deleted(self, name: str) -> None:
        """The coordinator of a deleted internal topic resigns (Broker.internal_topic_deleted);
        one not loaded yet reads the topic as it is (gone) when it loads."""
        if name == OFFSETS_TOPIC and self._group_service is not None:
            self._group_service.unload(self._broker.config)
        elif name == TRANSACTION_TOPIC and self._transactions is not None:
            self._open_transactions()
        elif name == SHARE_STATE_TOPIC and self._shares is not None:
            self._shares.state_topic_deleted()
