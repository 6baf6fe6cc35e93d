"""Request counting for /metrics: error codes are found wherever Kafka's responses put them
(top level, per topic, per partition), as Kafka's ErrorsPerSec counts them."""

from __future__ import annotations

import pytest

from kafka_shim.shim.request_stats import LATENCY_BUCKETS, RequestStats, error_codes

CASES = [
    ("top level", {"error_code": 16, "throttle_time_ms": 0}, [16]),
    ("none", {"error_code": 0, "groups": []}, []),
    (
        "per partition (OffsetCommit)",
        {
            "topics": [
                {"name": "t", "partitions": [{"partition_index": 0, "error_code": 22}, {"error_code": 0}]}
            ]
        },
        [22],
    ),
    (
        "top level first, then partitions (Fetch)",
        {"error_code": 1, "responses": [{"topic": "t", "partitions": [{"error_code": 6, "records": b""}]}]},
        [1, 6],
    ),
    ("lists of numbers are not walked", {"replica_nodes": [1, 2], "error_code": 0}, []),
]


@pytest.mark.parametrize(("response", "codes"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_error_codes(response: dict, codes: list[int]) -> None:
    assert error_codes(response) == codes


def test_counts_by_version_error_and_latency_bucket() -> None:
    stats = RequestStats()
    stats.observe("Heartbeat", 4, {"error_code": 27}, 0.0001)
    stats.observe("Heartbeat", 4, {"error_code": 0}, 0.003)
    stats.observe("Heartbeat", 3, None, 100.0)
    heartbeat = stats.apis["Heartbeat"]
    assert heartbeat.versions == {4: 2, 3: 1} and heartbeat.errors == {27: 1}
    assert heartbeat.buckets[0] == 1 and heartbeat.buckets[LATENCY_BUCKETS.index(0.005)] == 1
    assert heartbeat.buckets[-1] == 1  # beyond the last bound: +Inf
