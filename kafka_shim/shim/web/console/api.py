"""What the console's pages read, as JSON-able data, straight from the broker's live state
(called on the broker's own loop, between Kafka requests)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.record_codec import decode_batches
from kafka_shim.shim.web import views

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.storage.topics import Topic

# The record browser reads at most this much of a partition per page.
MAX_READ_BYTES = 1 << 20
MAX_RECORDS = 500


class NotFound(LookupError):
    """What was asked for does not exist (404)."""


class BadRequest(ValueError):
    """A parameter that cannot be read (400)."""


# Who may see what of a group: `listed(group_id)` (ListGroups), `described(group_id)`
# (DescribeGroups and OffsetFetch: its members and offsets), `topic_shown(topic)` (OffsetFetch
# of every offset: those of other topics are left out). Everything, where nothing is authorized.
Shown = Callable[[str], bool]


def _everything(name: str) -> bool:
    return True


def overview(broker: Broker) -> dict[str, Any]:
    cluster = views.cluster(broker)
    return {
        "cluster_id": broker.cluster_id,
        "node_id": broker.node_id,
        "bootstrap": f"{broker.advertised_host}:{broker.advertised_port}",
        "listeners": [f"{listener.name} ({listener.protocol})" for listener in broker.listeners],
        "storage": str(broker.config.data_dir) if broker.config.data_dir is not None else "in memory",
        "now_ms": broker.clock(),
        "topics": len(cluster.topics),
        "partitions": sum(len(t.partitions) for t in cluster.topics),
        "groups": len(cluster.groups),
        "actions": broker.config.console_actions,
        "old_version_clients": old_version_clients(broker),
    }


def old_version_clients(broker: Broker) -> list[dict[str, Any]]:
    """Without --emulate: the clients served versions Kafka 4 removed (KIP-896), newest first."""
    return [{**asdict(use), "versions": sorted(use.versions)} for use in broker.old_version_clients.uses()]


def topics(broker: Broker, shown: Shown = _everything) -> list[dict[str, Any]]:
    return [asdict(topic) for topic in views.topics(broker) if shown(topic.name)]


def topic(broker: Broker, name: str, with_producers: bool = True) -> dict[str, Any]:
    """A topic, with the producers each partition knows (none where that may not be asked)."""
    found = broker.topics.get(name)
    for view in views.topics(broker):
        if view.name == name and found is not None:
            return {**asdict(view), "producers": producers(found) if with_producers else []}
    raise NotFound(f"no topic {name!r}")


def producers(topic: Topic, shown: Callable[[int], bool] = lambda partition: True) -> list[dict[str, Any]]:
    """The producers each partition of `topic` (those `shown`) knows, as DescribeProducers
    reports them."""
    return [
        {
            "partition": index,
            "producer_id": producer_id,
            "epoch": entry.epoch,
            "last_sequence": entry.last_sequence,
            "last_timestamp": entry.last_timestamp,
            "open_transaction_from": entry.txn_first_offset,
        }
        for index, log in enumerate(topic.partitions)
        if shown(index)
        for producer_id, entry in log.producers
    ]


def _blob(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {"text": text, "base64": base64.b64encode(data).decode("ascii"), "size": len(data)}


def records(
    broker: Broker, name: str, partition: int, offset: int | None, timestamp: int | None, limit: int
) -> dict[str, Any]:
    """Up to `limit` records of a partition from `offset` (or the first at or after `timestamp`,
    or the log start), keys, values and header values as text where they are UTF-8 and always
    as base64 (the page shows text, JSON or hex)."""
    log = broker.topics.partition(name, partition)
    if log is None:
        raise NotFound(f"no partition {name}-{partition}")
    if offset is None and timestamp is not None:
        found = log.offset_for_timestamp(timestamp)
        offset = found.offset if found is not None else log.log_end_offset
    start = max(offset if offset is not None else log.log_start_offset, log.log_start_offset)
    start = min(start, log.log_end_offset)
    limit = max(1, min(limit, MAX_RECORDS))
    out: list[dict[str, Any]] = []
    position = start
    while len(out) < limit and position < log.high_watermark:
        data = log.read(position, MAX_READ_BYTES)
        if not data:
            break
        for batch in decode_batches(data):
            if batch.header.is_control:
                position = batch.header.last_offset + 1
                continue
            for record in batch.records:
                if record.offset >= start and record.offset < log.high_watermark and len(out) < limit:
                    out.append(
                        {
                            "offset": record.offset,
                            "timestamp": record.timestamp,
                            "key": _blob(record.key),
                            "value": _blob(record.value),
                            "headers": [{"key": k, "value": _blob(v)} for k, v in record.headers],
                        }
                    )
            position = batch.header.last_offset + 1
    return {
        "topic": name,
        "partition": partition,
        "from_offset": start,
        "next_offset": position,
        "log_start_offset": log.log_start_offset,
        "high_watermark": log.high_watermark,
        "records": out,
    }


def groups(
    broker: Broker,
    listed: Shown = _everything,
    described: Shown = _everything,
    topic_shown: Shown = _everything,
) -> list[dict[str, Any]]:
    """Every group the principal may list; members, offsets and lag of those it may describe
    (a group listed through DESCRIBE on the cluster alone shows its id, type and state, as
    ListGroups does)."""
    return groups_shown(
        views.groups(broker), broker.group_journal.rebalances(), listed, described, topic_shown
    )


def groups_shown(
    groups: list[views.GroupView],
    rebalances: dict[str, int],
    listed: Shown = _everything,
    described: Shown = _everything,
    topic_shown: Shown = _everything,
) -> list[dict[str, Any]]:
    """`groups` as `groups` answers them (with a process per broker: merged from every process)."""
    out: list[dict[str, Any]] = []
    for view in groups:
        if not listed(view.group_id):
            continue
        if not described(view.group_id):
            shape = {"group_id": view.group_id, "group_type": view.group_type, "state": view.state}
            out.append(
                {**shape, "protocol_type": view.protocol_type, "members": [], "offsets": [], "lag": None}
            )
            continue
        view = _shown_offsets(view, topic_shown)
        out.append({**asdict(view), "lag": _total_lag(view), "rebalances": rebalances.get(view.group_id, 0)})
    return out


def _shown_offsets(view: views.GroupView, topic_shown: Shown) -> views.GroupView:
    return replace(view, offsets=tuple(o for o in view.offsets if topic_shown(o.topic)))


def _total_lag(group: views.GroupView) -> int:
    return sum(offset.lag or 0 for offset in group.offsets)


def group(broker: Broker, group_id: str, topic_shown: Shown = _everything) -> dict[str, Any]:
    for view in views.groups(broker):
        if view.group_id == group_id:
            journal = broker.group_journal
            timeline = [event.as_json() for event in journal.events(group_id)]
            return group_shown(view, journal.rebalances().get(group_id, 0), timeline, topic_shown)
    raise NotFound(f"no group {group_id!r}")


def group_shown(
    view: views.GroupView, rebalances: int, timeline: list[dict[str, Any]], topic_shown: Shown = _everything
) -> dict[str, Any]:
    """A group's page, its offsets with their lag."""
    view = _shown_offsets(view, topic_shown)
    offsets = [{**asdict(o), "lag": o.lag} for o in view.offsets]
    return {
        **asdict(view),
        "offsets": offsets,
        "lag": _total_lag(view),
        "rebalances": rebalances,
        "timeline": timeline,
    }


def transactions(broker: Broker, shown: Shown = _everything) -> list[dict[str, Any]]:
    """The transactions, those of transactional ids the principal may describe (ListTransactions)."""
    listings, _ = broker.transactions.list_transactions((), (), -1, broker.clock())
    return [
        {"transactional_id": t.transactional_id, "producer_id": t.producer_id, "state": t.state.name}
        for t in sorted(listings)
        if shown(t.transactional_id)
    ]


def test_broker(broker: Broker) -> dict[str, Any]:
    """The test broker's state (docs/test-broker.md): its clock, fault rules with how often each
    fired, and the latest firings. Changed only through the control endpoint, never here."""
    return {
        "clock": broker.broker_clock.to_json(),
        "rules": [rule.to_json() for rule in broker.faults.rules()],
        "firings": [firing.to_json() for firing in list(broker.faults.firings)[-50:]],
    }
