"""AlterConfigs, the legacy API (kafka-python's and aiokafka's `alter_configs`): the configs
given become the resource's whole set of overrides, every other override is removed (unlike
IncrementalAlterConfigs, whose validation and write path it shares).

Kafka checks the request on the broker first (a resource named twice, a key named twice,
a null value, an unknown resource type: INVALID_REQUEST), then the permission, then applies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.alter_configs import API
from kafka_shim.protocol.messages.describe_configs import ResourceType
from kafka_shim.protocol.messages.incremental_alter_configs import AlterConfigOp
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.handlers.incremental_alter_configs import (
    alter_resource,
    altered,
    altered_broker,
    duplicate_keys,
    respond,
)

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.alter_configs import AlterConfigsRequestData, AlterConfigsRequestResources

__all__ = ["API", "handle"]

_LEGACY_TYPES = (ResourceType.TOPIC, ResourceType.BROKER)


class _SetConfig(NamedTuple):
    name: str
    value: str | None  # null is refused as IncrementalAlterConfigs refuses it (altered)
    config_operation: int = AlterConfigOp.SET


def _refusal(resource: AlterConfigsRequestResources) -> str | None:
    """Why the broker refuses the resource before asking for any permission."""
    duplicated = duplicate_keys(resource)
    if duplicated is not None:
        return duplicated
    nulls = [c.name for c in resource.configs if c.value is None]
    if nulls:
        return f"Null value not supported for : {', '.join(nulls)}"
    if resource.resource_type not in _LEGACY_TYPES:  # BROKER_LOGGER needs IncrementalAlterConfigs
        return f"Unknown resource type {resource.resource_type}"
    return None


def _replace(
    ctx: RequestContext, resource: AlterConfigsRequestResources, validate_only: bool
) -> tuple[ErrorCode, str | None]:
    refusal = _refusal(resource)
    if refusal is not None:
        return ErrorCode.INVALID_REQUEST, refusal
    broker_value = ctx.broker.config.known_value
    given = [_SetConfig(c.name, c.value) for c in resource.configs]
    # The whole set is replaced: start from no overrides at all.
    if resource.resource_type == ResourceType.BROKER:
        scope, config = resource.resource_name, ctx.broker.config
        return alter_resource(
            ctx, resource, lambda current: altered_broker({}, given, scope, config), validate_only
        )
    return alter_resource(ctx, resource, lambda current: altered({}, given, broker_value), validate_only)


async def handle(ctx: RequestContext, request: AlterConfigsRequestData) -> dict[str, Any]:
    return respond(ctx, request, _replace, "Each resource must appear at most once.")
