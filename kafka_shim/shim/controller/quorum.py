"""The KRaft metadata quorum this broker answers for, as a combined single-node KRaft cluster
(process.roles=broker,controller with a static controller.quorum.voters) would: the controller
node is the one voter and the leader; the other emulated brokers (shim.testbroker.cluster) are observers.

The quorum's log is `__cluster_metadata` partition 0. Its offsets are the broker's metadata
offset: the epoch of the finalized features (shim.controller.features), which ApiVersions reports and
which grows across restarts, so the high watermark is never below what a client saw. Every
replica is caught up (there is nothing to replicate). The epoch is 1: one leader, never
re-elected. The quorum is static (kraft.version 0), so voters cannot be added or removed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, DENIED_MESSAGES, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.add_raft_voter import AddRaftVoterRequestData
    from kafka_shim.protocol.views.remove_raft_voter import RemoveRaftVoterRequestData

METADATA_TOPIC = "__cluster_metadata"
LEADER_EPOCH = 1
KRAFT_VERSION_LEVEL = 0  # a static quorum: controller.quorum.voters


def high_watermark(ctx: RequestContext) -> int:
    return ctx.broker.features.epoch


def _replica(node_id: int, offset: int, now_ms: int) -> dict[str, Any]:
    return {
        "replica_id": node_id,
        "replica_directory_id": ZERO_UUID,  # a static voter has no directory id
        "log_end_offset": offset,
        "last_fetch_timestamp": now_ms,
        "last_caught_up_timestamp": now_ms,
    }


def describe(ctx: RequestContext) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The partition's state, and (DescribeQuorum v2) the voters' endpoints."""
    cluster = ctx.broker.cluster
    leader = cluster.controller_id
    offset, now = high_watermark(ctx), ctx.now_ms()
    observers = [node.node_id for node in cluster.running() if node.node_id != leader]
    partition = {
        "partition_index": 0,
        "error_code": ErrorCode.NONE,
        "leader_id": leader,
        "leader_epoch": LEADER_EPOCH,
        "high_watermark": offset,
        "current_voters": [_replica(leader, offset, now)],
        "observers": [_replica(node_id, offset, now) for node_id in observers],
    }
    endpoints = cluster.nodes[leader].endpoints if leader in cluster.nodes else {}
    listeners = [{"name": name, "host": host, "port": port} for name, (host, port) in endpoints.items()]
    if not listeners:  # handlers called without a server: the one advertised address
        host, port = ctx.advertised_address()
        listeners = [{"name": ctx.listener_name or "PLAINTEXT", "host": host, "port": port}]
    return partition, [{"node_id": leader, "listeners": listeners}]


def voter_change_answer(
    ctx: RequestContext, request: AddRaftVoterRequestData | RemoveRaftVoterRequestData, verb: str
) -> dict[str, Any]:
    """Add/RemoveRaftVoter's answer: ALTER on the cluster first (ControllerApis), then refused
    as KafkaRaftClient refuses them on a static quorum's leader."""
    denial = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return {"throttle_time_ms": 0, "error_code": denial, "error_message": DENIED_MESSAGES[denial]}
    return {
        "throttle_time_ms": 0,
        **_voter_change_refusal(ctx, request.cluster_id, request.voter_directory_id, verb),
    }


def _voter_change_refusal(
    ctx: RequestContext, cluster_id: str | None, directory_id: Any, verb: str
) -> dict[str, Any]:
    """Add/RemoveRaftVoter as KafkaRaftClient answers them on a static quorum's leader: a wrong
    cluster id, then a voter without a directory id, then the kraft.version refusal."""
    if cluster_id is not None and cluster_id != ctx.broker.cluster_id:
        message = f'The given id "{cluster_id}" doesn\'t match the cluster id "{ctx.broker.cluster_id}"'
        return {"error_code": ErrorCode.INCONSISTENT_CLUSTER_ID, "error_message": message}
    if directory_id is None or directory_id == ZERO_UUID:
        noun = "Add" if verb == "adding" else "Remove"
        return {
            "error_code": ErrorCode.INVALID_REQUEST,
            "error_message": f"{noun} voter request didn't include a valid voter",
        }
    message = (
        f"Cluster doesn't support {verb} voter because the kraft.version feature is {KRAFT_VERSION_LEVEL}"
    )
    return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "error_message": message}
