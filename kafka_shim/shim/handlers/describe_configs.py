"""DescribeConfigs: topic configs (overrides over broker synonyms over
defaults), this broker's own configs, group configs and the broker's loggers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_configs import API, ConfigSource, ResourceType
from kafka_shim.protocol.settings import ALIASES, BROKER_SETTINGS, Setting
from kafka_shim.shim.config import broker_loggers
from kafka_shim.shim.config.dynamic import CLUSTER_DEFAULT, AlterError, check_scope
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.share.config import GROUP_CONFIG_FIELDS, GROUP_CONFIG_TYPES
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, DENIED_MESSAGES, AclOperation
from kafka_shim.shim.security.authorizer import ResourceType as AclResourceType
from kafka_shim.storage.topic_configs import Origin, ResolvedConfig, resolve
from kafka_shim.storage.topics import invalid_topic_name

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_configs import (
        DescribeConfigsRequestData,
        DescribeConfigsRequestResources,
    )

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker

__all__ = ["API", "config_denial", "config_source", "handle"]

_SOURCES = {
    Origin.TOPIC: ConfigSource.DYNAMIC_TOPIC_CONFIG,
    Origin.BROKER: ConfigSource.STATIC_BROKER_CONFIG,
    Origin.DEFAULT: ConfigSource.DEFAULT_CONFIG,
}


def config_source(origin: Origin) -> ConfigSource:
    return _SOURCES[origin]


def _topic_entry(
    broker: Broker, resolved: ResolvedConfig, request: DescribeConfigsRequestData
) -> dict[str, Any]:
    """Kafka's ConfigHelper.createTopicConfigEntry: the topic's own value first, then its
    broker synonym's levels (none for a config without one), the source the first of them."""
    config = resolved.config
    synonyms: list[Synonym] = []
    if resolved.origin is Origin.TOPIC:
        synonyms.append((config.name, resolved.value, ConfigSource.DYNAMIC_TOPIC_CONFIG))
    if config.synonym is not None and config.synonym in BROKER_SETTINGS:
        synonyms += broker_synonyms(broker, config.synonym)
    source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
    return {
        "name": config.name,
        "value": resolved.value,
        "read_only": False,
        "is_default": resolved.origin is not Origin.TOPIC,  # v0's flag: not set on the topic
        "config_source": source,
        "is_sensitive": False,
        "synonyms": [{"name": n, "value": v, "source": level} for n, v, level in synonyms]
        if request.include_synonyms
        else [],
        "config_type": config.type,
        "documentation": config.doc if request.include_documentation else None,
    }


def _group_entries(
    ctx: RequestContext, group_id: str, keys: list[str] | None, request: DescribeConfigsRequestData
) -> list[dict[str, Any]]:
    """A group's share.* configs: its own values, else the broker's."""
    own = ctx.broker.group_configs.get(group_id, {})
    effective = ctx.broker.group_configs.share_config_of(group_id)
    names = sorted(GROUP_CONFIG_FIELDS) if keys is None else [k for k in keys if k in GROUP_CONFIG_FIELDS]
    entries = []
    for name in names:
        source = ConfigSource.DYNAMIC_GROUP_CONFIG if name in own else ConfigSource.DEFAULT_CONFIG
        value = effective.value_of(name)
        entries.append(
            {
                "name": name,
                "value": value,
                "read_only": False,
                "is_default": name not in own,
                "config_source": source,
                "is_sensitive": False,
                "synonyms": [{"name": name, "value": value, "source": source}]
                if request.include_synonyms
                else [],
                "config_type": GROUP_CONFIG_TYPES[name],
                "documentation": None,
            }
        )
    return entries


Synonym = tuple[str, str | None, ConfigSource]


def _kafka_default(broker: Broker, setting: Setting, is_set: bool = False) -> str | None:
    """The default the emulated release describes: null where Kafka's is null though this
    broker keeps one under the same name (log.retention.ms and log.roll.ms: 7 days, Kafka's
    from the hours), Kafka's own beneath a value set where the setting names it (node.id -1
    under node.id=1; unset, the broker is node 0 by default), else the release's."""
    kafka_default = setting.kafka_default
    if kafka_default is not None and kafka_default.startswith("null"):
        return None
    if is_set and setting.described_default is not None:
        return setting.described_default
    return broker.static_config.default_text(setting.name)


def _spellings(name: str) -> list[str]:
    """Kafka's brokerSynonyms: the name, then its coarser forms (log.retention.ms,
    log.retention.minutes, log.retention.hours)."""
    coarser = sorted(
        (a for a, target in ALIASES.items() if target == name), key=lambda a: a.endswith("hours")
    )
    return [name, *coarser]


def _dynamic_levels(broker: Broker) -> tuple[tuple[str, ConfigSource], ...]:
    """The scopes of dynamic broker configs, most specific first, with their config source:
    this broker's own, then the cluster default."""
    return (
        (broker.dynamic_configs.own_scope, ConfigSource.DYNAMIC_BROKER_CONFIG),
        (CLUSTER_DEFAULT, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
    )


def broker_synonyms(broker: Broker, name: str) -> list[Synonym]:
    """Kafka's ConfigHelper.configSynonyms: every level that sets broker config `name` under
    any of its spellings (this broker's dynamic values, the cluster defaults, the values it
    started with, the non-null defaults), most specific first, without the leading levels of
    other spellings (so log.retention.ms left at its null default lists nothing, while
    set dynamically it lists the static and default log.retention.hours after it)."""
    spellings = [n for n in _spellings(name) if n in BROKER_SETTINGS]
    dynamic, static = broker.dynamic_configs, broker.static_config
    levels: list[Synonym] = []
    for scope, source in _dynamic_levels(broker):
        values = dynamic.get(scope)
        levels += [(n, values[n], source) for n in spellings if n in values]
    # The ms form takes its value from a coarser form that was set (log.retention.hours):
    # then only the names set count as set at start, as Kafka's static configs are.
    from_coarser = any(n in static.explicit for n in spellings[1:])
    levels += [
        (n, static.kafka_value(n), ConfigSource.STATIC_BROKER_CONFIG)
        for n in spellings
        if (n in static.explicit if from_coarser else static.is_set(n))
    ]
    for n in spellings:
        default = _kafka_default(broker, BROKER_SETTINGS[n], any(level[0] == n for level in levels))
        if default is not None:
            levels.append((n, default, ConfigSource.DEFAULT_CONFIG))
    while levels and levels[0][0] != name:
        levels.pop(0)
    return levels


def _broker_entry(
    broker: Broker, name: str, request: DescribeConfigsRequestData, cluster_default: bool
) -> dict[str, Any]:
    """Kafka's ConfigHelper.createBrokerConfigEntry: the source is the first synonym's (else
    the default); a config at Kafka's null default and set nowhere is described null."""
    setting = BROKER_SETTINGS[name]
    levels = broker_synonyms(broker, name)
    if cluster_default:  # the "" resource: only what is set at that level
        levels = [level for level in levels if level[2] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
    source = levels[0][2] if levels else ConfigSource.DEFAULT_CONFIG
    if setting.sensitive:
        value = None
    elif cluster_default:
        value = levels[0][1] if levels else None
    elif _kafka_default(broker, setting) is None and not any(n == name for n, _, _ in levels):
        value = None
    else:
        value = broker.config.kafka_value(name)
    return {
        "name": name,
        "value": value,
        "read_only": setting.update_mode == "read-only",  # Kafka's dynamic update mode
        "is_default": source == ConfigSource.DEFAULT_CONFIG,
        "config_source": source,
        "is_sensitive": setting.sensitive,
        "synonyms": [
            {"name": n, "value": None if setting.sensitive else text, "source": level}
            for n, text, level in levels
        ]
        if request.include_synonyms
        else [],
        "config_type": setting.type,
        "documentation": setting.doc if request.include_documentation else None,
    }


def _custom_entry(
    broker: Broker, name: str, request: DescribeConfigsRequestData, cluster_default: bool
) -> dict[str, Any]:
    """A dynamic config Kafka does not know, kept as Kafka keeps it and described as Kafka's
    ConfigHelper does: of no known type, so sensitive (value null), read-only, type UNKNOWN."""
    levels = [
        source
        for scope, source in _dynamic_levels(broker)
        if name in broker.dynamic_configs.get(scope) and (not cluster_default or scope == CLUSTER_DEFAULT)
    ]
    return {
        "name": name,
        "value": None,
        "read_only": True,
        "is_default": False,
        "config_source": levels[0],
        "is_sensitive": True,
        "synonyms": [{"name": name, "value": None, "source": level} for level in levels]
        if request.include_synonyms
        else [],
        "config_type": 0,  # UNKNOWN
        "documentation": None,
    }


def _broker_entries(
    broker: Broker, scope: str, keys: list[str] | None, request: DescribeConfigsRequestData
) -> list[dict[str, Any]]:
    """This broker's configs, or (scope "") the cluster defaults set dynamically; with them the
    dynamic configs of names Kafka does not know (a plugin's), which Kafka keeps and describes."""
    dynamic = broker.dynamic_configs
    scopes = [CLUSTER_DEFAULT] if scope == CLUSTER_DEFAULT else [dynamic.own_scope, CLUSTER_DEFAULT]
    custom = {name for s in scopes for name in dynamic.get(s) if name not in BROKER_SETTINGS}
    known = [name for name in BROKER_SETTINGS if broker.config.describes(name)]
    names = sorted({*known, *custom}) if keys is None else [k for k in keys if k in known or k in custom]
    if scope == CLUSTER_DEFAULT:
        names = [name for name in names if name in dynamic.get(CLUSTER_DEFAULT)]
    return [
        _custom_entry(broker, name, request, scope == CLUSTER_DEFAULT)
        if name in custom
        else _broker_entry(broker, name, request, scope == CLUSTER_DEFAULT)
        for name in names
    ]


def _logger_entries(ctx: RequestContext, name: str, keys: list[str] | None) -> dict[str, Any]:
    """The broker's loggers and their levels (shim.config.broker_loggers), as Kafka's ConfigHelper
    describes them: no synonyms, no type, no documentation."""
    if not name:
        return {"error_code": ErrorCode.INVALID_REQUEST, "error_message": "Broker id must not be empty"}
    if not name.isdigit() or int(name) != ctx.node_id:
        message = f"Unexpected broker id, expected {ctx.node_id} but received {name}"
        return {"error_code": ErrorCode.INVALID_REQUEST, "error_message": message}
    entries = [
        {
            "name": logger,
            "value": level,
            "read_only": False,
            "is_default": False,
            "config_source": ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
            "is_sensitive": False,
            "synonyms": [],
        }
        for logger, level in broker_loggers.levels().items()
        if keys is None or logger in keys
    ]
    return {"configs": entries}


def config_denial(
    ctx: RequestContext, resource_type: int, name: str, operation: AclOperation
) -> ErrorCode | None:
    """The error for a config resource the principal may not `operation` (DESCRIBE_CONFIGS or
    ALTER_CONFIGS): a topic's own, a broker's on the cluster, as Kafka checks them."""
    if resource_type == ResourceType.TOPIC:
        return ctx.denial(operation, AclResourceType.TOPIC, name)
    if resource_type == ResourceType.GROUP:
        return ctx.denial(operation, AclResourceType.GROUP, name)
    if resource_type in (ResourceType.BROKER, ResourceType.BROKER_LOGGER):
        return ctx.denial(operation, AclResourceType.CLUSTER, CLUSTER_NAME)
    return None


def _describe(
    ctx: RequestContext, resource: DescribeConfigsRequestResources, request: DescribeConfigsRequestData
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "error_code": ErrorCode.NONE,
        "error_message": "",  # Kafka's answer says "" when nothing went wrong
        "resource_type": resource.resource_type,
        "resource_name": resource.resource_name,
        "configs": [],
    }
    denied = config_denial(ctx, resource.resource_type, resource.resource_name, AclOperation.DESCRIBE_CONFIGS)
    if denied is not None:
        return result | {"error_code": denied, "error_message": DENIED_MESSAGES[denied]}
    config = ctx.broker.config
    keys = resource.configuration_keys or None  # null or empty: every config, as Kafka
    if resource.resource_type == ResourceType.TOPIC:
        invalid_name = invalid_topic_name(resource.resource_name)
        if invalid_name is not None:
            return result | {"error_code": ErrorCode.INVALID_TOPIC_EXCEPTION, "error_message": invalid_name}
        topic = ctx.broker.topics.get(resource.resource_name)
        if topic is None:
            return result | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        resolved = resolve(topic.configs, config.known_value, keys)
        return result | {"configs": [_topic_entry(ctx.broker, r, request) for r in resolved]}
    if resource.resource_type == ResourceType.BROKER:
        # "" names the cluster-wide defaults; a broker answers only its own configs (with
        # --brokers each node for itself: admin clients send it to the broker named).
        try:
            check_scope(resource.resource_name, ctx.node_id)
        except AlterError as exc:
            return result | {"error_code": exc.code, "error_message": exc.message}
        return result | {"configs": _broker_entries(ctx.broker, resource.resource_name, keys, request)}
    if resource.resource_type == ResourceType.GROUP:
        return result | {"configs": _group_entries(ctx, resource.resource_name, keys, request)}
    if resource.resource_type == ResourceType.BROKER_LOGGER:
        return result | _logger_entries(ctx, resource.resource_name, keys)
    return result | {
        "error_code": ErrorCode.INVALID_REQUEST,
        "error_message": ErrorCode.INVALID_REQUEST.default_message,
    }


async def handle(ctx: RequestContext, request: DescribeConfigsRequestData) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "results": [_describe(ctx, r, request) for r in request.resources]}
