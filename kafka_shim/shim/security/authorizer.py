"""Kafka's built-in authorizer (StandardAuthorizer), as a pure object: ACL bindings, the
decision for one principal, host, operation and resource, and the ACL admin operations.

The rules are Kafka's:
- a super user may do anything;
- the ACLs that apply to a resource are the LITERAL ones naming it, the LITERAL ones named
  `*`, and the PREFIXED ones whose name starts the resource's name;
- of those, the ones for the principal (or `User:*`) and host (or `*`) decide: one DENY
  denies; else one ALLOW allows; ALL stands for every operation;
- an ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE, an ALLOW of ALTER_CONFIGS
  also DESCRIBE_CONFIGS (a DENY implies nothing);
- a resource no ACL applies to is allowed only with allow.everyone.if.no.acl.found.

No I/O: a change of the ACL set is reported to `on_change`, which the broker persists.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar

from kafka_shim.protocol.errors import ErrorCode


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class PermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


# Kafka's own messages for its authorization errors (Errors.java), where a response carries one.
DENIED_MESSAGES = {
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
}

CLUSTER_NAME = "kafka-cluster"  # the one name of the CLUSTER resource
WILDCARD = "*"  # a LITERAL resource name or an ACL host matching any
WILDCARD_PRINCIPAL = "User:*"
ANONYMOUS = "User:ANONYMOUS"

Code = TypeVar("Code", ResourceType, PatternType, AclOperation, PermissionType)


def known(kind: type[Code], code: int) -> Code:
    """The enum member for a wire code; UNKNOWN for a code Kafka does not know either."""
    try:
        return kind(code)
    except ValueError:
        return kind(0)


# What each resource type supports (Kafka's AclEntry.supportedOperations): the operations
# an `*_authorized_operations` bit field is made of.
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.CREATE,
        AclOperation.DELETE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (
        AclOperation.READ,
        AclOperation.DELETE,
        AclOperation.DESCRIBE,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.CLUSTER: (
        AclOperation.CREATE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE,
        AclOperation.CLUSTER_ACTION,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
        AclOperation.IDEMPOTENT_WRITE,
    ),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.WRITE, AclOperation.DESCRIBE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}

# Groups have configs from Kafka 4.0 (KIP-848's group configs): before, their bit field holds
# neither config operation (protocol.releases' `group_configs`).
_CONFIG_OPERATIONS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})


def supported_operations(resource_type: ResourceType, group_configs: bool = True) -> tuple[AclOperation, ...]:
    operations = SUPPORTED_OPERATIONS[resource_type]
    if resource_type is ResourceType.GROUP and not group_configs:
        return tuple(op for op in operations if op not in _CONFIG_OPERATIONS)
    return operations


# An ALLOW of one of these also allows the key operation.
_IMPLIED_BY: dict[AclOperation, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset(
        {
            AclOperation.DESCRIBE,
            AclOperation.READ,
            AclOperation.WRITE,
            AclOperation.DELETE,
            AclOperation.ALTER,
        }
    ),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}),
}


def operations_bitfield(operations: Iterable[AclOperation]) -> int:
    """Authorized operations as Kafka encodes them: bit n set for operation code n."""
    return sum(1 << op for op in set(operations))


@dataclass(frozen=True)
class AclBinding:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: PermissionType

    def decides(self, principals: Collection[str], host: str, operation: AclOperation) -> bool:
        """Whether this ACL (one that applies to the resource) speaks for the request."""
        if self.principal not in principals or self.host not in (WILDCARD, host):
            return False
        if self.operation == AclOperation.ALL:
            return True
        if self.permission == PermissionType.ALLOW and operation in _IMPLIED_BY:
            return self.operation in _IMPLIED_BY[operation]
        return self.operation == operation

    def has_filter_only_value(self) -> bool:
        """Whether it names a value only a filter may (resource type, operation or permission
        ANY; pattern MATCH or ANY): Kafka's ResourcePattern and AccessControlEntry refuse to be
        built, and CreateAcls fails as a whole (AclApis.handleCreateAcls)."""
        return (
            self.resource_type == ResourceType.ANY
            or self.pattern_type in (PatternType.MATCH, PatternType.ANY)
            or self.operation == AclOperation.ANY
            or self.permission == PermissionType.ANY
        )

    def invalid_reason(self) -> str | None:
        """Why Kafka refuses to create this ACL (INVALID_REQUEST), or None: the broker's
        checks of the name first, then the controller's of each field."""
        if self.resource_type == ResourceType.CLUSTER and self.name != CLUSTER_NAME:
            return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
        if not self.name:
            return "Invalid empty resource name"
        if self.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
            return f"Invalid resourceType {self.resource_type.name}"
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            return f"Invalid patternType {self.pattern_type.name}"
        if self.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
            return f"Invalid operation {self.operation.name}"
        if self.permission not in (PermissionType.ALLOW, PermissionType.DENY):
            return f"Invalid permissionType {self.permission.name}"
        return None


@dataclass(frozen=True)
class AclFilter:
    """Kafka's AclBindingFilter: None names match any; ANY codes any value; pattern type
    MATCH finds every ACL that applies to the named resource."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission: PermissionType

    def has_unknown_pattern(self) -> bool:
        return self.resource_type == ResourceType.UNKNOWN or self.pattern_type == PatternType.UNKNOWN

    def has_unknown_entry(self) -> bool:
        return self.operation == AclOperation.UNKNOWN or self.permission == PermissionType.UNKNOWN

    def matches(self, acl: AclBinding) -> bool:
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.resource_type not in (ResourceType.ANY, acl.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, acl.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, acl.pattern_type):
            return self.name == acl.name
        # MATCH: every ACL that applies to the resource so named.
        if acl.pattern_type == PatternType.PREFIXED:
            return self.name.startswith(acl.name)
        return acl.name in (self.name, WILDCARD)

    def _matches_entry(self, acl: AclBinding) -> bool:
        return (
            self.principal in (None, acl.principal)
            and self.host in (None, acl.host)
            and self.operation in (AclOperation.ANY, acl.operation)
            and self.permission in (PermissionType.ANY, acl.permission)
        )


@dataclass(frozen=True)
class AclRefusal:
    code: ErrorCode
    message: str | None


def parse_super_users(text: str) -> frozenset[str]:
    return frozenset(p.strip() for p in text.split(";") if p.strip())


class Authorizer:
    def __init__(
        self,
        super_users: Collection[str] = (),
        allow_if_no_acl: bool = False,
        acls: Iterable[AclBinding] = (),
        on_change: Callable[[Collection[AclBinding]], None] = lambda acls: None,
    ) -> None:
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl
        # Insertion-ordered, without duplicates: creating an existing ACL changes nothing.
        self._acls: dict[AclBinding, None] = dict.fromkeys(acls)
        self._on_change = on_change
        self._reindex()

    def _reindex(self) -> None:
        """ACLs by what they apply to, so a decision looks at those alone (rebuilt on change:
        ACLs change rarely, decisions happen on every request)."""
        self._literal: dict[tuple[ResourceType, str], list[AclBinding]] = {}
        self._prefixed: dict[ResourceType, list[AclBinding]] = {}
        for acl in self._acls:
            if acl.pattern_type == PatternType.PREFIXED:
                self._prefixed.setdefault(acl.resource_type, []).append(acl)
            else:
                self._literal.setdefault((acl.resource_type, acl.name), []).append(acl)

    def _applying(self, resource_type: ResourceType, name: str) -> list[AclBinding]:
        """The ACLs that apply to a resource: the LITERAL ones naming it or `*`, the PREFIXED
        ones whose name starts its name."""
        found = self._literal.get((resource_type, name), [])
        if name != WILDCARD:
            found = found + self._literal.get((resource_type, WILDCARD), [])
        return found + [acl for acl in self._prefixed.get(resource_type, ()) if name.startswith(acl.name)]

    @property
    def acls(self) -> list[AclBinding]:
        return list(self._acls)

    def replace(self, acls: Iterable[AclBinding]) -> None:
        """The ACL set as another broker process left it (shim.processes.cluster_metadata):
        kept in memory only, the file already says it."""
        self._acls = dict.fromkeys(acls)
        self._reindex()

    # -- decisions -------------------------------------------------------------

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        if principal in self.super_users:
            return True
        principals = (principal, WILDCARD_PRINCIPAL)
        applying = self._applying(resource_type, name)
        deciding = [acl for acl in applying if acl.decides(principals, host, operation)]
        if any(acl.permission == PermissionType.DENY for acl in deciding):
            return False
        if deciding:
            return True
        return self.allow_if_no_acl and not applying

    def authorized_operations(
        self, principal: str, host: str, resource_type: ResourceType, name: str, group_configs: bool = True
    ) -> int:
        return operations_bitfield(
            op
            for op in supported_operations(resource_type, group_configs)
            if self.authorize(principal, host, op, resource_type, name)
        )

    def authorize_any(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Kafka's authorizeByResourceType: whether some resource of the type could be allowed
        `operation` (an ALLOW not overridden by a DENY of the same or a covering pattern)."""
        # Super users, and allow.everyone.if.no.acl.found, through an ACL-less name as Kafka does.
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        denied_literal: set[str] = set()
        denied_prefixes: set[str] = set()
        allowed: list[AclBinding] = []
        for acl in self._acls:
            if acl.resource_type != resource_type or acl.host not in (WILDCARD, host):
                continue
            if acl.principal not in (principal, WILDCARD_PRINCIPAL):
                continue
            if acl.operation not in (operation, AclOperation.ALL):
                continue
            if acl.permission == PermissionType.DENY:
                if acl.pattern_type == PatternType.LITERAL and acl.name == WILDCARD:
                    return False
                (denied_literal if acl.pattern_type == PatternType.LITERAL else denied_prefixes).add(acl.name)
            elif acl.permission == PermissionType.ALLOW:
                if acl.pattern_type == PatternType.LITERAL and acl.name == WILDCARD:
                    return True
                allowed.append(acl)
        for acl in allowed:
            if acl.pattern_type == PatternType.LITERAL and acl.name in denied_literal:
                continue
            if not any(acl.name[:length] in denied_prefixes for length in range(1, len(acl.name) + 1)):
                return True
        return False

    # -- the ACL admin APIs ------------------------------------------------------

    def describe(self, acl_filter: AclFilter) -> list[AclBinding]:
        return [acl for acl in self._acls if acl_filter.matches(acl)]

    def create(self, bindings: list[AclBinding]) -> list[AclRefusal | None]:
        """One result per binding, in order: None for created (or already there)."""
        results: list[AclRefusal | None] = []
        before = len(self._acls)
        wanted = dict(self._acls)
        for binding in bindings:
            reason = binding.invalid_reason()
            if reason is not None:
                results.append(AclRefusal(ErrorCode.INVALID_REQUEST, reason))
                continue
            wanted[binding] = None
            results.append(None)
        if len(wanted) != before:
            self._on_change(list(wanted))  # written first: a failed write changes nothing
            self._acls = wanted
            self._reindex()
        return results

    def delete(self, filters: list[AclFilter]) -> list[AclRefusal | list[AclBinding]]:
        """Per filter, the ACLs it deleted (an ACL matched by two filters is reported by both,
        as Kafka does), or why the filter was refused."""
        results: list[AclRefusal | list[AclBinding]] = []
        doomed: set[AclBinding] = set()
        for acl_filter in filters:
            if acl_filter.has_unknown_pattern():
                results.append(AclRefusal(ErrorCode.INVALID_REQUEST, "Unknown patternFilter."))
            elif acl_filter.has_unknown_entry():
                results.append(AclRefusal(ErrorCode.INVALID_REQUEST, "Unknown entryFilter."))
            else:
                matched = self.describe(acl_filter)
                doomed.update(matched)
                results.append(matched)
        if doomed:
            kept = {acl: None for acl in self._acls if acl not in doomed}
            self._on_change(list(kept))  # written first: a failed write changes nothing
            self._acls = kept
            self._reindex()
        return results


# -- stored form: field name -> text, enums by name (storage.data_dir's acls.json) ----------


def binding_fields(acl: AclBinding) -> dict[str, str]:
    return {
        "resource_type": acl.resource_type.name,
        "name": acl.name,
        "pattern_type": acl.pattern_type.name,
        "principal": acl.principal,
        "host": acl.host,
        "operation": acl.operation.name,
        "permission": acl.permission.name,
    }


def binding_from_fields(fields: dict[str, str]) -> AclBinding:
    """KeyError for a missing field or a name that is no member of its enum."""
    return AclBinding(
        ResourceType[fields["resource_type"]],
        fields["name"],
        PatternType[fields["pattern_type"]],
        fields["principal"],
        fields["host"],
        AclOperation[fields["operation"]],
        PermissionType[fields["permission"]],
    )
