"""TopicStore: creation, validation, deletion, growth, auto-creation, configs."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.topic_configs import Origin, effective_value, resolve
from kafka_shim.storage.topics import TopicStore, invalid_topic_name


def store(**kwargs: object) -> TopicStore:
    return TopicStore(lambda name, index: MemoryLog(), **kwargs)  # type: ignore[arg-type]


def code_of(call: object, *args: object) -> ErrorCode:
    with pytest.raises(StorageError) as info:
        call(*args)  # type: ignore[operator]
    return info.value.code


def test_create_and_look_up() -> None:
    topics = store(default_partitions=3)
    topic = topics.create("orders")
    assert len(topic.partitions) == 3
    assert topics.get("orders") is topic
    assert topics.get_by_id(topic.topic_id) is topic
    assert topics.partition("orders", 2) is topic.partitions[2]
    assert topics.partition("orders", 3) is None
    assert [t.name for t in topics] == ["orders"]


def test_explicit_partition_count_and_minus_one_default() -> None:
    topics = store(default_partitions=2)
    assert len(topics.create("a", 5).partitions) == 5
    assert len(topics.create("b", -1).partitions) == 2


@pytest.mark.parametrize(
    ("name", "partitions", "configs", "code"),
    [
        ("bad name", None, None, ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("..", None, None, ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("x" * 250, None, None, ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("t", 0, None, ErrorCode.INVALID_PARTITIONS),
        ("t", None, {"no.such.config": "1"}, ErrorCode.INVALID_CONFIG),
        ("t", None, {"retention.ms": "soon"}, ErrorCode.INVALID_CONFIG),
        ("t", None, {"cleanup.policy": "sometimes"}, ErrorCode.INVALID_CONFIG),
    ],
)
def test_invalid_creations(
    name: str, partitions: int | None, configs: dict[str, str] | None, code: int
) -> None:
    topics = store()
    assert code_of(topics.create, name, partitions, configs) == code
    assert len(topics) == 0


def test_duplicate_topic() -> None:
    topics = store()
    topics.create("t")
    assert code_of(topics.create, "t") == ErrorCode.TOPIC_ALREADY_EXISTS


def test_delete_frees_name_and_id() -> None:
    topics = store()
    topic = topics.create("t")
    topics.delete("t")
    assert topics.get("t") is None and topics.get_by_id(topic.topic_id) is None
    assert code_of(topics.delete, "t") == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert topics.create("t").topic_id != topic.topic_id


def test_add_partitions() -> None:
    topics = store()
    topics.create("t", 2)
    assert len(topics.add_partitions("t", 4).partitions) == 4
    assert code_of(topics.add_partitions, "t", 4) == ErrorCode.INVALID_PARTITIONS
    assert code_of(topics.add_partitions, "nope", 9) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_auto_create_follows_the_switch_and_name_rules() -> None:
    assert store(auto_create=False).auto_create("t") is None
    topics = store(default_partitions=2)
    created = topics.auto_create("t")
    assert created is not None and len(created.partitions) == 2
    assert topics.auto_create("t") is created
    assert topics.auto_create("bad/name") is None


def test_config_resolution() -> None:
    broker = {"log.retention.ms": "1000"}.get
    topics = store()
    topic = topics.create("t", configs={"cleanup.policy": "compact", "retention.bytes": None})
    assert topic.configs == {"cleanup.policy": "compact"}
    assert effective_value(topic.configs, "cleanup.policy", broker) == "compact"
    assert effective_value(topic.configs, "retention.ms", broker) == "1000"
    retention, segment = resolve(topic.configs, broker, ["retention.ms", "segment.ms"])
    assert (retention.value, retention.origin) == ("1000", Origin.BROKER)
    assert (segment.value, segment.origin) == ("604800000", Origin.DEFAULT)


def test_a_log_runs_by_the_broker_values_in_force_after_reconfigure() -> None:
    """Topics of the same overrides share one resolved LogConfig until the broker values change:
    then every log, and a topic made later, runs by the new value."""
    broker = {"log.retention.ms": "1000"}
    topics = store(broker_value=lambda name: broker.get(name))
    first, second = topics.create("a"), topics.create("b")
    assert first.partitions[0].config is second.partitions[0].config
    assert first.partitions[0].config.retention_ms == 1000
    broker["log.retention.ms"] = "2000"
    topics.reconfigure()
    later = topics.create("c")
    assert [t.partitions[0].config.retention_ms for t in (first, second, later)] == [2000, 2000, 2000]
    compacted = topics.create("d", configs={"retention.ms": "5"})
    assert compacted.partitions[0].config.retention_ms == 5


@pytest.mark.parametrize("name", ["a", "A.b_c-9", "x" * 249])
def test_legal_names(name: str) -> None:
    assert invalid_topic_name(name) is None
