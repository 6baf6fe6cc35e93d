"""`__consumer_offsets`: Kafka's key/value schemas, the group -> partition rule,
append and replay over a TopicStore, and unmodified clients reading the topic
(kafka-python decoding with the declarations, kcat printing it).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import time

import pytest

from kafka_shim.protocol.internal_topics import java_string_hash
from kafka_shim.protocol.offsets_records import (
    GroupKey,
    GroupMetadataValue,
    GroupValue,
    MemberValue,
    OffsetCommitValue,
    OffsetKey,
    OffsetsRecord,
    OffsetValue,
    decode_record,
    encode_key,
    encode_record,
    encode_value,
)
from kafka_shim.protocol.record_codec import Record, encode_batch
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC, OffsetsLog, partition_for
from kafka_shim.storage.topics import TopicStore

MEMBER = MemberValue("m-1", "instance-1", "client", "/10.0.0.1", 300_000, 45_000, b"sub", b"assign")
GROUP_VALUE = GroupValue("consumer", 3, "range", "m-1", 1_700_000_000_000, (MEMBER,))
OFFSET_VALUE = OffsetValue(42, 5, "meta", 1_700_000_000_000)


def new_store() -> TopicStore:
    return TopicStore(lambda topic, partition: MemoryLog())


# --- the group -> partition rule -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "java_hash"),
    [
        ("", 0),
        ("hello", 99162322),
        ("Aa", 2112),
        ("BB", 2112),
        ("\U0001f600", 0xD83D * 31 + 0xDE00),  # UTF-16 surrogate pair, not one code point
        ("polygenelubricants", -(2**31)),  # Integer.MIN_VALUE
        # Values printed by jshell (Java 17) for these strings' hashCode():
        ("console-consumer-12345", 158_455_506),
        ("my-group", -1_906_497_762),
        ("h\u00e9llo-\U0001f600", 395_420_098),
    ],
)
def test_java_string_hash(text: str, java_hash: int) -> None:
    assert java_string_hash(text) == java_hash


def test_partition_is_kafkas_abs_hash_modulo() -> None:
    assert partition_for("polygenelubricants", 50) == 0  # Utils.abs(MIN_VALUE) is 0
    assert partition_for("my-group", 50) == 1_906_497_762 % 50
    assert partition_for("hello", 50) == 99162322 % 50
    assert all(partition_for(f"g{i}", 1) == 0 for i in range(20))


# --- key and value formats --------------------------------------------------------------


def test_offset_key_bytes_are_kafkas() -> None:
    # int16 version 1 | group | topic | int32 partition, strings int16-length-prefixed.
    expected = struct.pack(">hh1sh5si", 1, 1, b"g", 5, b"topic", 7)
    assert encode_key(OffsetKey("g", "topic", 7)) == expected
    assert encode_key(GroupKey("g")) == struct.pack(">hh1s", 2, 1, b"g")


def test_offset_value_versions_follow_kafkas_choice() -> None:
    plain = encode_value(OFFSET_VALUE)
    assert plain is not None and struct.unpack_from(">h", plain)[0] == 3
    expiring = encode_value(OffsetValue(1, -1, "", 10, expire_timestamp=99))
    assert expiring is not None and struct.unpack_from(">h", expiring)[0] == 1
    group = encode_value(GROUP_VALUE)
    assert group is not None and struct.unpack_from(">h", group)[0] == 3


@pytest.mark.parametrize(
    "record",
    [
        OffsetsRecord(OffsetKey("g", "t", 0), OFFSET_VALUE),
        OffsetsRecord(OffsetKey("g", "t", 0), OffsetValue(1, -1, "", 10, expire_timestamp=99)),
        OffsetsRecord(OffsetKey("g", "t", 0), None),
        OffsetsRecord(GroupKey("g"), GROUP_VALUE),
        OffsetsRecord(GroupKey("g"), GroupValue("consumer", 4, None, None, 5)),
        OffsetsRecord(GroupKey("g"), None),
    ],
)
def test_records_round_trip(record: OffsetsRecord) -> None:
    assert decode_record(*encode_record(record)) == record


@pytest.mark.parametrize("version", range(5))
def test_every_offset_value_version_decodes(version: int) -> None:
    fields = {"offset": 9, "leader_epoch": 2, "metadata": "m", "commit_timestamp": 7, "expire_timestamp": 8}
    data = struct.pack(">h", version) + OffsetCommitValue.build(fields, version)
    value = decode_record(encode_key(OffsetKey("g", "t", 0)), data).value
    assert value == OffsetValue(
        9, 2 if version >= 3 else -1, "m", 7, expire_timestamp=8 if version == 1 else None
    )


@pytest.mark.parametrize("version", range(5))
def test_every_group_value_version_decodes(version: int) -> None:
    fields = {
        "protocol_type": "consumer",
        "generation": 3,
        "protocol": "range",
        "leader": "m-1",
        "current_state_timestamp": 1_700_000_000_000,
        "members": [{name: getattr(MEMBER, name) for name in MemberValue.__slots__}],
    }
    data = struct.pack(">h", version) + GroupMetadataValue.build(fields, version)
    value = decode_record(encode_key(GroupKey("g")), data).value
    assert isinstance(value, GroupValue)
    assert value.current_state_timestamp == (1_700_000_000_000 if version >= 2 else -1)
    (member,) = value.members
    assert member.group_instance_id == ("instance-1" if version >= 3 else None)
    assert member.rebalance_timeout == (300_000 if version >= 1 else 0)
    assert (member.subscription, member.assignment) == (b"sub", b"assign")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (None, b""),
        (b"\x00", None),
        (struct.pack(">h", 9) + b"xx", None),
        (encode_key(GroupKey("g")), b"\x00\x03"),
    ],
)
def test_foreign_records_are_protocol_errors(key: bytes | None, value: bytes | None) -> None:
    with pytest.raises(ProtocolError):
        decode_record(key, value)


# --- append and replay ---------------------------------------------------------------------


def test_the_topic_is_created_compacted_on_first_append() -> None:
    store = new_store()
    offsets_log = OffsetsLog(store, partitions=5)
    assert store.get(OFFSETS_TOPIC) is None and list(offsets_log.replay()) == []
    offsets_log.append([OffsetsRecord(GroupKey("g"), GROUP_VALUE)], now_ms=1)
    topic = store.get(OFFSETS_TOPIC)
    assert topic is not None and len(topic.partitions) == 5
    assert topic.configs["cleanup.policy"] == "compact"


def test_records_land_in_the_groups_partition_and_replay_latest_per_key() -> None:
    store = new_store()
    offsets_log = OffsetsLog(store, partitions=50)
    first = [OffsetsRecord(OffsetKey(g, "t", 0), OffsetValue(i, -1, "", 5)) for i, g in enumerate("abcdef")]
    offsets_log.append(first, now_ms=5)
    tombstone = OffsetsRecord(OffsetKey("a", "t", 0), None)
    offsets_log.append([tombstone], now_ms=6)
    topic = store.get(OFFSETS_TOPIC)
    assert topic is not None
    for index, partition in enumerate(topic.partitions):
        wanted = sum(1 for g in "abcdef" if partition_for(g, 50) == index) + (partition_for("a", 50) == index)
        assert partition.log_end_offset == wanted
    # Replay reads the log as compaction leaves it: the last record of each key.
    assert sorted(offsets_log.replay(), key=repr) == sorted([tombstone, *first[1:]], key=repr)


def test_an_existing_topic_keeps_its_partition_count() -> None:
    store = new_store()
    store.create(OFFSETS_TOPIC, 3)
    offsets_log = OffsetsLog(store, partitions=50)
    assert offsets_log.partitions == 3
    offsets_log.append([OffsetsRecord(GroupKey("hello"), None)], now_ms=1)
    topic = store.get(OFFSETS_TOPIC)
    assert topic is not None and topic.partitions[99162322 % 3].log_end_offset == 1


def test_replay_skips_records_that_are_not_kafkas() -> None:
    store = new_store()
    offsets_log = OffsetsLog(store, partitions=1)
    good = OffsetsRecord(OffsetKey("g", "t", 0), OFFSET_VALUE)
    offsets_log.append([good], now_ms=1)
    topic = store.get(OFFSETS_TOPIC)
    assert topic is not None
    foreign = encode_batch([Record(0, 1, b"junk", b"value"), Record(1, 1, None, b"no key")])
    topic.partitions[0].append(RecordBatches.parse(foreign))
    offsets_log.append([OffsetsRecord(GroupKey("g"), None)], now_ms=2)
    assert list(offsets_log.replay()) == [good, OffsetsRecord(GroupKey("g"), None)]


# --- unmodified clients read the topic ----------------------------------------------------


def _commit_with_kafka_python(bootstrap: str, group: str, topic: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(3):
        producer.send(topic, value=f"v{i}".encode())
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    deadline = time.monotonic() + 20
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(200)
    consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(2, "note", -1)})
    consumer.close()


@pytest.mark.clients
def test_kafka_python_consumes_and_decodes_the_offsets_topic(kafka_shim) -> None:  # type: ignore[no-untyped-def]
    from kafka import KafkaConsumer

    _commit_with_kafka_python(kafka_shim.bootstrap, "reader-group", "events")
    consumer = KafkaConsumer(
        OFFSETS_TOPIC,
        bootstrap_servers=kafka_shim.bootstrap,
        auto_offset_reset="earliest",
        exclude_internal_topics=False,
        consumer_timeout_ms=3000,
    )
    decoded = [decode_record(m.key, m.value) for m in consumer]
    consumer.close()
    commits = [r for r in decoded if isinstance(r.key, OffsetKey)]
    assert OffsetsRecord(OffsetKey("reader-group", "events", 0), commits[-1].value) == commits[-1]
    assert isinstance(commits[-1].value, OffsetValue)
    assert (commits[-1].value.offset, commits[-1].value.metadata) == (2, "note")
    groups = [r.value for r in decoded if isinstance(r.key, GroupKey)]
    assert any(isinstance(g, GroupValue) and g.protocol_type == "consumer" and g.members for g in groups)


@pytest.mark.clients
def test_metadata_marks_the_offsets_topic_internal(kafka_shim) -> None:  # type: ignore[no-untyped-def]
    from kafka.admin import KafkaAdminClient

    _commit_with_kafka_python(kafka_shim.bootstrap, "meta-group", "events")
    admin = KafkaAdminClient(bootstrap_servers=kafka_shim.bootstrap)
    try:
        described = {t["name"]: t for t in admin.describe_topics([OFFSETS_TOPIC, "events"])}
    finally:
        admin.close()
    assert described[OFFSETS_TOPIC]["is_internal"] is True
    assert described["events"]["is_internal"] is False
    assert (
        len(described[OFFSETS_TOPIC]["partitions"]) == kafka_shim.broker.config.offsets_topic_num_partitions
    )


@pytest.mark.clients
def test_kcat_reads_the_offsets_topic(kafka_shim) -> None:  # type: ignore[no-untyped-def]
    assert shutil.which("kcat"), "kcat is not installed: apt-get install kcat (bash .ci/run does)"
    _commit_with_kafka_python(kafka_shim.bootstrap, "kcat-group", "events")
    partition = partition_for("kcat-group", kafka_shim.broker.config.offsets_topic_num_partitions)
    # %K is the key length: keys are binary and may hold the separator bytes.
    output = subprocess.run(
        [
            "kcat",
            "-C",
            "-b",
            kafka_shim.bootstrap,
            "-t",
            OFFSETS_TOPIC,
            "-p",
            str(partition),
            "-e",
            "-f",
            "%K:%k%S:%s\n",
        ],
        capture_output=True,
        timeout=30,
        check=True,
    ).stdout
    records = [decode_record(key, value) for key, value in _kcat_records(output)]
    assert [r.key for r in records if isinstance(r.key, OffsetKey)] == [OffsetKey("kcat-group", "events", 0)]
    offsets = [r.value for r in records if isinstance(r.value, OffsetValue)]
    assert (offsets[-1].offset, offsets[-1].metadata) == (2, "note")
    assert any(isinstance(r.value, GroupValue) and r.value.members for r in records)


def _kcat_records(output: bytes) -> list[tuple[bytes | None, bytes | None]]:
    """Parse kcat's "%K:%k%S:%s\n" lines: each length (-1 for null) says how many bytes follow."""
    records = []
    position = 0

    def field() -> bytes | None:
        nonlocal position
        colon = output.index(b":", position)
        length = int(output[position:colon])
        position = colon + 1 + max(length, 0)
        return None if length < 0 else output[colon + 1 : position]

    while position < len(output):
        key = field()
        value = field()
        assert output[position : position + 1] == b"\n"
        position += 1
        records.append((key, value))
    return records
