"""protocol.control_records: a transaction marker's control batch."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.control_records import EndTxnMarker, build_marker_batch, parse_marker
from kafka_shim.protocol.record_codec import Record, batch_keyed_records, build_batch
from kafka_shim.protocol.records import CONTROL_FLAG, NO_SEQUENCE, TRANSACTIONAL_FLAG

NOW = 1_700_000_000_123


@pytest.mark.parametrize("commit", [True, False])
def test_a_marker_is_the_batch_build_batch_made_of_its_record(commit: bool) -> None:
    """build_marker_batch writes with build_keyed_batch (2f74ad1): the bytes and header that
    build_batch, which it used before, makes of the marker's one record."""
    marker = build_marker_batch(
        EndTxnMarker(commit, 4),
        offset=900,
        producer_id=7,
        producer_epoch=2,
        timestamp_ms=NOW,
        partition_leader_epoch=3,
    )
    ((_, key, value),) = batch_keyed_records(marker.data, marker.first)
    general = build_batch(
        [Record(900, NOW, key, value)],
        attributes=CONTROL_FLAG | TRANSACTIONAL_FLAG,
        producer_id=7,
        producer_epoch=2,
        base_sequence=NO_SEQUENCE,
        partition_leader_epoch=3,
    )
    assert marker == general
    assert parse_marker(key, value, 900) == EndTxnMarker(commit, 4)
