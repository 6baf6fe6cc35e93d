"""Every client: create a topic, produce keyed messages, consume them in a group, commit, check."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import pytest

from compat.schema import Command, Observation
from tests.compat.conftest import require

CLIENTS = ["kafka-python", "confluent-kafka", "aiokafka", "kcat", "kafkajs", "java"]
PARTITIONS = 3
MESSAGES = 1000
KEYS = 50

pytestmark = [pytest.mark.clients, pytest.mark.timeout(240)]


def check_consumed(messages: list[Observation]) -> dict[int, int]:
    """Checks what a group consumer read; returns the message count per partition."""
    values = sorted(int(m["value"]) for m in messages)
    assert values == list(range(MESSAGES)), "every produced message exactly once"

    by_partition: dict[int, list[Observation]] = defaultdict(list)
    for message in messages:
        by_partition[message["partition"]].append(message)
    partition_of_key: dict[str, set[int]] = defaultdict(set)
    for partition, records in by_partition.items():
        offsets = [m["offset"] for m in records]
        assert offsets == list(range(len(records))), f"partition {partition}: offsets contiguous from 0"
        sequence = [int(m["value"]) for m in records]
        assert sequence == sorted(sequence), f"partition {partition}: producer order kept"
        for m in records:
            partition_of_key[m["key"]].add(partition)
    split_keys = {key: parts for key, parts in partition_of_key.items() if len(parts) != 1}
    assert not split_keys, f"keys spread over several partitions: {split_keys}"
    assert len(partition_of_key) == KEYS
    return {p: len(by_partition.get(p, [])) for p in range(PARTITIONS)}


@pytest.mark.parametrize("client", CLIENTS)
def test_produce_consume_commit(client: str, bootstrap: str, names: tuple[str, str]) -> None:
    driver = require(client)
    topic, group = names
    base = Command(
        op="create_topic", bootstrap=bootstrap, topic=topic, partitions=PARTITIONS, group=group, timeout_s=60
    )
    driver.run(base)
    driver.run(replace(base, op="produce", count=MESSAGES, key_count=KEYS))

    consumed = driver.run(replace(base, op="consume", count=MESSAGES))
    counts = check_consumed([obs for obs in consumed if obs.event == "message"])
    expected_committed = {p: n for p, n in counts.items() if n}

    committed_events = [obs for obs in consumed if obs.event == "committed"]
    if client != "kcat":  # kcat commits inside librdkafka on close and reports nothing
        assert committed_events, "consumer reported its commit"
        assert committed_events[-1].partition_map("offsets") == expected_committed

    (offsets,) = [obs for obs in driver.run(replace(base, op="offsets")) if obs.event == "offsets"]
    assert offsets.partition_map("committed") == expected_committed, "OffsetFetch returns the commit"
    assert offsets.partition_map("latest") == counts, "ListOffsets(latest) is the next offset"
