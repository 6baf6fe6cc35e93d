"""What every API authorizes, as one table: one row per handler module, naming the Kafka
method it follows and its checks in the order Kafka makes them.

A check is an operation on a resource type, the error a refusal answers and how far a
refusal reaches (`Scope`). Handlers ask through their `RequestContext`, which knows the row
of the request being served: it refuses (loudly, as a bug) an operation the row does not
declare, and hands out the declared refusal code, so no handler names a code of its own.
The handler registry refuses to load when an advertised API has no row, so a new API cannot
skip authorization; `tests/shim/test_authorization.py` walks every API and version with an
unprivileged principal and with one granted exactly what its row lists.

A new API is a new row keyed by its handler module's name, e.g.
`"share_group_heartbeat": Rule("KafkaApis.handleShareGroupHeartbeat", (Check(READ, GROUP,
GROUP_DENIED),))`. `shim.authorizer` holds the ACL rules the checks are decided by.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.authorizer import AclOperation, ResourceType


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

    def check(self, operation: AclOperation, resource: ResourceType) -> Check:
        for check in self.checks:
            if check.operation == operation and check.resource == resource:
                return check
        raise UndeclaredCheck(f"{self.follows} declares no {operation.name} on {resource.name}")


class UndeclaredCheck(RuntimeError):
    """A handler asked for an authorization its row does not declare: a bug, never an answer."""


READ, WRITE, CREATE, DELETE = AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE
ALTER, DESCRIBE, CLUSTER_ACTION = AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION
DESCRIBE_CONFIGS, ALTER_CONFIGS = AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS
IDEMPOTENT_WRITE = AclOperation.IDEMPOTENT_WRITE
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID
TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
REQUEST, EACH, HIDDEN, SHORTCUT, ANY = Scope.REQUEST, Scope.EACH, Scope.HIDDEN, Scope.SHORTCUT, Scope.ANY


def _cluster(operation: AclOperation, follows: str) -> Rule:
    """The admin APIs Kafka's authHelper.authorizeClusterOperation guards: one cluster check."""
    return Rule(follows, (Check(operation, CLUSTER, CLUSTER_DENIED, REQUEST),))


def _group(operation: AclOperation, follows: str) -> Rule:
    return Rule(follows, (Check(operation, GROUP, GROUP_DENIED, REQUEST),))


RULES: dict[str, Rule] = {
    # -- data --------------------------------------------------------------------------------
    "produce": Rule(
        "KafkaApis.handleProduceRequest",
        (
            Check(WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQUEST, when="transactional records"),
            Check(WRITE, TOPIC, TOPIC_DENIED, EACH),
        ),
    ),
    "fetch": Rule("KafkaApis.handleFetchRequest", (Check(READ, TOPIC, TOPIC_DENIED, EACH),)),
    "list_offsets": Rule("KafkaApis.handleListOffsetRequest", (Check(DESCRIBE, TOPIC, TOPIC_DENIED, EACH),)),
    "metadata": Rule(
        "KafkaApis.handleTopicMetadataRequest",
        (
            Check(DESCRIBE, TOPIC, TOPIC_DENIED, EACH, when="named topics; hidden when all are listed"),
            Check(CREATE, CLUSTER, None, SHORTCUT, when="auto-creation"),
            Check(CREATE, TOPIC, TOPIC_DENIED, EACH, when="auto-creation"),
            Check(DESCRIBE, CLUSTER, None, HIDDEN, when="cluster authorized operations (v8-10)"),
        ),
    ),
    "offset_for_leader_epoch": Rule(
        "KafkaApis.handleOffsetForLeaderEpochRequest",
        (Check(CLUSTER_ACTION, CLUSTER, None, SHORTCUT), Check(DESCRIBE, TOPIC, TOPIC_DENIED, EACH)),
    ),
    "delete_records": Rule(
        "KafkaApis.handleDeleteRecordsRequest", (Check(DELETE, TOPIC, TOPIC_DENIED, EACH),)
    ),
    "describe_producers": Rule(
        "KafkaApis.handleDescribeProducersRequest", (Check(READ, TOPIC, TOPIC_DENIED, EACH),)
    ),
    "describe_topic_partitions": Rule(
        "DescribeTopicPartitionsRequestHandler.handleDescribeTopicPartitionsRequest",
        (Check(DESCRIBE, TOPIC, TOPIC_DENIED, EACH, when="named topics; hidden when all are listed"),),
    ),
    # -- groups ------------------------------------------------------------------------------
    "offset_commit": Rule(
        "KafkaApis.handleOffsetCommitRequest",
        (Check(READ, GROUP, GROUP_DENIED, REQUEST), Check(READ, TOPIC, TOPIC_DENIED, EACH)),
    ),
    "offset_fetch": Rule(
        "KafkaApis.handleOffsetFetchRequest",
        (
            Check(DESCRIBE, GROUP, GROUP_DENIED, REQUEST, when="each group of a v8+ batch on its own"),
            Check(DESCRIBE, TOPIC, TOPIC_DENIED, EACH, when="named topics; hidden when all are fetched"),
        ),
    ),
    "offset_delete": Rule(
        "KafkaApis.handleOffsetDeleteRequest",
        (Check(DELETE, GROUP, GROUP_DENIED, REQUEST), Check(READ, TOPIC, TOPIC_DENIED, EACH)),
    ),
    "find_coordinator": Rule(
        "KafkaApis.handleFindCoordinatorRequest",
        (
            Check(DESCRIBE, GROUP, GROUP_DENIED, EACH, when="group keys"),
            Check(DESCRIBE, TRANSACTIONAL_ID, TXN_DENIED, EACH, when="transaction keys"),
        ),
    ),
    "join_group": _group(READ, "KafkaApis.handleJoinGroupRequest"),
    "heartbeat": _group(READ, "KafkaApis.handleHeartbeatRequest"),
    "leave_group": _group(READ, "KafkaApis.handleLeaveGroupRequest"),
    "sync_group": _group(READ, "KafkaApis.handleSyncGroupRequest"),
    "consumer_group_heartbeat": _group(READ, "KafkaApis.handleConsumerGroupHeartbeat"),
    "describe_groups": Rule(
        "KafkaApis.handleDescribeGroupsRequest", (Check(DESCRIBE, GROUP, GROUP_DENIED, EACH),)
    ),
    "consumer_group_describe": Rule(
        "KafkaApis.handleConsumerGroupDescribe", (Check(DESCRIBE, GROUP, GROUP_DENIED, EACH),)
    ),
    "list_groups": Rule(
        "KafkaApis.handleListGroupsRequest",
        (Check(DESCRIBE, CLUSTER, None, SHORTCUT), Check(DESCRIBE, GROUP, None, HIDDEN)),
    ),
    "delete_groups": Rule("KafkaApis.handleDeleteGroupsRequest", (Check(DELETE, GROUP, GROUP_DENIED, EACH),)),
    # -- share groups (KIP-932) -------------------------------------------------------------
    "share_group_heartbeat": _group(READ, "KafkaApis.handleShareGroupHeartbeat"),
    "share_group_describe": Rule(
        "KafkaApis.handleShareGroupDescribe", (Check(DESCRIBE, GROUP, GROUP_DENIED, EACH),)
    ),
    "share_fetch": Rule(
        "KafkaApis.handleShareFetchRequest",
        (Check(READ, GROUP, GROUP_DENIED, REQUEST), Check(READ, TOPIC, TOPIC_DENIED, EACH)),
    ),
    "share_acknowledge": Rule(
        "KafkaApis.handleShareAcknowledgeRequest",
        (Check(READ, GROUP, GROUP_DENIED, REQUEST), Check(READ, TOPIC, TOPIC_DENIED, EACH)),
    ),
    "describe_share_group_offsets": Rule(
        "KafkaApis.handleDescribeShareGroupOffsetsRequest",
        (Check(DESCRIBE, GROUP, GROUP_DENIED, EACH), Check(DESCRIBE, TOPIC, TOPIC_DENIED, EACH)),
    ),
    "alter_share_group_offsets": Rule(
        "KafkaApis.handleAlterShareGroupOffsetsRequest",
        (Check(READ, GROUP, GROUP_DENIED, REQUEST), Check(READ, TOPIC, TOPIC_DENIED, EACH)),
    ),
    "delete_share_group_offsets": Rule(
        "KafkaApis.handleDeleteShareGroupOffsetsRequest",
        (Check(DELETE, GROUP, GROUP_DENIED, REQUEST), Check(READ, TOPIC, TOPIC_DENIED, EACH)),
    ),
    # -- transactions ------------------------------------------------------------------------
    "init_producer_id": Rule(
        "KafkaApis.handleInitProducerIdRequest",
        (
            Check(WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQUEST, when="a transactional id"),
            Check(IDEMPOTENT_WRITE, CLUSTER, CLUSTER_DENIED, REQUEST, when="no transactional id"),
            Check(WRITE, TOPIC, None, ANY, when="no transactional id: stands for IDEMPOTENT_WRITE"),
        ),
    ),
    "add_partitions_to_txn": Rule(
        "KafkaApis.handleAddPartitionsToTxnRequest",
        (
            Check(WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQUEST, when="v0-3"),
            Check(WRITE, TOPIC, TOPIC_DENIED, EACH, when="v0-3"),
            Check(CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, REQUEST, when="v4+ (broker to broker)"),
        ),
    ),
    "add_offsets_to_txn": Rule(
        "KafkaApis.handleAddOffsetsToTxnRequest",
        (Check(WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQUEST), Check(READ, GROUP, GROUP_DENIED, REQUEST)),
    ),
    "txn_offset_commit": Rule(
        "KafkaApis.handleTxnOffsetCommitRequest",
        (
            Check(WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQUEST),
            Check(READ, GROUP, GROUP_DENIED, REQUEST),
            Check(READ, TOPIC, TOPIC_DENIED, EACH),
        ),
    ),
    "end_txn": Rule("KafkaApis.handleEndTxnRequest", (Check(WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQUEST),)),
    "write_txn_markers": _cluster(CLUSTER_ACTION, "KafkaApis.handleWriteTxnMarkersRequest"),
    "describe_transactions": Rule(
        "KafkaApis.handleDescribeTransactionsRequest",
        (Check(DESCRIBE, TRANSACTIONAL_ID, TXN_DENIED, EACH), Check(DESCRIBE, TOPIC, None, HIDDEN)),
    ),
    "list_transactions": Rule(
        "KafkaApis.handleListTransactionsRequest", (Check(DESCRIBE, TRANSACTIONAL_ID, None, HIDDEN),)
    ),
    # -- topics and configs ------------------------------------------------------------------
    "create_topics": Rule(
        "ControllerApis.createTopics",
        (
            Check(CREATE, CLUSTER, None, SHORTCUT),
            Check(CREATE, TOPIC, TOPIC_DENIED, EACH),
            Check(DESCRIBE_CONFIGS, TOPIC, TOPIC_DENIED, EACH, when="the created topic's configs"),
        ),
    ),
    "delete_topics": Rule(
        "ControllerApis.deleteTopics",
        (
            Check(DELETE, CLUSTER, None, SHORTCUT),
            Check(DESCRIBE, TOPIC, TOPIC_DENIED, EACH, when="before existence; DELETE implies it"),
            Check(DELETE, TOPIC, TOPIC_DENIED, EACH),
        ),
    ),
    "create_partitions": Rule(
        "ControllerApis.handleCreatePartitions", (Check(ALTER, TOPIC, TOPIC_DENIED, EACH),)
    ),
    "describe_configs": Rule(
        "KafkaApis.handleDescribeConfigsRequest",
        (
            Check(DESCRIBE_CONFIGS, TOPIC, TOPIC_DENIED, EACH, when="topic resources"),
            Check(DESCRIBE_CONFIGS, CLUSTER, CLUSTER_DENIED, EACH, when="broker resources"),
            Check(DESCRIBE_CONFIGS, GROUP, GROUP_DENIED, EACH, when="group resources"),
        ),
    ),
    "alter_configs": Rule(
        "ControllerApis.handleLegacyAlterConfigs",
        (
            Check(ALTER_CONFIGS, TOPIC, TOPIC_DENIED, EACH, when="topic resources"),
            Check(ALTER_CONFIGS, CLUSTER, CLUSTER_DENIED, EACH, when="broker resources"),
        ),
    ),
    "incremental_alter_configs": Rule(
        "ControllerApis.handleIncrementalAlterConfigs",
        (
            Check(ALTER_CONFIGS, TOPIC, TOPIC_DENIED, EACH, when="topic resources"),
            Check(ALTER_CONFIGS, CLUSTER, CLUSTER_DENIED, EACH, when="broker resources"),
            Check(ALTER_CONFIGS, GROUP, GROUP_DENIED, EACH, when="group resources"),
        ),
    ),
    # -- the cluster -------------------------------------------------------------------------
    "describe_cluster": Rule(
        "KafkaApis.handleDescribeCluster",
        (Check(DESCRIBE, CLUSTER, None, HIDDEN, when="cluster authorized operations"),),
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
    # -- before and during authentication: nothing to authorize ------------------------------
    "api_versions": Rule("KafkaApis.handleApiVersionsRequest"),
    "sasl_handshake": Rule("KafkaApis.handleSaslHandshakeRequest"),
    "sasl_authenticate": Rule("KafkaApis.handleSaslAuthenticateRequest"),
}
