"""The image's entrypoint: KAFKA_* variables named as apache/kafka's image names them, the
container's listener defaults, arguments added to them, and the healthcheck."""

from __future__ import annotations

import pytest

from kafka_shim.shim.cli.container import (
    DEFAULT_ADVERTISED,
    DEFAULT_LISTENERS,
    config_name,
    container_argv,
    env_configs,
    healthcheck,
    ignored_variables,
)
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.server import BrokerThread


@pytest.mark.parametrize(
    ("variable", "name"),
    [
        ("KAFKA_NUM_PARTITIONS", "num.partitions"),
        ("KAFKA_LOG_RETENTION_HOURS", "log.retention.hours"),
        ("KAFKA_ADVERTISED_LISTENERS", "advertised.listeners"),
        ("KAFKA_LISTENER_NAME_INTERNAL_SSL_CLIENT_AUTH", "listener.name.internal.ssl.client.auth"),
        ("KAFKA_SASL_ENABLED__MECHANISMS", "sasl.enabled_mechanisms"),  # __ -> _
        ("KAFKA_SOME___DASHED_NAME", "some-dashed.name"),  # ___ -> -
    ],
)
def test_variables_are_named_by_the_official_images_rule(variable: str, name: str) -> None:
    assert config_name(variable) == name


def test_jvm_variables_and_the_projects_own_are_not_configs() -> None:
    environ = {"KAFKA_HEAP_OPTS": "-Xmx1G", "KAFKA_OPTS": "-D", "KAFKA_SHIM_IMAGE": "x", "CLUSTER_ID": "c"}
    assert env_configs(environ) == {}
    assert ignored_variables(environ) == ["CLUSTER_ID", "KAFKA_HEAP_OPTS", "KAFKA_OPTS"]


def test_listeners_follow_the_advertised_ones_on_every_interface_as_in_kafkas_image() -> None:
    environ = {"KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://kafka:19092,HOST://localhost:29092"}
    assert env_configs(environ)["listeners"] == "PLAINTEXT://0.0.0.0:19092,HOST://0.0.0.0:29092"


def parse(argv: list[str]):  # type: ignore[no-untyped-def]
    return config_from_args(build_parser().parse_args(argv))


@pytest.mark.parametrize(
    ("environ", "args", "listeners", "advertised", "partitions"),
    [
        # Nothing given: the container's defaults, every interface.
        ({}, [], DEFAULT_LISTENERS, DEFAULT_ADVERTISED, 1),
        # Arguments add to the defaults instead of replacing them.
        ({}, ["--config", "num.partitions=3"], DEFAULT_LISTENERS, DEFAULT_ADVERTISED, 3),
        # The environment configures, a flag beats it.
        ({"KAFKA_NUM_PARTITIONS": "4"}, ["--num-partitions", "5"], DEFAULT_LISTENERS, DEFAULT_ADVERTISED, 5),
        (
            {"KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://localhost:29092"},
            [],
            "PLAINTEXT://0.0.0.0:29092",
            "PLAINTEXT://localhost:29092",
            1,
        ),
        # Only a port: still every interface of the container, advertised as localhost.
        ({}, ["--port", "29092"], "PLAINTEXT://0.0.0.0:29092", "PLAINTEXT://localhost:29092", 1),
    ],
)
def test_the_broker_configuration_of_a_container(
    environ: dict[str, str], args: list[str], listeners: str, advertised: str, partitions: int
) -> None:
    config = parse(container_argv(environ, args))
    assert config.effective_listeners() == listeners
    assert config.effective_advertised_listeners() in (advertised, None)
    assert config.num_partitions == partitions
    assert str(config.data_dir) == "/data"


def test_log_dirs_from_the_environment_is_the_data_directory() -> None:
    config = parse(container_argv({"KAFKA_LOG_DIRS": "/var/lib/kafka/data"}, []))
    assert str(config.data_dir) == "/var/lib/kafka/data"


def test_healthcheck_answers_0_for_a_broker_and_1_for_nothing() -> None:
    from kafka_shim.shim.config.broker_config import BrokerConfig

    thread = BrokerThread(BrokerConfig(port=0, data_dir=None)).start()
    try:
        assert healthcheck([thread.bootstrap]) == 0
    finally:
        thread.stop()
    assert healthcheck([thread.bootstrap]) == 1


@pytest.mark.parametrize(("args", "console"), [([], "0.0.0.0:8080"), (["--console", "off"], None)])
def test_the_console_listens_on_every_interface_of_the_container(
    args: list[str], console: str | None
) -> None:
    """Its loopback is not the host's: `-p 8080:8080` reaches only what binds 0.0.0.0."""
    assert parse(container_argv({}, args)).console_listener == console


def test_healthcheck_help_and_a_bad_address(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as helped:
        healthcheck(["--help"])
    assert helped.value.code == 0 and "usage: kafka-shim healthcheck" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        healthcheck(["localhost:http"])
    assert refused.value.code == 2
    assert "'localhost:http' is not [HOST]:PORT" in capsys.readouterr().err


def test_the_schema_registry_takes_confluents_image_variables() -> None:
    argv = container_argv(
        {
            "SCHEMA_REGISTRY_LISTENERS": "http://0.0.0.0:18081",
            "SCHEMA_REGISTRY_KAFKASTORE_TOPIC": "_registry",
            "SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL": "full",
        },
        [],
    )
    config = config_from_args(build_parser().parse_args(argv))
    assert config.schema_registry_listener == "0.0.0.0:18081"
    assert (config.schema_registry_topic, config.schema_registry_compatibility_level) == ("_registry", "FULL")
    default = config_from_args(build_parser().parse_args(container_argv({}, [])))
    assert default.schema_registry_listener == "0.0.0.0:8081"
