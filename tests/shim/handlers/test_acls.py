"""CreateAcls / DescribeAcls / DeleteAcls, and what the authorizer refuses on every other API,
through the wire schemas: alice may write and read topic A and read group G; she gets the
authorization errors Kafka gives on topic B and group H."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig, ConfigError, apply_kafka_configs
from kafka_shim.shim.security.authorizer import (
    CLUSTER_NAME,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from kafka_shim.storage.faults import FAULTS
from tests.batches import make_batch
from tests.helpers import Harness, subscription

ALICE, BOB, ADMIN = "User:alice", "User:bob", "User:admin"
CREATE_ACLS, DESCRIBE_ACLS, DELETE_ACLS = 30, 29, 31
PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3
OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN_GROUP = 8, 9, 10, 11
HEARTBEAT, LEAVE_GROUP, SYNC_GROUP, DESCRIBE_GROUPS, LIST_GROUPS = 12, 13, 14, 15, 16
CREATE_TOPICS, DELETE_TOPICS, DELETE_RECORDS, INIT_PRODUCER_ID = 19, 20, 21, 22
DESCRIBE_CONFIGS, CREATE_PARTITIONS, DELETE_GROUPS, ALTER_CONFIGS = 32, 37, 42, 44
OFFSET_DELETE, DESCRIBE_CLUSTER = 47, 60

TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = PermissionType.ALLOW, PermissionType.DENY
TAF = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GAF = ErrorCode.GROUP_AUTHORIZATION_FAILED
CAF = ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def creation(
    resource_type: ResourceType,
    name: str,
    operation: AclOperation,
    principal: str = ALICE,
    permission: PermissionType = ALLOW,
    pattern: PatternType = LITERAL,
) -> dict[str, Any]:
    return {
        "resource_type": resource_type,
        "resource_name": name,
        "resource_pattern_type": pattern,
        "principal": principal,
        "host": "*",
        "operation": operation,
        "permission_type": permission,
    }


def acl_filter(
    resource_type: ResourceType = ResourceType.ANY,
    name: str | None = None,
    pattern: PatternType = PatternType.ANY,
    principal: str | None = None,
    operation: AclOperation = AclOperation.ANY,
) -> dict[str, Any]:
    return {
        "resource_type_filter": resource_type,
        "resource_name_filter": name,
        "pattern_type_filter": pattern,
        "principal_filter": principal,
        "host_filter": None,
        "operation": operation,
        "permission_type": PermissionType.ANY,
    }


def secured(**config: Any) -> Harness:
    return Harness(authorizer_class_name=STANDARD_AUTHORIZER, super_users=ADMIN, **config)


def create(h: Harness, *creations: dict[str, Any], version: int = 3, principal: str = ADMIN) -> Any:
    return h.call(CREATE_ACLS, version, {"creations": list(creations)}, h.context(version, principal))


def describe(h: Harness, version: int = 3, principal: str = ADMIN, **filter_fields: Any) -> Any:
    return h.call(DESCRIBE_ACLS, version, acl_filter(**filter_fields), h.context(version, principal))


def described(response: Any) -> list[tuple[int, str, int, str, int, int]]:
    return sorted(
        (r.resource_type, r.resource_name, r.pattern_type, a.principal, a.operation, a.permission_type)
        for r in response.resources
        for a in r.acls
    )


# --- the ACL APIs -------------------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2, 3])
def test_create_describe_delete_round_trip(version: int) -> None:
    h = secured()
    created = create(
        h,
        creation(TOPIC, "orders", AclOperation.READ),
        creation(TOPIC, "orders", AclOperation.WRITE),
        creation(TOPIC, "ord", AclOperation.WRITE, pattern=PREFIXED),
        creation(GROUP, "g", AclOperation.READ, principal="User:*", permission=DENY),
        version=version,
    )
    assert [(r.error_code, r.error_message) for r in created.results] == [(0, "")] * 4
    everything = describe(h, version)
    assert (everything.error_code, everything.error_message) == (0, "")
    assert described(everything) == [
        (TOPIC, "ord", PREFIXED, ALICE, AclOperation.WRITE, ALLOW),
        (TOPIC, "orders", LITERAL, ALICE, AclOperation.READ, ALLOW),
        (TOPIC, "orders", LITERAL, ALICE, AclOperation.WRITE, ALLOW),
        (GROUP, "g", LITERAL, "User:*", AclOperation.READ, DENY),
    ]
    # One resource entry per pattern, its ACLs inside, as Kafka groups them.
    assert sorted((r.resource_name, len(r.acls)) for r in everything.resources) == [
        ("g", 1),
        ("ord", 1),
        ("orders", 2),
    ]
    matching = describe(h, version, resource_type=TOPIC, name="orders-eu", pattern=PatternType.MATCH)
    assert described(matching) == [(TOPIC, "ord", PREFIXED, ALICE, AclOperation.WRITE, ALLOW)]
    deleted = h.call(
        DELETE_ACLS,
        version,
        {"filters": [acl_filter(TOPIC, "orders", LITERAL), acl_filter(GROUP, "nothing")]},
        h.context(version, ADMIN),
    )
    first, second = deleted.filter_results
    assert (first.error_code, second.error_code, second.matching_acls) == (0, 0, [])
    assert sorted(
        (a.resource_name, a.operation, a.pattern_type, a.error_code) for a in first.matching_acls
    ) == [
        ("orders", AclOperation.READ, LITERAL, 0),
        ("orders", AclOperation.WRITE, LITERAL, 0),
    ]
    assert [r[1] for r in described(describe(h, version))] == ["ord", "g"]


def test_v0_carries_no_pattern_type_and_means_literal() -> None:
    h = secured()
    assert create(h, creation(TOPIC, "orders", AclOperation.READ), version=0).results[0].error_code == 0
    create(h, creation(TOPIC, "ord", AclOperation.READ, pattern=PREFIXED))
    assert described(describe(h, 0)) == [(TOPIC, "orders", LITERAL, ALICE, AclOperation.READ, ALLOW)]


def test_invalid_bindings_are_refused_one_by_one() -> None:
    h = secured()
    results = create(
        h,
        creation(CLUSTER, "my-cluster", AclOperation.ALTER),
        creation(CLUSTER, CLUSTER_NAME, AclOperation.ALTER),
        creation(TOPIC, "", AclOperation.READ),
        creation(TOPIC, "t", 99),  # type: ignore[arg-type]  # a code Kafka does not know: UNKNOWN
    ).results
    assert [(r.error_code, r.error_message) for r in results] == [
        (ErrorCode.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),
        (0, ""),
        (ErrorCode.INVALID_REQUEST, "Invalid empty resource name"),
        (ErrorCode.INVALID_REQUEST, "Invalid operation UNKNOWN"),
    ]


@pytest.mark.parametrize(
    "invalid",
    [
        creation(TOPIC, "t", AclOperation.ANY),
        creation(TOPIC, "t", AclOperation.READ, pattern=PatternType.MATCH),
        creation(TOPIC, "t", AclOperation.READ, pattern=PatternType.ANY),
        creation(ResourceType.ANY, "t", AclOperation.READ),
    ],
)
def test_a_filter_only_value_fails_the_whole_request(invalid: dict[str, Any]) -> None:
    """Kafka 3.9 cannot build the binding (AclApis.handleCreateAcls): -1 for every creation and
    none created, as the corpus (tests/fidelity, case acls.*) recorded."""
    h = secured()
    results = create(h, creation(TOPIC, "t", AclOperation.READ), invalid).results
    assert [(r.error_code, r.error_message) for r in results] == [(ErrorCode.UNKNOWN_SERVER_ERROR, None)] * 2
    assert describe(h).resources == []


def test_requests_naming_the_unknown_code_are_not_parsed_as_kafka() -> None:
    h = secured()
    with pytest.raises(ProtocolError, match="UNKNOWN elements"):
        create(h, creation(ResourceType.UNKNOWN, "t", AclOperation.READ))
    with pytest.raises(ProtocolError, match="UNKNOWN elements"):
        describe(h, operation=AclOperation.UNKNOWN)


def test_delete_refuses_filters_of_unknown_codes_one_by_one() -> None:
    h = secured()
    unknown_type = acl_filter() | {"resource_type_filter": 42}
    response = h.call(DELETE_ACLS, 3, {"filters": [unknown_type, acl_filter()]}, h.context(3, ADMIN))
    assert [(r.error_code, r.error_message) for r in response.filter_results] == [
        (ErrorCode.INVALID_REQUEST, "Unknown patternFilter."),
        (0, None),
    ]


def test_without_an_authorizer_the_acl_apis_answer_security_disabled() -> None:
    h = Harness()
    assert [r.error_code for r in create(h, creation(TOPIC, "t", AclOperation.READ)).results] == [
        ErrorCode.SECURITY_DISABLED
    ]
    response = describe(h)
    assert (response.error_code, response.error_message) == (
        ErrorCode.SECURITY_DISABLED,
        "No Authorizer is configured.",
    )
    deleted = h.call(DELETE_ACLS, 3, {"filters": [acl_filter(), acl_filter()]})
    assert [r.error_code for r in deleted.filter_results] == [ErrorCode.SECURITY_DISABLED] * 2


def test_acl_apis_need_alter_or_describe_on_the_cluster() -> None:
    h = secured()
    assert create(h, creation(TOPIC, "t", AclOperation.READ), principal=ALICE).results[0].error_code == CAF
    assert describe(h, principal=ALICE).error_code == CAF
    create(h, creation(CLUSTER, CLUSTER_NAME, AclOperation.DESCRIBE))
    assert describe(h, principal=ALICE).error_code == 0
    assert create(h, creation(TOPIC, "t", AclOperation.READ), principal=ALICE).results[0].error_code == CAF
    create(h, creation(CLUSTER, CLUSTER_NAME, AclOperation.ALTER))
    assert create(h, creation(TOPIC, "t", AclOperation.READ), principal=ALICE).results[0].error_code == 0
    deleted = h.call(DELETE_ACLS, 3, {"filters": [acl_filter(TOPIC)]}, h.context(3, BOB))
    assert deleted.filter_results[0].error_code == CAF


def test_acls_survive_a_restart_of_the_data_directory(tmp_path: Path) -> None:
    h = secured(data_dir=tmp_path)
    create(
        h,
        creation(TOPIC, "orders", AclOperation.WRITE),
        creation(GROUP, "g", AclOperation.READ, pattern=PREFIXED),
    )
    h.call(DELETE_ACLS, 3, {"filters": [acl_filter(GROUP)]}, h.context(3, ADMIN))
    h.broker.close()
    config = BrokerConfig(data_dir=tmp_path, authorizer_class_name=STANDARD_AUTHORIZER)
    restarted = Broker(config)
    try:
        assert restarted.authorizer is not None
        assert [(a.name, a.operation) for a in restarted.authorizer.acls] == [("orders", AclOperation.WRITE)]
        assert restarted.authorizer.authorize(ALICE, "127.0.0.1", AclOperation.WRITE, TOPIC, "orders")
    finally:
        restarted.close()
    assert '"operation": "WRITE"' in (tmp_path / "acls.json").read_text()


def test_authorizer_configs_as_kafka_names_them() -> None:
    config = apply_kafka_configs(
        BrokerConfig(),
        {
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "super.users": "User:admin; User:ops",
            "allow.everyone.if.no.acl.found": "true",
        },
    )
    broker = Broker(config)
    assert broker.authorizer is not None
    assert broker.authorizer.super_users == {ADMIN, "User:ops"}
    assert broker.authorizer.allow_if_no_acl
    assert Broker(BrokerConfig()).authorizer is None
    with pytest.raises(ConfigError, match=r"authorizer\.class\.name"):
        apply_kafka_configs(BrokerConfig(), {"authorizer.class.name": "com.example.MyAuthorizer"})
    with pytest.raises(ConfigError, match="principalType:principalName"):
        apply_kafka_configs(BrokerConfig(), {"super.users": "admin"})


# --- alice: WRITE and READ on topic A, READ on group G ------------------------------------


@pytest.fixture
def h() -> Harness:
    h = secured()
    for topic in ("A", "B"):
        h.broker.topics.create(topic)
    create(
        h,
        creation(TOPIC, "A", AclOperation.WRITE),
        creation(TOPIC, "A", AclOperation.READ),
        creation(GROUP, "G", AclOperation.READ),
    )
    return h


def topic_id(h: Harness, name: str) -> Any:
    topic = h.broker.topics.get(name)
    assert topic is not None
    return topic.topic_id


def as_alice(h: Harness, api: int, version: int, request: dict[str, Any], principal: str = ALICE) -> Any:
    return h.call(api, version, request, h.context(version, principal))


def produce(topic: str) -> dict[str, Any]:
    records = make_batch([b"v"])
    return {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }


def test_produce_needs_write_on_the_topic(h: Harness) -> None:
    assert as_alice(h, PRODUCE, 9, produce("A")).responses[0].partition_responses[0].error_code == 0
    for topic in ("B", "missing"):  # refused before its existence is looked at
        assert as_alice(h, PRODUCE, 9, produce(topic)).responses[0].partition_responses[0].error_code == TAF
    assert h.broker.topics.get("missing") is None


def test_fetch_needs_read_list_offsets_describe(h: Harness) -> None:
    fetch = {
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_epoch": -1,
        "topics": [
            {"topic": t, "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}
            for t in ("A", "B")
        ],
    }
    answered = as_alice(h, FETCH, 12, fetch).responses
    assert [(r.topic, r.partitions[0].error_code) for r in answered] == [("A", 0), ("B", TAF)]
    offsets = {
        "topics": [{"name": t, "partitions": [{"partition_index": 0, "timestamp": -1}]} for t in ("A", "B")]
    }
    answered = as_alice(h, LIST_OFFSETS, 7, offsets).topics
    assert [(t.name, t.partitions[0].error_code) for t in answered] == [("A", 0), ("B", TAF)]


def test_metadata_hides_and_refuses_what_may_not_be_described(h: Harness) -> None:
    every = as_alice(h, METADATA, 9, {"topics": None, "include_topic_authorized_operations": True})
    assert [(t.name, t.error_code) for t in every.topics] == [("A", 0)]
    read_write_describe = (1 << AclOperation.READ) | (1 << AclOperation.WRITE) | (1 << AclOperation.DESCRIBE)
    assert every.topics[0].topic_authorized_operations == read_write_describe
    named = as_alice(
        h, METADATA, 9, {"topics": [{"name": "B"}, {"name": "C"}], "allow_auto_topic_creation": True}
    )
    assert [(t.name, t.error_code, t.partitions) for t in named.topics] == [("B", TAF, []), ("C", TAF, [])]
    # DESCRIBE without CREATE: still no auto-creation.
    create(h, creation(TOPIC, "C", AclOperation.DESCRIBE))
    named = as_alice(h, METADATA, 9, {"topics": [{"name": "C"}], "allow_auto_topic_creation": True})
    assert (named.topics[0].error_code, h.broker.topics.get("C")) == (TAF, None)
    create(h, creation(TOPIC, "C", AclOperation.CREATE))
    named = as_alice(h, METADATA, 9, {"topics": [{"name": "C"}], "allow_auto_topic_creation": True})
    assert named.topics[0].error_code == 0 and h.broker.topics.get("C") is not None
    by_id = as_alice(h, METADATA, 12, {"topics": [{"name": None, "topic_id": topic_id(h, "B")}]})
    assert (by_id.topics[0].error_code, by_id.topics[0].name) == (TAF, None)
    cluster_ops = as_alice(h, METADATA, 10, {"topics": [], "include_cluster_authorized_operations": True})
    assert cluster_ops.cluster_authorized_operations == 0


def join(group: str) -> dict[str, Any]:
    return {
        "group_id": group,
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 10_000,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription("A")}],
    }


def test_group_apis_need_read_on_the_group(h: Harness) -> None:
    found = as_alice(h, FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["G", "H"]}).coordinators
    assert [(c.key, c.error_code, c.node_id) for c in found] == [("G", 0, 0), ("H", GAF, -1)]
    old = as_alice(h, FIND_COORDINATOR, 3, {"key_type": 0, "key": "H"})
    assert (old.error_code, old.error_message, old.port) == (GAF, "Group authorization failed.", -1)
    joined = as_alice(h, JOIN_GROUP, 3, join("G"))
    assert joined.error_code == 0 and joined.generation_id == 1
    refused = as_alice(h, JOIN_GROUP, 3, join("H"))
    assert (refused.error_code, refused.generation_id, refused.member_id) == (GAF, -1, "")
    member = {"group_id": "H", "generation_id": 1, "member_id": "m", "assignments": []}
    assert as_alice(h, SYNC_GROUP, 3, member).error_code == GAF
    assert as_alice(h, HEARTBEAT, 3, member).error_code == GAF
    assert as_alice(h, LEAVE_GROUP, 3, {"group_id": "H", "members": [{"member_id": "m"}]}).error_code == GAF
    left = as_alice(h, LEAVE_GROUP, 3, {"group_id": "G", "members": [{"member_id": joined.member_id}]})
    assert left.error_code == 0


def commit(group: str) -> dict[str, Any]:
    return {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [
            {
                "name": t,
                "partitions": [{"partition_index": 0, "committed_offset": 5, "committed_metadata": ""}],
            }
            for t in ("A", "B")
        ],
    }


def test_offsets_need_the_group_and_the_topics(h: Harness) -> None:
    committed = as_alice(h, OFFSET_COMMIT, 8, commit("G")).topics
    assert sorted((t.name, t.partitions[0].error_code) for t in committed) == [("A", 0), ("B", TAF)]
    refused = as_alice(h, OFFSET_COMMIT, 8, commit("H")).topics
    assert sorted((t.name, t.partitions[0].error_code) for t in refused) == [("A", GAF), ("B", GAF)]
    as_alice(h, OFFSET_COMMIT, 8, commit("G"), principal=ADMIN)  # the admin commits B too
    asked = [{"name": t, "partition_indexes": [0]} for t in ("A", "B")]
    fetched = as_alice(
        h,
        OFFSET_FETCH,
        8,
        {"groups": [{"group_id": "G", "topics": asked}, {"group_id": "H", "topics": asked}]},
    )
    g, other = fetched.groups
    assert sorted(
        (t.name, t.partitions[0].committed_offset, t.partitions[0].error_code) for t in g.topics
    ) == [
        ("A", 5, 0),
        ("B", -1, TAF),
    ]
    assert (other.error_code, other.topics) == (GAF, [])
    every = as_alice(h, OFFSET_FETCH, 8, {"groups": [{"group_id": "G", "topics": None}]}).groups[0]
    assert [t.name for t in every.topics] == ["A"]  # B's offset is left out, not refused
    v5 = as_alice(h, OFFSET_FETCH, 5, {"group_id": "H", "topics": asked})
    assert (v5.error_code, v5.topics) == (GAF, [])
    v1 = as_alice(h, OFFSET_FETCH, 1, {"group_id": "H", "topics": asked})
    assert sorted((t.name, t.partitions[0].error_code) for t in v1.topics) == [("A", GAF), ("B", GAF)]
    deleted = as_alice(
        h,
        OFFSET_DELETE,
        0,
        {"group_id": "G", "topics": [{"name": "A", "partitions": [{"partition_index": 0}]}]},
    )
    assert deleted.error_code == GAF  # READ is not DELETE


def test_an_acl_made_or_deleted_between_commits_applies_to_the_next(h: Harness) -> None:
    # Nothing of an authorization is kept across requests (the commit path reads its checks
    # from a table made once, but asks the authorizer on every commit).
    before = as_alice(h, OFFSET_COMMIT, 8, commit("G")).topics
    assert sorted((t.name, t.partitions[0].error_code) for t in before) == [("A", 0), ("B", TAF)]
    create(h, creation(TOPIC, "B", AclOperation.READ))
    after = as_alice(h, OFFSET_COMMIT, 8, commit("G")).topics
    assert sorted((t.name, t.partitions[0].error_code) for t in after) == [("A", 0), ("B", 0)]
    revoked = acl_filter(GROUP, "G", LITERAL, operation=AclOperation.READ)
    h.call(DELETE_ACLS, 3, {"filters": [revoked]}, h.context(3, ADMIN))
    last = as_alice(h, OFFSET_COMMIT, 8, commit("G")).topics
    assert sorted((t.name, t.partitions[0].error_code) for t in last) == [("A", GAF), ("B", GAF)]


def test_group_admin_describe_list_delete(h: Harness) -> None:
    as_alice(h, JOIN_GROUP, 3, join("G"), principal=ADMIN)
    as_alice(h, JOIN_GROUP, 3, join("H"), principal=ADMIN)
    groups = as_alice(
        h, DESCRIBE_GROUPS, 5, {"groups": ["G", "H"], "include_authorized_operations": True}
    ).groups
    assert [(g.group_id, g.error_code) for g in groups] == [("G", 0), ("H", GAF)]
    assert groups[0].authorized_operations == (1 << AclOperation.READ) | (1 << AclOperation.DESCRIBE)
    assert (groups[1].group_state, groups[1].members) == ("", [])
    assert [g.group_id for g in as_alice(h, LIST_GROUPS, 4, {}).groups] == ["G"]
    assert sorted(g.group_id for g in as_alice(h, LIST_GROUPS, 4, {}, principal=ADMIN).groups) == ["G", "H"]
    deleted = as_alice(h, DELETE_GROUPS, 2, {"groups_names": ["G", "H"]}).results
    assert sorted((r.group_id, r.error_code) for r in deleted) == [("G", GAF), ("H", GAF)]


def test_topic_admin_needs_its_operations(h: Harness) -> None:
    created = as_alice(
        h,
        CREATE_TOPICS,
        7,
        {"topics": [{"name": "new", "num_partitions": 1, "replication_factor": 1}], "timeout_ms": 1000},
    )
    assert (created.topics[0].error_code, created.topics[0].error_message) == (TAF, "Authorization failed.")
    create(h, creation(CLUSTER, CLUSTER_NAME, AclOperation.CREATE))
    created = as_alice(
        h,
        CREATE_TOPICS,
        7,
        {"topics": [{"name": "new", "num_partitions": 2, "replication_factor": 1}], "timeout_ms": 1000},
    ).topics[0]
    # Created, but alice may not DESCRIBE_CONFIGS it: no configs, no counts (as Kafka).
    assert (created.error_code, created.topic_config_error_code, created.num_partitions, created.configs) == (
        0,
        TAF,
        -1,
        [],
    )
    assert h.broker.topics.partition("new", 1) is not None
    deleted = as_alice(
        h,
        DELETE_TOPICS,
        6,
        {"topics": [{"name": "A"}, {"name": None, "topic_id": topic_id(h, "B")}]},
    )
    assert [(r.name, r.error_code) for r in deleted.responses] == [("A", TAF), (None, TAF)]
    grown = as_alice(h, CREATE_PARTITIONS, 3, {"topics": [{"name": "A", "count": 2}], "timeout_ms": 1000})
    assert grown.results[0].error_code == TAF
    records = as_alice(
        h, DELETE_RECORDS, 2, {"topics": [{"name": "A", "partitions": [{"partition_index": 0, "offset": 0}]}]}
    )
    assert records.topics[0].partitions[0].error_code == TAF


def test_configs_need_describe_and_alter_configs(h: Harness) -> None:
    resources = [{"resource_type": 2, "resource_name": "A"}, {"resource_type": 4, "resource_name": "0"}]
    results = as_alice(h, DESCRIBE_CONFIGS, 4, {"resources": resources}).results
    assert [(r.error_code, r.error_message, r.configs) for r in results] == [
        (TAF, "Topic authorization failed.", []),
        (CAF, "Cluster authorization failed.", []),
    ]
    create(h, creation(TOPIC, "A", AclOperation.ALTER_CONFIGS))
    assert as_alice(h, DESCRIBE_CONFIGS, 4, {"resources": resources[:1]}).results[0].error_code == 0
    change = {"name": "retention.ms", "config_operation": 0, "value": "1000"}
    altered = as_alice(
        h,
        ALTER_CONFIGS,
        1,
        {"resources": [{"resource_type": 2, "resource_name": n, "configs": [change]} for n in ("A", "B")]},
    ).responses
    assert [(r.resource_name, r.error_code) for r in altered] == [("A", 0), ("B", TAF)]


def test_idempotent_producers_need_write_on_some_topic_or_idempotent_write(h: Harness) -> None:
    request = {"transactional_id": None, "transaction_timeout_ms": 60_000}
    assert as_alice(h, INIT_PRODUCER_ID, 4, request).error_code == 0
    assert as_alice(h, INIT_PRODUCER_ID, 4, request, principal=BOB).error_code == CAF
    create(h, creation(CLUSTER, CLUSTER_NAME, AclOperation.IDEMPOTENT_WRITE, principal=BOB))
    assert as_alice(h, INIT_PRODUCER_ID, 4, request, principal=BOB).error_code == 0
    transactional = as_alice(h, INIT_PRODUCER_ID, 4, request | {"transactional_id": "tx"})
    assert transactional.error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_describe_cluster_answers_no_operations_to_whom_may_not_describe_it(h: Harness) -> None:
    request = {"include_cluster_authorized_operations": True}
    assert as_alice(h, DESCRIBE_CLUSTER, 1, request).cluster_authorized_operations == 0
    create(h, creation(CLUSTER, CLUSTER_NAME, AclOperation.ALTER))
    ops = as_alice(h, DESCRIBE_CLUSTER, 1, request).cluster_authorized_operations
    assert ops == (1 << AclOperation.ALTER) | (1 << AclOperation.DESCRIBE)


def test_super_users_and_allow_everyone_if_no_acl_found(h: Harness) -> None:
    assert (
        as_alice(h, PRODUCE, 9, produce("B"), principal=ADMIN).responses[0].partition_responses[0].error_code
        == 0
    )
    open_broker = Harness(authorizer_class_name=STANDARD_AUTHORIZER, allow_everyone_if_no_acl_found=True)
    open_broker.broker.topics.create("B")
    assert as_alice(open_broker, PRODUCE, 9, produce("B")).responses[0].partition_responses[0].error_code == 0


def test_describe_producers_needs_read_on_the_topic(h: Harness) -> None:
    request = {"topics": [{"name": name, "partition_indexes": [0]} for name in ("A", "B")]}
    answered = as_alice(h, 61, 0, request).topics
    assert [(t.name, t.partitions[0].error_code) for t in answered] == [("A", 0), ("B", TAF)]


def test_write_txn_markers_needs_cluster_action(h: Harness) -> None:
    marker = {
        "producer_id": 7,
        "producer_epoch": 0,
        "transaction_result": False,
        "topics": [{"name": "A", "partition_indexes": [0]}],
        "coordinator_epoch": 0,
    }
    refused = as_alice(h, 27, 1, {"markers": [marker]}).markers[0].topics[0].partitions[0]
    assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert h.broker.topics.partition("A", 0).log_end_offset == 0  # type: ignore[union-attr]
    create(h, creation(CLUSTER, CLUSTER_NAME, AclOperation.CLUSTER_ACTION))
    written = as_alice(h, 27, 1, {"markers": [marker]}).markers[0].topics[0].partitions[0]
    assert written.error_code == ErrorCode.NONE


def test_consumer_group_heartbeat_needs_read_on_the_group(h: Harness) -> None:
    beat = {
        "member_id": "m-1",
        "member_epoch": 0,
        "rebalance_timeout_ms": 30_000,
        "subscribed_topic_names": ["A"],
        "topic_partitions": [],
    }
    assert as_alice(h, 68, 1, {**beat, "group_id": "G"}).error_code == ErrorCode.NONE
    assert as_alice(h, 68, 1, {**beat, "group_id": "H"}).error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert h.broker.consumer_groups.group("H") is None


def test_consumer_group_describe_needs_describe_on_the_group(h: Harness) -> None:
    request = {"group_ids": ["G", "H"], "include_authorized_operations": True}
    answered = {g.group_id: g.error_code for g in as_alice(h, 69, 1, request).groups}
    assert answered["H"] == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert answered["G"] != ErrorCode.GROUP_AUTHORIZATION_FAILED


# --- transaction APIs: WRITE on the transactional id first, as KafkaApis checks them ----------
TID_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def with_transactional_id(h: Harness, tid: str = "T") -> None:
    create(
        h,
        creation(ResourceType.TRANSACTIONAL_ID, tid, AclOperation.WRITE),
        creation(ResourceType.TRANSACTIONAL_ID, tid, AclOperation.DESCRIBE),
    )


def test_end_txn_and_add_offsets_need_write_on_the_transactional_id(h: Harness) -> None:
    end = {"transactional_id": "T", "producer_id": 1, "producer_epoch": 0, "committed": True}
    add = {"transactional_id": "T", "producer_id": 1, "producer_epoch": 0, "group_id": "G"}
    assert as_alice(h, 26, 3, end).error_code == TID_DENIED
    assert as_alice(h, 25, 3, add).error_code == TID_DENIED
    with_transactional_id(h)
    assert as_alice(h, 26, 3, end).error_code != TID_DENIED
    assert as_alice(h, 25, 3, {**add, "group_id": "H"}).error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED


def test_add_partitions_needs_write_on_the_transactional_id_then_on_each_topic(h: Harness) -> None:
    request = {
        "v3_and_below_transactional_id": "T",
        "v3_and_below_producer_id": 1,
        "v3_and_below_producer_epoch": 0,
        "v3_and_below_topics": [{"name": "A", "partitions": [0]}, {"name": "B", "partitions": [0]}],
    }

    def answered() -> dict[str, int]:
        topics = as_alice(h, 24, 3, request).results_by_topic_v3_and_below
        return {t.name: t.results_by_partition[0].partition_error_code for t in topics}

    assert answered() == {"A": TID_DENIED, "B": TID_DENIED}
    with_transactional_id(h)
    assert answered() == {"A": ErrorCode.OPERATION_NOT_ATTEMPTED, "B": TAF}
    # v4+ is the brokers' batched form: CLUSTER_ACTION on the cluster.
    batched = {"transactions": [{**{k.removeprefix("v3_and_below_"): v for k, v in request.items()}}]}
    batched["transactions"][0]["verify_only"] = True
    assert as_alice(h, 24, 4, batched).error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_txn_offset_commit_needs_the_transactional_id_the_group_and_the_topics(h: Harness) -> None:
    def commit(group: str, topic: str) -> int:
        request = {
            "transactional_id": "T",
            "group_id": group,
            "producer_id": 1,
            "producer_epoch": 0,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1}]}],
        }
        return int(as_alice(h, 28, 3, request).topics[0].partitions[0].error_code)

    assert commit("G", "A") == TID_DENIED
    with_transactional_id(h)
    assert commit("H", "A") == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert commit("G", "B") == TAF
    assert commit("G", "A") not in (TID_DENIED, ErrorCode.GROUP_AUTHORIZATION_FAILED, TAF)


def test_describe_and_list_transactions_show_only_described_transactional_ids(h: Harness) -> None:
    described = as_alice(h, 65, 0, {"transactional_ids": ["T"]}).transaction_states[0]
    assert described.error_code == TID_DENIED
    with_transactional_id(h)
    assert as_alice(h, 65, 0, {"transactional_ids": ["T"]}).transaction_states[0].error_code != TID_DENIED
    init = {
        "transactional_id": "T",
        "transaction_timeout_ms": 60_000,
        "producer_id": -1,
        "producer_epoch": -1,
    }
    assert as_alice(h, 22, 4, init).error_code == ErrorCode.NONE
    everything: dict[str, Any] = {"state_filters": [], "producer_id_filters": []}
    assert [t.transactional_id for t in as_alice(h, 66, 0, everything).transaction_states] == ["T"]
    assert as_alice(h, 66, 0, everything, principal=BOB).transaction_states == []


def test_acls_that_cannot_be_written_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    """A full disk under acls.json (the storage seam's fault): KAFKA_STORAGE_ERROR for each
    binding and each filter, and the ACLs in memory stay as on disk."""
    h = secured(data_dir=tmp_path)
    assert create(h, creation(TOPIC, "kept", AclOperation.READ)).results[0].error_code == 0
    FAULTS.arm("file:acls.json", errno=errno.ENOSPC)
    try:
        refused = create(h, creation(TOPIC, "lost", AclOperation.READ))
        assert [r.error_code for r in refused.results] == [ErrorCode.KAFKA_STORAGE_ERROR]
        deleted = h.call(DELETE_ACLS, 3, {"filters": [acl_filter(TOPIC)]}, h.context(3, ADMIN))
        assert [r.error_code for r in deleted.filter_results] == [ErrorCode.KAFKA_STORAGE_ERROR]
    finally:
        FAULTS.clear()
    assert [name for _, name, *_ in described(describe(h))] == ["kept"]
