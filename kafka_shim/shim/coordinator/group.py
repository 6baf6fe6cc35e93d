"""A classic group's membership, protocol and committed offsets (Kafka's GroupMetadata).

The group only keeps its books; the coordinator decides when things happen.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from kafka_shim.protocol.consumer_protocol import CONSUMER_PROTOCOL_TYPE, subscribed_topics
from kafka_shim.protocol.offsets_records import OffsetValue
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.outcome import Waiter
from kafka_shim.shim.coordinator.state import Event, GroupState, next_state
from kafka_shim.shim.coordinator.types import JoinedMember, Protocol, TopicPartition


@dataclass
class PendingJoin:
    """The delayed join of a rebalance in progress.

    `initial` is Kafka's InitialDelayedJoin: a group forming from Empty waits
    `delay_ms` for more members, extended while new ones keep arriving, until
    `remaining_ms` (the rebalance timeout) is used up. It never completes early.
    """

    initial: bool
    delay_ms: int = 0
    remaining_ms: int = 0


class Group:
    def __init__(self, group_id: str, now: int) -> None:
        self.group_id = group_id
        self.state = GroupState.EMPTY
        self.state_since_ms = now
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}  # insertion order stands in for Kafka's map order
        self.static_members: dict[str, str] = {}  # group.instance.id -> member id
        self.pending_members: set[str] = set()  # handed an id by MEMBER_ID_REQUIRED, not joined yet
        self.pending_sync: set[str] = set()  # in the current generation, not synced yet
        self.pending_join: PendingJoin | None = None
        self.new_member_added = False
        self.subscribed_topics: frozenset[str] | None = None
        self.offsets: dict[TopicPartition, OffsetValue] = {}
        self._votes: Counter[str] = Counter()
        # The members a step that may be undone has changed, each with its fields from before
        # (SavedGroup keeps them; see `changing`).
        self.changed_members: dict[Member, dict[str, Any]] | None = None

    # --- state ---------------------------------------------------------------------------

    def is_(self, *states: GroupState) -> bool:
        return self.state in states

    def transition(self, event: Event, now: int) -> None:
        """Move as the transition table says (state.TRANSITIONS); IllegalTransition if it has no row."""
        self.state = next_state(self.group_id, self.state, event)
        self.state_since_ms = now

    def restore_empty(self, generation_id: int, protocol_type: str | None, since_ms: int) -> None:
        """Loaded from the offsets log: Empty (members rejoin after a restart) at its generation."""
        self.state = GroupState.EMPTY
        self.state_since_ms = since_ms
        self.generation_id = generation_id
        self.protocol_type = protocol_type
        self.protocol_name = None
        self.subscribed_topics = self._compute_subscribed_topics()

    def restore_stable(
        self, generation_id: int, protocol_type: str, protocol_name: str, leader_id: str | None, since_ms: int
    ) -> None:
        """Loaded from the offsets log with its members (added before): Stable at its
        generation, as Kafka's coordinator loads a classic group, so the members carry on."""
        self.state = GroupState.STABLE
        self.state_since_ms = since_ms
        self.generation_id = generation_id
        self.protocol_type = protocol_type
        self.protocol_name = protocol_name
        self.leader_id = leader_id if leader_id in self.members else next(iter(self.members))
        self.subscribed_topics = self._compute_subscribed_topics()

    @property
    def can_rebalance(self) -> bool:
        return self.is_(GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY)

    # --- membership ----------------------------------------------------------------------

    def changing(self, member: Member) -> Member:
        """Call before writing any of a member's fields: within a step that may be undone,
        the member's fields as they were before the step are kept, once (SavedGroup)."""
        changed = self.changed_members
        if changed is not None and member not in changed:
            changed[member] = member.__dict__.copy()
        return member

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    @property
    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join is not None)

    @property
    def has_all_members_joined(self) -> bool:
        return self.num_awaiting_join == len(self.members) and not self.pending_members

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def add(self, member: Member, waiter: Waiter | None) -> None:
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._votes.update(member.protocol_names())
        self.changing(member).awaiting_join = waiter
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._votes.subtract(member.protocol_names())
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync.discard(member_id)
        return member

    def update_member(
        self,
        member: Member,
        protocols: tuple[Protocol, ...],
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        waiter: Waiter | None,
    ) -> None:
        self.changing(member)
        self._votes.subtract(member.protocol_names())
        member.protocols = protocols
        self._votes.update(member.protocol_names())
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        member.awaiting_join = waiter

    def replace_static_member(self, instance_id: str, old_member_id: str, new_member_id: str) -> Member:
        """A static member restarted: same member under a new id (the coordinator has fenced
        the old id's waiting requests)."""
        member = self.changing(self.members.pop(old_member_id))
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[instance_id] = new_member_id
        return member

    def elect_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick a member that did; False if none can lead."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].awaiting_join is not None:
            return True
        for member_id, member in self.members.items():
            if member.awaiting_join is not None:
                self.leader_id = member_id
                return True
        return False

    # --- protocol ------------------------------------------------------------------------

    def supports_protocols(self, protocol_type: str, names: set[str]) -> bool:
        if self.is_(GroupState.EMPTY):
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and any(
            self._votes[name] == len(self.members) for name in names
        )

    def select_protocol(self) -> str:
        """Each member votes for its preferred protocol among those all members support.

        Ties go to the protocol that received a vote first, in member order, so
        the choice is deterministic (Kafka leaves it to hash-map order).
        """
        candidates = {name for name, count in self._votes.items() if count == len(self.members)}
        ballots = Counter(member.vote(candidates) for member in self.members.values())
        return max(ballots, key=lambda name: ballots[name])

    def current_member_metadata(self) -> tuple[JoinedMember, ...]:
        assert self.protocol_name is not None
        return tuple(member.joined(self.protocol_name) for member in self.members.values())

    def init_next_generation(self, now: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition(Event.JOIN_COMPLETED, now)
        else:
            self.protocol_name = None
            self.transition(Event.JOIN_COMPLETED_EMPTY, now)
        self.subscribed_topics = self._compute_subscribed_topics()
        self.pending_sync.clear()

    def _compute_subscribed_topics(self) -> frozenset[str] | None:
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return frozenset()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            subscription = subscribed_topics(member.metadata(self.protocol_name))
            if subscription is None:
                return None  # unknown: treat every topic as subscribed, as Kafka does
            topics |= subscription
        return frozenset(topics)

    def is_subscribed_to(self, topic: str) -> bool:
        return self.subscribed_topics is None or topic in self.subscribed_topics


class SavedGroup:
    """A group as it was before a step that may write records, put back in place (the same
    `Group` and `Member` objects) by `restore` when the records are not written.

    It costs what the step changes: the group's own fields and the containers it owns are
    copied (C-level copies: 0.6 µs for 100 members), and a member's fields only when the step
    first changes them (`Group.changing`, which every write to a member's fields calls first).
    The `PendingJoin` is replaced by a step, never changed. A join, sync, leave or deadline
    never touches committed offsets, so they are copied only when asked (`with_offsets`:
    deleting offsets or the group). `copy.deepcopy`, before it, cost 40-70 µs for a group of
    one member (growing with the heap) and 1.3 ms for 100.
    """

    __slots__ = ("_changed", "_fields", "_group")

    def __init__(self, group: Group, with_offsets: bool) -> None:
        self._group = group
        fields: dict[str, Any] = group.__dict__.copy()  # twice as fast as dict(vars(group))
        fields["members"] = dict(group.members)
        fields["static_members"] = dict(group.static_members)
        fields["pending_members"] = set(group.pending_members)
        fields["pending_sync"] = set(group.pending_sync)
        fields["_votes"] = dict(group._votes)  # a Counter again in `restore` (its copy costs 1 µs)
        if with_offsets:
            fields["offsets"] = dict(group.offsets)
        fields["changed_members"] = None  # the step is over once restored
        self._fields = fields
        self._changed: dict[Member, dict[str, Any]] = {}
        group.changed_members = self._changed  # this step's (a later step brings its own)

    def restore(self) -> Group:
        """Put the group back as it was saved (once: the saved containers become its own)."""
        fields = self._fields
        fields["_votes"] = Counter(fields["_votes"])
        vars(self._group).update(fields)
        for member, member_fields in self._changed.items():
            vars(member).update(member_fields)
        return self._group
