"""The data directory: its lock, the topic catalog, the clean-shutdown marker.

<data dir>/
  .lock                 flock-ed by the running broker (holds its pid)
  topics.json           names, ids, partition counts, config overrides, replicas
  meta.properties       cluster.id, kept across restarts as Kafka keeps it
  acls.json             the authorizer's ACL bindings (shim.security.authorizer), by field name
  quotas.json           client quotas (shim.quotas.client_quotas): entity parts and their values
  features.json         finalized feature levels changed by UpdateFeatures (shim.controller.features)
  broker-configs.json   dynamic broker configs (shim.config.dynamic): per broker and cluster default
  .clean-shutdown       present only between a clean stop and the next start
  <topic>-<partition>/  one DiskLog each (see storage.disk_log)
"""

from __future__ import annotations

import base64
import fcntl
import json
import logging
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kafka_shim.storage.errors import DataDirInUse, StorageStartupError
from kafka_shim.storage.swap import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, fsync_directory, write_atomically

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"
CATALOG_FILE = "topics.json"
META_FILE = "meta.properties"
CLEAN_SHUTDOWN_FILE = ".clean-shutdown"
ACLS_FILE = "acls.json"
QUOTAS_FILE = "quotas.json"
FEATURES_FILE = "features.json"
GROUP_CONFIGS_FILE = "group-configs.json"
BROKER_CONFIGS_FILE = "broker-configs.json"
CATALOG_VERSION = 1
ACLS_VERSION = 1
QUOTAS_VERSION = 1

# A stored client quota: its entity's (type, name) parts (None: the default entity), its values.
StoredQuota = tuple[list[tuple[str, str | None]], dict[str, float]]


@dataclass
class TopicRecord:
    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)
    # Each partition's replicas; absent in catalogs written before they were recorded.
    replicas: list[list[int]] | None = None


def new_cluster_id() -> str:
    # Kafka's form: a random UUID in 22 characters of URL-safe base64.
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")


class DataDir:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_fd: int | None = None

    def lock(self) -> None:
        """Take the directory for this process; DataDirInUse if another has it."""
        try:
            self._make_private()
            fd = os.open(self.path / LOCK_FILE, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
        except OSError as exc:
            raise StorageStartupError(f"cannot use data directory {self.path}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise DataDirInUse(
                f"data directory {self.path} is in use by another kafka-shim (pid {holder}); "
                "stop it or choose another --data-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def _make_private(self) -> None:
        """Create the directory 0700 (its parents as `mkdir -p` would). One that exists is the
        operator's and is left as it is: a warning says if other users can enter it."""
        try:
            self.path.mkdir(mode=PRIVATE_DIR_MODE, parents=True)
            os.chmod(self.path, PRIVATE_DIR_MODE)  # whatever the umask
        except FileExistsError:
            mode = self.path.stat().st_mode & 0o777
            if mode & 0o077 and self.path.is_dir():
                log.warning(
                    "data directory %s is open to other users (mode %04o): it holds records, "
                    "credentials and ACLs; chmod 700 it (kafka-shim changes no directory it did "
                    "not create)",
                    self.path,
                    mode,
                )

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def partition_path(self, topic: str, partition: int) -> Path:
        return self.path / f"{topic}-{partition}"

    # -- clean shutdown -----------------------------------------------------

    def was_clean(self) -> bool:
        return (self.path / CLEAN_SHUTDOWN_FILE).exists()

    def mark_running(self) -> None:
        (self.path / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)
        fsync_directory(self.path)

    def mark_clean(self) -> None:
        os.close(os.open(self.path / CLEAN_SHUTDOWN_FILE, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE_MODE))
        fsync_directory(self.path)

    # -- the catalog --------------------------------------------------------

    def read_catalog(self) -> list[TopicRecord]:
        path = self.path / CATALOG_FILE
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return [
                TopicRecord(
                    t["name"],
                    uuid.UUID(t["id"]),
                    int(t["partitions"]),
                    dict(t["configs"]),
                    None if t.get("replicas") is None else [[int(b) for b in r] for r in t["replicas"]],
                )
                for t in document["topics"]
            ]
        except FileNotFoundError:
            return []
        except (ValueError, KeyError, TypeError) as exc:
            raise StorageStartupError(f"topic catalog {path} is unreadable: {exc!r}") from exc

    def write_catalog(self, topics: list[TopicRecord]) -> None:
        """Atomically: a crash leaves the old catalog or the new one."""
        document = {
            "version": CATALOG_VERSION,
            "topics": [
                {"name": t.name, "id": str(t.topic_id), "partitions": t.partitions, "configs": t.configs}
                | ({} if t.replicas is None else {"replicas": t.replicas})
                for t in topics
            ],
        }
        # Compact: with tens of thousands of partitions' replicas an indented document takes
        # Python's slow encoder (8x longer), on the event loop at every topic change.
        write_atomically(self.path, CATALOG_FILE, json.dumps(document, separators=(",", ":")))

    # -- ACLs -----------------------------------------------------------------

    def read_acls(self) -> list[dict[str, str]]:
        """The stored ACL bindings, each a mapping of field name to text."""
        path = self.path / ACLS_FILE
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            acls = [dict(acl) for acl in document["acls"]]
        except FileNotFoundError:
            return []
        except (ValueError, KeyError, TypeError) as exc:
            raise StorageStartupError(f"ACL file {path} is unreadable: {exc!r}") from exc
        if not all(isinstance(k, str) and isinstance(v, str) for acl in acls for k, v in acl.items()):
            raise StorageStartupError(f"ACL file {path} is unreadable: fields must be strings")
        return acls

    def write_acls(self, acls: list[dict[str, str]]) -> None:
        """Atomically, as the catalog: a crash leaves the old set or the new one."""
        write_atomically(self.path, ACLS_FILE, json.dumps({"version": ACLS_VERSION, "acls": acls}, indent=1))

    # -- client quotas -------------------------------------------------------------

    def read_quotas(self) -> list[StoredQuota]:
        path = self.path / QUOTAS_FILE
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return [
                (
                    [
                        (str(part["type"]), None if part["name"] is None else str(part["name"]))
                        for part in q["entity"]
                    ],
                    {str(key): float(value) for key, value in q["values"].items()},
                )
                for q in document["quotas"]
            ]
        except FileNotFoundError:
            return []
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StorageStartupError(f"client quota file {path} is unreadable: {exc!r}") from exc

    def write_quotas(self, quotas: list[StoredQuota]) -> None:
        """Atomically, as the ACLs."""
        document = {
            "version": QUOTAS_VERSION,
            "quotas": [
                {"entity": [{"type": kind, "name": name} for kind, name in parts], "values": values}
                for parts, values in quotas
            ],
        }
        write_atomically(self.path, QUOTAS_FILE, json.dumps(document, indent=1))

    # -- finalized feature levels -------------------------------------------------------

    def read_features(self) -> dict[str, int]:
        path = self.path / FEATURES_FILE
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return {str(name): int(level) for name, level in document["finalized"].items()}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StorageStartupError(f"feature file {path} is unreadable: {exc!r}") from exc

    def write_features(self, levels: dict[str, int]) -> None:
        write_atomically(self.path, FEATURES_FILE, json.dumps({"version": 1, "finalized": levels}, indent=1))

    # -- group configs (IncrementalAlterConfigs on the GROUP resource) -----------------

    def read_group_configs(self) -> dict[str, dict[str, str]]:
        path = self.path / GROUP_CONFIGS_FILE
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return {str(g): {str(k): str(v) for k, v in c.items()} for g, c in document["groups"].items()}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StorageStartupError(f"group configs file {path} is not valid: {exc}") from exc

    def write_group_configs(self, configs: dict[str, dict[str, str]]) -> None:
        """Atomically, as the ACLs."""
        write_atomically(
            self.path, GROUP_CONFIGS_FILE, json.dumps({"version": 1, "groups": configs}, indent=1)
        )

    # -- dynamic broker configs (IncrementalAlterConfigs / AlterConfigs on BROKER) ---------

    def read_broker_configs(self) -> dict[str, dict[str, str]]:
        """Scope ("" the cluster default, else a node id) -> config name -> value."""
        path = self.path / BROKER_CONFIGS_FILE
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return {str(s): {str(k): str(v) for k, v in c.items()} for s, c in document["scopes"].items()}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StorageStartupError(f"broker configs file {path} is not valid: {exc}") from exc

    def write_broker_configs(self, configs: dict[str, dict[str, str]]) -> None:
        """Atomically, as the ACLs."""
        write_atomically(
            self.path, BROKER_CONFIGS_FILE, json.dumps({"version": 1, "scopes": configs}, indent=1)
        )

    def cluster_id(self, new_id: Callable[[], str]) -> str:
        """The cluster id in meta.properties, written by the first start: clients
        see the same cluster across restarts, as with Kafka."""
        try:
            lines = (self.path / META_FILE).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            lines = []
        except OSError as exc:
            raise StorageStartupError(f"{self.path / META_FILE} is unreadable: {exc.strerror}") from exc
        for line in lines:
            key, sep, value = line.partition("=")
            if sep and key.strip() == "cluster.id" and value.strip():
                return value.strip()
        cluster_id = new_id()
        write_atomically(self.path, META_FILE, f"cluster.id={cluster_id}\n")
        return cluster_id
