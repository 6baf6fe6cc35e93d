"""What a broker process answers differently from the one-process broker (shim.processes).

Topic changes go through the controller alone (the first broker), whose catalog the others
follow (shim.processes.catalog_follower): another process answers them NOT_CONTROLLER, as a
Kafka broker that is not the controller answers a request only the controller serves, and the
client asks the controller it finds in Metadata. ACLs, SCRAM users, quotas, features and
delegation tokens are changed by any process under the metadata's lock, and read after a look
at their files (shim.processes.cluster_metadata). Transactions are served: a coordinator sends
the markers of partitions other processes lead to them (shim.processes.marker_sender) and asks
them before a transactional write of a transaction they coordinate
(shim.processes.verification). What the processes do not share yet is refused by every
process with INVALID_REQUEST and one log line naming the reason: reassignments and elections,
and share groups (their state and the records they deliver are in different processes).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.error_answers import error_answer
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages import APIS
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.handlers import Handler
from kafka_shim.shim.security.delegation_tokens import TOKENS_FILE
from kafka_shim.shim.security.scram_store import CREDENTIALS_FILE
from kafka_shim.storage.data_dir import ACLS_FILE, FEATURES_FILE, QUOTAS_FILE

if TYPE_CHECKING:  # the network side's (it waits on the loop for the lock)
    from kafka_shim.shim.processes.cluster_metadata import ClusterMetadata

log = logging.getLogger("kafka_shim.processes")

# Changes of the topic catalog: the controller's alone.
CONTROLLER_ONLY = frozenset(
    {"CreateTopics", "DeleteTopics", "CreatePartitions", "AlterConfigs", "IncrementalAlterConfigs"}
)
# State each process would keep on its own, or that would cross processes.
NOT_SHARED_YET = frozenset(
    {
        "AlterPartitionReassignments",
        "ElectLeaders",
        "AlterReplicaLogDirs",
        "UnregisterBroker",
        "AddRaftVoter",
        "RemoveRaftVoter",
        "ShareGroupHeartbeat",
        "ShareFetch",
        "ShareAcknowledge",
        "AlterShareGroupOffsets",
        "DeleteShareGroupOffsets",
    }
)
# The requests that change the cluster's metadata, made under its lock
# (shim.processes.cluster_metadata; DescribeDelegationToken's sweep removes expired tokens),
# and those that read files of it, which look at them first.
CHANGES = frozenset(
    {
        "CreateAcls",
        "DeleteAcls",
        "AlterUserScramCredentials",
        "AlterClientQuotas",
        "UpdateFeatures",
        "CreateDelegationToken",
        "RenewDelegationToken",
        "ExpireDelegationToken",
        "DescribeDelegationToken",
    }
)
READS = {
    "DescribeAcls": (ACLS_FILE,),
    "DescribeUserScramCredentials": (CREDENTIALS_FILE,),
    "DescribeClientQuotas": (QUOTAS_FILE,),
    "ApiVersions": (FEATURES_FILE,),
    "SaslHandshake": (CREDENTIALS_FILE, TOKENS_FILE),
}
UNSHARED_REASON = "not served with --process-per-broker yet (docs/performance.md)"

Wrap = Callable[[Handler], Handler]


def answering(error: ErrorCode, reason: str, when: Callable[[Any], bool] = lambda body: True) -> Wrap:
    """A handler that answers `error` where its API carries one (to requests for which `when`
    holds; the others are handled as before), logging `reason` once per API."""

    def wrap(handler: Handler) -> Handler:
        api, logged = handler.api, list[bool]()

        async def handle(ctx: RequestContext, body: Any) -> Any:
            if not when(body):
                return await handler.handle(ctx, body)
            if not logged:
                logged.append(True)
                log.warning("%s answered %s: %s", api.name, error.name, reason)
            return error_answer(api, ctx.api_version, body, error)

        return replace(handler, handle=handle)

    return wrap


def before(step: Callable[[Any], Awaitable[None]]) -> Wrap:
    """A handler that awaits `step(body)` first (a non-controller's Metadata: follow the
    catalog, and have the controller create the topics it would auto-create)."""

    def wrap(handler: Handler) -> Handler:
        async def handle(ctx: RequestContext, body: Any) -> Any:
            await step(body)
            return await handler.handle(ctx, body)

        return replace(handler, handle=handle)

    return wrap


# Requests naming topics that a non-controller may not have followed yet, and the field
# holding their topic entries.
TOPIC_ENTRIES = {
    "Produce": "topic_data",
    "Fetch": "topics",
    "ListOffsets": "topics",
    "OffsetCommit": "topics",
    "TxnOffsetCommit": "topics",
    "AddPartitionsToTxn": "v3_and_below_topics",
}


def under(hold: Callable[[], AbstractAsyncContextManager[None]]) -> Wrap:
    """A handler that runs inside `hold()` (a change of the cluster's metadata: its lock)."""

    def wrap(handler: Handler) -> Handler:
        async def handle(ctx: RequestContext, body: Any) -> Any:
            async with hold():
                return await handler.handle(ctx, body)

        return replace(handler, handle=handle)

    return wrap


def process_handlers(
    controller: bool,
    before_metadata: Callable[[Any], Awaitable[None]],
    follow_unknown: Callable[[Any], None],
    metadata: ClusterMetadata,
) -> dict[int, Wrap]:
    """api key -> how a broker process wraps its handler."""
    by_name = {api.name: api.key for api in APIS.values()}
    unshared = answering(ErrorCode.INVALID_REQUEST, UNSHARED_REASON)
    wraps: dict[int, Wrap] = {by_name[name]: unshared for name in NOT_SHARED_YET}
    wraps.update({by_name[name]: under(metadata.change) for name in CHANGES})
    for name, files in READS.items():
        wraps[by_name[name]] = before(_syncing(metadata, files))
    if not controller:
        not_controller = answering(
            ErrorCode.NOT_CONTROLLER, "topic changes go to the controller, the first broker"
        )
        wraps.update({by_name[name]: not_controller for name in CONTROLLER_ONLY})
        wraps[by_name["Metadata"]] = before(before_metadata)
        for name, field in TOPIC_ENTRIES.items():
            wraps[by_name[name]] = before(_following(follow_unknown, field))
    return wraps


def _syncing(metadata: ClusterMetadata, files: tuple[str, ...]) -> Callable[[Any], Awaitable[None]]:
    async def step(body: Any) -> None:
        metadata.sync(files)

    return step


def _following(follow_unknown: Callable[[Any], None], field: str) -> Callable[[Any], Awaitable[None]]:
    async def step(body: Any) -> None:
        follow_unknown(getattr(body, field))

    return step
