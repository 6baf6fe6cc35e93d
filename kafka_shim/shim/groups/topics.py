"""The topic store as the consumer and share group coordinators read it."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from kafka_shim.shim.coordinator.consumer import TopicInfo
from kafka_shim.storage.topics import TopicStore


class StoreTopics:
    """The topic store as the consumer-group coordinator reads it (coordinator.consumer.Topics)."""

    def __init__(self, store: TopicStore) -> None:
        self._store = store

    def by_name(self, name: str) -> TopicInfo | None:
        topic = self._store.get(name)
        return None if topic is None else TopicInfo(topic.topic_id, topic.name, len(topic.partitions))

    def by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        topic = self._store.get_by_id(topic_id)
        return None if topic is None else TopicInfo(topic.topic_id, topic.name, len(topic.partitions))

    def names(self) -> Iterable[str]:
        return [topic.name for topic in self._store]
