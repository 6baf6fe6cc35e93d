"""Broker configuration under Kafka's own broker config names.

Every Kafka setting is declared once, in protocol.settings (type, default, bounds, doc, and
Kafka's default where a local development broker wants otherwise); `BrokerConfig` holds
their parsed values. Bad values raise `ConfigError` naming the key; so do unknown keys, except
that the command line warns of them as Kafka does unless `--strict-config`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kafka_shim.protocol.releases import NEWEST, RELEASES, TRANSACTION_VERSION, Release, release_order
from kafka_shim.protocol.settings import (
    BROKER_SETTINGS,
    Setting,
    broker_default,
    list_items,
)
from kafka_shim.shim.config.errors import ConfigError
from kafka_shim.shim.config.listeners import (
    Endpoint,
    Listener,
    ListenerError,
    resolve,
)
from kafka_shim.shim.limits import parse_per_ip_overrides

LISTENER_PREFIX = "listener.name."


def _kafka(name: str) -> Any:
    """A Kafka setting's default, parsed, from the registry: each value is written once."""
    return broker_default(name)


@dataclass(frozen=True)
class BrokerConfig:
    # One PLAINTEXT listener, the shorthand used while `listeners` is None:
    host: str = "127.0.0.1"
    port: int = 9092
    advertised_host: str | None = None
    data_dir: Path | None = None  # None: keep everything in memory
    fsync: str = "interval"  # always | interval | never (storage.durability)
    truncate_corrupt: bool = False  # recovery may drop data after a corrupt batch
    log_level: str = "INFO"
    busy_poll_us: int = 500  # shim.net.framing.FrameReader: 0 never busy-polls
    # --user NAME:PASSWORD: SASL users whose PLAIN and SCRAM credentials are set at start.
    users: tuple[tuple[str, str], ...] = ()
    # --console HOST:PORT: the web console and /metrics (docs/console.md); None: not served.
    # The command line serves it on 127.0.0.1:8080 unless told otherwise; an embedded broker
    # (the pytest fixture) only when asked.
    console_listener: str | None = None
    # --schema-registry HOST:PORT: the schema registry (docs/schema-registry.md); None: not
    # served. The command line serves it on 127.0.0.1:8081 unless told otherwise.
    schema_registry_listener: str | None = None
    # --console-actions: the console may reset an inactive group's offsets and delete records.
    console_actions: bool = False
    # --brokers N: emulated brokers in this process, node ids node.id .. node.id+N-1, each
    # with the listeners, ports shifted by its position (shim.testbroker.cluster); --racks their racks.
    brokers: int = 1
    racks: tuple[str, ...] = ()
    # The test broker (docs/test-broker.md): the control endpoint's HOST:PORT (None: none),
    # fault rules loaded at start (a JSON list), requests kept for queries, a JSON-lines trace.
    control_listener: str | None = None
    fault_rules_file: Path | None = None
    record_requests: int = 0
    trace_file: Path | None = None
    # --emulate: the Kafka release this broker answers as, exactly (protocol.releases); None:
    # the newest release's answers, serving every version any listed release served (KIP-896's
    # removals served and logged, shim.served_versions).
    emulate: str | None = None
    # Metadata answers a topic it auto-creates at once, a dev default that saves every client
    # a metadata retry and its backoff; False answers as Kafka does (its controller creates
    # the topic asynchronously): UNKNOWN_TOPIC_OR_PARTITION without partitions first, the topic
    # from the next request on. An explicit --emulate sets False.
    auto_created_topic_answered_at_once: bool = True
    # Kafka's settings, one attribute each (the `attr` of its protocol.settings declaration,
    # default from there); tests/shim/config/test_settings.py checks the two agree.
    node_id: int = _kafka("node.id")
    listeners: str | None = _kafka("listeners")
    advertised_listeners: str | None = _kafka("advertised.listeners")
    listener_security_protocol_map: str = _kafka("listener.security.protocol.map")
    max_request_bytes: int = _kafka("socket.request.max.bytes")
    message_max_bytes: int = _kafka("message.max.bytes")
    auto_create_topics: bool = _kafka("auto.create.topics.enable")
    delete_topic_enable: bool = _kafka("delete.topic.enable")
    num_partitions: int = _kafka("num.partitions")
    max_partitions_per_request: int = _kafka("controller.max.records.per.batch")
    max_partitions: int = _kafka("max.partitions")
    default_replication_factor: int = _kafka("default.replication.factor")
    max_incremental_fetch_session_cache_slots: int = _kafka("max.incremental.fetch.session.cache.slots")
    compression_type: str = _kafka("compression.type")
    max_request_partition_size_limit: int = _kafka("max.request.partition.size.limit")
    initial_rebalance_delay_ms: int = _kafka("group.initial.rebalance.delay.ms")
    min_session_timeout_ms: int = _kafka("group.min.session.timeout.ms")
    max_session_timeout_ms: int = _kafka("group.max.session.timeout.ms")
    max_group_size: int = _kafka("group.max.size")
    offsets_retention_minutes: int = _kafka("offsets.retention.minutes")
    offsets_retention_check_interval_ms: int = _kafka("offsets.retention.check.interval.ms")
    offsets_topic_num_partitions: int = _kafka("offsets.topic.num.partitions")
    offset_metadata_max_bytes: int = _kafka("offset.metadata.max.bytes")
    log_segment_bytes: int = _kafka("log.segment.bytes")
    log_roll_ms: int = _kafka("log.roll.ms")
    log_retention_ms: int = _kafka("log.retention.ms")
    log_retention_bytes: int = _kafka("log.retention.bytes")
    log_cleanup_policy: str = _kafka("log.cleanup.policy")
    log_cleaner_delete_retention_ms: int = _kafka("log.cleaner.delete.retention.ms")
    log_retention_check_interval_ms: int = _kafka("log.retention.check.interval.ms")
    log_flush_interval_ms: int = _kafka("log.flush.interval.ms")
    log_cleaner_dedupe_buffer_size: int = _kafka("log.cleaner.dedupe.buffer.size")
    log_cleaner_backoff_ms: int = _kafka("log.cleaner.backoff.ms")
    producer_id_expiration_ms: int = _kafka("producer.id.expiration.ms")
    producer_id_expiration_check_interval_ms: int = _kafka("producer.id.expiration.check.interval.ms")
    ssl_keystore_type: str = _kafka("ssl.keystore.type")
    ssl_keystore_location: str | None = _kafka("ssl.keystore.location")
    ssl_keystore_certificate_chain: str | None = _kafka("ssl.keystore.certificate.chain")
    ssl_keystore_key: str | None = _kafka("ssl.keystore.key")
    ssl_key_password: str | None = _kafka("ssl.key.password")
    ssl_truststore_type: str = _kafka("ssl.truststore.type")
    ssl_truststore_location: str | None = _kafka("ssl.truststore.location")
    ssl_truststore_certificates: str | None = _kafka("ssl.truststore.certificates")
    ssl_client_auth: str = _kafka("ssl.client.auth")
    ssl_principal_mapping_rules: str = _kafka("ssl.principal.mapping.rules")
    ssl_enabled_protocols: str = _kafka("ssl.enabled.protocols")
    ssl_cipher_suites: str = _kafka("ssl.cipher.suites")
    sasl_enabled_mechanisms: str = _kafka("sasl.enabled.mechanisms")
    connections_max_reauth_ms: int = _kafka("connections.max.reauth.ms")
    sasl_server_max_receive_size: int = _kafka("sasl.server.max.receive.size")
    failed_authentication_delay_ms: int = _kafka("connection.failed.authentication.delay.ms")
    delegation_token_secret_key: str | None = _kafka("delegation.token.secret.key")
    delegation_token_max_lifetime_ms: int = _kafka("delegation.token.max.lifetime.ms")
    delegation_token_expiry_time_ms: int = _kafka("delegation.token.expiry.time.ms")
    delegation_token_expiry_check_interval_ms: int = _kafka("delegation.token.expiry.check.interval.ms")
    authorizer_class_name: str = _kafka("authorizer.class.name")
    super_users: str = _kafka("super.users")
    allow_everyone_if_no_acl_found: bool = _kafka("allow.everyone.if.no.acl.found")
    rebalance_protocols: str = _kafka("group.coordinator.rebalance.protocols")
    consumer_heartbeat_interval_ms: int = _kafka("group.consumer.heartbeat.interval.ms")
    consumer_min_heartbeat_interval_ms: int = _kafka("group.consumer.min.heartbeat.interval.ms")
    consumer_max_heartbeat_interval_ms: int = _kafka("group.consumer.max.heartbeat.interval.ms")
    consumer_session_timeout_ms: int = _kafka("group.consumer.session.timeout.ms")
    consumer_min_session_timeout_ms: int = _kafka("group.consumer.min.session.timeout.ms")
    consumer_max_session_timeout_ms: int = _kafka("group.consumer.max.session.timeout.ms")
    consumer_max_size: int = _kafka("group.consumer.max.size")
    consumer_assignors: str = _kafka("group.consumer.assignors")
    consumer_migration_policy: str = _kafka("group.consumer.migration.policy")
    share_session_timeout_ms: int = _kafka("group.share.session.timeout.ms")
    share_heartbeat_interval_ms: int = _kafka("group.share.heartbeat.interval.ms")
    share_max_size: int = _kafka("group.share.max.size")
    share_record_lock_duration_ms: int = _kafka("group.share.record.lock.duration.ms")
    share_min_record_lock_duration_ms: int = _kafka("group.share.min.record.lock.duration.ms")
    share_max_record_lock_duration_ms: int = _kafka("group.share.max.record.lock.duration.ms")
    share_delivery_count_limit: int = _kafka("group.share.delivery.count.limit")
    share_partition_max_record_locks: int = _kafka("group.share.partition.max.record.locks")
    share_max_share_sessions: int = _kafka("group.share.max.share.sessions")
    share_state_topic_num_partitions: int = _kafka("share.coordinator.state.topic.num.partitions")
    share_snapshot_update_records_per_snapshot: int = _kafka(
        "share.coordinator.snapshot.update.records.per.snapshot"
    )
    schema_registry_topic: str = _kafka("schema.registry.topic")
    schema_registry_compatibility_level: str = _kafka("schema.registry.compatibility.level")
    transaction_max_timeout_ms: int = _kafka("transaction.max.timeout.ms")
    transactional_id_expiration_ms: int = _kafka("transactional.id.expiration.ms")
    max_transactional_ids: int = _kafka("transactional.id.max.count")
    transaction_id_expiration_check_interval_ms: int = _kafka(
        "transaction.remove.expired.transaction.cleanup.interval.ms"
    )
    transaction_state_log_num_partitions: int = _kafka("transaction.state.log.num.partitions")
    transaction_version: int = _kafka("transaction.version")
    queued_max_request_bytes: int = _kafka("queued.max.request.bytes")  # <= 0: no limit, as in Kafka
    max_connections: int = _kafka("max.connections")
    max_connections_per_ip: int = _kafka("max.connections.per.ip")
    max_connections_per_ip_overrides: str = _kafka("max.connections.per.ip.overrides")
    connections_max_idle_ms: int = _kafka("connections.max.idle.ms")
    quota_window_num: int = _kafka("quota.window.num")
    quota_window_size_seconds: int = _kafka("quota.window.size.seconds")
    # Kafka names set explicitly (--config, --config-file, flags): DescribeConfigs' sources.
    explicit: frozenset[str] = frozenset()
    # listener.name.<listener>.<setting>: listener name (upper case) -> attribute -> value.
    listener_overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Kafka configs set without a BrokerConfig attribute, by name, as given: those with no
    # effect here, and broker synonyms whose value only becomes a topic config's default.
    other_configs: Mapping[str, str] = field(default_factory=dict)
    # The KRaft controller listeners set (listeners, advertised.listeners -> their items), not
    # bound: DescribeConfigs still lists them, as a combined broker and controller describes them.
    controller_listeners: Mapping[str, str] = field(default_factory=dict)
    # Keys given at start that are none of Kafka's (a plugin's, a typo): warned once at start and
    # otherwise ignored, as Kafka's AbstractConfig.logUnused does (`--strict-config` refuses them).
    unknown_configs: tuple[str, ...] = ()

    @property
    def consumer_protocol_enabled(self) -> bool:
        """Whether KIP-848 consumer groups are served (ConsumerGroupHeartbeat advertised)."""
        return "consumer" in list_items(self.rebalance_protocols)

    def for_listener(self, name: str) -> BrokerConfig:
        """The settings one listener runs by: its listener.name.<name>.* overrides applied."""
        overrides = self.listener_overrides.get(name.upper())
        return replace(self, **overrides) if overrides else self

    def effective_listeners(self) -> str:
        if self.listeners is not None:
            return self.listeners
        return str(Endpoint("PLAINTEXT", self.host, self.port))

    def effective_advertised_listeners(self) -> str | None:
        """None: the listeners themselves, as in Kafka."""
        if self.advertised_listeners is None and self.listeners is None and self.advertised_host:
            return str(Endpoint("PLAINTEXT", self.advertised_host, self.port))
        return self.advertised_listeners

    def listener_endpoints(self) -> tuple[Listener, ...]:
        """The listeners to bind, each with its advertised endpoint (ConfigError if inconsistent)."""
        if self.listeners is not None and self.advertised_host is not None:
            raise ConfigError(
                "--advertised-host is a shorthand for the one listener of --host/--port; "
                "with listeners, set advertised.listeners"
            )
        try:
            return resolve(
                self.effective_listeners(),
                self.effective_advertised_listeners(),
                self.listener_security_protocol_map,
            )
        except ListenerError as exc:
            raise ConfigError(str(exc)) from exc

    @property
    def release(self) -> Release:
        return RELEASES[self.emulate or NEWEST]

    def describes(self, name: str) -> bool:
        """Whether the emulated release describes broker setting `name` (Setting.since)."""
        since = BROKER_SETTINGS[name].since
        return since is None or release_order(self.release.name) >= release_order(since)

    def default_text(self, name: str) -> str | None:
        """Broker setting `name`'s default in the emulated release."""
        return self.release.defaults.get(name, BROKER_SETTINGS[name].default)

    def with_release_defaults(self) -> BrokerConfig:
        """These settings with the emulated release's defaults for those not set at start;
        ConfigError for an unknown release or a setting the release cannot have."""
        if self.emulate is not None and self.emulate not in RELEASES:
            raise ConfigError(f"cannot emulate Kafka {self.emulate!r}; releases: {', '.join(RELEASES)}")
        changes: dict[str, Any] = {}
        for name, text in self.release.defaults.items():
            setting = BROKER_SETTINGS[name]
            if name not in self.explicit:
                assert setting.attr is not None
                changes[setting.attr] = setting.parse(text)
        result = replace(self, **changes)
        highest = self.release.supported_features.get(TRANSACTION_VERSION, (0, 0))[1]
        if result.transaction_version > highest:
            raise ConfigError(
                f"transaction.version={result.transaction_version}: "
                f"Kafka {self.release.name} supports at most {highest}"
            )
        return result

    def with_cluster_defaults(self) -> BrokerConfig:
        """--brokers N: default.replication.factor is N unless set (Kafka's default is 1), so a
        new topic has a copy on every broker and stopping one fails over, which is what the
        emulated cluster is for; asking for fewer copies (CreateTopics, the setting) is Kafka's."""
        name = "default.replication.factor"
        if self.brokers == 1 or self.is_set(name):
            return self
        return replace(self, default_replication_factor=self.brokers)

    def is_set(self, name: str) -> bool:
        """Whether broker setting `name` was set (named at start, or given a value other than
        its default): DescribeConfigs reports it as a static broker config, not a default."""
        return name in self.explicit or self.kafka_value(name) != self.default_text(name)

    def known_value(self, name: str) -> str | None:
        """What a topic config inherits from broker setting `name` (its synonym): the value set
        at start, else None, and the registry's default applies, as in Kafka."""
        return self.kafka_value(name) if name in BROKER_SETTINGS and self.is_set(name) else None

    def kafka_value(self, name: str) -> str | None:
        """A broker config's value as DescribeConfigs reports it (None: null)."""
        setting = BROKER_SETTINGS[name]
        if setting.attr is None:
            return self.other_configs.get(name, setting.default)
        value = getattr(self, setting.attr)
        if name == "listeners":
            value = self.effective_listeners()
        elif name == "advertised.listeners":
            value = self.effective_advertised_listeners() or self.effective_listeners()
        controllers = self.controller_listeners.get(name)
        if controllers:
            value = ",".join(part for part in (value, controllers) if part)
        if value is None:
            return None
        return str(value).lower() if isinstance(value, bool) else str(value)


def _listener_setting(name: str) -> tuple[str, Setting | None]:
    """`listener.name.<listener>.<setting>` -> (LISTENER, setting), as Kafka spells overrides;
    setting None: a Kafka config with no effect here (SASL mechanism ones carry the mechanism
    too: listener.name.<listener>.<mechanism>.sasl.jaas.config)."""
    listener, _, rest = name[len(LISTENER_PREFIX) :].partition(".")
    setting = BROKER_SETTINGS.get(rest)
    if listener and setting is not None and setting.per_listener:
        return listener.upper(), setting
    mechanism_free = BROKER_SETTINGS.get(rest.partition(".")[2])
    if listener and any(s is not None and s.no_effect for s in (setting, mechanism_free)):
        return listener.upper(), None
    per_listener = ", ".join(sorted(n for n, s in BROKER_SETTINGS.items() if s.per_listener))
    raise ConfigError(
        f"unknown config {name!r}: a listener.name.<listener>.<setting> override takes one of "
        f"{per_listener}, or another of Kafka's broker configs (accepted, no effect here)"
    )


def suggestions(name: str) -> list[str]:
    """The known config names closest to `name` (for "did you mean")."""
    import difflib  # only when a name is wrong: it costs start-up time otherwise

    return difflib.get_close_matches(name, list(BROKER_SETTINGS), n=3, cutoff=0.6)


def unknown_names(pairs: Mapping[str, str]) -> list[str]:
    """The keys of `pairs` that are none of Kafka's broker configs (listener overrides aside)."""
    return [name for name in pairs if not name.startswith(LISTENER_PREFIX) and name not in BROKER_SETTINGS]


def unknown_configs_report(config: BrokerConfig) -> list[str]:
    """Kafka's warning for each key given that is not a config (AbstractConfig.logUnused), with
    the closest known names."""
    lines = []
    for name in config.unknown_configs:
        close = suggestions(name)
        hint = f" Did you mean {' or '.join(close)}?" if close else ""
        lines.append(f"The configuration {name!r} was supplied but isn't a known config.{hint}")
    return lines


def unknown_configs_error(names: list[str]) -> ConfigError:
    """One error naming every unknown key, each with the closest known names."""
    parts = []
    for name in names:
        close = suggestions(name)
        parts.append(f"{name!r} (did you mean {' or '.join(close)}?)" if close else repr(name))
    noun = "unknown config" if len(names) == 1 else f"{len(names)} unknown configs"
    return ConfigError(
        f"{noun}: {', '.join(parts)}; kafka-shim takes every broker config of Apache Kafka's "
        "(docs/configuration.md)"
    )


def _aliased(pairs: Mapping[str, str]) -> dict[str, str]:
    """Kafka's other spellings of a setting read as the one this broker keeps, Kafka's order
    of precedence: log.retention.ms over .minutes over .hours, log.roll.ms over .hours."""
    changes: dict[str, str] = {}
    for longer, factor, target in (
        ("log.retention.hours", 3_600_000, "log.retention.ms"),
        ("log.retention.minutes", 60_000, "log.retention.ms"),
        ("log.roll.hours", 3_600_000, "log.roll.ms"),
    ):
        if longer in pairs and target not in pairs:
            reason = BROKER_SETTINGS[longer].invalid(pairs[longer])
            if reason is not None:
                raise ConfigError(f"bad value {pairs[longer]!r} for {longer}: {reason}")
            changes[target] = str(int(pairs[longer]) * factor)
    return changes


def _data_dir(pairs: Mapping[str, str]) -> Path | None:
    """log.dirs (else log.dir): the data directory; this broker keeps one."""
    text = pairs.get("log.dirs") or pairs.get("log.dir")
    if text is None:
        return None
    dirs = list_items(text)
    if len(dirs) != 1:
        raise ConfigError(f"log.dirs={text!r}: kafka-shim keeps one data directory; name one")
    return Path(dirs[0])


def _without_controller_listeners(config: BrokerConfig) -> BrokerConfig:
    """The listeners named by controller.listener.names (KRaft's controller quorum, which a
    single broker does not have) are neither bound nor advertised."""
    names = {n.upper() for n in list_items(config.other_configs.get("controller.listener.names", ""))}
    if not names:
        return config

    def controller(item: str) -> bool:
        return item.partition("://")[0].strip().upper() in names

    def keep(text: str | None) -> str | None:
        if text is None:
            return None
        return ",".join(item for item in list_items(text) if not controller(item))

    dropped = {
        name: ",".join(item for item in list_items(text) if controller(item))
        for name, text in (
            ("listeners", config.listeners),
            ("advertised.listeners", config.advertised_listeners),
        )
        if text is not None
    }
    return replace(
        config,
        listeners=keep(config.listeners),
        advertised_listeners=keep(config.advertised_listeners),
        controller_listeners={name: text for name, text in dropped.items() if text},
    )


def apply_kafka_configs(config: BrokerConfig, pairs: Mapping[str, str]) -> BrokerConfig:
    """`config` with Kafka settings by name applied; ConfigError naming every unknown key
    (with the closest known names), else the first bad value."""
    unknown = unknown_names(pairs)
    if unknown:
        raise unknown_configs_error(unknown)
    changes: dict[str, Any] = {}
    overrides = {listener: dict(values) for listener, values in config.listener_overrides.items()}
    others = dict(config.other_configs)
    for name, text in {**pairs, **_aliased(pairs)}.items():
        listener = None
        setting: Setting | None
        if name.startswith(LISTENER_PREFIX):
            listener, setting = _listener_setting(name)
        else:
            setting = BROKER_SETTINGS[name]
        reason = None if setting is None else setting.invalid(text)
        if reason is not None:
            raise ConfigError(f"bad value {text!r} for {name}: {reason}")
        if setting is None or setting.attr is None:
            others[name] = text
        elif listener is None:
            changes[setting.attr] = setting.parse(text)
        else:
            overrides.setdefault(listener, {})[setting.attr] = setting.parse(text)
    data_dir = _data_dir(pairs)
    if data_dir is not None and config.data_dir is not None:
        changes["data_dir"] = data_dir  # --memory keeps everything in memory whatever the file says
    explicit = config.explicit | {name for name in pairs if not name.startswith(LISTENER_PREFIX)}
    result = replace(config, **changes, explicit=explicit, listener_overrides=overrides, other_configs=others)
    result = _without_controller_listeners(result)
    if result.min_session_timeout_ms > result.max_session_timeout_ms:
        raise ConfigError("group.min.session.timeout.ms exceeds group.max.session.timeout.ms")
    _check_consumer_group_bounds(result)
    _check_principals(result.super_users)
    listeners = result.listener_endpoints()
    names = {listener.name for listener in listeners}
    controllers = {n.upper() for n in list_items(result.other_configs.get("controller.listener.names", ""))}
    strays = sorted(set(overrides) - names - controllers)
    if strays:
        raise ConfigError(
            f"listener.name.{strays[0].lower()}.* names no listener; "
            f"the listeners are {', '.join(sorted(names))}"
        )
    if any(listener.protocol != "PLAINTEXT" for listener in listeners):
        # Only a broker with secured listeners pays for importing ssl and reading key files.
        from kafka_shim.shim.security.listener_security import check_listeners

        check_listeners(result, listeners)
    _check_emulated_ports(result, listeners)
    if 0 < result.queued_max_request_bytes < result.max_request_bytes:
        raise ConfigError("queued.max.request.bytes must be larger or equal to socket.request.max.bytes")
    try:
        parse_per_ip_overrides(result.max_connections_per_ip_overrides)
    except ValueError as exc:
        raise ConfigError(f"max.connections.per.ip.overrides: {exc}") from exc
    return result


def no_effect_report(config: BrokerConfig) -> list[str]:
    """One line per reason naming the Kafka configs set that change nothing here."""
    by_reason: dict[str, list[str]] = {}
    for name in sorted(config.other_configs):
        if name.startswith(LISTENER_PREFIX):
            reason = "listener.name.<listener>.<config> of a config without effect, or of a KRaft listener"
        else:
            reason = BROKER_SETTINGS[name].no_effect
        if reason:
            by_reason.setdefault(reason, []).append(name)
    return [f"accepted, no effect here: {', '.join(names)}: {reason}" for reason, names in by_reason.items()]


def _check_emulated_ports(config: BrokerConfig, listeners: tuple[Listener, ...]) -> None:
    """--brokers N shifts each fixed listener port by the broker's position (shim.testbroker.cluster): no
    port may be taken twice, by two brokers' listeners or by one and the control or console
    endpoint (--brokers 3 takes 9092-9094, the control endpoint's default)."""
    if config.brokers == 1:
        return
    taken: dict[int, str] = {}
    for position in range(config.brokers):
        for listener in listeners:
            port = listener.for_node(position).bind.port
            holder = f"broker {config.node_id + position}'s listener {listener.name}"
            if port and port in taken:
                raise ConfigError(
                    f"--brokers {config.brokers}: {holder} would take port {port}, {taken[port]}'s"
                )
            taken[port] = holder
    for flag, address in (
        ("--control", config.control_listener),
        ("--console", config.console_listener),
        ("--schema-registry", config.schema_registry_listener),
    ):
        port_text = (address or "").rpartition(":")[2]
        if port_text.isdigit() and int(port_text) in taken:
            raise ConfigError(
                f"{flag} {address}: port {port_text} is {taken[int(port_text)]}'s (--brokers "
                f"{config.brokers} shifts each listener's port by the broker's position): use another"
            )


def _check_principals(super_users: str) -> None:
    """super.users: principals `Type:name` separated by semicolons, checked as Kafka parses them."""
    for principal in (p.strip() for p in super_users.split(";")):
        if principal and ":" not in principal:
            raise ConfigError(f"super.users: expected principalType:principalName, got {principal!r}")


def _check_consumer_group_bounds(config: BrokerConfig) -> None:
    """Kafka's GroupCoordinatorConfig checks: each value within its min and max, and a
    heartbeat interval shorter than the session timeout."""
    for name, low, value, high in (
        (
            "group.consumer.heartbeat.interval.ms",
            config.consumer_min_heartbeat_interval_ms,
            config.consumer_heartbeat_interval_ms,
            config.consumer_max_heartbeat_interval_ms,
        ),
        (
            "group.consumer.session.timeout.ms",
            config.consumer_min_session_timeout_ms,
            config.consumer_session_timeout_ms,
            config.consumer_max_session_timeout_ms,
        ),
    ):
        if not low <= value <= high:
            raise ConfigError(f"{name} must be between its min ({low}) and max ({high}), got {value}")
    if config.consumer_heartbeat_interval_ms >= config.consumer_session_timeout_ms:
        raise ConfigError(
            "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"
        )
    if "classic" not in list_items(config.rebalance_protocols):
        raise ConfigError("group.coordinator.rebalance.protocols must contain classic")


def parse_assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(f"expected KEY=VALUE, got {text!r}")
    return name.strip(), value.strip()


def read_properties(path: Path) -> dict[str, str]:
    """A Java-style .properties file: KEY=VALUE lines, # and ! comments."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    pairs: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        if "=" not in stripped and ":" in stripped:
            stripped = stripped.replace(":", "=", 1)
        try:
            name, value = parse_assignment(stripped)
        except ConfigError as exc:
            raise ConfigError(f"{path}:{number}: {exc}") from exc
        pairs[name] = value
    return pairs
