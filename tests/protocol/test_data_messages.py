"""Data-plane and admin message declarations against a real client's encoders.

Golden bytes come from kafka-python 3.0.12 (kafka/protocol/, generated from
Apache Kafka's message JSON): for every version both libraries know, a sample
holding a non-default value in every field is encoded by kafka-python, and our
declaration must build the same bytes and parse them back to the same bytes.
Versions kafka-python no longer carries (Kafka 4 dropped them) get round trips.
"""

from __future__ import annotations

import importlib
import uuid
from typing import Any

import pytest

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages import (
    alter_configs,
    alter_partition_reassignments,
    alter_replica_log_dirs,
    create_partitions,
    create_topics,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_log_dirs,
    describe_topic_partitions,
    elect_leaders,
    fetch,
    init_producer_id,
    list_offsets,
    list_partition_reassignments,
    metadata,
    offset_for_leader_epoch,
    produce,
)
from kafka_shim.protocol.schema import (
    BOOL,
    BYTES,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    Array,
    Field,
    FieldType,
    Message,
    Struct,
)
from kafka_shim.protocol.types import ProtocolError

APIS: list[Api] = [
    m.API
    for m in (
        produce,
        fetch,
        list_offsets,
        metadata,
        create_topics,
        delete_topics,
        create_partitions,
        describe_configs,
        describe_cluster,
        init_producer_id,
        alter_configs,
        describe_log_dirs,
        offset_for_leader_epoch,
        describe_topic_partitions,
        elect_leaders,
        alter_partition_reassignments,
        list_partition_reassignments,
        alter_replica_log_dirs,
    )
]

_SAMPLE_UUID = uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
_SAMPLES: dict[FieldType, Any] = {
    INT8: 3,
    INT16: 7,
    INT32: 123_456,
    INT64: 1_234_567_890_123,
    BOOL: True,
    STRING: "name-é",
    BYTES: b"\x01\x02",
    RECORDS: b"\x00batch\xff",
    UUID: _SAMPLE_UUID,
}


def sample(fields: list[Field], version: int, nulls: bool) -> dict[str, Any]:
    """A value for every field present at `version`; `nulls`: null where allowed."""
    out: dict[str, Any] = {}
    for f in fields:
        if version not in f.versions:
            continue
        if nulls and version in f.nullable:
            out[f.name] = None
        else:
            out[f.name] = _sample_value(f.type, version, nulls)
    return out


def _sample_value(ftype: FieldType, version: int, nulls: bool) -> Any:
    if isinstance(ftype, Struct):
        return sample(ftype.fields, version, nulls)
    if isinstance(ftype, Array):
        return [_sample_value(ftype.element, version, nulls) for _ in range(2)]
    return _SAMPLES[ftype]


def present(obj: Any, fields: list[Field], version: int) -> dict[str, Any]:
    """The fields of a parsed struct that exist at `version`, recursively."""
    return {f.name: _present_value(obj[f.name], f.type, version) for f in fields if version in f.versions}


def _present_value(value: Any, ftype: FieldType, version: int) -> Any:
    if value is None:
        return None
    if isinstance(ftype, Struct):
        return present(value, ftype.fields, version)
    if isinstance(ftype, Array):
        return [_present_value(v, ftype.element, version) for v in value]
    return value


def versions(api: Api) -> list[tuple[Message, int]]:
    return [
        (message, v)
        for message in (api.request, api.response)
        for v in range(api.versions.low, api.versions.high + 1)
    ]


ALL_CASES = [(m, v) for api in APIS for m, v in versions(api)]


@pytest.mark.parametrize("nulls", [False, True], ids=["values", "nulls"])
@pytest.mark.parametrize(("message", "version"), ALL_CASES, ids=lambda x: str(x))
def test_round_trip(message: Message, version: int, nulls: bool) -> None:
    obj = sample(message.fields, version, nulls)
    data = message.build(obj, version)
    parsed = message.parse(data, version)
    assert present(parsed, message.fields, version) == obj
    assert message.build(parsed, version) == data


@pytest.mark.parametrize(("message", "version"), ALL_CASES, ids=lambda x: str(x))
def test_truncated_input_is_a_protocol_error(message: Message, version: int) -> None:
    data = message.build(sample(message.fields, version, False), version)
    with pytest.raises(ProtocolError):
        message.parse(data[:-1], version)


# --- kafka-python 3.0.12 as the golden encoder -------------------------------

_KP_MODULES = [
    "producer.produce",
    "consumer.fetch",
    "consumer.offsets",
    "metadata.metadata",
    "admin.topics",
    "admin.configs",
    "admin.cluster",
    "producer.transaction",
]
# kafka-python renames Kafka's authorized-operations int32s and holds them as
# sets of bit positions.
_KP_NAMES = {
    "topic_authorized_operations": "authorized_operations",
    "cluster_authorized_operations": "authorized_operations",
}


def kp_class(name: str) -> Any:
    for module in _KP_MODULES:
        found = getattr(importlib.import_module(f"kafka.protocol.{module}"), name, None)
        if found is not None:
            return found
    raise LookupError(name)


def kp_object(cls: Any, fields: list[Field], obj: dict[str, Any], version: int) -> Any:
    """kafka-python's data container holding our sample `obj`."""
    kp_fields = cls._struct.fields
    kwargs: dict[str, Any] = {}
    for f in fields:
        if f.name not in obj:
            continue
        value = obj[f.name]
        kp_name = _KP_NAMES.get(f.name, f.name)
        if kp_name not in kp_fields:  # kept under Kafka's name, as an int (DescribeTopicPartitions)
            kp_name = f.name
        kp_field = kp_fields[kp_name]
        element = f.type.element if isinstance(f.type, Array) else f.type
        if isinstance(element, Struct) and value is not None:
            if isinstance(f.type, Array):
                value = [kp_object(kp_field.data_class, element.fields, v, version) for v in value]
            else:
                value = kp_object(kp_field.data_class, element.fields, value, version)
        if kp_name != f.name:
            value = {bit for bit in range(32) if value >> bit & 1}
        kwargs[kp_field.name] = value
    return cls(version=version, **kwargs)


def golden_cases() -> list[tuple[Message, int]]:
    cases = []
    for message, version in ALL_CASES:
        low, high = kp_class(message.name).valid_versions
        if low <= version <= high:
            cases.append((message, version))
    return cases


@pytest.mark.parametrize("nulls", [False, True], ids=["values", "nulls"])
@pytest.mark.parametrize(("message", "version"), golden_cases(), ids=lambda x: str(x))
def test_bytes_match_kafka_python(message: Message, version: int, nulls: bool) -> None:
    obj = sample(message.fields, version, nulls)
    cls = kp_class(message.name)
    golden = kp_object(cls, message.fields, obj, version).encode(version=version)
    assert message.build(obj, version) == golden
    assert message.build(message.parse(golden, version), version) == golden


def test_every_declared_api_has_golden_coverage() -> None:
    covered = {m.name for m, _ in golden_cases()}
    assert covered == {m.name for api in APIS for m in (api.request, api.response)}


def test_tagged_fields_holding_defaults_are_omitted() -> None:
    # Fetch v12 partition: diverging_epoch / current_leader / snapshot_id absent.
    response = {
        "responses": [
            {"topic": "t", "partitions": [{"partition_index": 0, "high_watermark": 5, "records": b""}]}
        ]
    }
    data = fetch.FetchResponse.build(response, 12)
    parsed = fetch.FetchResponse.parse(data, 12)
    part = parsed.responses[0].partitions[0]
    assert part.current_leader is None
    assert part.records == b""  # present-but-empty survives the wire
