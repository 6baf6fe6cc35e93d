"""The consumer protocol embedded in classic groups (protocol type "consumer"; Kafka's
ConsumerProtocolSubscription and ConsumerProtocolAssignment): what a classic consumer puts in
its JoinGroup metadata and reads from its SyncGroup assignment. Each is an int16 version, then
the struct of that version (never flexible). Versions newer than the last declared one are
read as that one: each version only appends fields, as Kafka reads them. The bytes come from
clients: what does not parse raises ProtocolError."""

from __future__ import annotations

from typing import Final, NamedTuple

from kafka_shim.protocol.schema import BYTES, INT32, STRING, Array, Field, Message
from kafka_shim.protocol.types import ProtocolError

CONSUMER_PROTOCOL_TYPE: Final = "consumer"
LAST_VERSION: Final = 3

SUBSCRIPTION: Final = Message(
    "ConsumerProtocolSubscription",
    versions="0-3",
    flexible="none",
    fields=[
        Field("topics", Array(STRING)),
        Field("user_data", BYTES, nullable="0+", default=None),
        Field("owned_partitions", Array(Field("topic", STRING), Field("partitions", Array(INT32))), "1+"),
        Field("generation_id", INT32, "2+", default=-1),
        Field("rack_id", STRING, "3+", nullable="3+", default=None),
    ],
)

ASSIGNMENT: Final = Message(
    "ConsumerProtocolAssignment",
    versions="0-3",
    flexible="none",
    fields=[
        Field("assigned_partitions", Array(Field("topic", STRING), Field("partitions", Array(INT32)))),
        Field("user_data", BYTES, nullable="0+", default=None),
    ],
)


class Subscription(NamedTuple):
    version: int
    topics: tuple[str, ...]
    owned: tuple[tuple[str, int], ...]  # (topic, partition): v1+, empty before
    rack_id: str | None


def version_of(data: bytes) -> int:
    """The version a subscription or an assignment starts with (ProtocolError if none)."""
    if len(data) < 2:
        raise ProtocolError("consumer protocol data shorter than its version")
    version = int.from_bytes(data[:2], "big", signed=True)
    if version < 0:
        raise ProtocolError(f"consumer protocol version {version} is negative")
    return version


def decode_subscription(data: bytes) -> Subscription:
    """ProtocolError if `data` is not a subscription."""
    version = version_of(data)
    parsed = SUBSCRIPTION.parse(data[2:], min(version, LAST_VERSION))
    owned = tuple((t.topic, p) for t in parsed.get("owned_partitions", ()) for p in t.partitions)
    return Subscription(version, tuple(parsed.topics), owned, parsed.get("rack_id"))


def subscribed_topics(metadata: bytes) -> frozenset[str] | None:
    """The topics of a JoinGroup's subscription metadata, or None when it does not parse
    (Kafka's classic group then keeps no subscribed-topics view for offset expiry)."""
    try:
        return frozenset(decode_subscription(metadata).topics)
    except ProtocolError:
        return None


def decode_assignment(data: bytes) -> tuple[tuple[str, int], ...]:
    """The (topic, partition) pairs of an assignment; none for empty data (a member that has
    not been assigned anything yet)."""
    if not data:
        return ()
    parsed = ASSIGNMENT.parse(data[2:], min(version_of(data), LAST_VERSION))
    return tuple((t.topic, p) for t in parsed.assigned_partitions for p in t.partitions)


def encode_assignment(partitions: dict[str, list[int]], version: int) -> bytes:
    """An assignment in `version` (capped at the last one declared here)."""
    version = min(max(version, 0), LAST_VERSION)
    body = ASSIGNMENT.build(
        {
            "assigned_partitions": [
                {"topic": topic, "partitions": sorted(parts)} for topic, parts in sorted(partitions.items())
            ],
            "user_data": None,
        },
        version,
    )
    return version.to_bytes(2, "big") + body
