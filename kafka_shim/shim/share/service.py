"""The broker's share-group delivery state (KIP-932): each share partition's records in
__share_group_state (shim.share.partitions) and the members' share sessions, with what ends
a member's hold on its records: its session's end, its connection's close, the expiry of an
acquisition lock, the deletion of its topics. Share groups' membership is the group service's
(shim.groups)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Hashable

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.coordinator.share.config import ShareGroupConfig
from kafka_shim.shim.coordinator.share.sessions import ShareSessions
from kafka_shim.shim.share.partitions import ShareLockTimer, SharePartitions
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import AppendHook
from kafka_shim.storage.share_state_log import SHARE_STATE_TOPIC, ShareStateLog
from kafka_shim.storage.topics import TopicStore

# The broker's logger (Kafka's kafka.server.BrokerServer, shim.config.broker_loggers).
log = logging.getLogger("kafka_shim.shim.broker")


class ShareService:
    def __init__(
        self,
        config: BrokerConfig,
        topics: TopicStore,
        config_of: Callable[[str], ShareGroupConfig],
        set_deadline: Callable[[Hashable, int | None], None],
        on_append: AppendHook,
        clock: Callable[[], int],
    ) -> None:
        """`set_deadline` keeps acquisition-lock deadlines with the groups' (the timer task
        expires them, calling `lock_expired`); `on_append` wakes the members long-polling a
        partition whose records came back."""
        self._config, self._topics, self._config_of = config, topics, config_of
        self._set_deadline, self._on_append, self._clock = set_deadline, on_append, clock
        self.partitions = self._open_partitions()
        self.partitions.load()
        self.sessions = ShareSessions(config.share_max_share_sessions)

    def _open_partitions(self) -> SharePartitions:
        return SharePartitions(
            ShareStateLog(self._topics, self._config.share_state_topic_num_partitions),
            self._config_of,
            self._set_deadline,
            self._clock,
            updates_per_snapshot=self._config.share_snapshot_update_records_per_snapshot,
        )

    def state_topic_deleted(self) -> None:
        """__share_group_state was deleted: every share partition's state is forgotten, and the
        topic is made anew when a record next needs it."""
        self.partitions = self._open_partitions()

    def session_ended(self, group_id: str, member_id: str, now: int) -> None:
        """A share session's final epoch was served: it ends, and its member's records return
        (Kafka's releaseSession)."""
        self.sessions.end(group_id, member_id)
        self.member_released(group_id, member_id, now)

    def topics_deleted(self, topic_ids: list[uuid.UUID]) -> None:
        """Deleted topics take their share-group state with them (tombstones in
        __share_group_state); if that cannot be written it stays until the group's offsets
        are deleted, and a topic created again has a new id, so it is never read."""
        try:
            self.partitions.delete_topics(topic_ids, self._clock())
        except StorageError as exc:
            log.warning("share state of deleted topics stays in %s: %s", SHARE_STATE_TOPIC, exc.message)

    def connection_closed(self, connection: str) -> None:
        """A client's connection closed: the share session it opened ends and its member's
        records return (Kafka's ShareSessionCache connection-disconnect listener)."""
        key = self.sessions.disconnected(connection)
        if key is not None:
            self.member_released(*key, self._clock())

    def member_released(self, group_id: str, member_id: str, now: int) -> None:
        """The records a member holds return to the group. If that cannot be written they stay
        with it until their acquisition locks expire, whose deadlines retry the write."""
        try:
            self.partitions.release_member(group_id, member_id, now)
        except StorageError as exc:
            log.warning(
                "%s's records in %s return when their locks expire: %s", member_id, group_id, exc.message
            )

    def lock_expired(self, key: ShareLockTimer, now: int) -> None:
        self.partitions.expire(key.partition, now)
        topic = self._topics.get_by_id(key.partition.topic_id)
        partition_log = None if topic is None else topic.partition(key.partition.partition)
        if partition_log is not None:
            self._on_append(partition_log)  # records came back: wake the members long-polling it
