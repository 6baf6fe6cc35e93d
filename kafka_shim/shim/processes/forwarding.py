"""What a non-controller broker process asks the controller process: the creation of topics
a client's Metadata would auto-create, as a Kafka broker forwards them to its controller
(AutoTopicCreationManager), over the controller's Kafka listener."""

from __future__ import annotations

import logging
import struct
from typing import Any

import trio

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.headers import RequestHeader
from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.messages.create_topics import API as CREATE_TOPICS
from kafka_shim.shim.processes.catalog_follower import CatalogFollower
from kafka_shim.storage.topics import TopicStore, invalid_topic_name

log = logging.getLogger("kafka_shim.processes")

_LENGTH = struct.Struct(">i")
VERSION = 7  # CreateTopics v7: flexible, answers each topic's id
TIMEOUT_S = 5.0  # the longest a Metadata waits for the controller's answer


class AutoCreateForwarder:
    """Before a non-controller answers a Metadata that may auto-create topics: follow the
    catalog, and for topics still unknown ask the controller to create them (its defaults:
    num.partitions, default.replication.factor), then follow again, so the answer has them,
    as the one-process broker answers an auto-created topic at once."""

    def __init__(
        self, topics: TopicStore, follower: CatalogFollower, controller: tuple[str, int], auto_create: bool
    ) -> None:
        self._topics = topics
        self._follower = follower
        self._controller = controller
        self._auto_create = auto_create

    async def before_metadata(self, body: Any) -> None:
        self._follower.sync()
        if not (self._auto_create and body.allow_auto_topic_creation and body.topics):
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
        request = {"topics": new, "timeout_ms": int(TIMEOUT_S * 1000), "validate_only": False}
        try:
            with trio.fail_after(TIMEOUT_S):
                answer = await self._call(request)
        except (OSError, trio.TooSlowError, ValueError) as exc:
            log.warning("cannot ask the controller at %s:%d to create %s: %r", *self._controller, names, exc)
            return
        for topic in answer.topics:
            if topic.error_code not in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS):
                log.warning("the controller did not create %s: error %d", topic.name, topic.error_code)

    async def _call(self, request: dict[str, Any]) -> Any:
        header = RequestHeader.build(
            {
                "request_api_key": CREATE_TOPICS.key,
                "request_api_version": VERSION,
                "correlation_id": 1,
                "client_id": "kafka-shim-broker",
            },
            2,
        )
        payload = header + APIS[CREATE_TOPICS.key].request.build(request, VERSION)
        stream = await trio.open_tcp_stream(*self._controller)
        async with stream:
            await stream.send_all(_LENGTH.pack(len(payload)) + payload)
            answer = await _read(stream, _LENGTH.unpack(await _read(stream, 4))[0])
        return CREATE_TOPICS.response.parse(answer[5:], VERSION)  # after correlation id and tags


async def _read(stream: trio.SocketStream, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = await stream.receive_some(size - len(data))
        if not chunk:
            raise ValueError("the controller closed the connection")
        data += chunk
    return bytes(data)
