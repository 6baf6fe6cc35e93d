"""Dynamic broker configs: Kafka's IncrementalAlterConfigs / AlterConfigs on the BROKER
resource, per broker (its node id) and as the cluster default (""), kept across restarts.

Precedence is Kafka's: this broker's dynamic value, then the cluster default's, then the value
the broker was started with, then the default. A config may change here while the broker runs
where Kafka's may (its dynamic update mode is not read-only) and where kafka-shim reads it
live: the broker defaults of topic configs (log.retention.ms, log.segment.bytes,
message.max.bytes, compression.type, ...), which every log takes at once, and the configs that
have no effect here (the replication throttles kafka-reassign-partitions.sh sets, the thread
counts, ...), which are kept and described. The rest are refused with Kafka's error, naming
them: they are set at start (--config, --config-file, KAFKA_* in the image). A name Kafka
does not know is kept and ignored, as Kafka keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.settings import BROKER_SETTINGS, TOPIC_SETTINGS, Setting
from kafka_shim.shim.config.broker_config import BrokerConfig, ConfigError, apply_kafka_configs
from kafka_shim.storage.data_dir import DataDir

CLUSTER_DEFAULT = ""  # the resource name of the cluster-wide defaults
# The broker configs a topic config defaults to, for honoured topic configs: read live.
_LIVE = frozenset(s.synonym for s in TOPIC_SETTINGS.values() if s.synonym is not None and not s.no_effect)


class AlterError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def changes_while_running(setting: Setting) -> bool:
    """Whether this broker config may change while kafka-shim runs."""
    return setting.update_mode != "read-only" and (bool(setting.no_effect) or setting.name in _LIVE)


def node_number(resource_name: str, noun: str) -> int:
    """A resource name as the node id it must be: AlterError (INVALID_REQUEST, "<noun> id must
    be an integer") where it is not one."""
    try:
        return int(resource_name)
    except ValueError:
        raise AlterError(
            ErrorCode.INVALID_REQUEST, f"{noun} id must be an integer, but it is: {resource_name}"
        ) from None


def check_scope(scope: str, node_id: int) -> None:
    """Kafka's answers for a BROKER resource name that is neither "" nor this broker's id."""
    if scope == CLUSTER_DEFAULT:
        return
    if node_number(scope, "Broker") != node_id:
        raise AlterError(
            ErrorCode.INVALID_REQUEST,
            f"Unexpected broker id, expected {node_id} or empty string, but received {scope}",
        )


def check_change(scope: str, name: str, value: str | None) -> None:
    """AlterError unless `name=value` may be set at `scope` while the broker runs."""
    setting = BROKER_SETTINGS.get(name)
    if setting is None:
        return  # kept and ignored, as Kafka keeps a dynamic config it does not know
    if not changes_while_running(setting):
        raise AlterError(ErrorCode.INVALID_REQUEST, f"Cannot update these configs dynamically: Set({name})")
    if scope == CLUSTER_DEFAULT and setting.update_mode == "per-broker":
        raise AlterError(
            ErrorCode.INVALID_REQUEST,
            f"Cannot update these configs at default cluster level, broker id must be specified: Set({name})",
        )
    reason = setting.invalid(value)
    if reason is not None:
        raise AlterError(
            ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {name}: {reason}"
        )


class DynamicBrokerConfigs:
    """The dynamic overrides by scope, persisted in the data directory (None: in memory)."""

    def __init__(self, data_dir: DataDir | None, node_id: int) -> None:
        self._data_dir = data_dir
        self.node_id = node_id
        self.scopes: dict[str, dict[str, str]] = data_dir.read_broker_configs() if data_dir else {}

    @property
    def own_scope(self) -> str:
        return str(self.node_id)

    def get(self, scope: str) -> dict[str, str]:
        return dict(self.scopes.get(scope, {}))

    def source_of(self, name: str) -> str | None:
        """Which dynamic level sets `name` ("" cluster default, the node id), if one does."""
        for scope in (self.own_scope, CLUSTER_DEFAULT):
            if name in self.scopes.get(scope, {}):
                return scope
        return None

    def with_scope(self, scope: str, overrides: Mapping[str, str]) -> dict[str, dict[str, str]]:
        """The overrides of every scope were `scope`'s replaced by `overrides`."""
        scopes = {s: dict(c) for s, c in self.scopes.items()}
        if overrides:
            scopes[scope] = dict(overrides)
        else:
            scopes.pop(scope, None)
        return scopes

    def effective(
        self, static: BrokerConfig, scopes: Mapping[str, Mapping[str, str]] | None = None
    ) -> BrokerConfig:
        """The broker's configuration: what it started with, under the dynamic overrides
        (these, or `scopes` to check a change before it is made)."""
        scopes = self.scopes if scopes is None else scopes
        merged = {
            name: value
            for name, value in {**scopes.get(CLUSTER_DEFAULT, {}), **scopes.get(self.own_scope, {})}.items()
            if name in BROKER_SETTINGS
        }
        if not merged:
            return static
        try:
            return apply_kafka_configs(static, merged)
        except ConfigError as exc:
            raise AlterError(ErrorCode.INVALID_CONFIG, str(exc)) from exc

    def replace(self, scope: str, overrides: Mapping[str, str]) -> None:
        """`scope`'s whole set of overrides, written before it counts."""
        scopes = self.with_scope(scope, overrides)
        if self._data_dir is not None:
            self._data_dir.write_broker_configs(scopes)
        self.scopes = scopes


class BrokerValues:
    """A broker config a topic config defaults to, from the configuration in force (`config`,
    read at each call). Kept per configuration (it is frozen; a dynamic change replaces it):
    every topic's configs are resolved from the same few dozen broker values, 93 look-ups a
    topic at start-up."""

    def __init__(self, config: Callable[[], BrokerConfig]) -> None:
        self._config = config
        self._values: tuple[BrokerConfig | None, dict[str, str | None]] = (None, {})

    def __call__(self, name: str) -> str | None:
        config = self._config()
        if self._values[0] is not config:
            self._values = (config, {})
        values = self._values[1]
        if name not in values:
            values[name] = config.known_value(name)
        return values[name]
