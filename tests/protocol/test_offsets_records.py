"""protocol.offsets_records: the packed OffsetCommitValue v3 every plain commit writes is the
schema's own bytes."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.offsets_records import (
    NO_EXPIRY,
    OFFSET_VALUE_VERSION,
    OffsetCommitValue,
    OffsetKey,
    OffsetValue,
    decode_value,
    encode_value,
)
from kafka_shim.protocol.types import ProtocolError


def schema_bytes(value: OffsetValue) -> bytes:
    fields = value._asdict() | {"expire_timestamp": NO_EXPIRY}
    return OFFSET_VALUE_VERSION.to_bytes(2, "big") + OffsetCommitValue.build(fields, OFFSET_VALUE_VERSION)


@pytest.mark.parametrize(
    "value",
    [
        OffsetValue(0, -1, "", 0),
        OffsetValue(12_345, -1, "", 1_700_000_000_000),
        OffsetValue(2**63 - 1, 2**31 - 1, "meta", -1),
        OffsetValue(-1, 7, "héllo ✓" * 50, 42),
        OffsetValue(5, 0, "x" * 0x7FFF, 9),  # the longest metadata an int16 length holds
    ],
)
def test_plain_offset_value_is_the_schemas_bytes(value: OffsetValue) -> None:
    encoded = encode_value(value)
    assert encoded == schema_bytes(value)
    assert decode_value(OffsetKey("g", "t", 0), encoded) == value


def test_metadata_too_long_for_its_length_fails_as_the_schema_does() -> None:
    with pytest.raises(ProtocolError):
        OffsetCommitValue.build(
            {"offset": 1, "leader_epoch": -1, "metadata": "x" * 0x8000, "commit_timestamp": 1}, 3
        )
    with pytest.raises(ProtocolError):
        encode_value(OffsetValue(1, -1, "x" * 0x8000, 1))
