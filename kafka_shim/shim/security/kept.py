"""The security state a broker keeps beside its topics (in memory for --memory): the ACLs of
its built-in authorizer, SASL/SCRAM credentials and delegation tokens, opened at start-up from
the directory the cluster's metadata is kept in (Broker: its data directory, or the
controller's with a process per broker)."""

from __future__ import annotations

from pathlib import Path

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.security.authorizer import (
    AclBinding,
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
        acls = read_kept_acls(data_dir)
    except KeyError as exc:
        raise StorageStartupError(f"ACL file in {data_dir.path} names no known {exc}") from exc
    return Authorizer(
        super_users,
        config.allow_everyone_if_no_acl_found,
        acls,
        on_change=lambda current: data_dir.write_acls([binding_fields(acl) for acl in current]),
    )


def read_kept_acls(data_dir: DataDir) -> list[AclBinding]:
    """The ACLs the data directory keeps (at start, and followed by the other broker
    processes, shim.processes.cluster_metadata); KeyError for a name Kafka does not have."""
    return [binding_from_fields(fields) for fields in data_dir.read_acls()]


def open_credentials(config: BrokerConfig, directory: Path | None, set_users: bool = True) -> CredentialStore:
    """SASL users' SCRAM credentials; --user sets theirs anew at every start (unless
    `set_users` is False: a broker process whose controller sets them, under the lock of the
    shared directory, shim.processes.node)."""
    credentials = CredentialStore(directory)
    for name, password in config.users if set_users else ():
        credentials.set_password(name, password)
    return credentials


def open_delegation_tokens(config: BrokerConfig, directory: Path | None) -> DelegationTokens:
    """Delegation tokens (KIP-48), made with delegation.token.secret.key."""
    return DelegationTokens(
        directory,
        config.delegation_token_secret_key,
        config.delegation_token_max_lifetime_ms,
        config.delegation_token_expiry_time_ms,
        config.delegation_token_expiry_check_interval_ms,
    )
