"""The coordinator's settings, under the meaning Kafka gives the broker configs they come from."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_shim.shim.config import BrokerConfig


@dataclass(frozen=True)
class CoordinatorConfig:
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    max_group_size: int = 2**31 - 1
    initial_rebalance_delay_ms: int = 0
    offsets_retention_ms: int = 10080 * 60_000
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096  # Kafka's offset.metadata.max.bytes default

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> CoordinatorConfig:
        return cls(
            min_session_timeout_ms=config.min_session_timeout_ms,
            max_session_timeout_ms=config.max_session_timeout_ms,
            max_group_size=config.max_group_size,
            initial_rebalance_delay_ms=config.initial_rebalance_delay_ms,
            offsets_retention_ms=config.offsets_retention_minutes * 60_000,
            offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
        )
