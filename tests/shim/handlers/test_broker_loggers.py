"""BROKER_LOGGER resources (`kafka-configs.sh --entity-type broker-loggers`) as Kafka's
Log4jController and RuntimeLoggerManager answer them, on the broker's Python loggers."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.config.broker_loggers import KAFKA_LOGGERS
from tests.helpers import Harness

DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 33, 44
BROKER_LOGGER, DYNAMIC_BROKER_LOGGER_CONFIG = 8, 6
SET, DELETE, APPEND = 0, 1, 2


@pytest.fixture(autouse=True)
def restored_levels() -> Iterator[None]:
    """Python's logger levels are the process's: each test leaves them as it found them."""
    loggers = [logging.getLogger(name or None) for name in KAFKA_LOGGERS.values()]
    before = [logger.level for logger in loggers]
    yield
    for logger, level in zip(loggers, before, strict=True):
        logger.setLevel(level)


def describe(h: Harness, name: str = "0", keys: list[str] | None = None) -> Any:
    resource = {"resource_type": BROKER_LOGGER, "resource_name": name, "configuration_keys": keys}
    (result,) = h.call(DESCRIBE_CONFIGS, 4, {"resources": [resource]}).results
    return result


def levels(h: Harness) -> dict[str, str]:
    return {c.name: c.value for c in describe(h).configs}


def alter(
    h: Harness, *changes: tuple[str, int, str | None], name: str = "0", validate_only: bool = False
) -> Any:
    configs = [{"name": n, "config_operation": op, "value": v} for n, op, v in changes]
    resource = {"resource_type": BROKER_LOGGER, "resource_name": name, "configs": configs}
    (answer,) = h.call(
        INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [resource], "validate_only": validate_only}
    ).responses
    return answer.error_code, answer.error_message


def test_describe_lists_every_logger_with_its_effective_level() -> None:
    logging.getLogger().setLevel(logging.INFO)
    logging.getLogger("kafka_shim").setLevel(logging.NOTSET)
    logging.getLogger("kafka_shim.requests").setLevel(logging.WARNING)
    result = describe(Harness())
    assert result.error_code == 0 and [c.name for c in result.configs] == list(KAFKA_LOGGERS)
    entry = next(c for c in result.configs if c.name == "kafka.request.logger")
    assert (entry.value, entry.config_source, entry.read_only, entry.is_sensitive, entry.synonyms) == (
        "WARN",
        DYNAMIC_BROKER_LOGGER_CONFIG,
        False,
        False,
        [],
    )
    assert levels(Harness())["kafka"] == "INFO"  # inherited from root
    assert [c.name for c in describe(Harness(), keys=["root", "nope"]).configs] == ["root"]


def test_set_then_delete_falls_back_to_the_ancestors_level() -> None:
    h = Harness()
    logging.getLogger().setLevel(logging.INFO)
    assert alter(h, ("kafka.server.KafkaApis", SET, "TRACE"), ("kafka", SET, "DEBUG")) == (0, None)
    assert logging.getLogger("kafka_shim.shim.handlers").getEffectiveLevel() == 5
    assert (levels(h)["kafka.server.KafkaApis"], levels(h)["kafka.log"]) == ("TRACE", "DEBUG")
    assert alter(h, ("kafka.server.KafkaApis", DELETE, None), ("kafka", DELETE, None)) == (0, None)
    assert levels(h)["kafka.server.KafkaApis"] == "INFO"  # the root's again
    assert alter(h, ("root", SET, "ERROR"), validate_only=True) == (0, None)
    assert levels(h)["root"] == "INFO"


REFUSALS = [
    ("unknown logger", [("kafka.nope", SET, "INFO")], ErrorCode.INVALID_CONFIG,
     "Logger kafka.nope does not exist!"),
    ("unknown level", [("kafka", SET, "LOUD")], ErrorCode.INVALID_CONFIG,
     "Cannot set the log level of kafka to LOUD as it is not a supported log level. "
     "Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"),
    ("root deleted", [("root", DELETE, None)], ErrorCode.INVALID_REQUEST,
     "Removing the log level of the root logger is not allowed"),
    ("append", [("kafka", APPEND, "INFO")], ErrorCode.INVALID_REQUEST,
     "APPEND operation is not allowed for the BROKER_LOGGER resource"),
    ("null value", [("kafka", SET, None)], ErrorCode.INVALID_REQUEST, "Null value not supported for : kafka"),
    ("all or nothing", [("kafka", SET, "DEBUG"), ("kafka.nope", SET, "INFO")], ErrorCode.INVALID_CONFIG,
     "Logger kafka.nope does not exist!"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "code", "message"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_refused_changes_change_nothing(
    changes: list[tuple[str, int, str | None]], code: int, message: str
) -> None:
    h = Harness()
    before = levels(h)
    assert alter(h, *changes) == (code, message)
    assert levels(h) == before


def test_the_resource_is_this_brokers_node_id() -> None:
    h = Harness()
    assert alter(h, ("kafka", SET, "INFO"), name="x") == (
        ErrorCode.INVALID_REQUEST,
        "Node id must be an integer, but it is: x",
    )
    assert alter(h, ("kafka", SET, "INFO"), name="3")[0] == ErrorCode.INVALID_REQUEST
    assert describe(h, "3").error_message == "Unexpected broker id, expected 0 but received 3"
    assert describe(h, "").error_message == "Broker id must not be empty"


def test_legacy_alter_configs_does_not_take_loggers() -> None:
    resource = {
        "resource_type": BROKER_LOGGER,
        "resource_name": "0",
        "configs": [{"name": "kafka", "value": "INFO"}],
    }
    (answer,) = Harness().call(ALTER_CONFIGS, 2, {"resources": [resource], "validate_only": False}).responses
    assert (answer.error_code, answer.error_message) == (ErrorCode.INVALID_REQUEST, "Unknown resource type 8")
