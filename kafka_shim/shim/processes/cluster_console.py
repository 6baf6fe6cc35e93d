"""The console and /metrics of `--brokers N --process-per-broker`, served by the supervisor at
the address the one-process broker serves them (--console), over the whole cluster.

The supervisor holds no broker state: each question a page asks goes to the broker processes
over their private channels (shim.processes.view_service) and their shares are merged
(shim.processes.cluster_views). The routes, their guard (shim.web.http_guard: Host, Origin,
body, login, authorization) and their JSON are the one-process console's
(shim.web.console.app.source_app), read from a ProcessSource instead of one broker. An action
goes to the process owning what it changes (a group's coordinator commits its offsets, a
partition's leader deletes its records), the partition's bounds first read from its leader;
a question one process does not answer within ANSWER_TIMEOUT_S is a 503 naming it, never a
page that waits or shows part of the cluster as the whole.

Trio, Hypercorn and Starlette load on this module's thread once every broker serves Kafka.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
from prometheus_client import CollectorRegistry, generate_latest

from kafka_shim.shim.processes import cluster_views
from kafka_shim.shim.processes.view_service import ACTIONS
from kafka_shim.shim.processes.view_wire import MAX_ANSWER_BYTES, ChannelError, receive_json, send_json
from kafka_shim.shim.security.authorizer import (
    AclOperation,
    Authorizer,
    ResourceType,
    parse_super_users,
)
from kafka_shim.shim.security.kept import read_kept_acls
from kafka_shim.shim.security.scram_store import CREDENTIALS_FILE, CredentialStore
from kafka_shim.shim.web import http_guard, views
from kafka_shim.shim.web.console import api
from kafka_shim.shim.web.console.actions import ActionRefused
from kafka_shim.shim.web.metrics import BrokerCollector
from kafka_shim.storage.data_dir import ACLS_FILE, DataDir
from kafka_shim.storage.errors import StorageStartupError

if TYPE_CHECKING:
    from kafka_shim.shim.config.broker_config import BrokerConfig
    from kafka_shim.shim.config.listeners import Listener

log = logging.getLogger("kafka_shim.processes")

FOLLOW_S = 0.05  # how stale the console's SASL users and ACLs may be (a process's tick)
ANSWER_TIMEOUT_S = 3.0  # the longest a page waits for one broker process
STOP_TIMEOUT_S = 5.0


class _Followed:
    """A file of the controller's data directory, taken in by `load` when its bytes change,
    looked at at most every FOLLOW_S, as the broker processes follow it; a file `load` cannot
    take in leaves what it had (one error line) and is not tried again until it changes. Read
    only: the supervisor writes nothing beside the processes' data."""

    def __init__(self, path: Path, what: str, load: Callable[[], None]) -> None:
        self._path, self._what, self._load = path, what, load
        self._content: bytes | None = None
        self._checked = -FOLLOW_S

    def follow(self) -> None:
        now = time.monotonic()
        if now - self._checked < FOLLOW_S:
            return
        self._checked = now
        try:
            content: bytes | None = self._path.read_bytes()
        except FileNotFoundError:
            content = None
        if content == self._content:
            return
        self._content = content
        try:
            self._load()
        except (OSError, ValueError, KeyError, TypeError, StorageStartupError) as exc:
            log.error("the console cannot follow %s: %s", self._what, exc)  # kept as they were


class ControllerLogins:
    """The SASL users a console login is checked against: the controller's credentials file
    (the controller sets --user's there at start, and every change a broker process makes
    is written there)."""

    def __init__(self, directory: Path) -> None:
        self._lock = threading.Lock()  # logins are checked on worker threads
        self._store = CredentialStore(None)

        def load() -> None:
            self._store = CredentialStore(directory)

        self._file = _Followed(directory / CREDENTIALS_FILE, "the SASL users", load)

    def verify_plain(self, name: str, password: str) -> bool:
        with self._lock:
            self._file.follow()
        return self._store.verify_plain(name, password)


class ControllerAcls:
    """The ACLs the console's routes are authorized by: the controller's ACL file, which every
    broker process writes its changes to and follows (shim.processes.cluster_metadata). Asked
    on the console's loop only."""

    def __init__(self, config: BrokerConfig, directory: Path) -> None:
        self._authorizer = Authorizer(
            parse_super_users(config.super_users), config.allow_everyone_if_no_acl_found
        )
        kept = DataDir(directory)
        self._file = _Followed(
            directory / ACLS_FILE, "the ACLs", lambda: self._authorizer.replace(read_kept_acls(kept))
        )

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        self._file.follow()
        return self._authorizer.authorize(principal, host, operation, resource_type, name)


@dataclass(frozen=True)
class ClusterGuarded:
    """The guard's view of the cluster (http_guard.Guarded): its settings and listeners,
    where it is advertised, the controller's SASL users and ACLs (none without
    authorizer.class.name)."""

    config: BrokerConfig
    listeners: tuple[Listener, ...]
    advertised_host: str
    credentials: ControllerLogins
    authorizer: ControllerAcls | None


def _refusal(node_id: int, answer: dict[str, Any]) -> Exception:
    status, message = int(answer.get("status", 500)), f"broker {node_id}: {answer.get('error')}"
    if status == 404:
        return api.NotFound(message)
    if status == 400:
        return api.BadRequest(message)
    return http_guard.Refused(status, message)


@contextmanager
def _as_action() -> Iterator[None]:
    """A process's refusal of an action as the console's actions answer one."""
    try:
        yield
    except api.NotFound as exc:
        raise ActionRefused(404, str(exc)) from exc
    except api.BadRequest as exc:
        raise ActionRefused(400, str(exc)) from exc


class ProcessSource:
    """The console's reads and actions (app.ConsoleSource) over every broker process."""

    def __init__(self, config: BrokerConfig, channels: dict[int, Path], bootstrap: list[str]) -> None:
        self.config = config
        self.console_actions = config.console_actions
        self.channels = channels  # node id -> its process's socket, the controller's first
        self.controller = min(channels)
        self.bootstrap = bootstrap

    async def ask(self, node_id: int, question: dict[str, Any]) -> Any:
        """One question to one process: its answer, or the refusal it stands for."""
        try:
            with trio.fail_after(ANSWER_TIMEOUT_S):
                stream = await trio.open_unix_socket(str(self.channels[node_id]))
                async with stream:
                    await send_json(stream, question)
                    answer = await receive_json(stream, MAX_ANSWER_BYTES)
        except trio.TooSlowError:
            late = f"broker {node_id} did not answer within {ANSWER_TIMEOUT_S:.0f} s"
            if question["view"] in ACTIONS:  # sent whole: it may yet be done when the process wakes
                late += f" (whether it did {question['view']} is unknown: look again)"
            raise http_guard.Refused(503, late) from None
        except (OSError, ChannelError, trio.BrokenResourceError) as exc:
            raise http_guard.Refused(503, f"broker {node_id} cannot be asked: {exc}") from exc
        if not isinstance(answer, dict) or "ok" not in answer:
            raise _refusal(node_id, answer if isinstance(answer, dict) else {"error": "no answer"})
        return answer["ok"]

    async def ask_all(self, question: dict[str, Any]) -> dict[int, Any]:
        """The same question to every process at once: their answers by node id, or one 503
        naming every process that did not answer."""
        answers: dict[int, Any] = {}
        failed: list[str] = []

        async def one(node_id: int) -> None:
            try:
                answers[node_id] = await self.ask(node_id, question)
            except http_guard.Refused as refused:
                failed.append(str(refused))

        async with trio.open_nursery() as nursery:
            for node_id in self.channels:
                nursery.start_soon(one, node_id)
        if failed:
            raise http_guard.Refused(503, "; ".join(sorted(failed)))
        return {node_id: answers[node_id] for node_id in sorted(answers)}

    async def _cluster(
        self, *parts: str
    ) -> tuple[dict[int, Any], list[views.TopicView], list[views.GroupView]]:
        """Every process's share of the `parts` a page needs (view_service.PARTS; the topics
        always), the topics merged, and the groups where asked."""
        snapshots = await self.ask_all({"view": "snapshot", "parts": ["topics", *parts]})
        topics = cluster_views.topics(snapshots.values())
        groups = cluster_views.groups(snapshots.values(), topics) if "groups" in parts else []
        return snapshots, topics, groups

    async def overview(self) -> dict[str, Any]:
        snapshots, topics, groups = await self._cluster("groups", "clients")
        controller = snapshots[self.controller]
        old = [use for s in snapshots.values() for use in s["old_version_clients"]]
        return {
            "cluster_id": controller["cluster_id"],
            "node_id": self.controller,
            "bootstrap": ",".join(self.bootstrap),
            "listeners": [
                f"{listener.name} ({listener.protocol})" for listener in self.config.listener_endpoints()
            ],
            "storage": str(self.config.data_dir),
            "now_ms": controller["now_ms"],
            "topics": len(topics),
            "partitions": sum(len(t.partitions) for t in topics),
            "groups": len(groups),
            "actions": self.console_actions,
            "old_version_clients": sorted(old, key=lambda use: use["last_seen_ms"], reverse=True),
            "brokers": [{"node_id": node_id, "process": True} for node_id in snapshots],
        }

    async def topics(self, shown: api.Shown) -> list[dict[str, Any]]:
        _, topics, _ = await self._cluster()
        return [asdict(topic) for topic in topics if shown(topic.name)]

    async def topic(self, name: str, with_producers: bool) -> dict[str, Any]:
        _, topics, _ = await self._cluster()
        found = next((topic for topic in topics if topic.name == name), None)
        if found is None:
            raise api.NotFound(f"no topic {name!r}")
        producers: list[dict[str, Any]] = []
        if with_producers:
            shares = await self.ask_all({"view": "topic", "name": name})
            producers = sorted(
                (p for share in shares.values() for p in share["producers"]),
                key=lambda p: (p["partition"], p["producer_id"]),
            )
        return {**asdict(found), "producers": producers}

    async def _leader(self, topic: str, partition: int) -> int | None:
        """The node leading the partition, as the controller's process places it; None where
        no process does (no such partition)."""
        owners = await self.ask(self.controller, {"view": "owners", "topic": topic, "partition": partition})
        node_id = int(owners["leader"])
        return node_id if node_id in self.channels else None

    async def records(
        self, name: str, partition: int, offset: int | None, timestamp: int | None, limit: int
    ) -> dict[str, Any]:
        leader = await self._leader(name, partition)
        if leader is None:
            raise api.NotFound(f"no partition {name}-{partition}")
        question = {"view": "records", "name": name, "partition": partition, "limit": limit}
        return dict(await self.ask(leader, {**question, "offset": offset, "timestamp": timestamp}))

    async def groups(
        self, listed: api.Shown, described: api.Shown, topic_shown: api.Shown
    ) -> list[dict[str, Any]]:
        snapshots, _, groups = await self._cluster("groups")
        rebalances = cluster_views.rebalances(snapshots.values())
        return api.groups_shown(groups, rebalances, listed, described, topic_shown)

    async def group(self, group_id: str, topic_shown: api.Shown) -> dict[str, Any]:
        snapshots, _, groups = await self._cluster("groups")
        view = next((group for group in groups if group.group_id == group_id), None)
        coordinator = cluster_views.coordinator_of(snapshots, group_id)
        if view is None or coordinator is None:
            raise api.NotFound(f"no group {group_id!r}")
        journal = await self.ask(coordinator, {"view": "group", "group_id": group_id})
        return api.group_shown(view, journal["rebalances"], journal["timeline"], topic_shown)

    async def transactions(self, shown: api.Shown) -> list[dict[str, Any]]:
        snapshots = await self.ask_all({"view": "snapshot", "parts": ["transactions"]})
        listed = [t for s in snapshots.values() for t in s["transactions"] if shown(t["transactional_id"])]
        return sorted(listed, key=lambda t: (t["transactional_id"], t["producer_id"]))

    async def test_broker(self) -> dict[str, Any]:
        return dict(await self.ask(self.controller, {"view": "test_broker"}))

    async def metrics(self) -> bytes:
        snapshots, topics, groups = await self._cluster("groups", "requests")
        registry = CollectorRegistry(auto_describe=False)
        cluster = views.ClusterView(len(snapshots), topics, groups)
        registry.register(BrokerCollector(cluster_views.request_stats(snapshots.values()), lambda: cluster))
        registry.register(cluster_views.ProcessCollector(snapshots))
        return bytes(generate_latest(registry))

    async def reset_offset(self, group_id: str, topic: str, partition: int, to: Any) -> dict[str, Any]:
        with _as_action():
            return await self._reset_offset(group_id, topic, partition, to)

    async def delete_records(self, topic: str, partition: int, before: int) -> dict[str, Any]:
        with _as_action():
            return await self._delete_records(topic, partition, before)

    async def schema_subjects(self, shown: Callable[[str], bool]) -> list[dict[str, Any]]:
        """The registry's subjects, from the controller's process, which leads `_schemas`."""
        rows = await self.ask(self.controller, {"view": "subjects"})
        return [row for row in rows if shown(row["subject"])]

    async def schema_subject(self, name: str, older: int | None, newer: int | None) -> dict[str, Any]:
        question = {"view": "subject", "name": name, "from": older, "to": newer}
        found: dict[str, Any] = await self.ask(self.controller, question)
        return found

    async def _reset_offset(self, group_id: str, topic: str, partition: int, to: Any) -> dict[str, Any]:
        """Committed by the group's coordinator, within the log bounds its leader reads."""
        where = {"group_id": group_id, "topic": topic, "partition": partition}
        owners = await self.ask(self.controller, {"view": "owners", **where})
        coordinator, leader = int(owners["coordinator"]), int(owners["leader"])
        if leader not in self.channels:
            raise ActionRefused(404, f"no partition {topic}-{partition}")
        if coordinator not in self.channels:
            raise ActionRefused(503, f"no broker process coordinates group {group_id}")
        bounds = None
        if leader != coordinator:  # read-only: nothing is done before the commit itself
            read = await self.ask(leader, {"view": "bounds", "topic": topic, "partition": partition})
            bounds = [read["log_start_offset"], read["high_watermark"]]
        return dict(
            await self.ask(coordinator, {"view": "reset_offset", **where, "to": to, "bounds": bounds})
        )

    async def _delete_records(self, topic: str, partition: int, before: int) -> dict[str, Any]:
        """Deleted by the partition's leader."""
        leader = await self._leader(topic, partition)
        if leader is None:
            raise ActionRefused(404, f"no partition {topic}-{partition}")
        question = {"view": "delete_records", "topic": topic, "partition": partition, "before": before}
        return dict(await self.ask(leader, question))


async def serve(source: ProcessSource, guarded: ClusterGuarded, address: str) -> None:
    """Serve the console on `address` until cancelled; a port that cannot be bound is one
    warning (the brokers serve Kafka without it), as the one-process console's."""
    from kafka_shim.shim.web.console.app import source_app
    from kafka_shim.shim.web.http_server import listener_tls, serve_asgi

    app = source_app(source, guarded)
    try:
        tls = listener_tls(guarded)
        async with trio.open_nursery() as nursery:
            urls = await nursery.start(serve_asgi, app, address, "console listener", tls)
            shown = ", ".join(f"{url.replace('://0.0.0.0:', '://127.0.0.1:')}/console" for url in urls)
            print(f"kafka-shim console on {shown} (every broker process)", flush=True)
    except* OSError as failed:
        reason = failed.exceptions[0]
        log.warning(
            "console not served: cannot listen on %s: %s", address, getattr(reason, "strerror", reason)
        )
    except* Exception as failed:  # whatever breaks the console, Kafka is still served
        log.error("console stopped: %r", failed.exceptions[0])


class ConsoleThread:
    """The console's own Trio loop on a thread of the supervisor (which never runs one)."""

    def __init__(self, source: ProcessSource, guarded: ClusterGuarded, address: str) -> None:
        self._serving = (source, guarded, address)
        self._started = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._thread = threading.Thread(target=trio.run, args=(self._main,), name="console", daemon=True)

    def start(self) -> ConsoleThread:
        self._thread.start()
        return self

    async def _main(self) -> None:
        with trio.CancelScope() as scope:
            self._token, self._scope = trio.lowlevel.current_trio_token(), scope
            self._started.set()
            await serve(*self._serving)

    def stop(self) -> None:
        if not self._started.wait(STOP_TIMEOUT_S) or self._scope is None or self._token is None:
            return
        try:
            trio.from_thread.run_sync(self._scope.cancel, trio_token=self._token)
        except trio.RunFinishedError:
            return
        self._thread.join(STOP_TIMEOUT_S)


def start(
    config: BrokerConfig, channels: dict[int, Path], bootstrap: list[str], controller_dir: Path
) -> ConsoleThread:
    """The console thread, started.
    `channels`: each process's socket by node id; `bootstrap`: each broker's first address;
    `controller_dir`: the controller's data directory (the cluster's SASL users and ACLs)."""
    assert config.console_listener is not None
    guarded = ClusterGuarded(
        config,
        config.listener_endpoints(),
        bootstrap[0].rpartition(":")[0],
        ControllerLogins(controller_dir),
        ControllerAcls(config, controller_dir) if config.authorizer_class_name else None,
    )
    return ConsoleThread(ProcessSource(config, channels, bootstrap), guarded, config.console_listener).start()
