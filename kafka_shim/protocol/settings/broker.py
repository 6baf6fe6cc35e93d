"""The broker's own settings: its listeners and limits, what hostile clients may cost, client
quotas, fetch sessions, and the schema registry it serves."""

from __future__ import annotations

from kafka_shim.protocol.settings.setting import (
    BOOLEAN,
    COMPRESSION_TYPES,
    INT,
    INT_MAX,
    LONG,
    STRING,
)
from kafka_shim.protocol.settings.setting import broker_setting as _broker

# The broker and its listeners, hostile clients, client quotas, fetch.
SETTINGS = [
    # --- the broker and its listeners
    _broker("node.id", INT, "0", "this broker's id", "node_id", minimum=0, kafka_default="(required)",
            why="a single broker is node 0", described_default="-1"),
    _broker("broker.id", INT, "0", "this broker's id (the older name of node.id)", "node_id", minimum=0,
            kafka_default="-1", why="a single broker is node 0", described_default="-1"),
    _broker("listeners", STRING, None, "NAME://host:port,... to bind (null: --host/--port, one PLAINTEXT "
            "listener on 127.0.0.1:9092)", "listeners", kafka_default="PLAINTEXT://:9092",
            why="a dev broker serves loopback unless told otherwise"),
    _broker("advertised.listeners", STRING, None, "where clients of each listener are told to connect "
            "(null: the listeners; port 0: the bound port)", "advertised_listeners"),
    _broker("listener.security.protocol.map", STRING,
            "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
            "listener name -> security protocol", "listener_security_protocol_map"),
    _broker("socket.request.max.bytes", INT, "104857600", "largest request frame; larger ones close the "
            "connection (also --max-request-bytes)", "max_request_bytes", minimum=1),
    _broker("message.max.bytes", INT, "1048588", "largest record batch (topic: max.message.bytes)",
            "message_max_bytes", minimum=0),
    _broker("auto.create.topics.enable", BOOLEAN, "true",
            "Metadata creates unknown topics (Produce does not, as in Kafka)", "auto_create_topics"),
    _broker("delete.topic.enable", BOOLEAN, "true", "DeleteTopics is allowed", "delete_topic_enable"),
    _broker("num.partitions", INT, "1", "partitions of an auto-created topic (also --num-partitions)",
            "num_partitions", minimum=1),
    # Kafka 4.x's controller refuses a CreateTopics of more new partitions than this with
    # POLICY_VIOLATION (KAFKA-17870: 10,000, its metadata batch; configurable, KAFKA-20976).
    _broker("controller.max.records.per.batch", INT, "10000", "most new partitions one CreateTopics "
            "or CreatePartitions request may ask for; more refuses the whole request with "
            "POLICY_VIOLATION, as Kafka's controller does", "max_partitions_per_request", minimum=1),
    # Kafka has no total cap (KIP-578 proposed this name, never adopted): here memory and files
    # grow with every partition (docs/limitations.md says how much).
    _broker("max.partitions", INT, "100000", "most partitions all topics together may have (internal "
            "ones included); a topic or partitions that would pass it are refused with "
            "POLICY_VIOLATION, an auto-creation answers the topic unknown", "max_partitions", minimum=1),
    _broker("default.replication.factor", INT, "1",
            "replicas of a new topic: at most the broker count (--brokers N: N unless set)",
            "default_replication_factor", minimum=1),
    _broker("compression.type", STRING, "producer", "default of the topic config compression.type",
            "compression_type", choices=COMPRESSION_TYPES),
    _broker("max.request.partition.size.limit", INT, "2000", "most partitions one DescribeTopicPartitions "
            "response describes (the rest follow through its cursor)", "max_request_partition_size_limit",
            minimum=1),
    # --- hostile clients: memory for requests not yet handled, connections
    _broker("queued.max.request.bytes", INT, str(200 * 1024 * 1024), "bytes buffered for requests not yet "
            "handled, across all connections (<= 0: no limit); a connection over it stops being read",
            "queued_max_request_bytes", kafka_default="-1",
            why="twice socket.request.max.bytes, so a maximal request always fits while clients that "
            "announce large frames and never finish them cost at most this much memory"),
    _broker("max.connections", INT, str(INT_MAX), "connections accepted at once; more wait in the backlog",
            "max_connections", minimum=0),
    _broker("max.connections.per.ip", INT, str(INT_MAX), "connections from one address; more are closed "
            "at once", "max_connections_per_ip", minimum=0),
    _broker("max.connections.per.ip.overrides", STRING, "", "host:count,... exceptions to "
            "max.connections.per.ip", "max_connections_per_ip_overrides"),
    _broker("connections.max.idle.ms", LONG, "600000", "a connection idle this long is closed",
            "connections_max_idle_ms", minimum=1),
    # --- client quotas (the quotas themselves: AlterClientQuotas, kept in quotas.json)
    _broker("quota.window.num", INT, "11", "samples kept for client quota rates", "quota_window_num",
            minimum=1),
    _broker("quota.window.size.seconds", INT, "1", "the time span of each client quota sample",
            "quota_window_size_seconds", minimum=1),
    # --- fetch
    _broker("max.incremental.fetch.session.cache.slots", INT, "1000", "incremental fetch sessions "
            "(KIP-227) kept at once; 0 disables them", "max_incremental_fetch_session_cache_slots",
            minimum=0),
]  # fmt: skip


# The schema registry (shim.schema_registry): Confluent's names, under schema.registry.
SCHEMA_REGISTRY = [
    _broker("schema.registry.topic", STRING, "_schemas", "the compacted topic the schema registry "
            "keeps its schemas in (Confluent's kafkastore.topic)", "schema_registry_topic"),
    _broker("schema.registry.compatibility.level", STRING, "BACKWARD", "the schema registry's "
            "compatibility level where neither /config nor /config/{subject} sets one (Confluent's "
            "schema.compatibility.level)", "schema_registry_compatibility_level",
            choices=("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
                     "FULL_TRANSITIVE")),
]  # fmt: skip
