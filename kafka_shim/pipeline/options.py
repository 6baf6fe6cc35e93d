"""The source's and sink's options, parsed once on the driver into plain values.

Names and meanings follow Spark's built-in Kafka source, so a job written for it
moves here by changing `format("kafka")` to `format("kshim")`. Everything here
is pure (no Spark, no network) and picklable: the parsed options travel to the
Python workers inside the reader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

# Spark's sentinels inside startingOffsets/endingOffsets JSON.
EARLIEST: Final = -2
LATEST: Final = -1

# Options that configure this source rather than the Kafka client.
CLIENT_PREFIX: Final = "kafka."


class OptionError(ValueError):
    """An option is missing, malformed or not allowed in this mode."""


@dataclass(frozen=True)
class Subscription:
    """Which topic partitions to read: exactly one of the three ways Spark allows."""

    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assigned: tuple[tuple[str, int], ...] = ()

    def matches(self, topic: str) -> bool:
        if self.pattern is not None:
            return re.fullmatch(self.pattern, topic) is not None
        return topic in self.topics


# "earliest", "latest", or per topic and partition an offset (or a sentinel above).
OffsetSpec = str | dict[str, dict[int, int]]


@dataclass(frozen=True)
class SourceOptions:
    bootstrap: str
    subscription: Subscription
    starting: OffsetSpec
    ending: OffsetSpec
    max_offsets_per_trigger: int | None = None
    include_headers: bool = False
    fail_on_data_loss: bool = True
    group_id: str | None = None  # consumer group the stream's progress is committed to
    poll_timeout_ms: int = 120_000
    client_config: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SinkOptions:
    bootstrap: str
    topic: str | None  # default topic for rows without a `topic` column value
    include_headers: bool
    client_config: dict[str, str] = field(default_factory=dict)


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    # Spark's options are case-insensitive; Kafka client property names are lowercase anyway.
    return {name.lower(): value for name, value in options.items()}


def _flag(options: dict[str, str], name: str, default: bool) -> bool:
    text = options.get(name.lower())
    if text is None:
        return default
    if text.strip().lower() not in ("true", "false"):
        raise OptionError(f"{name} must be true or false, not {text!r}")
    return text.strip().lower() == "true"


def _bootstrap(options: dict[str, str]) -> str:
    bootstrap = options.get("kafka.bootstrap.servers")
    if not bootstrap:
        raise OptionError("option kafka.bootstrap.servers is required")
    return bootstrap


def client_config(options: dict[str, str]) -> dict[str, str]:
    """kafka.* options go to the client (librdkafka names), minus those the source manages."""
    managed = {"kafka.bootstrap.servers", "kafka.group.id"}
    return {
        name[len(CLIENT_PREFIX) :]: value
        for name, value in options.items()
        if name.startswith(CLIENT_PREFIX) and name not in managed
    }


def parse_subscription(options: dict[str, str]) -> Subscription:
    given = [name for name in ("subscribe", "subscribepattern", "assign") if options.get(name)]
    if len(given) != 1:
        raise OptionError("exactly one of subscribe, subscribePattern or assign is required")
    (how,) = given
    text = options[how]
    if how == "subscribe":
        topics = tuple(t.strip() for t in text.split(",") if t.strip())
        if not topics:
            raise OptionError("subscribe names no topic")
        return Subscription(topics=topics)
    if how == "subscribepattern":
        try:
            re.compile(text)
        except re.error as exc:
            raise OptionError(f"subscribePattern {text!r} is not a regular expression: {exc}") from exc
        return Subscription(pattern=text)
    assigned = _json_object(text, "assign")
    pairs: list[tuple[str, int]] = []
    for topic, partitions in assigned.items():
        if not isinstance(partitions, list) or not all(isinstance(p, int) for p in partitions):
            raise OptionError(f'assign wants {{"topic": [partition, ...]}}, got {text!r}')
        pairs.extend((topic, p) for p in partitions)
    return Subscription(assigned=tuple(sorted(pairs)))


def _json_object(text: str, name: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionError(f"{name} is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise OptionError(f"{name} must be a JSON object, got {text!r}")
    return value


def parse_offsets(text: str, name: str, *, allow: tuple[str, ...]) -> OffsetSpec:
    """`earliest`/`latest` (those in `allow`) or {"topic": {"partition": offset}} JSON."""
    word = text.strip().lower()
    if word in ("earliest", "latest"):
        if word not in allow:
            raise OptionError(f"{name} cannot be {word}")
        return word
    parsed: dict[str, dict[int, int]] = {}
    for topic, partitions in _json_object(text, name).items():
        if not isinstance(partitions, dict):
            raise OptionError(f'{name} wants {{"topic": {{"partition": offset}}}}, got {text!r}')
        per_partition = {}
        for partition, offset in partitions.items():
            if not isinstance(offset, int) or offset < EARLIEST:
                raise OptionError(f"{name}: offset {offset!r} of {topic}/{partition} is not an offset")
            if offset == EARLIEST and "earliest" not in allow:
                raise OptionError(f"{name}: earliest (-2) is not allowed for {topic}/{partition}")
            per_partition[int(partition)] = offset
        parsed[topic] = per_partition
    return parsed


def parse_source_options(raw: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    options = _lower(raw)
    if streaming and "endingoffsets" in options:
        raise OptionError("endingOffsets is for batch queries; a stream reads on")
    starting = parse_offsets(
        options.get("startingoffsets", "latest" if streaming else "earliest"),
        "startingOffsets",
        allow=("earliest", "latest"),
    )
    if not streaming and starting == "latest":
        raise OptionError("startingOffsets latest makes an empty batch query; Spark refuses it too")
    ending = parse_offsets(options.get("endingoffsets", "latest"), "endingOffsets", allow=("latest",))
    limit_text = options.get("maxoffsetspertrigger")
    limit = int(limit_text) if limit_text else None
    if limit is not None and limit <= 0:
        raise OptionError(f"maxOffsetsPerTrigger must be positive, got {limit}")
    subscription = parse_subscription(options)
    return SourceOptions(
        bootstrap=_bootstrap(options),
        subscription=subscription,
        starting=starting,
        ending=ending,
        max_offsets_per_trigger=limit,
        include_headers=_flag(options, "includeHeaders", False),
        fail_on_data_loss=_flag(options, "failOnDataLoss", True),
        group_id=progress_group_id(options, subscription),
        poll_timeout_ms=int(options.get("kafkaconsumer.polltimeoutms", "120000")),
        client_config=client_config(options),
    )


def progress_group_id(options: dict[str, str], subscription: Subscription) -> str | None:
    """kafka.group.id as given; with only groupIdPrefix, the prefix plus a digest of the
    subscription, so a restarted query commits to the same group (Spark's own prefix
    gets a random suffix per query, which would strand lag tools on a dead group)."""
    if options.get("kafka.group.id"):
        return options["kafka.group.id"]
    prefix = options.get("groupidprefix")
    if not prefix:
        return None
    import hashlib

    digest = hashlib.sha1(repr(subscription).encode()).hexdigest()[:10]
    return f"{prefix}-{digest}"


def parse_sink_options(raw: Mapping[str, str], *, include_headers: bool) -> SinkOptions:
    options = _lower(raw)
    return SinkOptions(
        bootstrap=_bootstrap(options),
        topic=options.get("topic"),
        include_headers=include_headers,
        client_config=client_config(options),
    )
