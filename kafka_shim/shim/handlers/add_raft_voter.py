"""AddRaftVoter: refused as the leader of a static quorum refuses it (shim.controller.quorum): this
broker's quorum is one voter, configured, not changeable (kraft.version 0). ALTER on the
cluster first (ControllerApis.handleAddRaftVoter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.messages.add_raft_voter import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller import quorum

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.add_raft_voter import AddRaftVoterRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: AddRaftVoterRequestData) -> dict[str, Any]:
    return quorum.voter_change_answer(ctx, request, "adding")
