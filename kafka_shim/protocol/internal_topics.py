"""The names of Kafka's internal topics (Kafka's Topic.isInternal; __share_group_state is one
from Kafka 4.0): the broker's own coordinators write them, a client's Produce never does.

Kafka's contract, like the error codes, so declared in protocol/: storage writes these
topics, and the coordinators, which know no storage, read the names too (a regex subscription
never matches an internal topic). So is which partition holds a key (`partition_for`): the
emulated brokers place coordinators by it without loading the internal logs' code."""

from __future__ import annotations

import functools

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
SHARE_STATE_TOPIC = "__share_group_state"

INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_TOPIC, SHARE_STATE_TOPIC})

_INT32_MASK = 0xFFFFFFFF


def java_string_hash(text: str) -> int:
    """Java's String.hashCode: s[0]*31^(n-1) + ... over UTF-16 code units, as a signed int32."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _INT32_MASK
    return h - (1 << 32) if h >= 1 << 31 else h


@functools.lru_cache(maxsize=4096)  # on every commit; the hash loops over the group id in Python
def partition_for(group_id: str, partitions: int) -> int:
    """Kafka's Utils.abs(groupId.hashCode) % partitions (abs maps Integer.MIN_VALUE to 0)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions
