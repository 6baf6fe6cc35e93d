"""The broker's topic-partition logs, opened at start-up: in memory (--memory) or in a data
directory (storage.disk_store), with the storage options the broker's configuration sets."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy
from kafka_shim.storage.log import AppendHook
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.topics import TopicStore

if TYPE_CHECKING:  # imported on disk only: --memory starts without the disk modules
    from kafka_shim.storage.disk_store import DiskStore


def open_logs(
    config: BrokerConfig,
    clock: Callable[[], int],
    on_append: AppendHook,
    broker_value: Callable[[str], str | None],
) -> tuple[TopicStore, DiskStore | None]:
    """The topics, and the store that keeps them on disk (None in memory). Every append wakes
    Fetch long polls through `on_append`; `broker_value` is the broker config a topic config
    defaults to. StorageStartupError (locked, corrupt) propagates: the CLI reports it."""
    if config.data_dir is None:
        topics = TopicStore(
            lambda topic, partition: MemoryLog(on_append, clock),
            default_partitions=config.num_partitions,
            auto_create=config.auto_create_topics,
            broker_value=broker_value,
        )
        return topics, None
    from kafka_shim.storage.disk_store import DiskStore

    storage = DiskStore(
        config.data_dir,
        disk_options(config, clock),
        on_append=on_append,
        broker_value=broker_value,
        default_partitions=config.num_partitions,
        auto_create=config.auto_create_topics,
    )
    return storage.topics, storage


def disk_options(config: BrokerConfig, clock: Callable[[], int]) -> DiskOptions:
    return DiskOptions(
        fsync=FsyncPolicy(config.fsync),
        fsync_interval_ms=config.log_flush_interval_ms,
        retention_check_interval_ms=config.log_retention_check_interval_ms,
        cleaner_dedupe_buffer_size=config.log_cleaner_dedupe_buffer_size,
        cleaner_backoff_ms=config.log_cleaner_backoff_ms,
        producer_id_expiration_ms=config.producer_id_expiration_ms,
        producer_id_expiration_check_interval_ms=config.producer_id_expiration_check_interval_ms,
        truncate_corrupt=config.truncate_corrupt,
        clock=clock,
    )
