"""Which topics are internal: the broker's own coordinators write them, a client's Produce
never does (Kafka's Topic.isInternal; __share_group_state is one from Kafka 4.0).

Kafka lets a client with the ACLs create (when missing), configure, grow and delete them;
so does the broker: the coordinators pin their partition count when the topic is opened and
resign their state when it is deleted (see Broker.internal_topic_deleted)."""

from __future__ import annotations

from kafka_shim.storage.offsets_log import OFFSETS_TOPIC
from kafka_shim.storage.share_state_log import SHARE_STATE_TOPIC
from kafka_shim.storage.transaction_log import TRANSACTION_TOPIC

INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_TOPIC, SHARE_STATE_TOPIC})

# KRaft's metadata log: not internal in Kafka's sense (Metadata says is_internal false), but
# no client may create it (ControllerApis.createTopics refuses it before authorizing).
CLUSTER_METADATA_TOPIC = "__cluster_metadata"
