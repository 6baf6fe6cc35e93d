"""One consumer group's state: members, the group epoch, the target assignment and who
holds which partition. Mutated only by the coordinator, which records every change."""

from __future__ import annotations

import uuid
from collections import Counter
from enum import Enum

from kafka_shim.shim.coordinator.consumer.member import ConsumerMember
from kafka_shim.shim.coordinator.consumer.types import NO_PARTITIONS, Assignment, TopicInfo


class ConsumerGroupState(Enum):
    """Derived from the data after every change, as Kafka's maybeUpdateGroupState does."""

    EMPTY = "Empty"  # no members
    ASSIGNING = "Assigning"  # the group epoch moved past the target assignment's
    RECONCILING = "Reconciling"  # some member has not reached the target assignment yet
    STABLE = "Stable"
    DEAD = "Dead"


class ConsumerGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.static_members: dict[str, str] = {}  # instance id -> member id
        self.target: dict[str, Assignment] = {}  # member id -> target assignment
        # The subscribed topics as last seen: a change of them bumps the group epoch.
        self.subscription_metadata: dict[str, TopicInfo] = {}
        self.resolved_regexes: dict[str, frozenset[str]] = {}  # regex -> matching topics
        # When the regexes were last resolved (all together, as Kafka does; None while none
        # is), and whether a resolution is under way: Kafka resolves them off the heartbeat.
        self.regexes_resolved_at: int | None = None
        self.regex_resolution_pending = False
        self._subscribed: frozenset[str] | None = None  # every member's topics, cached
        self._owner_epoch: dict[tuple[uuid.UUID, int], int] = {}  # partition -> holder's epoch

    @property
    def state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def owner_epoch(self, topic_id: uuid.UUID, partition: int) -> int | None:
        return self._owner_epoch.get((topic_id, partition))

    def put_member(self, member: ConsumerMember) -> None:
        old = self.members.get(member.member_id)
        if old is None or (old.subscribed_topic_names, old.subscribed_topic_regex) != (
            member.subscribed_topic_names,
            member.subscribed_topic_regex,
        ):
            self._subscribed = None
        if old is not None:
            self._release(old)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for held in (member.assigned, member.pending_revocation):
            for topic_id, parts in held.items():
                for partition in parts:
                    self._owner_epoch[(topic_id, partition)] = member.member_epoch

    def remove_member(self, member_id: str) -> ConsumerMember | None:
        member = self.members.pop(member_id, None)
        self._subscribed = None
        if member is not None:
            self._release(member)
            if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
                del self.static_members[member.instance_id]
        self.target.pop(member_id, None)
        return member

    def _release(self, member: ConsumerMember) -> None:
        for held in (member.assigned, member.pending_revocation):
            for topic_id, parts in held.items():
                for partition in parts:
                    self._owner_epoch.pop((topic_id, partition), None)

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def target_of(self, member_id: str) -> Assignment:
        return self.target.get(member_id, NO_PARTITIONS)

    def subscriptions(self, members: list[ConsumerMember]) -> dict[str, frozenset[str]]:
        """Each member's topics: its names, and what its regex resolved to."""
        return {
            m.member_id: frozenset(m.subscribed_topic_names)
            | self.resolved_regexes.get(m.subscribed_topic_regex or "", frozenset())
            for m in members
        }

    def resolve(self, regex: str, topics: frozenset[str] | None) -> None:
        """Record what `regex` matches now (None: no member uses it any more)."""
        if topics is None:
            self.resolved_regexes.pop(regex, None)
            if not self.resolved_regexes:
                self.regexes_resolved_at = None
        else:
            self.resolved_regexes[regex] = topics
        self._subscribed = None

    def used_regexes(self) -> frozenset[str]:
        return frozenset(m.subscribed_topic_regex for m in self.members.values() if m.subscribed_topic_regex)

    def subscribed_topics(self) -> frozenset[str]:
        """Every topic some member subscribes to, by name or through its regex."""
        if self._subscribed is None:
            self._subscribed = frozenset().union(*self.subscriptions(list(self.members.values())).values())
        return self._subscribed

    def preferred_assignor(self, default: str) -> str:
        """The assignor most members asked for (Kafka's rule), else the broker's default."""
        asked = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        return asked.most_common(1)[0][0] if asked else default
