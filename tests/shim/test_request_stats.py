"""Request counting for /metrics: error codes are found wherever Kafka's responses put them
(top level, per topic, per partition), as Kafka's ErrorsPerSec counts them."""

from __future__ import annotations

import json

import pytest

from kafka_shim.protocol.messages import APIS
from kafka_shim.shim.request_stats import LATENCY_BUCKETS, RequestStats, error_codes, error_finder

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


# (API key, response, codes): what each API's schema-made finder reports, as the general walk does.
FINDER_CASES = [
    ("Heartbeat", 12, {"error_code": 16, "throttle_time_ms": 0}, [16]),
    ("OffsetCommit", 8, CASES[2][1], [22]),
    ("Fetch", 1, CASES[3][1], [1, 6]),
    (
        "Produce: record_errors hold no codes",
        0,
        {
            "responses": [
                {
                    "name": "t",
                    "partition_responses": [
                        {"index": 0, "error_code": 87, "record_errors": [{"batch_index": 0}]},
                        {"index": 1, "error_code": 0, "record_errors": []},
                    ],
                }
            ]
        },
        [87],
    ),
    (
        "Metadata: top, topics, partitions",
        3,
        {"error_code": 0, "topics": [{"error_code": 3, "partitions": []}]},
        [3],
    ),
]


@pytest.mark.parametrize(
    ("api_key", "response", "codes"), [c[1:] for c in FINDER_CASES], ids=[c[0] for c in FINDER_CASES]
)
def test_schema_made_finders_report_what_the_general_walk_does(
    api_key: int, response: dict, codes: list[int]
) -> None:
    found: list[int] = []
    error_finder(APIS[api_key].response)(response, found)
    assert found == codes == sorted(error_codes(response), key=codes.index)


def test_every_response_schema_makes_a_finder() -> None:
    for api in APIS.values():
        found: list[int] = []
        error_finder(api.response)({"error_code": 5}, found)  # whatever else it has is absent
        has_top_level = any(field.name == "error_code" for field in api.response.fields)
        assert found == ([5] if has_top_level else []), api.name


def test_counts_sent_as_json_add_up() -> None:
    """A broker process's counts as JSON (--process-per-broker's share of /metrics), summed."""
    one, other = RequestStats(), RequestStats()
    one.observe("Heartbeat", 4, {"error_code": 27}, 0.0001)
    other.observe("Heartbeat", 4, {"error_code": 0}, 0.003)
    other.observe("Metadata", 12, {"topics": []}, 0.0001)
    one.bytes_in["t"], other.bytes_in["t"], other.bytes_out["u"] = 3, 4, 5
    merged = RequestStats()
    for stats in (one, other):
        merged.add_json(json.loads(json.dumps(stats.as_json())))
    heartbeat = merged.apis["Heartbeat"]
    assert (heartbeat.versions, heartbeat.errors) == ({4: 2}, {27: 1})
    assert heartbeat.buckets[0] == 1 and heartbeat.buckets[LATENCY_BUCKETS.index(0.005)] == 1
    assert heartbeat.latency_sum == pytest.approx(0.0031)
    assert merged.apis["Metadata"].versions == {12: 1}
    assert (merged.bytes_in, merged.bytes_out) == ({"t": 7}, {"u": 5})
