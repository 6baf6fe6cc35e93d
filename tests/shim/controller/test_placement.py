"""shim.controller.placement's StripedPlacer against the placements Kafka's own StripedReplicaPlacerTest
expects (metadata/src/test/java/org/apache/kafka/metadata/placement), drawn from the same
numbers: JavaDraws gives the sequence Kafka's MockRandom (seed 17) gives java.util.Random's
nextInt(bound) and Collections.shuffle."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.controller.placement import StripedPlacer, UsableBroker
from kafka_shim.storage.errors import StorageError

_MASK64 = (1 << 64) - 1


class JavaDraws:
    """org.apache.kafka.server.util.MockRandom: a linear congruential next(bits), read through
    java.util.Random.nextInt(bound) and java.util.Collections.shuffle's algorithms."""

    def __init__(self, state: int = 17) -> None:
        self.state = state

    def _next31(self) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & _MASK64
        return self.state >> 33

    def randrange(self, stop: int) -> int:
        bits = self._next31()
        if stop & (stop - 1) == 0:  # a power of two: the high bits
            return (stop * bits) >> 31
        while True:
            value = bits % stop
            if ((bits - value + stop - 1) & 0xFFFFFFFF) < 1 << 31:  # no int overflow: accepted
                return value
            bits = self._next31()

    def shuffle(self, x: list[Any]) -> None:
        for i in range(len(x), 1, -1):
            j = self.randrange(i)
            x[i - 1], x[j] = x[j], x[i - 1]


def brokers(*specs: tuple[int, str | None, bool]) -> list[UsableBroker]:
    return [UsableBroker(node_id, rack, fenced) for node_id, rack, fenced in specs]


# (Kafka's test, the brokers as it lists them (id, rack, fenced), replication factor, the
# placements it expects, one per call).
CASES = [
    (
        "testAvoidFencedReplicaIfPossibleOnSingleRack",
        brokers((3, None, False), (1, None, True), (0, None, False), (4, None, False), (2, None, False)),
        4,
        [[3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4], [2, 3, 4, 0], [0, 4, 3, 2]],
    ),
    (
        "testPlacementOnFencedReplicaOnSingleRack",
        brokers((3, None, False), (1, None, True), (2, None, False)),
        3,
        [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]],
    ),
    (
        "testRackListWithMultipleRacks",
        brokers(
            (11, "1", False), (10, "1", False), (30, "3", False),
            (31, "3", False), (21, "2", False), (20, "2", True),
        ),
        4,
        [[11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]],
    ),
    (
        "testRackListWithInvalidRacks",
        brokers(
            (11, "1", False), (10, "1", False), (30, "3", True), (31, "3", True),
            (20, "2", True), (21, "2", True), (41, "4", False), (40, "4", True),
        ),
        4,
        [[41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]],
    ),
    (
        "testMultiPartitionTopicPlacementOnSingleUnfencedBroker",
        brokers((0, None, False), (1, None, True)),
        1,
        [[0], [0], [0]],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("name", "usable", "factor", "expected"), CASES, ids=[c[0] for c in CASES])
def test_placements_are_kafkas(
    name: str, usable: list[UsableBroker], factor: int, expected: list[list[int]]
) -> None:
    placer = StripedPlacer(usable, JavaDraws())
    assert [placer.place(factor) for _ in expected] == expected


@pytest.mark.parametrize(
    ("usable", "factor", "message"),
    [
        (
            brokers((0, None, False)),
            0,
            "Invalid replication factor 0: the replication factor must be positive.",
        ),
        (
            brokers((0, None, False), (1, None, True)),
            3,
            "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered.",
        ),
        (brokers((0, None, True)), 1, "All brokers are currently fenced."),
    ],
)
def test_what_cannot_be_placed_is_refused_in_kafkas_words(
    usable: list[UsableBroker], factor: int, message: str
) -> None:
    with pytest.raises(StorageError) as refused:
        StripedPlacer(usable, JavaDraws()).place(factor)
    assert (refused.value.code, refused.value.message) == (ErrorCode.INVALID_REPLICATION_FACTOR, message)
