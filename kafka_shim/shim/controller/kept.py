"""The finalized feature levels a broker keeps (UpdateFeatures), opened at start-up."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.controller.features import GROUP_VERSION, TRANSACTION_VERSION, FeatureLevels
from kafka_shim.storage.data_dir import DataDir

# The configs that set a serving feature's level.
FEATURE_CONFIGS = {
    TRANSACTION_VERSION: "transaction.version",
    GROUP_VERSION: "group.coordinator.rebalance.protocols",
}


def open_feature_levels(
    config: BrokerConfig,
    data_dir: DataDir | None,
    now: int,
    on_change: Callable[[Mapping[str, int]], None],
) -> FeatureLevels:
    """The levels kept by UpdateFeatures, unless the command line sets them; else the
    configured ones (transaction.version; group.version 1 while the consumer protocol is on).
    The epoch starts at `now`, so it grows across restarts as Kafka's metadata offset."""
    from_config = {
        TRANSACTION_VERSION: config.transaction_version,
        GROUP_VERSION: 1 if config.consumer_protocol_enabled else 0,
    }
    stored = data_dir.read_features() if data_dir is not None else {}
    levels = {**from_config, **stored}
    levels.update({f: from_config[f] for f, name in FEATURE_CONFIGS.items() if name in config.explicit})
    return FeatureLevels(config.release, levels, epoch=now, on_change=on_change, node_id=config.node_id)
