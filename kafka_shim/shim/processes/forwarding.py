"""What a non-controller broker process asks the controller process: the creation of topics
a client's Metadata would auto-create, as a Kafka broker forwards them to its controller
(AutoTopicCreationManager), over the controller's Kafka listener."""

from __future__ import annotations

import logging
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.create_topics import API as CREATE_TOPICS
from kafka_shim.shim.processes.catalog_follower import CatalogFollower
from kafka_shim.shim.processes.peer import Peer, PeerCallError, call
from kafka_shim.storage.topics import TopicStore, invalid_topic_name

log = logging.getLogger("kafka_shim.processes")

VERSION = 7  # CreateTopics v7: flexible, answers each topic's id
TIMEOUT_S = 5.0  # the longest a Metadata waits for the controller's answer


class AutoCreateForwarder:
    """Before a non-controller answers a Metadata that may auto-create topics: follow the
    catalog, and for topics still unknown ask the controller to create them (its defaults:
    num.partitions, default.replication.factor), then follow again, so the answer has them,
    as the one-process broker answers an auto-created topic at once. Without a way to the
    controller (shim.processes.peer_route) it only follows: the controller creates such topics
    when a client's Metadata reaches it."""

    def __init__(
        self,
        topics: TopicStore,
        follower: CatalogFollower,
        controller: Peer | None,
        auto_create: bool,
    ) -> None:
        self._topics = topics
        self._follower = follower
        self._controller = controller
        self._auto_create = auto_create

    async def before_metadata(self, body: Any) -> None:
        self._follower.sync()
        if self._controller is None or not (
            self._auto_create and body.allow_auto_topic_creation and body.topics
        ):
            return
        unknown = sorted(
            {
                t.name
                for t in body.topics
                if t.name and invalid_topic_name(t.name) is None and self._topics.get(t.name) is None
            }
        )
        if unknown:
            await self.create(unknown)
            self._follower.sync()

    async def create(self, names: list[str]) -> None:
        """Ask the controller to create `names`; a failure is logged (the client asks again)."""
        new = [
            {"name": n, "num_partitions": -1, "replication_factor": -1, "assignments": [], "configs": []}
            for n in names
        ]
        assert self._controller is not None
        request = {"topics": new, "timeout_ms": int(TIMEOUT_S * 1000), "validate_only": False}
        try:
            address, route = self._controller
            answer = await call(address, CREATE_TOPICS, VERSION, request, TIMEOUT_S, route)
        except PeerCallError as exc:
            log.warning("cannot ask the controller to create %s: %s", names, exc)
            return
        for topic in answer.topics:
            if topic.error_code not in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS):
                log.warning("the controller did not create %s: error %d", topic.name, topic.error_code)
