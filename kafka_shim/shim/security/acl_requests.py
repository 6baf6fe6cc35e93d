"""What CreateAcls, DescribeAcls and DeleteAcls share: their request fields as bindings and
filters, and the refusal all three give before looking at the ACLs (no authorizer, or a
principal without the cluster permission the API needs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.shim.context import RequestContext
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
    known,
)

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.delete_acls import DeleteAclsRequestFilters
    from kafka_shim.protocol.views.describe_acls import DescribeAclsRequestData


def unwritten(exc: OSError) -> AclRefusal:
    """The answer to each binding or filter when acls.json could not be written (a full disk):
    nothing changed."""
    return AclRefusal(ErrorCode.KAFKA_STORAGE_ERROR, f"cannot write the ACLs: {exc}")


def _refuse_code_zero(what: str, *codes: int) -> None:
    """Kafka fails to parse an ACL request naming the UNKNOWN (0) value of any of its enums,
    and closes the connection; other codes it does not know become UNKNOWN and are refused
    later, one binding or filter at a time."""
    if 0 in codes:
        raise ProtocolError(f"{what} contains UNKNOWN elements")


def binding(creation: Any) -> AclBinding:
    codes = (
        creation.resource_type,
        creation.resource_pattern_type,
        creation.operation,
        creation.permission_type,
    )
    _refuse_code_zero("CreatableAcls", *codes)
    return AclBinding(
        known(ResourceType, creation.resource_type),
        creation.resource_name,
        known(PatternType, creation.resource_pattern_type),
        creation.principal,
        creation.host,
        known(AclOperation, creation.operation),
        known(PermissionType, creation.permission_type),
    )


def acl_filter(request: DescribeAclsRequestData | DeleteAclsRequestFilters) -> AclFilter:
    """A DescribeAcls request or a DeleteAcls filter (the same fields)."""
    codes = (
        request.resource_type_filter,
        request.pattern_type_filter,
        request.operation,
        request.permission_type,
    )
    _refuse_code_zero("ACL filter", *codes)
    return AclFilter(
        known(ResourceType, request.resource_type_filter),
        request.resource_name_filter,
        known(PatternType, request.pattern_type_filter),
        request.principal_filter,
        request.host_filter,
        known(AclOperation, request.operation),
        known(PermissionType, request.permission_type),
    )


def authorizer_for(ctx: RequestContext, needed: AclOperation, api_name: str) -> Authorizer | AclRefusal:
    """The authorizer to serve an ACL API, or the refusal of the whole request: Kafka checks
    the cluster permission first (allowed without an authorizer), then that there is one."""
    denial = ctx.denial(needed, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return AclRefusal(denial, f"Request {api_name} is not authorized.")
    if ctx.broker.authorizer is None:
        return AclRefusal(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    return ctx.broker.authorizer


def binding_fields(acl: AclBinding) -> dict[str, Any]:
    """An ACL as DeleteAcls reports a matching one."""
    return {
        "resource_type": acl.resource_type,
        "resource_name": acl.name,
        "pattern_type": acl.pattern_type,
        "principal": acl.principal,
        "host": acl.host,
        "operation": acl.operation,
        "permission_type": acl.permission,
    }
