"""The security state a broker keeps beside its topics (in memory for --memory): the ACLs of
its built-in authorizer, SASL/SCRAM credentials and delegation tokens, opened at start-up."""

from __future__ import annotations

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.security.authorizer import (
    Authorizer,
    binding_fields,
    binding_from_fields,
    parse_super_users,
)
from kafka_shim.shim.security.delegation_tokens import DelegationTokens
from kafka_shim.shim.security.scram_store import CredentialStore
from kafka_shim.storage.data_dir import DataDir
from kafka_shim.storage.errors import StorageStartupError


def open_authorizer(config: BrokerConfig, data_dir: DataDir | None) -> Authorizer | None:
    """The built-in authorizer with its kept ACLs; None without authorizer.class.name: every
    request is allowed, as in Kafka."""
    if not config.authorizer_class_name:
        return None
    super_users = parse_super_users(config.super_users)
    if data_dir is None:
        return Authorizer(super_users, config.allow_everyone_if_no_acl_found)
    try:
        acls = [binding_from_fields(fields) for fields in data_dir.read_acls()]
    except KeyError as exc:
        raise StorageStartupError(f"ACL file in {data_dir.path} names no known {exc}") from exc
    return Authorizer(
        super_users,
        config.allow_everyone_if_no_acl_found,
        acls,
        on_change=lambda current: data_dir.write_acls([binding_fields(acl) for acl in current]),
    )


def open_credentials(config: BrokerConfig) -> CredentialStore:
    """SASL users' SCRAM credentials; --user sets theirs anew at every start."""
    credentials = CredentialStore(config.data_dir)
    for name, password in config.users:
        credentials.set_password(name, password)
    return credentials


def open_delegation_tokens(config: BrokerConfig) -> DelegationTokens:
    """Delegation tokens (KIP-48), made with delegation.token.secret.key."""
    return DelegationTokens(
        config.data_dir,
        config.delegation_token_secret_key,
        config.delegation_token_max_lifetime_ms,
        config.delegation_token_expiry_time_ms,
        config.delegation_token_expiry_check_interval_ms,
    )
