"""The release table against oracles from outside this code: the ApiVersions answer recorded
from a real Kafka 3.9.0 (kafka-golden/probe2, case `apiversions`), the ranges kafka-python
3.0.12 records per broker release (`kafka.protocol.broker_version_data`), and Kafka's message
JSON specs that kafka-python bundles (`kafka/protocol/schemas/resources`, a 4.x trunk)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import kafka.protocol
import pytest
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.releases import RELEASES, Release, release_order

# probe2's golden file, case apiversions, step 01.v3 (the probe keeps the APIs it uses).
KAFKA_3_9_0_ANSWERED = {
    0: (0, 11), 1: (0, 17), 2: (0, 9), 3: (0, 12), 8: (0, 9), 9: (0, 9), 10: (0, 6), 11: (0, 9),
    12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 5), 18: (0, 4), 19: (0, 7), 20: (0, 6),
    21: (0, 2), 22: (0, 5), 24: (0, 5), 25: (0, 4), 26: (0, 4), 28: (0, 4), 29: (0, 3), 30: (0, 3),
    31: (0, 3), 32: (0, 4), 33: (0, 2), 35: (0, 4), 37: (0, 3), 43: (0, 2), 44: (0, 1), 47: (0, 0),
    48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 60: (0, 1), 61: (0, 0), 65: (0, 0), 66: (0, 1),
    68: (0, 0), 69: (0, 0),
}  # fmt: skip
# kafka-python's 3.9 table lacks DescribeTopicPartitions, which Kafka has served since 3.8
# (KIP-966; franz-go's kversion lists it from 3.8 too), and the APIs a KRaft broker forwards to
# its controller (DescribeQuorum, UnregisterBroker, the Raft voter APIs) or serves only in KRaft
# mode (ListClientMetricsResources): it recorded a ZooKeeper-mode 3.9 broker. Kafka 3.9.0's own
# kafka-clients checks those rows (tests/protocol/test_kafka_clients_oracle.py).
NOT_IN_KAFKA_PYTHONS_3_9 = {55, 64, 74, 75, 80, 81}
NOT_BUNDLED = {38, 39, 40, 41, 64, 68, 69, 76, 77, 78, 79, 80, 81, 90, 91, 92}
SPECS = Path(kafka.protocol.__file__).parent / "schemas" / "resources"


def advertised(release: Release) -> dict[int, tuple[int, int] | None]:
    return {key: release.advertised_range(key) for key in release.api_ranges}


def spec_versions(api_key: int) -> tuple[int, int] | None:
    """validVersions of the request spec, read as JSON once comments are gone (None: not bundled)."""
    path = SPECS / f"{APIS[api_key].request.name}.json"
    if not path.exists():
        return None
    text = path.read_text()
    spec = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE))
    low, _, high = spec["validVersions"].partition("-")
    return int(low), int(high or low)


def test_3_9_is_what_kafka_3_9_0_answered() -> None:
    row = advertised(RELEASES["3.9"])
    assert {key: row[key] for key in KAFKA_3_9_0_ANSWERED} == KAFKA_3_9_0_ANSWERED


@pytest.mark.parametrize("name", list(RELEASES))
def test_each_release_is_what_kafka_python_recorded_of_it(name: str) -> None:
    recorded = BROKER_API_VERSIONS[release_order(name)]
    row = advertised(RELEASES[name])
    missing = NOT_IN_KAFKA_PYTHONS_3_9 if name == "3.9" else set()
    assert {key: r for key, r in row.items() if key not in missing} == {
        key: recorded[key] for key in row if key not in missing
    }


@pytest.mark.parametrize("name", list(RELEASES))
def test_each_release_lies_within_kafkas_message_specs(name: str) -> None:
    release = RELEASES[name]
    specs = {key: spec_versions(key) for key in release.api_ranges}
    # kafka-python bundles no spec of the KIP-848 and KIP-932 (share group) APIs, the delegation
    # token APIs, UnregisterBroker or the Raft voter APIs.
    assert {key for key, spec in specs.items() if spec is None} <= NOT_BUNDLED
    for key, (low, high) in release.api_ranges.items():
        spec = specs[key]
        if spec is None:
            continue
        spec_low, spec_high = spec
        assert high <= spec_high, (name, APIS[key].name)
        if release_order(name) >= (4, 0):  # KIP-896's floor holds from 4.0 on
            assert low >= spec_low, (name, APIS[key].name)


def test_kafka_4_lists_produce_from_0() -> None:
    for name, release in RELEASES.items():
        produce = release.api_ranges[0]
        assert release.advertised_range(0) == (0, produce[1])
        assert produce[0] == (0 if name == "3.9" else 3)
