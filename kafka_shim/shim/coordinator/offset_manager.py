"""The classic coordinator's offsets (Kafka's OffsetMetadataManager): OffsetCommit,
TxnOffsetCommit and the end of its transaction, OffsetFetch, OffsetDelete, and which offsets
retention expires. The rules for one group's offsets are offsets.py's; this part applies them
to the registry's groups, parks transactional offsets, and says how to undo a commit.

Whether a group dies once its offsets are gone is the coordinator's call (Kafka's shard
decides it too): deleting offsets and expiring them only remove them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable

from kafka_shim.protocol.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator import group_timers, offsets, records
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.outcome import Effects
from kafka_shim.shim.coordinator.registry import GroupRegistry
from kafka_shim.shim.coordinator.state import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE, GroupState
from kafka_shim.shim.coordinator.types import CommitRequest, FetchedOffset, TopicPartition, TxnCommitRequest


class OffsetManager:
    def __init__(
        self, registry: GroupRegistry, consumer_group_topics: Callable[[str], frozenset[str] | None]
    ) -> None:
        """`consumer_group_topics`: see GroupCoordinator."""
        self._registry = registry
        self._consumer_group_topics = consumer_group_topics

    # --- OffsetCommit --------------------------------------------------------------------

    def commit(self, request: CommitRequest, now: int, out: Effects) -> dict[TopicPartition, ErrorCode]:
        registry = self._registry
        group = registry.groups.get(request.group_id)
        created = group is None
        retention_scheduled = registry.retention_scheduled
        if group is None:
            if request.generation_id >= 0:
                # A member of a generation that is gone.
                return dict.fromkeys(request.offsets, ErrorCode.ILLEGAL_GENERATION)
            group = registry.create(request.group_id, now, out)
        error = offsets.validate_commit(
            group, request.generation_id, request.member_id, request.group_instance_id
        )
        if error is not None:
            return dict.fromkeys(request.offsets, error)
        state = group.state
        if state is COMPLETING_REBALANCE:
            # A valid member of the new generation that has not synced yet: let it retry.
            return dict.fromkeys(request.offsets, ErrorCode.REBALANCE_IN_PROGRESS)
        if state is STABLE or state is PREPARING_REBALANCE:
            # Committing is a sign of life; the heartbeat will tell it of a rebalance.
            group_timers.schedule_session(group, group.members[request.member_id], now, out)
        accepted, errors = offsets.accept(request.offsets, now, registry.config.offset_metadata_max_bytes)
        transactional = registry.transactional.has_open_transactions(group.group_id)
        out.undo = self._commit_undo(group, accepted, retention_scheduled if created else None, transactional)
        offsets.store(group, accepted, out.records)
        if transactional:
            for tp in accepted:  # written after any transactional offset pending for it
                registry.transactional.supersede(group.group_id, tp)
        return errors

    def _commit_undo(
        self,
        group: Group,
        accepted: Collection[TopicPartition],
        created_retention: bool | None,
        has_open_transactions: bool,
    ) -> Callable[[], None]:
        """What puts a commit back, cheaply (commits are the hot path): the partitions'
        previous offsets, parked transactional offsets (the group's open transactions are
        copied only when it has any), or the group the commit made (`created_retention`:
        whether retention was scheduled before it; None: it existed)."""
        registry = self._registry
        previous = {}  # a loop, not a comprehension (a call on 3.11)
        for tp in accepted:
            previous[tp] = group.offsets.get(tp)
        transactional = registry.transactional
        if has_open_transactions:
            transactional = transactional.copy()

        def undo() -> None:
            if created_retention is not None:
                del registry.groups[group.group_id]
                registry.retention_scheduled = created_retention
            for tp, offset in previous.items():
                if offset is None:
                    group.offsets.pop(tp, None)
                else:
                    group.offsets[tp] = offset
            registry.transactional = transactional

        return undo

    # --- TxnOffsetCommit and the transaction's end ---------------------------------------

    def commit_transactional(
        self, request: TxnCommitRequest, now: int, out: Effects
    ) -> dict[TopicPartition, ErrorCode]:
        def all_fail(error: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return dict.fromkeys(request.offsets, error)

        registry = self._registry
        if not request.group_id:
            return all_fail(ErrorCode.INVALID_GROUP_ID)
        group = registry.get(request.group_id)
        if group is None:
            if request.generation_id >= 0:
                return all_fail(ErrorCode.ILLEGAL_GENERATION)
            group = registry.create(request.group_id, now, out)
        error = offsets.validate_commit(
            group, request.generation_id, request.member_id, request.group_instance_id, transactional=True
        )
        if error is not None:
            return all_fail(error)
        # Unlike OffsetCommit, Kafka neither refuses a group completing a rebalance nor
        # counts this as a heartbeat.
        accepted, errors = offsets.accept(request.offsets, now, registry.config.offset_metadata_max_bytes)
        for tp, committed in accepted.items():
            registry.transactional.add(request.producer_id, group.group_id, tp, committed)
            out.records.append(
                records.offset_record(
                    group.group_id, tp, committed, request.producer_id, request.producer_epoch
                )
            )
        return errors

    def complete_transaction(self, producer_id: int, commit: bool) -> None:
        for group_id, visible in self._registry.transactional.complete(producer_id, commit).items():
            group = self._registry.get(group_id)
            if group is not None:  # a deleted group's pending offsets went with it
                group.offsets.update(visible)

    # --- OffsetFetch ---------------------------------------------------------------------

    def fetch(
        self, group_id: str, partitions: Iterable[TopicPartition] | None, require_stable: bool
    ) -> dict[TopicPartition, FetchedOffset]:
        group = self._registry.get(group_id)
        if not require_stable:
            return offsets.fetch(group, partitions)
        transactional = self._registry.transactional
        return offsets.fetch(group, partitions, lambda tp: transactional.is_pending(group_id, tp))

    # --- OffsetDelete, group deletion, retention -----------------------------------------

    def deletable(
        self, group_id: str, partitions: Iterable[TopicPartition]
    ) -> tuple[ErrorCode, list[TopicPartition], dict[TopicPartition, ErrorCode]]:
        """OffsetDelete's check: the group's error, the partitions whose offsets may go and
        the others' errors. A live consumer group keeps the offsets of topics it subscribes to."""
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, [], {}
        group = self._registry.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND, [], {}
        wanted = list(partitions)
        if group.is_(GroupState.EMPTY):
            return ErrorCode.NONE, wanted, {}
        if group.protocol_type == CONSUMER_PROTOCOL_TYPE:
            deletable = [tp for tp in wanted if not group.is_subscribed_to(tp.topic)]
            errors = {
                tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC for tp in wanted if group.is_subscribed_to(tp.topic)
            }
            return ErrorCode.NONE, deletable, errors
        return ErrorCode.NON_EMPTY_GROUP, [], {}

    def delete(self, group: Group, partitions: Iterable[TopicPartition], out: Effects) -> None:
        """Committed and pending offsets go; a partition with only pending ones gets
        its tombstone too (Kafka's replay drops pending offsets at a tombstone)."""
        wanted = list(partitions)
        dropped = self._registry.transactional.discard(group.group_id, wanted)
        only_pending = [tp for tp in wanted if tp in dropped and tp not in group.offsets]
        offsets.remove(group, wanted, out.records)
        out.records.extend(records.offset_tombstone(group.group_id, tp) for tp in only_pending)

    def delete_all(self, group: Group, out: Effects) -> None:
        """Every offset of a group that dies, pending ones too."""
        pending = sorted(self._registry.transactional.partitions(group.group_id) - group.offsets.keys())
        self.delete(group, [*group.offsets, *pending], out)

    def expired(self, group: Group, now: int) -> list[TopicPartition]:
        """The group's offsets retention expires now (those a transaction may still commit stay)."""
        pending = functools.partial(self._registry.transactional.is_pending, group.group_id)
        retention = self._registry.config.offsets_retention_ms
        return offsets.expired(group, now, retention, pending, self._consumer_group_topics(group.group_id))

    def remove_expired(self, group: Group, expired: Iterable[TopicPartition], out: Effects) -> None:
        offsets.remove(group, expired, out.records)
