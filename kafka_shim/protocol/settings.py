"""Every broker and topic setting this broker knows, declared once.

A `Setting` carries Kafka's name, its type (DescribeConfigs' ConfigType), its default in
Kafka's text form, its bounds or choices, whether it can change while the broker runs, a
one-line doc and, where the default differs from Apache Kafka's, Kafka's default and why.
Everything else derives from this table: the CLI's `--config` validation and the
`BrokerConfig` values (shim.config.broker_config), DescribeConfigs and IncrementalAlterConfigs, the
coordinator's and the log's config objects, and the documentation's tables (shim.config.settings_doc).

It lives in `protocol` because every layer reads it (storage resolves topic configs with
it) and it is, like the error codes and the API registry, Kafka's contract: pure data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

from kafka_shim.protocol.kafka_config_keys import DESCRIBED_SINCE, KAFKA_BROKER_CONFIGS, KAFKA_TOPIC_CONFIGS


class ConfigType(IntEnum):
    """DescribeConfigs v3+ ConfigType values."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


_INTEGER_BOUNDS = {ConfigType.SHORT: 2**15, ConfigType.INT: 2**31, ConfigType.LONG: 2**63}
INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
WEEK_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True)
class Setting:
    name: str
    type: ConfigType
    default: str | None  # Kafka's text form; None is null (unset)
    doc: str
    attr: str | None = None  # the shim.config.broker_config.BrokerConfig attribute holding the parsed value
    topic: bool = False  # a topic config (else a broker config)
    synonym: str | None = None  # topic config: the broker config that supplies its default
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()  # for a LIST: the allowed items
    dynamic: bool = False  # changes while the broker runs (IncrementalAlterConfigs)
    per_listener: bool = False  # may be set per listener: listener.name.<listener>.<name>
    kafka_default: str | None = None  # Apache Kafka's default, where this broker's differs
    # The DEFAULT_CONFIG value DescribeConfigs gives, where it is Kafka's and not this broker's
    # (node.id: this single broker is node 0, Kafka's default is -1).
    described_default: str | None = None
    why: str = ""  # why this broker's default differs from Kafka's
    # Kafka's dynamic update mode (read-only, per-broker, cluster-wide): DescribeConfigs'
    # read_only, and whether IncrementalAlterConfigs may set it on a broker.
    update_mode: str = "read-only"
    no_effect: str = ""  # why a Kafka config is accepted but changes nothing here ("": honoured)
    # The first release that describes the key (kafka_config_keys.DESCRIBED_SINCE); before
    # it the key is accepted but not described. None: every release.
    since: str | None = None

    @property
    def sensitive(self) -> bool:
        """DescribeConfigs answers sensitive values as null, as Kafka does."""
        return self.type is ConfigType.PASSWORD

    def invalid(self, text: str | None) -> str | None:
        """Why `text` is not a valid value of this setting, or None if it is."""
        if text is None:
            return None if self.default is None or self.topic else f"{self.name} cannot be null"
        name = self.name
        bound = _INTEGER_BOUNDS.get(self.type)
        number: float | None = None
        if bound is not None:
            try:
                number = int(text.strip())
            except ValueError:
                return f"{name} must be an integer, got {text!r}"
            if not -bound <= number < bound:
                return f"{name}={text} is out of range for a {self.type.name.lower()}"
        elif self.type is ConfigType.DOUBLE:
            try:
                number = float(text)
            except ValueError:
                return f"{name} must be a number, got {text!r}"
        elif self.type is ConfigType.BOOLEAN and text.strip().lower() not in ("true", "false"):
            return f"{name} must be true or false, got {text!r}"
        if number is not None and self.minimum is not None and number < self.minimum:
            return f"{name} must be at least {_number(self.minimum)}, got {text}"
        if number is not None and self.maximum is not None and number > self.maximum:
            return f"{name} must be at most {_number(self.maximum)}, got {text}"
        if self.choices:
            items = list_items(text) if self.type is ConfigType.LIST else [text.strip()]
            wrong = [item for item in items if item not in self.choices]
            if wrong or not items:
                return f"{name} must be {'a list of' if self.type is ConfigType.LIST else 'one of'} " + (
                    ", ".join(self.choices) + f"; got {text!r}"
                )
        return None

    def parse(self, text: str | None) -> Any:
        """The Python value of a valid `text` (ValueError naming the setting otherwise)."""
        reason = self.invalid(text)
        if reason is not None:
            raise ValueError(reason)
        if text is None:
            return None
        if self.type in _INTEGER_BOUNDS:
            return int(text.strip())
        if self.type is ConfigType.DOUBLE:
            return float(text)
        if self.type is ConfigType.BOOLEAN:
            return text.strip().lower() == "true"
        return text.strip()


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def list_items(text: str) -> list[str]:
    """A Kafka LIST value's items: comma-separated, blanks ignored."""
    return [item.strip() for item in text.split(",") if item.strip()]


_CLEANUP = ("compact", "delete")  # Kafka's order, as its messages list them
_COMPRESSION = ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
TLS_PROTOCOLS = ("TLSv1.2", "TLSv1.3")


def _broker(name: str, type: ConfigType, default: str | None, doc: str, attr: str, **kw: Any) -> Setting:
    return Setting(name, type, default, doc, attr=attr, **kw)


def _topic(name: str, type: ConfigType, default: str | None, doc: str, **kw: Any) -> Setting:
    return Setting(name, type, default, doc, topic=True, dynamic=True, **kw)


def _ssl(name: str, type: ConfigType, default: str | None, doc: str, **kw: Any) -> Setting:
    return _broker(name, type, default, doc, name.replace(".", "_"), per_listener=True, **kw)


BOOLEAN, STRING, INT, LONG, DOUBLE, LIST, PASSWORD = (
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.LIST,
    ConfigType.PASSWORD,
)

# Kafka's classes of the server-side assignors, by the names the consumer protocol gives
# them: group.consumer.assignors takes either (Kafka 3.9's default lists the classes).
ASSIGNOR_CLASSES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}

_DECLARED = [
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
            "compression_type", choices=_COMPRESSION),
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
    # --- authorization
    _broker("authorizer.class.name", STRING, "", "empty: no authorization; Kafka's StandardAuthorizer or "
            "AclAuthorizer class name: the built-in ACL authorizer", "authorizer_class_name",
            choices=("", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                     "kafka.security.authorizer.AclAuthorizer")),
    _broker("super.users", STRING, "", "principals allowed everything, separated by ;", "super_users"),
    _broker("allow.everyone.if.no.acl.found", BOOLEAN, "false", "a resource without ACLs is open to all",
            "allow_everyone_if_no_acl_found"),
    # --- logs (broker defaults of the topic configs below)
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
    _ssl("ssl.keystore.type", STRING, "PEM", "format of the broker's key and certificate", choices=("PEM",),
         kafka_default="JKS", why="Python's ssl reads PEM; JKS and PKCS12 stores are not supported"),
    _ssl("ssl.keystore.location", STRING, None, "PEM file holding the broker's private key and certificate "
         "chain"),
    _ssl("ssl.keystore.certificate.chain", PASSWORD, None, "the broker's certificate chain, PEM text "
         "(instead of ssl.keystore.location)"),
    _ssl("ssl.keystore.key", PASSWORD, None, "the broker's private key, PEM text (instead of "
         "ssl.keystore.location)"),
    _ssl("ssl.key.password", PASSWORD, None, "password of an encrypted private key"),
    _ssl("ssl.truststore.type", STRING, "PEM", "format of the trusted CA certificates", choices=("PEM",),
         kafka_default="JKS", why="Python's ssl reads PEM; JKS and PKCS12 stores are not supported"),
    _ssl("ssl.truststore.location", STRING, None, "PEM file of CA certificates client certificates must "
         "chain to"),
    _ssl("ssl.truststore.certificates", PASSWORD, None, "CA certificates, PEM text (instead of "
         "ssl.truststore.location)"),
    _ssl("ssl.client.auth", STRING, "none", "whether clients must present a certificate",
         choices=("none", "requested", "required")),
    _ssl("ssl.principal.mapping.rules", STRING, "DEFAULT", "how a client certificate's subject becomes the "
         "principal: RULE:pattern/replacement/[LU],...,DEFAULT"),
    _ssl("ssl.enabled.protocols", LIST, "TLSv1.2,TLSv1.3", "TLS versions accepted", choices=TLS_PROTOCOLS),
    _ssl("ssl.cipher.suites", LIST, "", "TLS 1.2 cipher suites (IANA or OpenSSL names; empty: "
         "OpenSSL's defaults)"),
    # --- security: SASL
    _ssl("sasl.enabled.mechanisms", LIST, ",".join(SASL_MECHANISMS), "mechanisms SASL listeners offer",
         choices=SASL_MECHANISMS, kafka_default="GSSAPI",
         why="Kerberos is not supported; PLAIN and SCRAM users come from --user and the admin API"),
    _ssl("connections.max.reauth.ms", LONG, "0", "a SASL session's lifetime before the client must "
         "re-authenticate (KIP-368); 0: never", minimum=0),
    _broker("connection.failed.authentication.delay.ms", INT, "100", "how long a failed login waits "
            "before its answer and the close: slows clients that retry at once",
            "failed_authentication_delay_ms", minimum=0),
    _broker("sasl.server.max.receive.size", INT, "524288", "largest frame accepted before "
            "authentication on a SASL listener", "sasl_server_max_receive_size", minimum=1),
    # --- the schema registry (shim.schema_registry): Confluent's names, under schema.registry.
    _broker("schema.registry.topic", STRING, "_schemas", "the compacted topic the schema registry "
            "keeps its schemas in (Confluent's kafkastore.topic)", "schema_registry_topic"),
    _broker("schema.registry.compatibility.level", STRING, "BACKWARD", "the schema registry's "
            "compatibility level where neither /config nor /config/{subject} sets one (Confluent's "
            "schema.compatibility.level)", "schema_registry_compatibility_level",
            choices=("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
                     "FULL_TRANSITIVE")),
    # --- security: delegation tokens (KIP-48), SCRAM logins with a token's id and HMAC
    _broker("delegation.token.secret.key", PASSWORD, None, "the key token HMACs are made with "
            "(HmacSHA512); unset: the token APIs answer DELEGATION_TOKEN_AUTH_DISABLED",
            "delegation_token_secret_key"),
    _broker("delegation.token.max.lifetime.ms", LONG, "604800000", "longest a token lives, renewals "
            "included (a request may ask for less)", "delegation_token_max_lifetime_ms", minimum=1),
    _broker("delegation.token.expiry.time.ms", LONG, "86400000", "how long a token lives before it "
            "must be renewed", "delegation_token_expiry_time_ms", minimum=1),
    _broker("delegation.token.expiry.check.interval.ms", LONG, "3600000", "how often expired tokens "
            "are removed (an expired token logs in nowhere meanwhile)",
            "delegation_token_expiry_check_interval_ms", minimum=1),
    # --- topic configs: the topic's own value, else its broker synonym, else the default
    _topic("cleanup.policy", LIST, None, "delete and/or compact", synonym="log.cleanup.policy",
           choices=_CLEANUP),
    _topic("compression.type", STRING, None, "codec batches are stored with (producer: as sent)",
           synonym="compression.type", choices=_COMPRESSION),
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

# Why a Kafka config changes nothing here, by name or prefix (the first that matches); the
# reasons are reported once at start for the keys set, and shown by DescribeConfigs.
_NO_EFFECT: tuple[tuple[tuple[str, ...], str], ...] = (
    (("zookeeper.", "broker.id.generation.enable", "reserved.broker.max.id", "control.plane.listener.name",
      "controlled.shutdown."),
     "a ZooKeeper-era setting: there is no ZooKeeper and no controller to hand over to"),
    (("process.roles", "controller.", "metadata.", "initial.broker.registration.timeout.ms",
      "broker.heartbeat.interval.ms", "broker.session.timeout.ms", "early.start.listeners",
      "server.max.startup.time.ms", "node.id", "broker.rack"),
     "KRaft: a single broker has no controller quorum and keeps no metadata log"),
    (("replica.", "num.replica.", "leader.imbalance.", "auto.leader.rebalance.enable", "unclean.leader.",
      "inter.broker.", "eligible.leader.replicas.enable", "offsets.commit.required.acks",
      "alter.log.dirs.replication.", "replication.quota.", "leader.replication.", "follower.replication.",
      "default.replication.factor", "min.insync.replicas", "offsets.topic.replication.factor",
      "transaction.state.log.replication.factor", "transaction.state.log.min.isr",
      "share.coordinator.state.topic.replication.factor", "share.coordinator.state.topic.min.isr",
      "delete.records.purgatory.", "security.inter.broker.protocol", "sasl.mechanism.inter.broker.protocol"),
     "replication: this single broker holds the only copy of every partition"),
    (("remote.", "log.local.retention.", "local.retention."),
     "tiered storage: segments stay on the local disk"),
    (("num.network.threads", "num.io.threads", "background.threads", "num.recovery.threads.per.data.dir",
      "log.cleaner.threads", "log.cleaner.dedupe.buffer.", "log.cleaner.io.",
      "queued.max.requests", "socket.send.buffer.bytes", "socket.receive.buffer.bytes",
      "socket.listen.backlog.size", "socket.connection.setup.", "fetch.purgatory.", "producer.purgatory.",
      "request.timeout.ms", "max.connection.creation.rate", "group.coordinator.threads",
      "group.coordinator.append.", "share.coordinator.threads", "share.coordinator.append.",
      "offsets.load.buffer.size", "transaction.state.log.load.buffer.size", "fetch.max.bytes",
      "num.replica.alter.log.dirs.threads", "log.cleaner.enable", "config.providers"),
     "threads, buffers and purgatories: one Trio event loop serves every connection and request"),
    (("metric.reporters", "metrics.", "kafka.metrics.", "auto.include.jmx.reporter", "telemetry."),
     "JMX and metric reporters: the broker exports no JVM metrics"),
    (("sasl.", "ssl.", "security.providers", "principal.builder.class", "password.encoder."),
     "Java security plumbing (JAAS, Kerberos, OAuth, keystore passwords, providers): TLS is Python's "
     "ssl with PEM files, SASL is PLAIN and SCRAM with users from --user and the admin API"),
    (("group.share.", "share.", "group.coordinator.new.enable"),
     "share groups (KIP-932) are not configurable here"),
    (("log.message.format.version", "message.format.version", "log.message.downconversion.enable"),
     "the message format: batches are stored as clients send them"),
    (("log.message.timestamp.", "message.timestamp.difference.", "message.timestamp.before.",
      "message.timestamp.after."),
     "record timestamps are not checked against these bounds (docs/limitations.md)"),
    (("log.flush.", "flush.", "log.preallocate", "preallocate", "log.index.size.max.bytes",
      "segment.index.bytes", "log.segment.delete.delay.ms", "file.delete.delay.ms", "log.roll.jitter.",
      "segment.jitter.ms", "log.dir.failure.timeout.ms", "log.cleaner.min.cleanable.ratio",
      "compression.gzip.level", "compression.lz4.level",
      "compression.zstd.level"),
     "a storage detail this broker's log does not have: --fsync says when appends reach the disk, "
     "segments are written as they grow and batches are stored as sent"),
)  # fmt: skip
_UNUSED = "not used by a single local broker"


# _NO_EFFECT as (exact names, prefixes, reason): one set look-up and one startswith a reason,
# since every Kafka key is classified at import (start-up time is a tracked figure).
_NO_EFFECT_MATCH = tuple(
    (frozenset(n for n in names if not n.endswith(".")), tuple(n for n in names if n.endswith(".")), reason)
    for names, reason in _NO_EFFECT
)


def no_effect_reason(name: str) -> str:
    """Why Kafka config `name` changes nothing here (a key this broker does not honour)."""
    for exact, prefixes, reason in _NO_EFFECT_MATCH:
        if name in exact or name.startswith(prefixes):
            return reason
    return _UNUSED


# Kafka's broker configs this broker also reads under another name (log.dirs: the data
# directory; the hours and minutes forms: the one ms setting they default).
ALIASES = {
    "log.dirs": "--data-dir",
    "log.dir": "--data-dir",
    "log.retention.hours": "log.retention.ms",
    "log.retention.minutes": "log.retention.ms",
    "log.roll.hours": "log.roll.ms",
}


def _with_kafka_keys() -> tuple[dict[str, Setting], dict[str, Setting]]:
    """The declared settings (honoured) plus every other key of Kafka's (accepted, no effect)."""
    declared_topics = {s.name: s for s in _DECLARED if s.topic}
    topics: dict[str, Setting] = {}
    for name, type_name, default, synonym in KAFKA_TOPIC_CONFIGS:
        setting = declared_topics.pop(name, None)
        if setting is None:
            reason = no_effect_reason(name)
            setting = Setting(
                name,
                ConfigType[type_name],
                default,
                f"accepted, no effect here: {reason}",
                topic=True,
                dynamic=True,
                no_effect=reason,
            )
        if setting.synonym is None and synonym is not None:
            setting = replace(setting, synonym=synonym)
        topics[name] = setting
    assert not declared_topics, f"not topic configs of Kafka's: {sorted(declared_topics)}"
    honoured_synonyms = {s.synonym for s in topics.values() if s.synonym is not None and not s.no_effect}
    modes = {name: mode for name, _, _, mode in KAFKA_BROKER_CONFIGS}
    brokers = {
        s.name: replace(s, update_mode=modes.get(s.name, s.update_mode), since=DESCRIBED_SINCE.get(s.name))
        for s in _DECLARED
        if not s.topic
    }
    for name, type_name, default, mode in KAFKA_BROKER_CONFIGS:
        if name in brokers:
            continue
        reason = "" if name in honoured_synonyms or name in ALIASES else no_effect_reason(name)
        doc = f"accepted, no effect here: {reason}" if reason else _synonym_doc(name, topics)
        brokers[name] = Setting(
            name,
            ConfigType[type_name],
            default,
            doc,
            update_mode=mode,
            no_effect=reason,
            since=DESCRIBED_SINCE.get(name),
        )
    return brokers, topics


def _synonym_doc(name: str, topics: dict[str, Setting]) -> str:
    if name in ALIASES:
        return f"read as {ALIASES[name]}"
    topic = next(s.name for s in topics.values() if s.synonym == name)
    return f"default of the topic config {topic}"


BROKER_SETTINGS, TOPIC_SETTINGS = _with_kafka_keys()


def default_text(setting: Setting) -> str | None:
    """A setting's default; a topic config without its own defaults to its broker synonym's."""
    if setting.default is None and setting.synonym is not None:
        return BROKER_SETTINGS[setting.synonym].default
    return setting.default


def broker_default(name: str) -> Any:
    """The parsed default of a broker setting: what `BrokerConfig` starts from."""
    setting = BROKER_SETTINGS[name]
    return setting.parse(setting.default)


def topic_default(name: str) -> Any:
    setting = TOPIC_SETTINGS[name]
    return setting.parse(default_text(setting))


# Config resource types (DescribeConfigs' ResourceType) whose values a recording may show as
# they are: Kafka's log levels and client-metrics subscriptions hold no secrets, nor does a
# group config (Kafka's GroupConfig declares no PASSWORD key).
_NEVER_HIDDEN_RESOURCES = frozenset({8, 16, 32})  # BROKER_LOGGER, CLIENT_METRICS, GROUP
_TOPIC_RESOURCE, _BROKER_RESOURCE = 2, 4


def config_value_hidden(resource_type: int, name: str | None) -> bool:
    """Whether a recording hides the value a request sets for config `name`: Kafka's request
    logger (RequestChannel.loggableValue) hides a PASSWORD-type key's value and, to be safe,
    that of any key whose type it cannot tell, and every value of a resource type it does not
    know. A listener's override (`listener.name.<l>.[<mechanism>.]<key>`) is its key's."""
    if resource_type in _NEVER_HIDDEN_RESOURCES:
        return False
    if resource_type == _TOPIC_RESOURCE:
        setting = TOPIC_SETTINGS.get(name or "")
    elif resource_type == _BROKER_RESOURCE:
        setting = _broker_setting_of(name or "")
    else:
        return True
    return setting is None or setting.sensitive


def _broker_setting_of(name: str) -> Setting | None:
    setting = BROKER_SETTINGS.get(name)
    if setting is None and name.startswith("listener.name."):
        parts = name.split(".")
        for start in (3, 4):  # after the listener's name; after a SASL mechanism's too
            setting = BROKER_SETTINGS.get(".".join(parts[start:]))
            if setting is not None:
                break
    return setting
