"""The authorization table against the handlers: every advertised API, at every version, asked
by a principal granted nothing and by one granted exactly what the API's row lists (with
allow.everyone.if.no.acl.found=false). The first must be refused with the row's codes (or see
nothing, where the row hides), the second must see no authorization error at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages import APIS_BY_MODULE
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.handlers import ADVERTISED_APIS
from kafka_shim.shim.security.authorization import RULES, Check, Rule, Scope, UndeclaredCheck
from kafka_shim.shim.security.authorization_doc import with_table
from kafka_shim.shim.security.authorizer import (
    CLUSTER_NAME,
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from tests.batches import make_batch
from tests.helpers import Harness

ADMIN, NOBODY, GRANTED = "User:admin", "User:nobody", "User:granted"
TOPIC, GROUP, TXN = "t", "g", "tx"
NAMES = {
    ResourceType.TOPIC: TOPIC,
    ResourceType.GROUP: GROUP,
    ResourceType.TRANSACTIONAL_ID: TXN,
    ResourceType.CLUSTER: CLUSTER_NAME,
    ResourceType.USER: ADMIN,  # a token owner: the super user owns the one token
    ResourceType.DELEGATION_TOKEN: "some-token-id",
}
# How a listing names a resource in its answer, where not by NAMES (a token by its owner's name).
LISTED_AS = {ResourceType.USER: "admin"}
AUTHORIZATION_CODES = frozenset(
    {
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
    }
)
RECORDS = make_batch([b"v"])
PARTITIONS = [{"name": TOPIC, "partition_indexes": [0]}]
# Share requests name topic t by its id, filled in by `ask`; one acknowledgement to carry.
SHARE_TOPICS = [
    {
        "topic_id": None,
        "partitions": [
            {
                "partition_index": 0,
                "acknowledgement_batches": [{"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}],
            }
        ],
    }
]

# One request per API naming the resources above; fields a version lacks are left out when built.
REQUESTS: dict[str, dict[str, Any]] = {
    "produce": {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": TOPIC, "partition_data": [{"index": 0, "records": RECORDS}]}],
    },
    "fetch": {
        "max_wait_ms": 0,
        "max_bytes": 1 << 20,
        "session_epoch": -1,
        "topics": [
            {
                "topic": TOPIC,
                "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}],
            }
        ],
    },
    "list_offsets": {
        "replica_id": -1,
        "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
    },
    "metadata": {"topics": [{"name": TOPIC}], "allow_auto_topic_creation": False},
    "offset_commit": {
        "group_id": GROUP,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 1}]}],
    },
    "offset_fetch": {
        "group_id": GROUP,
        "topics": PARTITIONS,
        "groups": [{"group_id": GROUP, "topics": PARTITIONS}],
    },
    "find_coordinator": {"key": GROUP, "key_type": 0, "coordinator_keys": [GROUP]},
    "join_group": {
        "group_id": GROUP,
        "session_timeout_ms": 10000,
        "rebalance_timeout_ms": 10000,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}],
    },
    "heartbeat": {"group_id": GROUP, "generation_id": 1, "member_id": "m"},
    "leave_group": {"group_id": GROUP, "member_id": "m", "members": [{"member_id": "m"}]},
    "sync_group": {
        "group_id": GROUP,
        "generation_id": 1,
        "member_id": "m",
        "protocol_type": "consumer",
        "protocol_name": "range",
        "assignments": [],
    },
    "describe_groups": {"groups": [GROUP]},
    "list_groups": {},
    "sasl_handshake": {"mechanism": "PLAIN"},
    "api_versions": {"client_software_name": "test", "client_software_version": "1"},
    "create_topics": {
        "topics": [
            {"name": TOPIC, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
        ],
        "timeout_ms": 1000,
        "validate_only": True,
    },
    "delete_topics": {"topics": [{"name": TOPIC}], "topic_names": [TOPIC], "timeout_ms": 1000},
    "delete_records": {
        "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "offset": 0}]}],
        "timeout_ms": 1000,
    },
    "init_producer_id": {"transactional_id": TXN, "transaction_timeout_ms": 60000},
    "offset_for_leader_epoch": {
        "replica_id": -1,
        "topics": [{"topic": TOPIC, "partitions": [{"partition": 0, "leader_epoch": 0}]}],
    },
    "add_partitions_to_txn": {
        "transactions": [
            {
                "transactional_id": TXN,
                "producer_id": 0,
                "producer_epoch": 0,
                "verify_only": True,
                "topics": [{"name": TOPIC, "partitions": [0]}],
            }
        ],
        "v3_and_below_transactional_id": TXN,
        "v3_and_below_producer_id": 0,
        "v3_and_below_producer_epoch": 0,
        "v3_and_below_topics": [{"name": TOPIC, "partitions": [0]}],
    },
    "add_offsets_to_txn": {"transactional_id": TXN, "producer_id": 0, "producer_epoch": 0, "group_id": GROUP},
    "end_txn": {"transactional_id": TXN, "producer_id": 0, "producer_epoch": 0, "committed": False},
    "write_txn_markers": {
        "markers": [
            {
                "producer_id": 0,
                "producer_epoch": 0,
                "transaction_result": False,
                "topics": [{"name": TOPIC, "partition_indexes": [0]}],
                "coordinator_epoch": 0,
            }
        ]
    },
    "txn_offset_commit": {
        "transactional_id": TXN,
        "group_id": GROUP,
        "producer_id": 0,
        "producer_epoch": 0,
        "generation_id": -1,
        "member_id": "",
        "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 1}]}],
    },
    "describe_acls": {
        "resource_type_filter": ResourceType.ANY,
        "pattern_type_filter": PatternType.ANY,
        "operation": AclOperation.ANY,
        "permission_type": PermissionType.ANY,
    },
    "create_acls": {
        "creations": [
            {
                "resource_type": ResourceType.TOPIC,
                "resource_name": "other",
                "resource_pattern_type": PatternType.LITERAL,
                "principal": "User:x",
                "host": "*",
                "operation": AclOperation.READ,
                "permission_type": PermissionType.ALLOW,
            }
        ]
    },
    "delete_acls": {
        "filters": [
            {
                "resource_type_filter": ResourceType.TOPIC,
                "resource_name_filter": "other",
                "pattern_type_filter": PatternType.ANY,
                "operation": AclOperation.ANY,
                "permission_type": PermissionType.ANY,
            }
        ]
    },
    "describe_configs": {
        "resources": [{"resource_type": 2, "resource_name": TOPIC, "configuration_keys": None}]
    },
    "alter_configs": {
        "resources": [
            {"resource_type": 2, "resource_name": TOPIC, "configs": [{"name": "retention.ms", "value": "1"}]}
        ],
        "validate_only": True,
    },
    "alter_replica_log_dirs": {
        "dirs": [{"path": "/nowhere", "topics": [{"name": TOPIC, "partitions": [0]}]}]
    },
    "describe_log_dirs": {"topics": None},
    "sasl_authenticate": {"auth_bytes": b""},
    "create_partitions": {
        "topics": [{"name": TOPIC, "count": 2, "assignments": None}],
        "validate_only": True,
    },
    "delete_groups": {"groups_names": [GROUP]},
    "share_group_heartbeat": {
        "group_id": GROUP,
        "member_id": "m",
        "member_epoch": 0,
        "subscribed_topic_names": [TOPIC],
    },
    "share_group_describe": {"group_ids": [GROUP], "include_authorized_operations": True},
    "share_fetch": {
        "group_id": GROUP,
        "member_id": "m",
        "share_session_epoch": 0,
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_records": 10,
        "batch_size": 10,
        "topics": [{"topic_id": None, "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}],
        "forgotten_topics_data": [],
    },
    # epoch 1 of a session `ask` opens first (as the super user)
    "share_acknowledge": {
        "group_id": GROUP,
        "member_id": "m",
        "share_session_epoch": 1,
        "topics": SHARE_TOPICS,
    },
    "describe_share_group_offsets": {
        "groups": [{"group_id": GROUP, "topics": [{"topic_name": TOPIC, "partitions": [0]}]}]
    },
    "alter_share_group_offsets": {
        "group_id": GROUP,
        "topics": [{"topic_name": TOPIC, "partitions": [{"partition_index": 0, "start_offset": 0}]}],
    },
    "delete_share_group_offsets": {"group_id": GROUP, "topics": [{"topic_name": TOPIC}]},
    "elect_leaders": {
        "election_type": 0,
        "topic_partitions": [{"topic": TOPIC, "partitions": [0]}],
        "timeout_ms": 1000,
    },
    "incremental_alter_configs": {
        "resources": [
            {
                "resource_type": 2,
                "resource_name": TOPIC,
                "configs": [{"name": "retention.ms", "config_operation": 0, "value": "1"}],
            }
        ],
        "validate_only": True,
    },
    "alter_partition_reassignments": {"timeout_ms": 1000, "topics": []},
    "list_partition_reassignments": {"timeout_ms": 1000, "topics": None},
    "offset_delete": {"group_id": GROUP, "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0}]}]},
    "describe_client_quotas": {"components": [], "strict": False},
    "alter_client_quotas": {
        "entries": [
            {
                "entity": [{"entity_type": "client-id", "entity_name": "c"}],
                "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}],
            }
        ],
        "validate_only": True,
    },
    "describe_user_scram_credentials": {"users": None},
    "alter_user_scram_credentials": {
        "deletions": [],
        "upsertions": [
            {
                "name": "admin",
                "mechanism": 1,
                "iterations": 4096,
                "salt": b"s" * 16,
                "salted_password": b"p" * 32,
            }
        ],
    },
    "update_features": {"timeout_ms": 1000, "feature_updates": [], "validate_only": True},
    "describe_cluster": {"include_cluster_authorized_operations": True},
    "describe_producers": {"topics": PARTITIONS},
    "describe_transactions": {"transactional_ids": [TXN]},
    "list_transactions": {"state_filters": [], "producer_id_filters": []},
    "consumer_group_heartbeat": {
        "group_id": GROUP,
        "member_id": "",
        "member_epoch": 0,
        "rebalance_timeout_ms": 10000,
        "subscribed_topic_names": [TOPIC],
        "topic_partitions": [],
    },
    "consumer_group_describe": {"group_ids": [GROUP]},
    "describe_topic_partitions": {"topics": [{"name": TOPIC}], "response_partition_limit": 10},
    "describe_quorum": {
        "topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]
    },
    "unregister_broker": {"broker_id": 0},
    "add_raft_voter": {"cluster_id": None, "timeout_ms": 1000, "voter_id": 2, "listeners": []},
    "remove_raft_voter": {"cluster_id": None, "voter_id": 0},
    "list_config_resources": {"resource_types": []},
    # v3+: a token for the super user, which needs CREATE_TOKENS on it (before v3 a token is
    # always the requester's own: nothing to refuse)
    "create_delegation_token": {
        "owner_principal_type": "User",
        "owner_principal_name": "admin",
        "renewers": [],
        "max_lifetime_ms": -1,
    },
    "renew_delegation_token": {"hmac": b"no such token", "renew_period_ms": 1000},
    "expire_delegation_token": {"hmac": b"no such token", "expiry_time_period_ms": 1000},
    "describe_delegation_token": {"owners": None},
}

# Refusals a version's response has no field for: Kafka answers them with nothing described.
SILENT_REFUSALS = {("describe_log_dirs", version) for version in range(3)}  # error_code is v3+
# Requests no principal is refused: a token of one's own (CreateDelegationToken v0-2).
NOTHING_TO_REFUSE = {("create_delegation_token", version) for version in range(3)}

MODULES = {api.key: name for name, api in APIS_BY_MODULE.items()}
CASES = [
    pytest.param(MODULES[key], version, id=f"{api.name}-v{version}")
    for key, api in ADVERTISED_APIS.items()
    for version in range(api.versions.low, api.versions.high + 1)
]


def needed(rule: Rule) -> list[AclBinding]:
    """What the row asks for, on the test's resources; the cluster shortcuts left out."""
    return [
        AclBinding(
            check.resource,
            NAMES[check.resource],
            PatternType.LITERAL,
            GRANTED,
            "*",
            check.operation,
            PermissionType.ALLOW,
        )
        for check in rule.checks
        if check.scope is not Scope.SHORTCUT
    ]


def broker_with_resources(rule: Rule, withheld: Check | None = None) -> Harness:
    """Topic t, group g with an offset, transactional id tx with a producer id (made by the
    super user), and the grants of `rule` for the granted principal, but for `withheld`."""
    withheld_key = None if withheld is None else (withheld.operation, withheld.resource)
    h = Harness(
        authorizer_class_name=STANDARD_AUTHORIZER,
        super_users=ADMIN,
        allow_everyone_if_no_acl_found=False,
        delegation_token_secret_key="secret",
    )
    topic = {"name": TOPIC, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
    assert (
        h.call(19, 7, {"topics": [topic], "timeout_ms": 1000}, h.context(7, ADMIN)).topics[0].error_code == 0
    )
    commit = REQUESTS["offset_commit"]
    assert h.call(8, 8, commit, h.context(8, ADMIN)).topics[0].partitions[0].error_code == 0
    init = REQUESTS["init_producer_id"]
    assert h.call(22, 4, init, h.context(4, ADMIN)).error_code == 0
    h.broker.delegation_tokens.create(ADMIN, ADMIN, [], -1, h.clock.now)
    assert h.broker.authorizer is not None
    h.broker.authorizer.create(
        [acl for acl in needed(rule) if (acl.operation, acl.resource_type) != withheld_key]
    )
    return h


def ask(h: Harness, module: str, version: int, principal: str) -> Any:
    request = REQUESTS[module]
    topic = h.broker.topics.get(TOPIC)
    assert topic is not None
    # Fetch v13+, OffsetCommit v10+ and share requests: ids
    if module in ("fetch", "offset_commit", "share_fetch", "share_acknowledge"):
        request = request | {"topics": [request["topics"][0] | {"topic_id": topic.topic_id}]}
    if module == "offset_fetch":  # v10+ names a group's topics by id
        group = request["groups"][0]
        topics = [group["topics"][0] | {"topic_id": topic.topic_id}]
        request = request | {"groups": [group | {"topics": topics}]}
    if module == "produce" and version >= 13:  # Produce v13+ names topics by id
        request = request | {"topic_data": [request["topic_data"][0] | {"topic_id": topic.topic_id}]}
    if module == "share_acknowledge":
        opening = REQUESTS["share_fetch"] | {"topics": []}
        assert h.call(APIS_BY_MODULE["share_fetch"].key, 1, opening, h.context(1, ADMIN)).error_code == 0
    ctx = h.context(version, principal)
    ctx.security_protocol = "SASL_PLAINTEXT"  # tokens are refused on PLAINTEXT before any check
    return h.call(APIS_BY_MODULE[module].key, version, request, ctx)


def error_codes(value: Any) -> set[int]:
    """Every error code anywhere in a parsed response."""
    if isinstance(value, dict):
        found = {v for k, v in value.items() if k.endswith("error_code") and isinstance(v, int)}
        for v in value.values():
            found |= error_codes(v)
        return found
    if isinstance(value, list):
        return set().union(*(error_codes(v) for v in value)) if value else set()
    return set()


def names_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(names_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(names_in(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) else set()


@pytest.mark.parametrize(("module", "version"), CASES)
def test_every_api_is_refused_as_its_row_says_and_served_with_exactly_its_grants(
    module: str, version: int
) -> None:
    rule = RULES[module]
    refused = ask(broker_with_resources(rule), module, version, NOBODY)
    served = ask(broker_with_resources(rule), module, version, GRANTED)
    declared = {check.refusal for check in rule.checks if check.refusal is not None}
    assert not error_codes(served) & AUTHORIZATION_CODES, served
    refused_codes = error_codes(refused) & AUTHORIZATION_CODES
    assert refused_codes <= declared, refused
    if (module, version) in SILENT_REFUSALS:
        assert TOPIC not in names_in(refused), refused
    elif declared and (module, version) not in NOTHING_TO_REFUSE:
        assert refused_codes, refused
    hidden = [
        c.resource for c in rule.checks if c.scope is Scope.HIDDEN and c.resource != ResourceType.CLUSTER
    ]
    if hidden and not declared:  # a listing: what may not be seen is not there, what may is
        name = LISTED_AS.get(hidden[0], NAMES[hidden[0]])
        assert name not in names_in(refused) and name in names_in(served), (refused, served)


UNCONDITIONAL = [
    pytest.param(module, index, id=f"{module}-{check.operation.name}-{check.resource.name}")
    for module, rule in RULES.items()
    for index, check in enumerate(rule.checks)
    if check.refusal is not None and not check.when
]


@pytest.mark.parametrize(("module", "index"), UNCONDITIONAL)
def test_each_declared_check_is_made_and_refuses_with_its_code(module: str, index: int) -> None:
    """Every grant but one: the one withheld is refused, with the code its row declares."""
    check = RULES[module].checks[index]
    version = APIS_BY_MODULE[module].versions.high
    refused = ask(broker_with_resources(RULES[module], withheld=check), module, version, GRANTED)
    assert error_codes(refused) & AUTHORIZATION_CODES == {check.refusal}, refused


def test_the_table_has_a_row_for_every_api_and_no_other() -> None:
    assert set(RULES) == set(MODULES[key] for key in ADVERTISED_APIS) == set(REQUESTS)


def test_a_handler_asking_for_an_undeclared_check_is_a_bug_not_an_answer() -> None:
    h = Harness()
    ctx = h.context(4)
    ctx.rule = RULES["heartbeat"]
    assert ctx.authorize(AclOperation.READ, ResourceType.GROUP, GROUP)
    with pytest.raises(UndeclaredCheck, match="declares no WRITE on TOPIC"):
        ctx.authorize(AclOperation.WRITE, ResourceType.TOPIC, TOPIC)


def test_the_documented_table_is_generated_from_the_rows() -> None:
    page = Path(__file__).resolve().parents[3] / "docs" / "security.md"
    text = page.read_text(encoding="utf-8")
    assert text == with_table(text), "run: python -m kafka_shim.shim.security.authorization_doc"
