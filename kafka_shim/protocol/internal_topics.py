"""The names of Kafka's internal topics (Kafka's Topic.isInternal; __share_group_state is one
from Kafka 4.0): the broker's own coordinators write them, a client's Produce never does.

Kafka's contract, like the error codes, so declared in protocol/: storage writes these
topics, and the coordinators, which know no storage, read the names too (a regex subscription
never matches an internal topic)."""

from __future__ import annotations

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
SHARE_STATE_TOPIC = "__share_group_state"

INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_TOPIC, SHARE_STATE_TOPIC})
