"""Every broker and topic setting this broker knows, declared once.

A `Setting` carries Kafka's name, its type (DescribeConfigs' ConfigType), its default in
Kafka's text form, its bounds or choices, whether it can change while the broker runs, a
one-line doc and, where the default differs from Apache Kafka's, Kafka's default and why.
Everything else derives from this table: the CLI's `--config` validation and the
`BrokerConfig` values (shim.config.broker_config), DescribeConfigs and IncrementalAlterConfigs, the
coordinator's and the log's config objects, and the documentation's tables (shim.config.settings_doc).

It lives in `protocol` because every layer reads it (storage resolves topic configs with
it) and it is, like the error codes and the API registry, Kafka's contract: pure data.

The declarations are written by area (settings.broker, .coordinators, .security, .logs, with
the `Setting` type in .setting); this module is the one registry they join: every other key of
Kafka's, why a key changes nothing here, the defaults, what a recording hides.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kafka_shim.protocol.kafka_config_keys import DESCRIBED_SINCE, KAFKA_BROKER_CONFIGS, KAFKA_TOPIC_CONFIGS
from kafka_shim.protocol.settings import broker, coordinators, logs, security
from kafka_shim.protocol.settings.coordinators import ASSIGNOR_CLASSES
from kafka_shim.protocol.settings.setting import LONG_MAX, ConfigType, Setting, list_items

# Every setting this broker honours, in the order the documentation's tables list them.
_DECLARED = [
    *broker.SETTINGS,
    *coordinators.SETTINGS,
    *security.AUTHORIZATION,
    *logs.BROKER_DEFAULTS,
    *security.TLS_AND_SASL,
    *broker.SCHEMA_REGISTRY,
    *security.DELEGATION_TOKENS,
    *logs.TOPIC_CONFIGS,
]


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


__all__ = [
    "ALIASES",
    "ASSIGNOR_CLASSES",
    "BROKER_SETTINGS",
    "LONG_MAX",
    "TOPIC_SETTINGS",
    "ConfigType",
    "Setting",
    "broker_default",
    "config_value_hidden",
    "default_text",
    "list_items",
    "no_effect_reason",
    "topic_default",
]
