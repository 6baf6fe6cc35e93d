"""ShareAcknowledge: a share-group member acknowledges records (ACCEPT, RELEASE, REJECT,
RENEW from v2) without fetching. Epoch 0 cannot open a session here
(INVALID_SHARE_SESSION_EPOCH); -1 acknowledges and closes it, returning what the member
still holds. v2 answers the acquisition lock timeout."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.share_acknowledge import API
from kafka_shim.protocol.messages.share_fetch import OPEN_SESSION_EPOCH
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.share import requests as share_requests

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.share_acknowledge import ShareAcknowledgeRequestData

__all__ = ["API", "handle"]


def _answer(error: ErrorCode, message: str | None, lock_ms: int, topics: list[Any]) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "error_code": error,
        "error_message": message,
        "acquisition_lock_timeout_ms": lock_ms,
        "responses": topics,
        "node_endpoints": [],
    }


async def handle(ctx: RequestContext, request: ShareAcknowledgeRequestData) -> dict[str, Any]:
    if request.share_session_epoch == OPEN_SESSION_EPOCH:
        return _answer(
            ErrorCode.INVALID_SHARE_SESSION_EPOCH, "ShareAcknowledge cannot open a share session.", 0, []
        )
    share = share_requests.enter(ctx, request)
    if not isinstance(share, share_requests.ShareRequest):
        return _answer(share[0], share[1], 0, [])
    share_requests.acknowledge(ctx, share, request)
    answers = {
        key: {
            "partition_index": key[1],
            "error_code": share.errors.get(key, share.acknowledged.get(key, ErrorCode.NONE)),
            "current_leader": share_requests.leader(ctx),
        }
        for key in [*share.errors, *share.acknowledged]
    }
    lock_ms = ctx.broker.group_configs.share_config_of(share.group_id).record_lock_duration_ms
    return _answer(ErrorCode.NONE, None, lock_ms, share_requests.by_topic(answers))
