"""What the broker serves without --emulate (every version some listed release served, the
newest release's maxima) and the KIP-896 log of clients using what Kafka 4 removed."""

from __future__ import annotations

import logging

import pytest

from kafka_shim.protocol.releases import NEWEST, RELEASES
from kafka_shim.shim.served_versions import OldVersionClients, served_versions

OFFSET_COMMIT, PRODUCE, FETCH, JOIN_GROUP = 8, 0, 1, 11


def test_the_default_serves_the_oldest_floors_and_advertises_the_newest_maxima() -> None:
    default, newest = served_versions(None), served_versions(NEWEST)
    assert default.release is RELEASES[NEWEST]
    for key, (low, high) in default.ranges.items():
        floors = [r.api_ranges[key][0] for r in RELEASES.values() if key in r.api_ranges]
        assert low == min(floors), key
        # kafka-python and aiokafka infer the release from the maxima: they stay the newest's.
        assert high == newest.ranges[key][1], key
        assert default.advertised()[key] == (low, high)
    assert default.ranges[OFFSET_COMMIT] == (0, newest.ranges[OFFSET_COMMIT][1])


@pytest.mark.parametrize(
    ("release", "api_key", "version", "served", "refused_by_newest"),
    [
        (None, OFFSET_COMMIT, 1, True, True),  # sarama 1.22 at Kafka 2.1.0
        (None, PRODUCE, 2, True, True),  # librdkafka without ApiVersions, fallback 0.10
        (None, FETCH, 3, True, True),
        (None, OFFSET_COMMIT, 2, True, False),  # Kafka 4 serves it: nothing to say
        (None, JOIN_GROUP, 0, True, False),  # removed by 4.0, served again from 4.1 (KAFKA-19444)
        ("4.2", OFFSET_COMMIT, 1, False, False),  # --emulate 4.2 refuses as Kafka 4.2 does
        ("4.0", JOIN_GROUP, 0, False, False),
        ("3.9", OFFSET_COMMIT, 0, True, False),  # Kafka 3.9 served it: not a removal there
    ],
)
def test_which_versions_are_served_and_which_the_newest_release_refuses(
    release: str | None, api_key: int, version: int, served: bool, refused_by_newest: bool
) -> None:
    versions = served_versions(release)
    assert versions.serves(api_key, version) is served
    assert versions.refused_by_newest(api_key, version) is refused_by_newest


def test_a_client_is_logged_once_per_api_naming_kip_896(caplog: pytest.LogCaptureFixture) -> None:
    clients = OldVersionClients()
    with caplog.at_level(logging.WARNING, "kafka_shim.kip896"):
        for now in range(3):
            clients.saw("sarama", "OffsetCommit", 1, "10.0.0.1:5000", now)
        clients.saw("sarama", "Produce", 2, "10.0.0.1:5000", 3)
        clients.saw("rdkafka", "Produce", 2, "10.0.0.2:5000", 4)
    assert [r.getMessage() for r in caplog.records] == [
        f"client 'sarama' (10.0.0.1:5000) sent OffsetCommit v1, a version Kafka 4.0 removed (KIP-896): "
        f"Kafka {NEWEST} would close its connection; served because no --emulate release is set",
        f"client 'sarama' (10.0.0.1:5000) sent Produce v2, a version Kafka 4.0 removed (KIP-896): "
        f"Kafka {NEWEST} would close its connection; served because no --emulate release is set",
        f"client 'rdkafka' (10.0.0.2:5000) sent Produce v2, a version Kafka 4.0 removed (KIP-896): "
        f"Kafka {NEWEST} would close its connection; served because no --emulate release is set",
    ]
    newest_first = [(u.client_id, u.api, u.requests, u.first_seen_ms, u.last_seen_ms) for u in clients.uses()]
    assert newest_first == [
        ("rdkafka", "Produce", 1, 4, 4),
        ("sarama", "Produce", 1, 3, 3),
        ("sarama", "OffsetCommit", 3, 0, 2),
    ]


def test_memory_stays_bounded_whatever_client_ids_are_sent() -> None:
    clients = OldVersionClients(limit=4)
    for i in range(100):
        clients.saw(f"client-{i}", "Fetch", 3, "peer", i)
    assert [u.client_id for u in clients.uses()] == ["client-99", "client-98", "client-97", "client-96"]
