"""Broker loggers (the BROKER_LOGGER config resource, KIP-412): `kafka-configs.sh --entity-type
broker-loggers` describes and changes the levels of the broker's loggers while it runs. Kafka's
are log4j loggers; here each of Kafka's logger names that maps stands for the Python logger(s)
doing that work, and its level is theirs (Python's logging levels, which are the process's:
not kept across a restart, as Kafka's are not).

As Kafka's Log4jController and RuntimeLoggerManager: DescribeConfigs lists every logger with its
effective level (its own, else its nearest ancestor's, else the root's); SET gives a logger a
level (TRACE, DEBUG, INFO, WARN, ERROR or FATAL), DELETE takes its own level away so that it
inherits again; the root's level cannot be deleted; a logger not in the table does not exist.
The resource is the broker's node id.
"""

from __future__ import annotations

import logging

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.incremental_alter_configs import AlterConfigOp
from kafka_shim.shim.config.dynamic import AlterError, node_number

ROOT = "root"

# Kafka's logger name -> the Python logger it stands for here (Python's root for "root"): the
# loggers this broker writes to, each under the Kafka name of the component that logs the same
# things. The Python loggers nest as Kafka's do (kafka_shim under root, the others under
# kafka_shim), so a logger without a level of its own inherits as in Kafka. docs/apis.md (Broker
# loggers) lists the table.
KAFKA_LOGGERS: dict[str, str] = {
    ROOT: "",
    "kafka": "kafka_shim",
    "kafka.server.KafkaApis": "kafka_shim.shim.handlers",  # the request handlers
    "kafka.request.logger": "kafka_shim.requests",  # each request, at DEBUG
    "kafka.network.SocketServer": "kafka_shim.server",  # connections, listeners
    "kafka.authorizer.logger": "kafka_shim.authorizer",  # ACL decisions
    "kafka.coordinator.transaction": "kafka_shim.shim.transactions",
    "kafka.log": "kafka_shim.storage",  # logs, segments, recovery, retention, the cleaner
    "kafka.server.KafkaConfig": "kafka_shim.config",
    "kafka.server.BrokerServer": "kafka_shim.shim.broker",
}

# Kafka's log4j levels and Python's; TRACE is below DEBUG (Python names no such level).
TRACE = 5
_LEVELS = {
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
}
_NAMES = {number: name for name, number in _LEVELS.items()}
VALID_LEVELS = ", ".join(sorted(_LEVELS))

log = logging.getLogger("kafka_shim.server")


def _python_logger(kafka_name: str) -> logging.Logger:
    return logging.getLogger(KAFKA_LOGGERS[kafka_name] or None)


def level_name(number: int) -> str:
    """A Python level as Kafka names it (an unnamed one as the next Kafka level above it)."""
    return next((_NAMES[n] for n in sorted(_NAMES) if number <= n), "FATAL")


def levels() -> dict[str, str]:
    """Every logger's effective level (Log4jController.loggers), in the table's order."""
    return {name: level_name(_python_logger(name).getEffectiveLevel()) for name in KAFKA_LOGGERS}


def check_node(resource_name: str, node_id: int) -> None:
    """RuntimeLoggerManager.validateResourceNameIsNodeId (its message names the expected id
    twice, as Kafka's does)."""
    if node_number(resource_name, "Node") != node_id:
        message = f"Unexpected node id. Expected {node_id}, but received {node_id}"
        raise AlterError(ErrorCode.INVALID_REQUEST, message)


def _exists(name: str) -> None:
    if name not in KAFKA_LOGGERS:
        raise AlterError(ErrorCode.INVALID_CONFIG, f"Logger {name} does not exist!")


def validate(operation: int, name: str, level: str | None) -> None:
    """RuntimeLoggerManager.validateLogLevelConfigs for one change: AlterError if refused."""
    if operation == AlterConfigOp.SET:
        _exists(name)
        if level not in _LEVELS:
            raise AlterError(
                ErrorCode.INVALID_CONFIG,
                f"Cannot set the log level of {name} to {level} as it is not a supported log level. "
                f"Valid log levels are {VALID_LEVELS}",
            )
    elif operation == AlterConfigOp.DELETE:
        _exists(name)
        if name == ROOT:
            raise AlterError(
                ErrorCode.INVALID_REQUEST, f"Removing the log level of the {ROOT} logger is not allowed"
            )
    elif operation in (AlterConfigOp.APPEND, AlterConfigOp.SUBTRACT):
        raise AlterError(
            ErrorCode.INVALID_REQUEST,
            f"{AlterConfigOp(operation).name} operation is not allowed for the BROKER_LOGGER resource",
        )
    else:
        raise AlterError(
            ErrorCode.INVALID_REQUEST,
            f"Unknown operation type {operation} is not allowed for the BROKER_LOGGER resource",
        )


def apply(operation: int, name: str, level: str | None) -> None:
    """A validated change, logged at WARN as Kafka logs it."""
    logger = _python_logger(name)
    if operation == AlterConfigOp.SET:
        assert level is not None
        logger.setLevel(_LEVELS[level])
        log.warning("Updated the log level of %s to %s", name, level)
    else:
        logger.setLevel(logging.NOTSET)
        log.warning("Unset the log level of %s", name)
