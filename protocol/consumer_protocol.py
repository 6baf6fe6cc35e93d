"""The classic consumer protocol's bytes (protocol type "consumer"): the topics a member
subscribes to, read from the ConsumerProtocolSubscription metadata of its JoinGroup.

Only the prefix every version shares is read (version, then the topic array),
as Kafka does, so future subscription versions still parse. Bytes come from
clients: every length is checked against what is left before it is used.
"""

from __future__ import annotations

import struct

CONSUMER_PROTOCOL_TYPE = "consumer"

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


def subscribed_topics(metadata: bytes) -> frozenset[str] | None:
    """The subscribed topics, or None when the metadata does not parse."""
    try:
        (version,) = _INT16.unpack_from(metadata, 0)
        (count,) = _INT32.unpack_from(metadata, 2)
        if version < 0 or count < 0 or count > (len(metadata) - 6) // 2:
            return None
        position = 6
        topics = []
        for _ in range(count):
            (length,) = _INT16.unpack_from(metadata, position)
            position += 2
            if length < 0 or position + length > len(metadata):
                return None
            topics.append(metadata[position : position + length].decode("utf-8"))
            position += length
    except (struct.error, UnicodeDecodeError):
        return None
    return frozenset(topics)
