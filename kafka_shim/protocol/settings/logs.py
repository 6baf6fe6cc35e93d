"""The logs' settings: the broker's defaults (log.*, producer expiry, flushing) and the topic
configs, each a topic's own value, else its broker synonym, else the default."""

from __future__ import annotations

from kafka_shim.protocol.settings.setting import (
    BOOLEAN,
    COMPRESSION_TYPES,
    DOUBLE,
    INT,
    LIST,
    LONG,
    LONG_MAX,
    STRING,
    WEEK_MS,
)
from kafka_shim.protocol.settings.setting import broker_setting as _broker
from kafka_shim.protocol.settings.setting import topic_setting as _topic

_CLEANUP = ("compact", "delete")  # Kafka's order, as its messages list them

# Logs: the broker defaults of the topic configs below.
BROKER_DEFAULTS = [
    _broker("log.segment.bytes", INT, "1073741824", "segment size (topic: segment.bytes)",
            "log_segment_bytes", minimum=14),
    _broker("log.roll.ms", LONG, str(WEEK_MS), "segment age that rolls it (topic: segment.ms)",
            "log_roll_ms", minimum=1, kafka_default="null (log.roll.hours=168)",
            why="the same 7 days, under the one name"),
    _broker("log.retention.ms", LONG, str(WEEK_MS), "how long segments are kept (topic: retention.ms)",
            "log_retention_ms", minimum=-1, kafka_default="null (log.retention.hours=168)",
            why="the same 7 days, under the one name"),
    _broker("log.retention.bytes", LONG, "-1", "size a partition is trimmed to (topic: retention.bytes)",
            "log_retention_bytes", minimum=-1),
    _broker("log.cleanup.policy", LIST, "delete", "delete and/or compact (topic: cleanup.policy)",
            "log_cleanup_policy", choices=_CLEANUP),
    _broker("log.cleaner.delete.retention.ms", LONG, "86400000", "how long tombstones survive compaction "
            "(topic: delete.retention.ms)", "log_cleaner_delete_retention_ms", minimum=0),
    _broker("log.retention.check.interval.ms", LONG, "300000", "how often retention deletes old segments",
            "log_retention_check_interval_ms", minimum=1),
    _broker("log.cleaner.backoff.ms", LONG, "15000", "how often the cleaner looks for compacted logs "
            "dirty enough (min.cleanable.dirty.ratio) or past max.compaction.lag.ms",
            "log_cleaner_backoff_ms", minimum=0),
    _broker("log.cleaner.dedupe.buffer.size", LONG, "134217728", "the cleaner's key map: 24 bytes per key "
            "(a 16-byte hash and an offset), as Kafka's; a clean stops at the segment the map cannot hold",
            "log_cleaner_dedupe_buffer_size", minimum=24),
    _broker("producer.id.expiration.ms", INT, "86400000", "a producer not heard of for this long is "
            "forgotten by a partition (no open transaction)", "producer_id_expiration_ms", minimum=1),
    _broker("producer.id.expiration.check.interval.ms", INT, "600000", "how often producers are expired",
            "producer_id_expiration_check_interval_ms", minimum=1),
    _broker("log.flush.interval.ms", LONG, "1000",
            "fsync period of --fsync interval (also --fsync-interval-ms; see Durability)",
            "log_flush_interval_ms", minimum=1, kafka_default="null (never: left to the OS)",
            why="--fsync interval bounds what a power loss can take to one second; --fsync never is Kafka's"),
    # --- security: TLS (each may be set per listener as listener.name.<listener>.<name>)
]  # fmt: skip


# Topic configs: the topic's own value, else its broker synonym, else the default.
TOPIC_CONFIGS = [
    _topic("cleanup.policy", LIST, None, "delete and/or compact", synonym="log.cleanup.policy",
           choices=_CLEANUP),
    _topic("compression.type", STRING, None, "codec batches are stored with (producer: as sent)",
           synonym="compression.type", choices=COMPRESSION_TYPES),
    _topic("delete.retention.ms", LONG, None, "how long tombstones survive compaction",
           synonym="log.cleaner.delete.retention.ms", minimum=0),
    _topic("index.interval.bytes", INT, "4096", "bytes between offset index entries", minimum=0),
    _topic("max.compaction.lag.ms", LONG, str(LONG_MAX), "longest a record stays uncompacted", minimum=1),
    _topic("max.message.bytes", INT, None, "largest record batch", synonym="message.max.bytes", minimum=0),
    _topic("message.timestamp.type", STRING, "CreateTime", "the producer's timestamp or the broker's",
           choices=("CreateTime", "LogAppendTime")),
    _topic("message.downconversion.enable", BOOLEAN, "true", "whether Fetch v0-3 is served, by "
           "down-converting batches to magic 0/1 (false: UNSUPPORTED_VERSION)"),
    _topic("min.cleanable.dirty.ratio", DOUBLE, "0.5", "the cleaner takes a compacted log once the "
           "bytes written since its last clean are more than this share of it", minimum=0, maximum=1),
    _topic("min.compaction.lag.ms", LONG, "0", "shortest a record stays uncompacted", minimum=0),
    _topic("min.insync.replicas", INT, "1", "a single broker: always satisfied", minimum=1,
           no_effect="replication: this single broker holds the only copy of every partition"),
    _topic("retention.bytes", LONG, None, "size a partition is trimmed to", synonym="log.retention.bytes"),
    _topic("retention.ms", LONG, None, "how long segments are kept", synonym="log.retention.ms", minimum=-1),
    _topic("segment.bytes", INT, None, "segment size", synonym="log.segment.bytes", minimum=14),
    _topic("segment.ms", LONG, None, "segment age that rolls it", synonym="log.roll.ms", minimum=1),
    _topic("unclean.leader.election.enable", BOOLEAN, "false", "a single broker: no effect",
           no_effect="replication: this single broker holds the only copy of every partition"),
]  # fmt: skip
