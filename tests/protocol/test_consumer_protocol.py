"""ConsumerProtocolSubscription parsing: real bytes from kafka-python, and hostile ones."""

from __future__ import annotations

import struct

from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from kafka_shim.protocol.consumer_protocol import subscribed_topics


def test_reads_the_topics_of_a_real_client_subscription() -> None:
    subscription = ConsumerProtocolSubscription(
        version=1, topics=["orders", "payments"], user_data=b"user-data", owned_partitions=[]
    )
    metadata = subscription.encode(version=1)
    assert subscribed_topics(metadata) == frozenset({"orders", "payments"})


def test_reads_only_the_prefix_every_version_shares() -> None:
    # A future version with fields after the topics still parses.
    metadata = struct.pack(">hih", 9, 1, 1) + b"t" + b"\x00" * 40
    assert subscribed_topics(metadata) == frozenset({"t"})


def test_malformed_metadata_is_unknown_not_an_error() -> None:
    assert subscribed_topics(b"") is None
    assert subscribed_topics(struct.pack(">hi", 0, 1_000_000)) is None  # more topics than bytes
    assert subscribed_topics(struct.pack(">hih", 0, 1, 50) + b"short") is None
    # Invalid UTF-8 is replaced as Java does (not refused): this one fails for its missing user data.
    assert subscribed_topics(struct.pack(">hih", 0, 1, 2) + b"\xff\xfe") is None  # no user data
    assert subscribed_topics(struct.pack(">hi", -1, 0)) is None
