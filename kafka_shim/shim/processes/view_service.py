"""A broker process's side of the cluster console (`--process-per-broker` with the console on):
it answers the supervisor's questions about its own share of the cluster over a private Unix
socket (shim.processes.view_wire), on its own Trio loop, between Kafka requests, as the
one-process console reads the broker (shim.web.views, shim.web.console.api): the partitions it
leads, the groups and transactional ids it coordinates, its request counts. The actions it is
asked (--console-actions) are those of what it owns: the coordinator commits a group's offsets,
the leader deletes a partition's records.

Nothing of the web stack is imported until the first question (the console loads in the
supervisor after every broker answers Kafka), and the actions' module only with an action."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from kafka_shim.shim.processes.view_wire import (
    MAX_QUESTION_BYTES,
    ChannelError,
    receive_json,
    send_json,
)

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.shim.schema_registry.registry import Registry

log = logging.getLogger("kafka_shim.processes")

QUESTION_TIMEOUT_S = 10.0  # a question not sent whole by then is dropped


class Refusal(Exception):
    """A question answered with an HTTP status and a reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def serve_views(
    broker: Broker, node_id: int, sock: socket.socket, follows: Sequence[Callable[[], None]] = ()
) -> None:
    """Answer the console's questions on `sock` (a listening Unix socket) until cancelled,
    each after `follows` (the controller's catalog and the cluster's metadata, looked at once
    more: a topic just made is in every process's share, as a Metadata answer has it)."""
    sock.setblocking(False)
    listener = trio.SocketListener(trio.socket.from_stdlib_socket(sock))
    await trio.serve_listeners(partial(_answer_one, broker, node_id, follows), [listener])


async def _answer_one(
    broker: Broker, node_id: int, follows: Sequence[Callable[[], None]], stream: trio.SocketStream
) -> None:
    async with stream:
        with trio.move_on_after(QUESTION_TIMEOUT_S):
            try:
                question = await receive_json(stream, MAX_QUESTION_BYTES)
                for follow in follows:
                    follow()
                await send_json(stream, answer(broker, node_id, question))
            except (ChannelError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                log.warning("a console question was dropped: %s", exc)


def answer(broker: Broker, node_id: int, question: Any) -> dict[str, Any]:
    """{"ok": value} or {"error": reason, "status": HTTP status}."""
    from kafka_shim.shim.web.console import api

    try:
        if not isinstance(question, dict) or not isinstance(question.get("view"), str):
            raise Refusal(400, "a question is a JSON object naming its view")
        view = question["view"]
        if view in ACTIONS:
            return {"ok": _act(broker, node_id, view, question)}
        read = READS.get(view)
        if read is None:
            raise Refusal(400, f"no view {view!r}")
        return {"ok": read(broker, node_id, question)}
    except api.NotFound as exc:
        return {"error": str(exc), "status": 404}
    except api.BadRequest as exc:
        return {"error": str(exc), "status": 400}
    except Refusal as exc:
        return {"error": str(exc), "status": exc.status}
    except (KeyError, TypeError, ValueError) as exc:
        return {"error": f"a malformed question: {exc!r}", "status": 400}


def snapshot(broker: Broker, node_id: int, question: dict[str, Any]) -> dict[str, Any]:
    """This process's share, the `parts` asked (every one by default): the partitions it leads
    (every topic named, for its id and configs), the groups it coordinates, its request
    counts, the clients of removed versions it saw, its transactions."""
    parts = set(question.get("parts") or PARTS)
    share: dict[str, Any] = {"node_id": node_id, "cluster_id": broker.cluster_id, "now_ms": broker.clock()}
    for part in PARTS:
        if part in parts:
            share.update(PARTS[part](broker, node_id))
    return share


def _topics(broker: Broker, node_id: int) -> dict[str, Any]:
    from kafka_shim.shim.web import views

    return {
        "topics": [
            {**asdict(topic), "partitions": [asdict(p) for p in topic.partitions if p.leader == node_id]}
            for topic in views.topics(broker)
        ]
    }


def _groups(broker: Broker, node_id: int) -> dict[str, Any]:
    from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
    from kafka_shim.shim.web import views

    cluster = broker.cluster
    coordinated = [
        asdict(group)
        for group in views.groups(broker)
        if cluster.coordinates(node_id, GROUP_KEY_TYPE, group.group_id)
    ]
    return {"groups": coordinated, "rebalances": broker.group_journal.rebalances()}


def _requests(broker: Broker, node_id: int) -> dict[str, Any]:
    return broker.request_stats.as_json()


def _clients(broker: Broker, node_id: int) -> dict[str, Any]:
    from kafka_shim.shim.web.console import api

    return {"old_version_clients": api.old_version_clients(broker)}


def _transactions(broker: Broker, node_id: int) -> dict[str, Any]:
    from kafka_shim.shim.web.console import api

    return {"transactions": api.transactions(broker)}


PARTS: dict[str, Callable[[Broker, int], dict[str, Any]]] = {
    "topics": _topics,
    "groups": _groups,
    "requests": _requests,
    "clients": _clients,
    "transactions": _transactions,
}


def _led_here(broker: Broker, node_id: int, topic: str, partition: int) -> None:
    leader = broker.cluster.leader(topic, partition)
    if leader != node_id:
        raise Refusal(409, f"broker {node_id} does not lead {topic}-{partition} (broker {leader} does)")


def _topic(broker: Broker, node_id: int, question: dict[str, Any]) -> dict[str, Any]:
    """A topic's producers as the leaders of its partitions know them (those led here)."""
    from kafka_shim.shim.web.console import api

    name = str(question["name"])
    found = broker.topics.get(name)
    if found is None:
        raise api.NotFound(f"no topic {name!r}")
    cluster = broker.cluster
    return {"producers": api.producers(found, lambda partition: cluster.leader(name, partition) == node_id)}


def _records(broker: Broker, node_id: int, question: dict[str, Any]) -> dict[str, Any]:
    from kafka_shim.shim.web.console import api

    name, partition = str(question["name"]), int(question["partition"])
    if broker.topics.partition(name, partition) is not None:
        _led_here(broker, node_id, name, partition)
    return api.records(
        broker, name, partition, question.get("offset"), question.get("timestamp"), int(question["limit"])
    )


def _group(broker: Broker, node_id: int, question: dict[str, Any]) -> dict[str, Any]:
    """A group's timeline, from its coordinator's journal."""
    group_id = str(question["group_id"])
    return {
        "timeline": [event.as_json() for event in broker.group_journal.events(group_id)],
        "rebalances": broker.group_journal.rebalances().get(group_id, 0),
    }


def _owners(broker: Broker, node_id: int, question: dict[str, Any]) -> dict[str, Any]:
    """Who owns what an action changes: a group's coordinator, a partition's leader."""
    from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE

    cluster, owners = broker.cluster, {}
    if "group_id" in question:
        owners["coordinator"] = cluster.coordinator(GROUP_KEY_TYPE, str(question["group_id"]))
    if "topic" in question:
        owners["leader"] = cluster.leader(str(question["topic"]), int(question["partition"]))
    return owners


def _bounds(broker: Broker, node_id: int, question: dict[str, Any]) -> dict[str, Any]:
    """A partition's log start offset and high watermark, from its leader."""
    topic, partition = str(question["topic"]), int(question["partition"])
    log = broker.topics.partition(topic, partition)
    if log is None:
        raise Refusal(404, f"no partition {topic}-{partition}")
    _led_here(broker, node_id, topic, partition)
    return {"log_start_offset": log.log_start_offset, "high_watermark": log.high_watermark}


def _test_broker(broker: Broker, node_id: int, question: dict[str, Any]) -> dict[str, Any]:
    from kafka_shim.shim.web.console import api

    return api.test_broker(broker)


# The registry read for the console, one per process (kept: it reads on from where it stopped).
_registries: dict[int, Registry] = {}


def _schema_registry(broker: Broker, node_id: int) -> Registry:
    """The registry's state for the console, read from `_schemas` by the process leading it
    (the controller's, which serves the registry: shim.schema_registry.store), whether or not
    the registry's listener is served, as one process's console reads it."""
    from kafka_shim.shim.schema_registry import views

    registry = _registries.get(node_id)
    if registry is None:
        registry = _registries[node_id] = views.console_registry(broker)
    return registry


def _subjects(broker: Broker, node_id: int, question: dict[str, Any]) -> list[dict[str, Any]]:
    """Every subject's row (the console leaves out those its user may not see)."""
    from kafka_shim.shim.schema_registry import views
    from kafka_shim.shim.schema_registry.errors import RegistryError

    try:
        return views.subjects(_schema_registry(broker, node_id), lambda subject: True)
    except RegistryError as exc:
        raise Refusal(503, exc.message) from exc


def _subject(broker: Broker, node_id: int, question: dict[str, Any]) -> dict[str, Any]:
    from kafka_shim.shim.schema_registry import views
    from kafka_shim.shim.schema_registry.errors import RegistryError

    older, newer = question.get("from"), question.get("to")
    try:
        return views.subject(
            _schema_registry(broker, node_id),
            str(question["name"]),
            None if older is None else int(older),
            None if newer is None else int(newer),
        )
    except views.NoSuchSubject as exc:
        raise Refusal(404, str(exc)) from exc
    except RegistryError as exc:
        raise Refusal(503, exc.message) from exc


READS: dict[str, Callable[[Broker, int, dict[str, Any]], Any]] = {
    "subjects": _subjects,
    "subject": _subject,
    "snapshot": snapshot,
    "test_broker": _test_broker,
    "topic": _topic,
    "records": _records,
    "group": _group,
    "owners": _owners,
    "bounds": _bounds,
}
ACTIONS = frozenset({"reset_offset", "delete_records"})


def _act(broker: Broker, node_id: int, view: str, question: dict[str, Any]) -> dict[str, Any]:
    """An action on what this process owns (refused, 409, on what it does not: nothing of it
    is done here)."""
    from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
    from kafka_shim.shim.web.console import actions

    if not broker.config.console_actions:
        raise Refusal(403, "the console is read-only (start with --console-actions)")
    topic, partition = str(question["topic"]), int(question["partition"])
    try:
        if view == "delete_records":
            _led_here(broker, node_id, topic, partition)
            return actions.delete_records(broker, topic, partition, int(question["before"]))
        group_id = str(question["group_id"])
        coordinator = broker.cluster.coordinator(GROUP_KEY_TYPE, group_id)
        if coordinator != node_id:
            raise Refusal(
                409, f"broker {node_id} does not coordinate group {group_id} (broker {coordinator} does)"
            )
        bounds = question.get("bounds")
        return actions.reset_offset(
            broker, group_id, topic, partition, question.get("to"), None if bounds is None else tuple(bounds)
        )
    except actions.ActionRefused as refused:
        raise Refusal(refused.status, str(refused)) from refused
