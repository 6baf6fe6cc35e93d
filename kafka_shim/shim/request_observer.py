"""What the console and /metrics learn of each answered request: its counts and latency
(shim.request_stats) and, for a member's group request, a note in the group's journal
(shim.groups.journal) with the group's shape after it. Called by the dispatch step once per
request (its account step), so it is on the benchmarked path."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from kafka_shim.protocol.schema import Parsed
from kafka_shim.shim.groups.journal import GroupJournal, GroupShape
from kafka_shim.shim.request_stats import RequestStats, error_name

# Requests of a group's members that its journal (the console's timeline) records, and those
# of them that can change the group's members or state (the others are only noted).
GROUP_SHAPING_APIS = frozenset(
    {"JoinGroup", "SyncGroup", "LeaveGroup", "ConsumerGroupHeartbeat", "ShareGroupHeartbeat"}
)
JOURNALED_APIS = GROUP_SHAPING_APIS | {"Heartbeat", "OffsetCommit"}


class RequestObserver:
    def __init__(
        self,
        stats: RequestStats,
        journal: GroupJournal,
        group_shape: Callable[[str], GroupShape | None],
        topic_name: Callable[[uuid.UUID], str | None],
        clock: Callable[[], int],
    ) -> None:
        self._stats, self._journal, self._group_shape = stats, journal, group_shape
        self._topic_name, self._clock = topic_name, clock

    def observe(self, api: str, version: int, request: Parsed, response: Any, seconds: float) -> None:
        """Count an answered request for /metrics and, for a member's group request, note it in
        the group's journal (with the group's shape after it, where the request can change it)."""
        stats = self._stats
        codes = stats.observe(api, version, response, seconds)
        if api == "Produce":
            stats.produced(request)
        elif api == "Fetch" and response is not None:
            stats.fetched(response, self._topic_name)
        elif api in JOURNALED_APIS and response is not None:
            group_id = request.group_id
            members = request.members if api == "LeaveGroup" and version >= 3 else None
            member_id = members[0].member_id if members else request.member_id
            now = self._clock()
            error = error_name(codes[0]) if codes else "NONE"
            self._journal.request(now, group_id, api, member_id or "", error)
            if api in GROUP_SHAPING_APIS:
                self._journal.observe(now, group_id, self._group_shape(group_id))
