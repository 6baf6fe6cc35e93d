"""The settings one partition log runs by, resolved from its topic's configs.

A log holds a `LogConfig` value; the topic store replaces it when the topic's
configs change (IncrementalAlterConfigs), so appends never re-parse strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from kafka_shim.protocol.settings import list_items, topic_default
from kafka_shim.storage.topic_configs import BrokerValue, effective_value

DEFAULT_BROKER_VALUE: BrokerValue = lambda name: None  # noqa: E731


@dataclass(frozen=True)
class LogConfig:
    # Defaults from the settings registry (protocol.settings), as are the values of_topic reads.
    segment_bytes: int = topic_default("segment.bytes")
    segment_ms: int = topic_default("segment.ms")
    retention_ms: int = topic_default("retention.ms")  # -1: keep forever
    retention_bytes: int = topic_default("retention.bytes")  # -1: no size limit
    index_interval_bytes: int = topic_default("index.interval.bytes")
    cleanup_policy: frozenset[str] = frozenset(list_items(topic_default("cleanup.policy")))
    delete_retention_ms: int = topic_default("delete.retention.ms")
    min_compaction_lag_ms: int = topic_default("min.compaction.lag.ms")
    max_compaction_lag_ms: int = topic_default("max.compaction.lag.ms")
    min_cleanable_dirty_ratio: float = topic_default("min.cleanable.dirty.ratio")

    @property
    def deletes(self) -> bool:
        """Whether old segments go by time and size (cleanup.policy has delete)."""
        return "delete" in self.cleanup_policy

    @property
    def compacts(self) -> bool:
        return "compact" in self.cleanup_policy

    @cached_property  # every append asks; a config is never changed, only replaced
    def roll_ms(self) -> int:
        """How old the active segment may grow before the next append rolls it: Kafka's
        LogConfig.maxSegmentMs, segment.ms, or for a compacted log max.compaction.lag.ms if
        lower (KIP-354: its records must reach a closed segment to be cleaned in time)."""
        if self.compacts and self.max_compaction_lag_ms > 0:
            return min(self.segment_ms, self.max_compaction_lag_ms)
        return self.segment_ms

    @classmethod
    def of_topic(cls, overrides: Mapping[str, str], broker_value: BrokerValue) -> LogConfig:
        # Only the ten values a log runs by, not every topic config with its synonyms: a
        # broker opening 100 topics resolves this three times each before it listens.
        def value(name: str) -> str:
            return effective_value(overrides, name, broker_value)

        return cls(
            segment_bytes=int(value("segment.bytes")),
            segment_ms=int(value("segment.ms")),
            retention_ms=int(value("retention.ms")),
            retention_bytes=int(value("retention.bytes")),
            index_interval_bytes=int(value("index.interval.bytes")),
            cleanup_policy=frozenset(list_items(value("cleanup.policy"))),
            delete_retention_ms=int(value("delete.retention.ms")),
            min_compaction_lag_ms=int(value("min.compaction.lag.ms")),
            max_compaction_lag_ms=int(value("max.compaction.lag.ms")),
            min_cleanable_dirty_ratio=float(value("min.cleanable.dirty.ratio")),
        )
