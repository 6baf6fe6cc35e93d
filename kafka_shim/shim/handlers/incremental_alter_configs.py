"""IncrementalAlterConfigs: SET / DELETE / APPEND / SUBTRACT topic configs,
validated like CreateTopics configs, persisted by the topic store; SET / DELETE of a
group's configs (the GROUP resource, Kafka 4: the share.* group configs here); dynamic
broker configs, per broker and as the cluster default "" (shim.config.dynamic: which may
change while the broker runs, kept across restarts); the levels of the broker's loggers
(BROKER_LOGGER, shim.config.broker_loggers).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_configs import ResourceType
from kafka_shim.protocol.messages.incremental_alter_configs import API, AlterConfigOp
from kafka_shim.protocol.settings import BROKER_SETTINGS
from kafka_shim.shim.config import broker_loggers
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.config.dynamic import CLUSTER_DEFAULT, AlterError, check_change, check_scope
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.share.config import invalid_group_config
from kafka_shim.shim.handlers.describe_configs import config_denial
from kafka_shim.shim.security.authorizer import DENIED_MESSAGES, AclOperation
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.topic_configs import (
    TOPIC_CONFIGS,
    BrokerValue,
    ConfigType,
    effective_value,
    invalid_config,
)

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.alter_configs import AlterConfigsRequestData, AlterConfigsRequestResources
    from kafka_shim.protocol.views.incremental_alter_configs import (
        IncrementalAlterConfigsRequestData,
        IncrementalAlterConfigsRequestResources,
    )

__all__ = [
    "API",
    "AlterOne",
    "Alteration",
    "alter_resource",
    "altered",
    "altered_broker",
    "duplicate_keys",
    "handle",
    "respond",
]


def _list_items(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


def altered(overrides: dict[str, str], changes: list[Any], broker_value: BrokerValue) -> dict[str, str]:
    """The topic's overrides after `changes`; StorageError for the first bad one."""
    result = dict(overrides)
    for change in changes:
        name, value = change.name, change.value
        try:
            op = AlterConfigOp(change.config_operation)
        except ValueError:  # Kafka fails the resource on an unexpected exception, without a message
            raise StorageError(ErrorCode.UNKNOWN_SERVER_ERROR, None) from None
        if op is AlterConfigOp.DELETE:  # of any name, known or not, as Kafka
            result.pop(name, None)
            continue
        config = TOPIC_CONFIGS.get(name)
        if config is None:
            raise StorageError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {name}")
        if value is None:
            raise StorageError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {name}")
        if op is not AlterConfigOp.SET:
            if config.type is not ConfigType.LIST:
                raise StorageError(
                    ErrorCode.INVALID_CONFIG, f"Can't {op.name} to key {name} because its type is not LIST."
                )
            current = _list_items(effective_value(result, name, broker_value))
            given = _list_items(value)
            if op is AlterConfigOp.APPEND:
                items = current + [item for item in given if item not in current]
            else:
                items = [item for item in current if item not in given]
            value = ",".join(items)
        reason = invalid_config(name, value)
        if reason is not None:
            raise StorageError(ErrorCode.INVALID_CONFIG, reason)
        result[name] = value
    return result


# The topic's new overrides computed from its current ones (StorageError for a bad change).
Alteration = Callable[[dict[str, str]], dict[str, str]]


def alter_resource(
    ctx: RequestContext, resource: Any, alteration: Alteration, validate_only: bool
) -> tuple[ErrorCode, str | None]:
    """Authorize and apply `alteration` to a resource once the request's own consistency is
    checked: Kafka's order (permission, then resource type, then the resource), shared by
    IncrementalAlterConfigs and the legacy AlterConfigs."""
    denied = config_denial(ctx, resource.resource_type, resource.resource_name, AclOperation.ALTER_CONFIGS)
    if denied is not None:
        return denied, None
    if resource.resource_type == ResourceType.GROUP:
        return _alter_group(ctx, resource.resource_name, alteration, validate_only)
    if resource.resource_type == ResourceType.BROKER:
        return _alter_broker(ctx, resource.resource_name, alteration, validate_only)
    if resource.resource_type != ResourceType.TOPIC:
        return ErrorCode.INVALID_REQUEST, f"resource type {resource.resource_type} is not supported"
    topics = ctx.broker.topics
    topic = topics.get(resource.resource_name)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{resource.resource_name}' does not exist."
    try:
        overrides = alteration(topic.configs)
        if not validate_only:
            topics.set_configs(topic.name, overrides)
    except StorageError as exc:
        return exc.code, exc.message
    return ErrorCode.NONE, None


def _alter_group(
    ctx: RequestContext, group_id: str, alteration: Alteration, validate_only: bool
) -> tuple[ErrorCode, str | None]:
    """A group's own configs (Kafka 4's GROUP resource; the share.* ones here), kept whether
    or not the group exists yet, as Kafka keeps them."""
    broker = ctx.broker
    try:
        overrides = alteration(broker.group_configs.get(group_id, {}))
    except StorageError as exc:
        return exc.code, exc.message
    if not validate_only:
        broker.group_configs.replace(group_id, overrides)
    return ErrorCode.NONE, None


def _alter_broker(
    ctx: RequestContext, name: str, alteration: Alteration, validate_only: bool
) -> tuple[ErrorCode, str | None]:
    """Dynamic broker configs of this broker (its id) or of the cluster default ("")."""
    broker = ctx.broker
    try:
        check_scope(name, ctx.node_id)
        scope = CLUSTER_DEFAULT if name == CLUSTER_DEFAULT else broker.dynamic_configs.own_scope
        broker.set_broker_configs(scope, alteration(broker.dynamic_configs.get(scope)), validate_only)
    except AlterError as exc:
        return exc.code, exc.message
    return ErrorCode.NONE, None


def altered_broker(
    overrides: dict[str, str], changes: list[Any], scope: str, config: BrokerConfig
) -> dict[str, str]:
    """A scope's dynamic broker configs after `changes`; AlterError for the first bad one.
    APPEND and SUBTRACT work on the value in force (LIST configs only), as Kafka's do."""
    result = dict(overrides)
    for change in changes:
        name, value = change.name, change.value
        if change.config_operation == AlterConfigOp.DELETE:
            result.pop(name, None)
            continue
        if change.config_operation in (AlterConfigOp.APPEND, AlterConfigOp.SUBTRACT):
            setting = BROKER_SETTINGS.get(name)
            if setting is None or setting.type is not ConfigType.LIST or value is None:
                raise AlterError(
                    ErrorCode.INVALID_CONFIG, f"Config value append is not allowed for config {name}"
                )
            current = _list_items(result.get(name) or config.kafka_value(name) or "")
            given = _list_items(value)
            if change.config_operation == AlterConfigOp.APPEND:
                value = ",".join(current + [item for item in given if item not in current])
            else:
                value = ",".join(item for item in current if item not in given)
        elif change.config_operation != AlterConfigOp.SET:
            raise AlterError(ErrorCode.INVALID_REQUEST, f"unknown config operation {change.config_operation}")
        check_change(scope, name, value)
        assert value is not None
        result[name] = value
    return result


def altered_group(overrides: dict[str, str], changes: list[Any], broker: BrokerConfig) -> dict[str, str]:
    """A group's configs after `changes` (SET and DELETE: none of them is a list); StorageError
    for the first bad one."""
    result = dict(overrides)
    for change in changes:
        if change.config_operation == AlterConfigOp.DELETE:
            result.pop(change.name, None)
            continue
        if change.config_operation != AlterConfigOp.SET or change.value is None:
            raise StorageError(
                ErrorCode.INVALID_CONFIG, f"only SET and DELETE apply to group config {change.name}"
            )
        reason = invalid_group_config(change.name, change.value, broker)
        if reason is not None:
            raise StorageError(ErrorCode.INVALID_CONFIG, reason)
        result[change.name] = change.value
    return result


def duplicate_keys(
    resource: AlterConfigsRequestResources | IncrementalAlterConfigsRequestResources,
) -> str | None:
    """Why the resource is refused for a config key named twice (INVALID_REQUEST), if it is."""
    names = Counter(c.name for c in resource.configs)
    duplicated = sorted(name for name, count in names.items() if count > 1)
    return "Error due to duplicate config keys" if duplicated else None


def _alter_loggers(
    ctx: RequestContext, resource: IncrementalAlterConfigsRequestResources, validate_only: bool
) -> tuple[ErrorCode, str | None]:
    """The broker's logger levels (shim.config.broker_loggers), as Kafka's broker changes them without
    its controller (ConfigAdminManager.preprocess, RuntimeLoggerManager): null values, then the
    permission, the node id, every change validated, then all applied."""
    nulls = [
        c.name for c in resource.configs if c.config_operation != AlterConfigOp.DELETE and c.value is None
    ]
    if nulls:
        return ErrorCode.INVALID_REQUEST, f"Null value not supported for : {', '.join(nulls)}"
    denied = config_denial(ctx, resource.resource_type, resource.resource_name, AclOperation.ALTER_CONFIGS)
    if denied is not None:
        return denied, DENIED_MESSAGES[denied]
    try:
        broker_loggers.check_node(resource.resource_name, ctx.node_id)
        for change in resource.configs:
            broker_loggers.validate(change.config_operation, change.name, change.value)
    except AlterError as refusal:
        return refusal.code, refusal.message
    if not validate_only:
        for change in resource.configs:
            broker_loggers.apply(change.config_operation, change.name, change.value)
    return ErrorCode.NONE, None


def _alter(
    ctx: RequestContext, resource: IncrementalAlterConfigsRequestResources, validate_only: bool
) -> tuple[ErrorCode, str | None]:
    duplicated = duplicate_keys(resource)
    if duplicated is not None:
        return ErrorCode.INVALID_REQUEST, duplicated
    if resource.resource_type == ResourceType.BROKER_LOGGER:
        return _alter_loggers(ctx, resource, validate_only)
    broker_value = ctx.broker.config.known_value
    changes = list(resource.configs)
    config = ctx.broker.config
    if resource.resource_type == ResourceType.GROUP:
        return alter_resource(
            ctx, resource, lambda current: altered_group(current, changes, config), validate_only
        )
    if resource.resource_type == ResourceType.BROKER:
        scope = resource.resource_name
        return alter_resource(
            ctx, resource, lambda current: altered_broker(current, changes, scope, config), validate_only
        )
    return alter_resource(
        ctx, resource, lambda current: altered(current, changes, broker_value), validate_only
    )


# One resource's outcome: an error code and its message.
AlterOne = Callable[[RequestContext, Any, bool], tuple[ErrorCode, str | None]]


def respond(
    ctx: RequestContext,
    request: AlterConfigsRequestData | IncrementalAlterConfigsRequestData,
    alter_one: AlterOne,
    named_twice: str,
) -> dict[str, Any]:
    """The response for both config-altering APIs: a resource named twice in the request is
    refused with `named_twice` (INVALID_REQUEST), every other one goes to `alter_one`."""
    keys = Counter((r.resource_type, r.resource_name) for r in request.resources)
    responses = []
    for resource in request.resources:
        message: str | None
        if keys[(resource.resource_type, resource.resource_name)] > 1:
            code, message = ErrorCode.INVALID_REQUEST, named_twice
        else:
            code, message = alter_one(ctx, resource, request.validate_only)
        responses.append(
            {
                "error_code": code,
                "error_message": message,
                "resource_type": resource.resource_type,
                "resource_name": resource.resource_name,
            }
        )
    return {"throttle_time_ms": 0, "responses": responses}


async def handle(ctx: RequestContext, request: IncrementalAlterConfigsRequestData) -> dict[str, Any]:
    return respond(ctx, request, _alter, "the resource appears more than once in the request")
