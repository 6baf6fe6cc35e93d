"""The cluster as one, from every broker process's share (shim.processes.view_service's
snapshots): each partition as its leader reports it, each group as its coordinator does (its
lag counted against the leaders' high watermarks, not the coordinator's own copy of a partition
it may not lead), request counts summed over the processes. Plain values in, shim.web.views'
values out: the console's pages and /metrics read them as they read one broker's."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from kafka_shim.shim.request_stats import RequestStats
from kafka_shim.shim.web import views

Snapshot = dict[str, Any]  # one process's answer to the "snapshot" question


def _partition(raw: dict[str, Any]) -> views.PartitionView:
    return views.PartitionView(
        raw["topic"],
        raw["partition"],
        raw["log_start_offset"],
        raw["log_end_offset"],
        raw["high_watermark"],
        raw["leader"],
        tuple(raw["replicas"]),
        tuple(raw["isr"]),
    )


def topics(snapshots: Iterable[Snapshot]) -> list[views.TopicView]:
    """Every topic, each partition from the process leading it (the first snapshot's topic id
    and configs: the controller's, which the others follow)."""
    first: dict[str, dict[str, Any]] = {}
    partitions: dict[str, list[views.PartitionView]] = {}
    for snapshot in snapshots:
        for topic in snapshot["topics"]:
            first.setdefault(topic["name"], topic)
            partitions.setdefault(topic["name"], []).extend(_partition(p) for p in topic["partitions"])
    return [
        views.TopicView(
            name,
            first[name]["topic_id"],
            first[name]["internal"],
            dict(first[name]["configs"]),
            tuple(sorted(partitions[name], key=lambda p: p.partition)),
        )
        for name in sorted(first)
    ]


def _member(raw: dict[str, Any]) -> views.MemberView:
    return views.MemberView(
        raw["member_id"],
        raw["instance_id"],
        raw["client_id"],
        raw["client_host"],
        tuple((topic, partition) for topic, partition in raw["assignment"]),
    )


def groups(snapshots: Iterable[Snapshot], topic_views: list[views.TopicView]) -> list[views.GroupView]:
    """Every group from its coordinator, each committed offset's lag against the high
    watermark of the partition's leader."""
    ends = {(t.name, p.partition): p.high_watermark for t in topic_views for p in t.partitions}
    found: dict[str, views.GroupView] = {}
    for snapshot in snapshots:
        for raw in snapshot["groups"]:
            offsets = tuple(
                views.OffsetView(
                    o["topic"], o["partition"], o["committed"], ends.get((o["topic"], o["partition"]))
                )
                for o in raw["offsets"]
            )
            found[raw["group_id"]] = views.GroupView(
                raw["group_id"],
                raw["group_type"],
                raw["state"],
                raw["protocol_type"],
                raw["protocol_name"],
                tuple(_member(m) for m in raw["members"]),
                offsets,
            )
    return [found[group_id] for group_id in sorted(found)]


def coordinator_of(snapshots: dict[int, Snapshot], group_id: str) -> int | None:
    """The node whose process reported the group (its coordinator)."""
    for node_id, snapshot in snapshots.items():
        if any(raw["group_id"] == group_id for raw in snapshot["groups"]):
            return node_id
    return None


def rebalances(snapshots: Iterable[Snapshot]) -> dict[str, int]:
    """Each group's rebalances, as its coordinator counted them."""
    counted: dict[str, int] = {}
    for snapshot in snapshots:
        for group_id, count in snapshot["rebalances"].items():
            counted[group_id] = max(counted.get(group_id, 0), count)
    return counted


def request_stats(snapshots: Iterable[Snapshot]) -> RequestStats:
    """Every process's request counts summed, in the shape /metrics reads one broker's."""
    merged = RequestStats()
    for snapshot in snapshots:
        merged.add_json(snapshot)
    return merged


class ProcessCollector(Collector):
    """What /metrics adds with a process per broker: each process's requests, labelled by
    broker (the unlabelled families are the sums over the processes)."""

    def __init__(self, snapshots: dict[int, Snapshot]) -> None:
        self.snapshots = snapshots

    def collect(self) -> Iterator[Any]:
        requests = CounterMetricFamily(
            "kafka_shim_broker_requests", "Requests served by each broker process", labels=["broker"]
        )
        for node_id, snapshot in sorted(self.snapshots.items()):
            served = sum(sum(raw["versions"].values()) for raw in snapshot["requests"].values())
            requests.add_metric([str(node_id)], served)
        yield requests
