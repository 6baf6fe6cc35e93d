"""Which topics are internal: the broker's own coordinators write them, a client's Produce
never does (Kafka's Topic.isInternal; __share_group_state is one from Kafka 4.0).

Kafka lets a client with the ACLs create (when missing), configure, grow and delete them;
so does the broker: the coordinators pin their partition count when the topic is opened and
resign their state when it is deleted (see Broker.internal_topic_deleted)."""

from __future__ import annotations

from kafka_shim.protocol.internal_topics import INTERNAL_TOPICS

__all__ = ["CLUSTER_METADATA_TOPIC", "INTERNAL_TOPICS"]

# KRaft's metadata log: not internal in Kafka's sense (Metadata says is_internal false), but
# no client may create it (ControllerApis.createTopics refuses it before authorizing).
CLUSTER_METADATA_TOPIC = "__cluster_metadata"
