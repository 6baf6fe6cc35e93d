"""The settings registry is the one declaration: the config objects, the CLI, DescribeConfigs
and the documentation's config tables all follow it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kafka_shim.protocol.messages.describe_configs import ConfigSource, ResourceType
from kafka_shim.protocol.releases import RELEASES
from kafka_shim.protocol.settings import BROKER_SETTINGS, TOPIC_SETTINGS, ConfigType, default_text
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.config.broker_config import BrokerConfig, ConfigError
from kafka_shim.shim.config.settings_doc import with_tables
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.storage.durability import DiskOptions
from kafka_shim.storage.log_config import LogConfig
from tests.helpers import Harness

CONFIGURATION_PAGE = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def parse(*argv: str) -> BrokerConfig:
    return config_from_args(build_parser().parse_args(list(argv)))


def test_the_documented_tables_are_generated_from_the_registry() -> None:
    text = CONFIGURATION_PAGE.read_text(encoding="utf-8")
    assert text == with_tables(text), "run: python -m kafka_shim.shim.config.settings_doc"


def test_every_broker_setting_has_a_config_attribute_starting_at_its_default() -> None:
    fields = {f.name: f for f in dataclasses.fields(BrokerConfig)}
    defaults = BrokerConfig()
    for setting in BROKER_SETTINGS.values():
        if setting.attr is None:  # Kafka's, kept by name: without effect, or a topic config's default
            assert setting.no_effect or any(s in setting.doc for s in ("default of the topic", "read as"))
            continue
        assert setting.attr in fields, f"{setting.name}: BrokerConfig has no {setting.attr}"
        assert getattr(defaults, setting.attr) == setting.parse(setting.default), setting.name
    for setting in TOPIC_SETTINGS.values():
        assert setting.invalid(default_text(setting)) is None, setting.name
        assert setting.synonym is None or setting.synonym in BROKER_SETTINGS


def test_without_emulate_the_broker_serves_the_newest_version_any_release_serves() -> None:
    served = parse().release.api_ranges
    for release in RELEASES.values():
        for key, (_, highest) in release.api_ranges.items():
            assert key in served and served[key][1] >= highest, (release.name, key)


def test_the_log_coordinator_and_disk_defaults_are_the_registrys() -> None:
    log = LogConfig()
    assert (log.segment_bytes, log.retention_ms, log.segment_ms) == (2**30, 604_800_000, 604_800_000)
    assert log.cleanup_policy == frozenset({"delete"})
    assert CoordinatorConfig() == CoordinatorConfig.from_broker(BrokerConfig())
    assert DiskOptions().fsync_interval_ms == BrokerConfig().log_flush_interval_ms == 1000
    changed = LogConfig.of_topic({"cleanup.policy": "compact, delete"}, lambda name: None)
    assert changed.cleanup_policy == frozenset({"compact", "delete"})


@pytest.mark.parametrize(
    ("argv", "removes"),
    [
        ((), False),
        (("--emulate", "4.1"), False),
        (("--emulate", "3.9"), True),  # its old coordinator, the default there
        (("--emulate", "3.9", "--config", "group.coordinator.rebalance.protocols=classic,consumer"), False),
    ],
)
def test_offset_delete_removes_an_empty_group_where_the_releases_coordinator_did(
    argv: tuple[str, ...], removes: bool
) -> None:
    config = CoordinatorConfig.from_broker(parse(*argv))
    assert config.offset_delete_removes_empty_group is removes


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("log.segment.bytes=13", "must be at least 14"),
        ("log.segment.bytes=3000000000", "out of range for a int"),
        ("ssl.client.auth=always", "must be one of none, requested, required"),
        ("sasl.enabled.mechanisms=GSSAPI", "must be a list of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"),
        (
            "listener.name.x.log.segment.bytes=20",
            "a listener.name.<listener>.<setting> override takes one of",
        ),
        ("listener.name.other.ssl.client.auth=required", "names no listener; the listeners are PLAINTEXT"),
        ("no.such.config=1", "unknown config: 'no.such.config';"),
        ("num.io.thread=3", r"'num.io.thread' \(did you mean num.io.threads or num.network.threads\?\)"),
    ],
)
def test_bad_settings_are_refused_naming_them(pair: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse("--strict-config", "--config", pair)  # unknown keys are only warned of otherwise


def test_per_listener_overrides_apply_to_their_listener_only() -> None:
    config = parse(
        "--listeners",
        "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "--config",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
        "--config",
        "listener.name.internal.connections.max.reauth.ms=60000",
    )
    assert config.for_listener("INTERNAL").connections_max_reauth_ms == 60000
    assert config.for_listener("PLAINTEXT").connections_max_reauth_ms == 0


def test_describe_configs_reports_types_sources_docs_and_hides_secrets() -> None:
    h = Harness(log_retention_ms=5000, ssl_key_password="secret", explicit=frozenset({"num.partitions"}))
    request = {
        "resources": [
            {"resource_type": ResourceType.BROKER, "resource_name": "0", "configuration_keys": None}
        ],
        "include_synonyms": True,
        "include_documentation": True,
    }
    [result] = h.call(32, 4, request).results
    configs = {c.name: c for c in result.configs}
    assert set(configs) == set(BROKER_SETTINGS)
    retention, partitions, segment = (
        configs["log.retention.ms"],
        configs["num.partitions"],
        configs["log.segment.bytes"],
    )
    assert (retention.value, retention.config_source) == ("5000", ConfigSource.STATIC_BROKER_CONFIG)
    assert partitions.config_source == ConfigSource.STATIC_BROKER_CONFIG
    assert segment.config_source == ConfigSource.DEFAULT_CONFIG
    assert segment.config_type == ConfigType.INT and segment.documentation.startswith("segment size")
    password = configs["ssl.key.password"]
    assert (password.value, password.is_sensitive, password.config_type) == (None, True, ConfigType.PASSWORD)
