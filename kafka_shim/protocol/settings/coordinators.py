"""The coordinators' settings: classic groups and committed offsets, KIP-848 consumer groups,
KIP-932 share groups, transactions."""

from __future__ import annotations

from kafka_shim.protocol.settings.setting import (
    INT,
    INT_MAX,
    LIST,
    LONG,
    STRING,
)
from kafka_shim.protocol.settings.setting import broker_setting as _broker

# Kafka's classes of the server-side assignors, by the names the consumer protocol gives
# them: group.consumer.assignors takes either (Kafka 3.9's default lists the classes).
ASSIGNOR_CLASSES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}

# Groups and offsets, consumer groups, share groups, transactions.
SETTINGS = [
    # --- groups and committed offsets
    _broker("group.initial.rebalance.delay.ms", INT, "0", "how long a group forming from Empty waits for "
            "more members (also --initial-rebalance-delay-ms)", "initial_rebalance_delay_ms", minimum=0,
            kafka_default="3000",
            why="a local broker should form a group as soon as its members have joined "
            "(--initial-rebalance-delay-ms 3000 restores Kafka's)"),
    _broker("group.min.session.timeout.ms", INT, "6000", "smallest session timeout a member may ask for",
            "min_session_timeout_ms", minimum=1),
    _broker("group.max.session.timeout.ms", INT, "1800000", "largest session timeout a member may ask for",
            "max_session_timeout_ms", minimum=1),
    _broker("group.max.size", INT, str(INT_MAX), "most members in one group", "max_group_size", minimum=1),
    _broker("offsets.retention.minutes", INT, "10080",
            "how long offsets are kept: an empty classic group's from when it emptied, others' from their "
            "commit; a group with members keeps those of the topics it subscribes to",
            "offsets_retention_minutes", minimum=1),
    _broker("offsets.retention.check.interval.ms", LONG, "600000", "how often expired offsets are removed",
            "offsets_retention_check_interval_ms", minimum=1),
    _broker("offsets.topic.num.partitions", INT, "1", "partitions of __consumer_offsets (read when it "
            "is first created)", "offsets_topic_num_partitions", minimum=1, kafka_default="50",
            why="one broker gains nothing from spreading groups over partitions, and each costs "
            "start-up time: the first group on disk starts in 15 ms with 1, 170 ms with 50; 1M "
            "commits recover in 0.5 s with 1, several seconds with 50 (python -m bench.offsets_recovery)"),
    _broker("offset.metadata.max.bytes", INT, "4096", "largest metadata string of a committed offset",
            "offset_metadata_max_bytes", minimum=0),
    # --- KIP-848 consumer groups
    _broker("group.coordinator.rebalance.protocols", LIST, "classic,consumer", "group protocols served "
            "(consumer: ConsumerGroupHeartbeat is advertised)", "rebalance_protocols",
            choices=("classic", "consumer")),
    _broker("group.consumer.heartbeat.interval.ms", INT, "500", "heartbeat interval of consumer-protocol "
            "members", "consumer_heartbeat_interval_ms", minimum=1, kafka_default="5000",
            why="members learn of a rebalance at their next heartbeat, so a group converges in one or two "
            "intervals (python -m bench.kip848_groups: join < 3 s, close < 1 s)"),
    _broker("group.consumer.min.heartbeat.interval.ms", INT, "100", "smallest heartbeat interval; also the "
            "one members of a group that is not Stable are asked for", "consumer_min_heartbeat_interval_ms",
            minimum=1, kafka_default="5000",
            why="reconciliation's round trips then do not each wait a full interval (a no-op with Kafka's "
            "values)"),
    _broker("group.consumer.max.heartbeat.interval.ms", INT, "15000", "largest heartbeat interval",
            "consumer_max_heartbeat_interval_ms", minimum=1),
    _broker("group.consumer.session.timeout.ms", INT, "10000", "session timeout of consumer-protocol "
            "members", "consumer_session_timeout_ms", minimum=1, kafka_default="45000",
            why="a SIGKILLed member's partitions move after 10 s instead of 45 s; 20 missed heartbeats at "
            "the dev interval"),
    _broker("group.consumer.min.session.timeout.ms", INT, "1000", "smallest session timeout",
            "consumer_min_session_timeout_ms", minimum=1, kafka_default="45000",
            why="lets the session timeout go below Kafka's floor"),
    _broker("group.consumer.max.session.timeout.ms", INT, "60000", "largest session timeout",
            "consumer_max_session_timeout_ms", minimum=1),
    _broker("group.consumer.max.size", INT, str(INT_MAX), "most members in one consumer group",
            "consumer_max_size", minimum=1),
    _broker("group.consumer.assignors", LIST, "uniform,range", "server-side assignors, the first the "
            "default (by name, or by Kafka's class name as Kafka 3.9 lists them)", "consumer_assignors",
            choices=("uniform", "range", *ASSIGNOR_CLASSES)),
    _broker("group.consumer.migration.policy", STRING, "bidirectional",
            "online conversion of a group between classic and consumer (upgrade, downgrade, both, neither)",
            "consumer_migration_policy",
            choices=("bidirectional", "upgrade", "downgrade", "disabled")),
    # --- KIP-932 share groups (the group-level share.* configs of the GROUP resource override these)
    _broker("group.share.session.timeout.ms", INT, "45000", "session timeout of share-group members",
            "share_session_timeout_ms", minimum=1),
    _broker("group.share.heartbeat.interval.ms", INT, "5000", "heartbeat interval of share-group members",
            "share_heartbeat_interval_ms", minimum=1),
    _broker("group.share.max.size", INT, "200", "most members in one share group", "share_max_size",
            minimum=1, maximum=1000),
    _broker("group.share.record.lock.duration.ms", INT, "30000", "how long a share-group member holds "
            "the records it acquired before they return", "share_record_lock_duration_ms", minimum=1000,
            maximum=3600000),
    _broker("group.share.min.record.lock.duration.ms", INT, "1000", "smallest share.record.lock.duration.ms "
            "a group may set", "share_min_record_lock_duration_ms", minimum=1000, maximum=30000,
            kafka_default="15000", why="a test of lock expiry waits one lock duration: 1 s instead of 15 s"),
    _broker("group.share.max.record.lock.duration.ms", INT, "60000", "largest share.record.lock.duration.ms "
            "a group may set", "share_max_record_lock_duration_ms", minimum=30000, maximum=3600000),
    _broker("group.share.delivery.count.limit", INT, "5", "deliveries of a record before it is archived",
            "share_delivery_count_limit", minimum=2, maximum=10),
    _broker("group.share.partition.max.record.locks", INT, "2000", "most in-flight records of a share "
            "partition (acquired or not yet acknowledged)", "share_partition_max_record_locks", minimum=100,
            maximum=10000),
    _broker("group.share.max.share.sessions", INT, "2000", "most share sessions open on the broker "
            "(SHARE_SESSION_LIMIT_REACHED beyond)", "share_max_share_sessions", minimum=1),
    _broker("share.coordinator.state.topic.num.partitions", INT, "1", "partitions of __share_group_state "
            "(read when it is first created)", "share_state_topic_num_partitions", minimum=1,
            kafka_default="50", why="as for offsets.topic.num.partitions"),
    _broker("share.coordinator.snapshot.update.records.per.snapshot", INT, "500", "ShareUpdate records "
            "written for a share partition between two ShareSnapshots of it",
            "share_snapshot_update_records_per_snapshot", minimum=0, maximum=500),
    # --- transactions
    _broker("transaction.max.timeout.ms", INT, "900000", "a longer transaction.timeout.ms is refused "
            "(INVALID_TRANSACTION_TIMEOUT)", "transaction_max_timeout_ms", minimum=1),
    _broker("transactional.id.expiration.ms", INT, "604800000", "an id idle this long (no transaction "
            "open) is forgotten", "transactional_id_expiration_ms", minimum=1),
    _broker("transactional.id.max.count", INT, "100000", "kafka-shim's own (Kafka keeps every id until "
            "transactional.id.expiration.ms): past it, a new id expires the least recently used idle "
            "ones first, as that expiry would; with none idle, InitProducerId answers "
            "COORDINATOR_LOAD_IN_PROGRESS (retried) until one is. About 700 bytes per id on disk, "
            "1.4 KB in memory", "max_transactional_ids", minimum=1),
    _broker("transaction.remove.expired.transaction.cleanup.interval.ms", INT, "3600000", "how often "
            "expired transactional ids are looked for", "transaction_id_expiration_check_interval_ms",
            minimum=1),
    _broker("transaction.state.log.num.partitions", INT, "1", "partitions of __transaction_state (read "
            "when it is first created)", "transaction_state_log_num_partitions", minimum=1,
            kafka_default="50", why="as for offsets.topic.num.partitions"),
    _broker("transaction.version", INT, "2", "the finalized transaction.version feature level (a feature "
            "in Kafka, set with kafka-features.sh; 2: KIP-890, 0-1: a 3.x cluster)", "transaction_version",
            minimum=0, maximum=2),
]  # fmt: skip
