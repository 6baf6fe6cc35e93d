"""The authorizer's rules, as Kafka's StandardAuthorizer decides them: table-driven."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.security.authorizer import (
    CLUSTER_NAME,
    AclBinding,
    AclFilter,
    AclOperation,
    AclRefusal,
    Authorizer,
    PatternType,
    PermissionType,
    ResourceType,
    binding_fields,
    binding_from_fields,
)

Op = AclOperation
TOPIC, GROUP, CLUSTER, TXN = (
    ResourceType.TOPIC,
    ResourceType.GROUP,
    ResourceType.CLUSTER,
    ResourceType.TRANSACTIONAL_ID,
)
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = PermissionType.ALLOW, PermissionType.DENY
ALICE, BOB = "User:alice", "User:bob"
HOST = "127.0.0.1"


def acl(
    operation: AclOperation,
    name: str = "orders",
    permission: PermissionType = ALLOW,
    principal: str = ALICE,
    resource_type: ResourceType = TOPIC,
    pattern: PatternType = LITERAL,
    host: str = "*",
) -> AclBinding:
    return AclBinding(resource_type, name, pattern, principal, host, operation, permission)


# (ACLs, principal, operation, resource type, resource name, allowed?)
DECISIONS: list[tuple[str, list[AclBinding], str, AclOperation, ResourceType, str, bool]] = [
    ("no ACL at all denies", [], ALICE, Op.READ, TOPIC, "orders", False),
    ("a literal allow", [acl(Op.READ)], ALICE, Op.READ, TOPIC, "orders", True),
    ("another operation is not allowed", [acl(Op.READ)], ALICE, Op.WRITE, TOPIC, "orders", False),
    ("another principal is not allowed", [acl(Op.READ)], BOB, Op.READ, TOPIC, "orders", False),
    ("another topic is not allowed", [acl(Op.READ)], ALICE, Op.READ, TOPIC, "payments", False),
    ("a literal name is not a prefix", [acl(Op.READ)], ALICE, Op.READ, TOPIC, "orders-eu", False),
    ("same name, other resource type", [acl(Op.READ)], ALICE, Op.READ, GROUP, "orders", False),
    ("User:* allows everyone", [acl(Op.READ, principal="User:*")], BOB, Op.READ, TOPIC, "orders", True),
    ("the * resource allows every name", [acl(Op.READ, name="*")], ALICE, Op.READ, TOPIC, "any", True),
    (
        "a prefix allows the names it starts",
        [acl(Op.WRITE, "ord", pattern=PREFIXED)],
        ALICE,
        Op.WRITE,
        TOPIC,
        "orders",
        True,
    ),
    (
        "a prefix allows its own name",
        [acl(Op.WRITE, "ord", pattern=PREFIXED)],
        ALICE,
        Op.WRITE,
        TOPIC,
        "ord",
        True,
    ),
    (
        "a prefix does not allow others",
        [acl(Op.WRITE, "ord", pattern=PREFIXED)],
        ALICE,
        Op.WRITE,
        TOPIC,
        "or",
        False,
    ),
    (
        "a prefix * is no wildcard",
        [acl(Op.WRITE, "*", pattern=PREFIXED)],
        ALICE,
        Op.WRITE,
        TOPIC,
        "orders",
        False,
    ),
    (
        "DENY wins over ALLOW",
        [acl(Op.READ), acl(Op.READ, permission=DENY)],
        ALICE,
        Op.READ,
        TOPIC,
        "orders",
        False,
    ),
    (
        "a prefix DENY wins over a literal ALLOW",
        [acl(Op.READ), acl(Op.READ, "o", DENY, pattern=PREFIXED)],
        ALICE,
        Op.READ,
        TOPIC,
        "orders",
        False,
    ),
    (
        "a DENY of User:* denies alice too",
        [acl(Op.READ), acl(Op.READ, permission=DENY, principal="User:*")],
        ALICE,
        Op.READ,
        TOPIC,
        "orders",
        False,
    ),
    ("ALL allows every operation", [acl(Op.ALL)], ALICE, Op.ALTER_CONFIGS, TOPIC, "orders", True),
    (
        "a DENY of ALL denies every one",
        [acl(Op.ALL), acl(Op.ALL, permission=DENY)],
        ALICE,
        Op.DESCRIBE,
        TOPIC,
        "orders",
        False,
    ),
    ("READ implies DESCRIBE", [acl(Op.READ)], ALICE, Op.DESCRIBE, TOPIC, "orders", True),
    ("WRITE implies DESCRIBE", [acl(Op.WRITE)], ALICE, Op.DESCRIBE, TOPIC, "orders", True),
    ("DELETE implies DESCRIBE", [acl(Op.DELETE)], ALICE, Op.DESCRIBE, TOPIC, "orders", True),
    ("ALTER implies DESCRIBE", [acl(Op.ALTER)], ALICE, Op.DESCRIBE, TOPIC, "orders", True),
    ("CREATE does not imply DESCRIBE", [acl(Op.CREATE)], ALICE, Op.DESCRIBE, TOPIC, "orders", False),
    ("DESCRIBE implies nothing else", [acl(Op.DESCRIBE)], ALICE, Op.READ, TOPIC, "orders", False),
    (
        "ALTER_CONFIGS implies DESCRIBE_CONFIGS",
        [acl(Op.ALTER_CONFIGS)],
        ALICE,
        Op.DESCRIBE_CONFIGS,
        TOPIC,
        "orders",
        True,
    ),
    (
        "ALTER does not imply DESCRIBE_CONFIGS",
        [acl(Op.ALTER)],
        ALICE,
        Op.DESCRIBE_CONFIGS,
        TOPIC,
        "orders",
        False,
    ),
    (
        "a DENY of READ does not deny DESCRIBE",
        [acl(Op.DESCRIBE), acl(Op.READ, permission=DENY)],
        ALICE,
        Op.DESCRIBE,
        TOPIC,
        "orders",
        True,
    ),
    ("an ACL for this host", [acl(Op.READ, host=HOST)], ALICE, Op.READ, TOPIC, "orders", True),
    ("an ACL for another host", [acl(Op.READ, host="10.0.0.9")], ALICE, Op.READ, TOPIC, "orders", False),
    ("READ on a group", [acl(Op.READ, "g", resource_type=GROUP)], ALICE, Op.READ, GROUP, "g", True),
    (
        "the cluster resource",
        [acl(Op.CREATE, CLUSTER_NAME, resource_type=CLUSTER)],
        ALICE,
        Op.CREATE,
        CLUSTER,
        CLUSTER_NAME,
        True,
    ),
    (
        "WRITE on a transactional id",
        [acl(Op.WRITE, "tx", resource_type=TXN)],
        ALICE,
        Op.WRITE,
        TXN,
        "tx",
        True,
    ),
]


@pytest.mark.parametrize(
    ("acls", "principal", "operation", "resource_type", "name", "allowed"),
    [case[1:] for case in DECISIONS],
    ids=[case[0] for case in DECISIONS],
)
def test_decisions(
    acls: list[AclBinding],
    principal: str,
    operation: AclOperation,
    resource_type: ResourceType,
    name: str,
    allowed: bool,
) -> None:
    assert Authorizer(acls=acls).authorize(principal, HOST, operation, resource_type, name) is allowed


# allow.everyone.if.no.acl.found: (ACLs, principal, allowed?)
NO_ACL_FOUND = [
    ("no ACL on the resource: allowed", [acl(Op.READ, "payments")], BOB, True),
    ("an ACL for someone else on it: denied", [acl(Op.READ)], BOB, False),
    ("a DENY for someone else on it: denied", [acl(Op.WRITE, permission=DENY)], BOB, False),
    ("a prefix ACL covering it: denied", [acl(Op.READ, "or", pattern=PREFIXED)], BOB, False),
]


@pytest.mark.parametrize(
    ("acls", "principal", "allowed"), [c[1:] for c in NO_ACL_FOUND], ids=[c[0] for c in NO_ACL_FOUND]
)
def test_allow_everyone_if_no_acl_found(acls: list[AclBinding], principal: str, allowed: bool) -> None:
    authorizer = Authorizer(allow_if_no_acl=True, acls=acls)
    assert authorizer.authorize(principal, HOST, Op.READ, TOPIC, "orders") is allowed


def test_super_users_may_do_anything_even_against_a_deny() -> None:
    authorizer = Authorizer(super_users={"User:admin"}, acls=[acl(Op.ALL, "*", DENY, "User:*")])
    assert authorizer.authorize("User:admin", HOST, Op.ALTER, CLUSTER, CLUSTER_NAME)
    assert not authorizer.authorize(ALICE, HOST, Op.READ, TOPIC, "orders")


# Kafka's authorizeByResourceType, used for IDEMPOTENT_WRITE: (ACLs, allowed?)
ANY_RESOURCE = [
    ("nothing", [], False),
    ("WRITE on one topic", [acl(Op.WRITE)], True),
    ("ALL on one topic", [acl(Op.ALL)], True),
    ("READ is not WRITE", [acl(Op.READ)], False),
    ("the literal denied", [acl(Op.WRITE), acl(Op.WRITE, permission=DENY)], False),
    (
        "a covering prefix denied",
        [acl(Op.WRITE, "orders"), acl(Op.WRITE, "ord", DENY, pattern=PREFIXED)],
        False,
    ),
    (
        "a longer prefix denied only",
        [acl(Op.WRITE, "ord", pattern=PREFIXED), acl(Op.WRITE, "orders", DENY, pattern=PREFIXED)],
        True,
    ),
    ("the * topic denied", [acl(Op.WRITE, "a"), acl(Op.WRITE, "*", DENY)], False),
    ("the * topic allowed", [acl(Op.WRITE, "*")], True),
    ("for another principal", [acl(Op.WRITE, principal=BOB)], False),
    ("for another host", [acl(Op.WRITE, host="10.0.0.9")], False),
]


@pytest.mark.parametrize(("acls", "allowed"), [c[1:] for c in ANY_RESOURCE], ids=[c[0] for c in ANY_RESOURCE])
def test_authorize_by_resource_type(acls: list[AclBinding], allowed: bool) -> None:
    assert Authorizer(acls=acls).authorize_any(ALICE, HOST, Op.WRITE, TOPIC) is allowed


def test_authorize_by_resource_type_lets_super_users_and_no_acl_found_through() -> None:
    assert Authorizer(super_users={ALICE}).authorize_any(ALICE, HOST, Op.WRITE, TOPIC)
    assert Authorizer(allow_if_no_acl=True).authorize_any(ALICE, HOST, Op.WRITE, TOPIC)


def test_authorized_operations_are_a_bit_field_of_the_supported_ones() -> None:
    authorizer = Authorizer(acls=[acl(Op.READ), acl(Op.ALTER_CONFIGS)])
    expected = {Op.READ, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS}
    assert authorizer.authorized_operations(ALICE, HOST, TOPIC, "orders") == sum(1 << op for op in expected)
    assert authorizer.authorized_operations(BOB, HOST, TOPIC, "orders") == 0
    everything = Authorizer(super_users={ALICE}).authorized_operations(ALICE, HOST, GROUP, "g")
    group_ops = (Op.READ, Op.DELETE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS)
    assert everything == sum(1 << op for op in group_ops)
    # Before groups had configs (Kafka 3.9's AclEntry.supportedOperations(GROUP)); probe2's
    # golden kip848.errors records 328 for them.
    alice = Authorizer(super_users={ALICE})
    before = alice.authorized_operations(ALICE, HOST, GROUP, "g", group_configs=False)
    assert before == 328


def flt(
    resource_type: ResourceType = ResourceType.ANY,
    name: str | None = None,
    pattern: PatternType = PatternType.ANY,
    principal: str | None = None,
    operation: AclOperation = Op.ANY,
    permission: PermissionType = PermissionType.ANY,
) -> AclFilter:
    return AclFilter(resource_type, name, pattern, principal, None, operation, permission)


STORED = [
    acl(Op.READ, "orders"),
    acl(Op.WRITE, "ord", pattern=PREFIXED),
    acl(Op.READ, "*"),
    acl(Op.READ, "g", resource_type=GROUP, principal=BOB, permission=DENY),
]

# (filter, indexes into STORED of the ACLs it matches)
FILTERS = [
    ("everything", flt(), [0, 1, 2, 3]),
    ("by resource type", flt(GROUP), [3]),
    ("literal name", flt(TOPIC, "orders", LITERAL), [0]),
    ("ANY pattern: the exact name", flt(TOPIC, "ord"), [1]),
    ("MATCH: whatever applies to the resource", flt(TOPIC, "orders", PatternType.MATCH), [0, 1, 2]),
    ("MATCH of a name only * covers", flt(TOPIC, "x", PatternType.MATCH), [2]),
    ("by principal", flt(principal=BOB), [3]),
    ("by operation", flt(operation=Op.WRITE), [1]),
    ("by permission", flt(permission=DENY), [3]),
    ("prefixed only", flt(pattern=PREFIXED), [1]),
]


@pytest.mark.parametrize(("acl_filter", "matched"), [c[1:] for c in FILTERS], ids=[c[0] for c in FILTERS])
def test_filters(acl_filter: AclFilter, matched: list[int]) -> None:
    assert Authorizer(acls=STORED).describe(acl_filter) == [STORED[i] for i in matched]


def test_create_refuses_invalid_bindings_one_by_one_and_reports_changes() -> None:
    changes: list[list[AclBinding]] = []
    authorizer = Authorizer(on_change=lambda acls: changes.append(list(acls)))
    good = acl(Op.READ)
    results = authorizer.create(
        [
            good,
            acl(Op.READ, "other-cluster", resource_type=CLUSTER),
            acl(Op.READ, ""),
            acl(Op.READ, resource_type=ResourceType.ANY),
            acl(Op.READ, pattern=PatternType.MATCH),
            acl(Op.ANY),
            acl(Op.READ, permission=PermissionType.ANY),
            good,
        ]
    )
    assert results == [
        None,
        AclRefusal(
            ErrorCode.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"
        ),
        AclRefusal(ErrorCode.INVALID_REQUEST, "Invalid empty resource name"),
        AclRefusal(ErrorCode.INVALID_REQUEST, "Invalid resourceType ANY"),
        AclRefusal(ErrorCode.INVALID_REQUEST, "Invalid patternType MATCH"),
        AclRefusal(ErrorCode.INVALID_REQUEST, "Invalid operation ANY"),
        AclRefusal(ErrorCode.INVALID_REQUEST, "Invalid permissionType ANY"),
        None,
    ]
    assert authorizer.acls == [good]
    assert changes == [[good]]
    authorizer.create([good])  # already there: nothing changes, nothing is written
    assert changes == [[good]]


def test_delete_reports_per_filter_and_refuses_unknown_filters() -> None:
    changes: list[list[AclBinding]] = []
    authorizer = Authorizer(acls=STORED, on_change=lambda acls: changes.append(list(acls)))
    results = authorizer.delete(
        [
            flt(TOPIC, "orders", LITERAL),
            flt(operation=Op.READ, resource_type=TOPIC),
            flt(ResourceType.UNKNOWN),
            flt(operation=Op.UNKNOWN),
        ]
    )
    assert results == [
        [STORED[0]],
        [STORED[0], STORED[2]],  # matched by both filters, reported by both as Kafka does
        AclRefusal(ErrorCode.INVALID_REQUEST, "Unknown patternFilter."),
        AclRefusal(ErrorCode.INVALID_REQUEST, "Unknown entryFilter."),
    ]
    assert authorizer.acls == [STORED[1], STORED[3]]
    assert changes == [[STORED[1], STORED[3]]]
    assert authorizer.delete([flt(TOPIC, "nothing-here")]) == [[]]
    assert len(changes) == 1


@pytest.mark.parametrize("binding", STORED)
def test_stored_form_round_trips(binding: AclBinding) -> None:
    assert binding_from_fields(binding_fields(binding)) == binding
