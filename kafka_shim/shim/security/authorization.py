"""What every API authorizes, as one table: one row per handler module, naming the Kafka
method it follows and its checks in the order Kafka makes them.

A check is an operation on a resource type, the error a refusal answers and how far a
refusal reaches (`Scope`). Handlers ask through their `RequestContext`, which knows the row
of the request being served: it refuses (loudly, as a bug) an operation the row does not
declare, and hands out the declared refusal code, so no handler names a code of its own.
The handler registry refuses to load when an advertised API has no row, so a new API cannot
skip authorization; `tests/shim/security/test_authorization.py` walks every API and version with an
unprivileged principal and with one granted exactly what its row lists.

A new API is a new row keyed by its handler module's name, e.g.
`"share_fetch": Rule("KafkaApis.handleShareFetchRequest", (whole(READ, GROUP), each(READ,
TOPIC)))`: `whole` refuses the request, `each` the resources it names, with the error
`DENIED` holds for the resource's type. `shim.security.authorizer` holds the ACL rules the checks
are decided by.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType


class Scope(Enum):
    # One resource for the request (its group, transactional id, the cluster): a refusal
    # answers every part of the request with the error.
    REQUEST = "request"
    # Every resource the request names on its own: the refused ones carry the error, the
    # others are served.
    EACH = "each"
    # What may not be seen is left out of the answer, silently (listings, authorized
    # operations): no error.
    HIDDEN = "hidden"
    # A cluster-wide grant standing for the next check (asked first, its denial unlogged).
    SHORTCUT = "shortcut"
    # Kafka's authorizeByResourceType: allowed when the principal may do it to some resource
    # of the type.
    ANY = "any"


@dataclass(frozen=True)
class Check:
    operation: AclOperation
    resource: ResourceType
    refusal: ErrorCode | None  # None for HIDDEN and SHORTCUT checks: nothing to answer
    scope: Scope
    when: str = ""  # the requests it applies to, when not every one


@dataclass(frozen=True)
class Rule:
    follows: str  # the Kafka method whose checks these are
    checks: tuple[Check, ...] = ()  # in Kafka's order; none: the API authorizes nothing
    # Each operation and resource type's first check: every authorization a handler asks
    # looks its check up here (an OffsetCommit asks three times).
    _by_kind: dict[tuple[AclOperation, ResourceType], Check] = field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        by_kind: dict[tuple[AclOperation, ResourceType], Check] = {}
        for check in self.checks:
            by_kind.setdefault((check.operation, check.resource), check)
        object.__setattr__(self, "_by_kind", by_kind)

    def check(self, operation: AclOperation, resource: ResourceType) -> Check:
        check = self._by_kind.get((operation, resource))
        if check is None:
            raise UndeclaredCheck(f"{self.follows} declares no {operation.name} on {resource.name}")
        return check


class UndeclaredCheck(RuntimeError):
    """A handler asked for an authorization its row does not declare: a bug, never an answer."""


READ, WRITE, CREATE, DELETE = AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE
ALTER, DESCRIBE, CLUSTER_ACTION = AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION
DESCRIBE_CONFIGS, ALTER_CONFIGS = AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS
IDEMPOTENT_WRITE = AclOperation.IDEMPOTENT_WRITE
CREATE_TOKENS, DESCRIBE_TOKENS = AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = (
    ResourceType.TRANSACTIONAL_ID,
    ResourceType.DELEGATION_TOKEN,
    ResourceType.USER,
)
# What a refused check answers, by its resource's type (Kafka's AuthorizationFailed errors).
DENIED = {
    TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}


def whole(operation: AclOperation, resource: ResourceType, when: str = "") -> Check:
    """The request's one resource: a refusal answers all of it."""
    return Check(operation, resource, DENIED[resource], Scope.REQUEST, when)


def each(operation: AclOperation, resource: ResourceType, when: str = "") -> Check:
    """Each resource the request names: the refused ones carry the error."""
    return Check(operation, resource, DENIED[resource], Scope.EACH, when)


def hidden(operation: AclOperation, resource: ResourceType, when: str = "") -> Check:
    return Check(operation, resource, None, Scope.HIDDEN, when)


def shortcut(operation: AclOperation, resource: ResourceType, when: str = "") -> Check:
    return Check(operation, resource, None, Scope.SHORTCUT, when)


def any_of(operation: AclOperation, resource: ResourceType, when: str = "") -> Check:
    return Check(operation, resource, None, Scope.ANY, when)


def _cluster(operation: AclOperation, follows: str) -> Rule:
    """The admin APIs Kafka's authHelper.authorizeClusterOperation guards: one cluster check."""
    return Rule(follows, (whole(operation, CLUSTER),))


def _group(operation: AclOperation, follows: str) -> Rule:
    return Rule(follows, (whole(operation, GROUP),))


RULES: dict[str, Rule] = {
    # -- data --------------------------------------------------------------------------------
    "produce": Rule(
        "KafkaApis.handleProduceRequest",
        (
            whole(WRITE, TRANSACTIONAL_ID, "transactional records"),
            each(WRITE, TOPIC),
        ),
    ),
    "fetch": Rule("KafkaApis.handleFetchRequest", (each(READ, TOPIC),)),
    "list_offsets": Rule("KafkaApis.handleListOffsetRequest", (each(DESCRIBE, TOPIC),)),
    "metadata": Rule(
        "KafkaApis.handleTopicMetadataRequest",
        (
            each(DESCRIBE, TOPIC, "named topics; hidden when all are listed"),
            shortcut(CREATE, CLUSTER, "auto-creation"),
            each(CREATE, TOPIC, "auto-creation"),
            hidden(DESCRIBE, CLUSTER, "cluster authorized operations (v8-10)"),
        ),
    ),
    "offset_for_leader_epoch": Rule(
        "KafkaApis.handleOffsetForLeaderEpochRequest",
        (shortcut(CLUSTER_ACTION, CLUSTER), each(DESCRIBE, TOPIC)),
    ),
    "delete_records": Rule("KafkaApis.handleDeleteRecordsRequest", (each(DELETE, TOPIC),)),
    "describe_producers": Rule("KafkaApis.handleDescribeProducersRequest", (each(READ, TOPIC),)),
    "describe_topic_partitions": Rule(
        "DescribeTopicPartitionsRequestHandler.handleDescribeTopicPartitionsRequest",
        (each(DESCRIBE, TOPIC, "named topics; hidden when all are listed"),),
    ),
    # -- groups ------------------------------------------------------------------------------
    "offset_commit": Rule(
        "KafkaApis.handleOffsetCommitRequest",
        (whole(READ, GROUP), each(READ, TOPIC)),
    ),
    "offset_fetch": Rule(
        "KafkaApis.handleOffsetFetchRequest",
        (
            whole(DESCRIBE, GROUP, "each group of a v8+ batch on its own"),
            each(DESCRIBE, TOPIC, "named topics; hidden when all are fetched"),
        ),
    ),
    "offset_delete": Rule(
        "KafkaApis.handleOffsetDeleteRequest",
        (whole(DELETE, GROUP), each(READ, TOPIC)),
    ),
    "find_coordinator": Rule(
        "KafkaApis.handleFindCoordinatorRequest",
        (
            each(DESCRIBE, GROUP, "group keys"),
            each(DESCRIBE, TRANSACTIONAL_ID, "transaction keys"),
        ),
    ),
    "join_group": _group(READ, "KafkaApis.handleJoinGroupRequest"),
    "heartbeat": _group(READ, "KafkaApis.handleHeartbeatRequest"),
    "leave_group": _group(READ, "KafkaApis.handleLeaveGroupRequest"),
    "sync_group": _group(READ, "KafkaApis.handleSyncGroupRequest"),
    "consumer_group_heartbeat": _group(READ, "KafkaApis.handleConsumerGroupHeartbeat"),
    "describe_groups": Rule("KafkaApis.handleDescribeGroupsRequest", (each(DESCRIBE, GROUP),)),
    "consumer_group_describe": Rule("KafkaApis.handleConsumerGroupDescribe", (each(DESCRIBE, GROUP),)),
    "list_groups": Rule(
        "KafkaApis.handleListGroupsRequest",
        (shortcut(DESCRIBE, CLUSTER), hidden(DESCRIBE, GROUP)),
    ),
    "delete_groups": Rule("KafkaApis.handleDeleteGroupsRequest", (each(DELETE, GROUP),)),
    # -- share groups (KIP-932) -------------------------------------------------------------
    "share_group_heartbeat": _group(READ, "KafkaApis.handleShareGroupHeartbeat"),
    "share_group_describe": Rule("KafkaApis.handleShareGroupDescribe", (each(DESCRIBE, GROUP),)),
    "share_fetch": Rule(
        "KafkaApis.handleShareFetchRequest",
        (whole(READ, GROUP), each(READ, TOPIC)),
    ),
    "share_acknowledge": Rule(
        "KafkaApis.handleShareAcknowledgeRequest",
        (whole(READ, GROUP), each(READ, TOPIC)),
    ),
    "describe_share_group_offsets": Rule(
        "KafkaApis.handleDescribeShareGroupOffsetsRequest",
        (each(DESCRIBE, GROUP), each(DESCRIBE, TOPIC)),
    ),
    "alter_share_group_offsets": Rule(
        "KafkaApis.handleAlterShareGroupOffsetsRequest",
        (whole(READ, GROUP), each(READ, TOPIC)),
    ),
    "delete_share_group_offsets": Rule(
        "KafkaApis.handleDeleteShareGroupOffsetsRequest",
        (whole(DELETE, GROUP), each(READ, TOPIC)),
    ),
    # -- transactions ------------------------------------------------------------------------
    "init_producer_id": Rule(
        "KafkaApis.handleInitProducerIdRequest",
        (
            whole(WRITE, TRANSACTIONAL_ID, "a transactional id"),
            whole(IDEMPOTENT_WRITE, CLUSTER, "no transactional id"),
            any_of(WRITE, TOPIC, "no transactional id: stands for IDEMPOTENT_WRITE"),
        ),
    ),
    "add_partitions_to_txn": Rule(
        "KafkaApis.handleAddPartitionsToTxnRequest",
        (
            whole(WRITE, TRANSACTIONAL_ID, "v0-3"),
            each(WRITE, TOPIC, "v0-3"),
            whole(CLUSTER_ACTION, CLUSTER, "v4+ (broker to broker)"),
        ),
    ),
    "add_offsets_to_txn": Rule(
        "KafkaApis.handleAddOffsetsToTxnRequest",
        (whole(WRITE, TRANSACTIONAL_ID), whole(READ, GROUP)),
    ),
    "txn_offset_commit": Rule(
        "KafkaApis.handleTxnOffsetCommitRequest",
        (
            whole(WRITE, TRANSACTIONAL_ID),
            whole(READ, GROUP),
            each(READ, TOPIC),
        ),
    ),
    "end_txn": Rule("KafkaApis.handleEndTxnRequest", (whole(WRITE, TRANSACTIONAL_ID),)),
    "write_txn_markers": _cluster(CLUSTER_ACTION, "KafkaApis.handleWriteTxnMarkersRequest"),
    "describe_transactions": Rule(
        "KafkaApis.handleDescribeTransactionsRequest",
        (each(DESCRIBE, TRANSACTIONAL_ID), hidden(DESCRIBE, TOPIC)),
    ),
    "list_transactions": Rule(
        "KafkaApis.handleListTransactionsRequest", (hidden(DESCRIBE, TRANSACTIONAL_ID),)
    ),
    # -- topics and configs ------------------------------------------------------------------
    "create_topics": Rule(
        "ControllerApis.createTopics",
        (
            shortcut(CREATE, CLUSTER),
            each(CREATE, TOPIC),
            each(DESCRIBE_CONFIGS, TOPIC, "the created topic's configs"),
        ),
    ),
    "delete_topics": Rule(
        "ControllerApis.deleteTopics",
        (
            shortcut(DELETE, CLUSTER),
            each(DESCRIBE, TOPIC, "before existence; DELETE implies it"),
            each(DELETE, TOPIC),
        ),
    ),
    "create_partitions": Rule("ControllerApis.handleCreatePartitions", (each(ALTER, TOPIC),)),
    "describe_configs": Rule(
        "KafkaApis.handleDescribeConfigsRequest",
        (
            each(DESCRIBE_CONFIGS, TOPIC, "topic resources"),
            each(DESCRIBE_CONFIGS, CLUSTER, "broker resources"),
            each(DESCRIBE_CONFIGS, GROUP, "group resources"),
        ),
    ),
    "alter_configs": Rule(
        "ControllerApis.handleLegacyAlterConfigs",
        (
            each(ALTER_CONFIGS, TOPIC, "topic resources"),
            each(ALTER_CONFIGS, CLUSTER, "broker resources"),
        ),
    ),
    "incremental_alter_configs": Rule(
        "ControllerApis.handleIncrementalAlterConfigs",
        (
            each(ALTER_CONFIGS, TOPIC, "topic resources"),
            each(ALTER_CONFIGS, CLUSTER, "broker resources"),
            each(ALTER_CONFIGS, GROUP, "group resources"),
        ),
    ),
    # -- the cluster -------------------------------------------------------------------------
    "describe_cluster": Rule(
        "KafkaApis.handleDescribeCluster",
        (hidden(DESCRIBE, CLUSTER, "cluster authorized operations"),),
    ),
    "describe_log_dirs": _cluster(DESCRIBE, "KafkaApis.handleDescribeLogDirsRequest"),
    "alter_replica_log_dirs": _cluster(ALTER, "KafkaApis.handleAlterReplicaLogDirsRequest"),
    "elect_leaders": _cluster(ALTER, "ControllerApis.handleElectLeaders"),
    "alter_partition_reassignments": _cluster(ALTER, "ControllerApis.handleAlterPartitionReassignments"),
    "list_partition_reassignments": _cluster(DESCRIBE, "ControllerApis.handleListPartitionReassignments"),
    "update_features": _cluster(ALTER, "ControllerApis.handleUpdateFeatures"),
    "describe_client_quotas": _cluster(DESCRIBE_CONFIGS, "KafkaApis.handleDescribeClientQuotasRequest"),
    "alter_client_quotas": _cluster(ALTER_CONFIGS, "ControllerApis.handleAlterClientQuotas"),
    "describe_acls": _cluster(DESCRIBE, "AclApis.handleDescribeAcls"),
    "create_acls": _cluster(ALTER, "AclApis.handleCreateAcls"),
    "delete_acls": _cluster(ALTER, "AclApis.handleDeleteAcls"),
    "describe_user_scram_credentials": _cluster(
        DESCRIBE, "KafkaApis.handleDescribeUserScramCredentialsRequest"
    ),
    "alter_user_scram_credentials": _cluster(ALTER, "ControllerApis.handleAlterUserScramCredentials"),
    # -- the metadata quorum (a single combined KRaft node) -----------------------------------
    "describe_quorum": _cluster(DESCRIBE, "ControllerApis.handleDescribeQuorum"),
    "unregister_broker": _cluster(ALTER, "ControllerApis.handleUnregisterBroker"),
    "add_raft_voter": _cluster(ALTER, "ControllerApis.handleAddRaftVoter"),
    "remove_raft_voter": _cluster(ALTER, "ControllerApis.handleRemoveRaftVoter"),
    "list_config_resources": _cluster(DESCRIBE_CONFIGS, "KafkaApis.handleListClientMetricsResources"),
    # -- delegation tokens (KIP-48): who may renew or expire a token is the token's own
    # owner and renewers, checked by the controller, not ACLs ---------------------------------
    "create_delegation_token": Rule(
        "KafkaApis.handleCreateTokenRequest",
        (
            Check(
                CREATE_TOKENS,
                USER,
                ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
                Scope.REQUEST,
                "a token for another owner (v3+)",
            ),
        ),
    ),
    "renew_delegation_token": Rule("ControllerApis.handleRenewDelegationTokenRequest"),
    "expire_delegation_token": Rule("ControllerApis.handleExpireDelegationTokenRequest"),
    "describe_delegation_token": Rule(
        "KafkaApis.handleDescribeTokensRequest",
        (
            hidden(DESCRIBE_TOKENS, USER, "tokens of other owners"),
            hidden(DESCRIBE, DELEGATION_TOKEN, "tokens the requester neither owns nor renews"),
        ),
    ),
    # -- before and during authentication: nothing to authorize ------------------------------
    "api_versions": Rule("KafkaApis.handleApiVersionsRequest"),
    "sasl_handshake": Rule("KafkaApis.handleSaslHandshakeRequest"),
    "sasl_authenticate": Rule("KafkaApis.handleSaslAuthenticateRequest"),
}
