"""Client quotas as a broker keeps them beside its ACLs (in memory for --memory), with the
produce and fetch byte rates held to them."""

from __future__ import annotations

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.quotas.client_quotas import ClientQuotas, Entity, entity_of
from kafka_shim.shim.quotas.manager import ClientQuotaEnforcement
from kafka_shim.storage.data_dir import DataDir


def open_client_quotas(config: BrokerConfig, data_dir: DataDir | None) -> ClientQuotaEnforcement:
    return ClientQuotaEnforcement(
        _kept_quotas(data_dir), config.quota_window_num, config.quota_window_size_seconds * 1000
    )


def read_kept_quotas(data_dir: DataDir) -> dict[Entity, dict[str, float]]:
    """The quotas the data directory keeps, by entity (at start, and followed by the other
    broker processes, shim.processes.cluster_metadata)."""
    return {entity_of(parts): values for parts, values in data_dir.read_quotas()}


def _kept_quotas(data_dir: DataDir | None) -> ClientQuotas:
    if data_dir is None:
        return ClientQuotas()
    return ClientQuotas(
        read_kept_quotas(data_dir),
        on_change=lambda current: data_dir.write_quotas(
            [(list(entity), dict(values)) for entity, values in current.items()]
        ),
    )
