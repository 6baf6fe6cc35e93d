"""UnregisterBroker: a principal that may ALTER the cluster removes a broker's registration
(ControllerApis.handleUnregisterBroker). An unknown id is BROKER_ID_NOT_REGISTERED (the code
alone, as Kafka answers it). A registered broker is answered NONE and keeps serving: a running
Kafka broker whose registration is removed registers again at its next heartbeat, and here every
emulated broker registers again at once (a stopped one is not left out of placement meanwhile,
docs/emulation.md)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.unregister_broker import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.unregister_broker import UnregisterBrokerRequestData

__all__ = ["API", "handle"]

log = logging.getLogger(__name__)


async def handle(ctx: RequestContext, request: UnregisterBrokerRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:  # UnregisterBrokerRequest.getErrorResponse: the code alone
        return {"throttle_time_ms": 0, "error_code": denial}
    if request.broker_id not in ctx.broker.cluster.registered():
        return {"throttle_time_ms": 0, "error_code": ErrorCode.BROKER_ID_NOT_REGISTERED}
    log.info("broker %d unregistered by %s; it registers again at once", request.broker_id, ctx.principal)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE}
