"""The `Setting` a declaration makes (protocol.settings): Kafka's name, its type, its default in
Kafka's text form, bounds or choices, and how a value is checked and parsed; and the
constructors the declarations by area are written with."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any


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


# The codecs a batch may be stored with (the broker's and the topic's compression.type).
COMPRESSION_TYPES = ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")


def broker_setting(
    name: str, type: ConfigType, default: str | None, doc: str, attr: str, **kw: Any
) -> Setting:
    return Setting(name, type, default, doc, attr=attr, **kw)


def topic_setting(name: str, type: ConfigType, default: str | None, doc: str, **kw: Any) -> Setting:
    return Setting(name, type, default, doc, topic=True, dynamic=True, **kw)


def listener_setting(name: str, type: ConfigType, default: str | None, doc: str, **kw: Any) -> Setting:
    """A broker setting each listener may override (listener.name.<listener>.<name>), held in
    the BrokerConfig attribute named after it."""
    return broker_setting(name, type, default, doc, name.replace(".", "_"), per_listener=True, **kw)


BOOLEAN, STRING, INT, LONG, DOUBLE, LIST, PASSWORD = (
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.LIST,
    ConfigType.PASSWORD,
)
