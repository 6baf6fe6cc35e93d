"""RemoveRaftVoter: refused as the leader of a static quorum refuses it (shim.quorum): this
broker's quorum is one voter, configured, not changeable (kraft.version 0). ALTER on the
cluster first (ControllerApis.handleRemoveRaftVoter)."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.messages.remove_raft_voter import API
from kafka_shim.shim import quorum
from kafka_shim.shim.authorizer import CLUSTER_NAME, DENIED_MESSAGES, AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return {"throttle_time_ms": 0, "error_code": denial, "error_message": DENIED_MESSAGES[denial]}
    answer = quorum.voter_change_refusal(ctx, request.cluster_id, request.voter_directory_id, "removing")
    return {"throttle_time_ms": 0, **answer}
