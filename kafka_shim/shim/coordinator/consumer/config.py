"""The consumer-group coordinator's settings (Kafka's `group.consumer.*` broker configs)."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_shim.protocol.settings import ASSIGNOR_CLASSES, list_items
from kafka_shim.shim.config.broker_config import BrokerConfig

UNIFORM, RANGE = "uniform", "range"
# group.consumer.migration.policy: which online conversions between classic and consumer groups
# may happen (upgrade: classic -> consumer, downgrade: consumer -> classic).
UPGRADE_POLICIES = frozenset({"bidirectional", "upgrade"})
DOWNGRADE_POLICIES = frozenset({"bidirectional", "downgrade"})


@dataclass(frozen=True)
class ConsumerGroupConfig:
    heartbeat_interval_ms: int = 500
    # While its group is not Stable a member is asked to heartbeat this often instead (the
    # lowest interval the broker allows): reconciliation takes a few round trips, and each
    # waits for a heartbeat. With Kafka's settings (min = interval = 5000) nothing changes.
    reconciling_heartbeat_interval_ms: int = 100
    session_timeout_ms: int = 10_000
    max_size: int = 2**31 - 1
    assignors: tuple[str, ...] = (UNIFORM, RANGE)  # the first is the default
    migration_policy: str = "bidirectional"
    classic_max_size: int = 2**31 - 1  # group.max.size: a downgrade may not exceed it
    # Kafka 3.9's join rule (protocol.releases.Release.early_consumer_groups): topic names, not
    # empty, are required; later releases accept names or a regex, either possibly empty.
    join_needs_topic_names: bool = False
    # Kafka's REGEX_BATCH_REFRESH_MIN_INTERVAL_MS (a constant, not a setting): a group's regexes
    # are resolved again at most this often, so topics created together rebalance it once.
    regex_refresh_min_interval_ms: int = 10_000

    @property
    def upgrade_enabled(self) -> bool:
        return self.migration_policy in UPGRADE_POLICIES

    @property
    def downgrade_enabled(self) -> bool:
        return self.migration_policy in DOWNGRADE_POLICIES

    @property
    def default_assignor(self) -> str:
        return self.assignors[0]

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> ConsumerGroupConfig:
        return cls(
            heartbeat_interval_ms=config.consumer_heartbeat_interval_ms,
            reconciling_heartbeat_interval_ms=config.consumer_min_heartbeat_interval_ms,
            session_timeout_ms=config.consumer_session_timeout_ms,
            max_size=config.consumer_max_size,
            assignors=tuple(ASSIGNOR_CLASSES.get(a, a) for a in list_items(config.consumer_assignors)),
            migration_policy=config.consumer_migration_policy,
            classic_max_size=config.max_group_size,
            join_needs_topic_names=config.release.early_consumer_groups,
        )
