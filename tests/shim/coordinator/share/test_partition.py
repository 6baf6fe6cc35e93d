"""The share-partition state machine, driven with a fake clock: each case is a script of
steps and the states, start offset and answers they must leave."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.share_fetch import ACCEPT, GAP, REJECT, RELEASE, RENEW
from kafka_shim.shim.coordinator.share.partition import (
    Acquired,
    BatchSpan,
    PartitionLimits,
    RecordState,
    SharePartition,
    StateBatch,
)

LIMITS = PartitionLimits(lock_duration_ms=1000, delivery_count_limit=3, max_record_locks=100)
LIMITS_4_1 = replace(LIMITS, leaving_gives_back_deliveries=True)
A, Q, K, X = RecordState.AVAILABLE, RecordState.ACQUIRED, RecordState.ACKNOWLEDGED, RecordState.ARCHIVED
LOG = [BatchSpan(0, 2), BatchSpan(3, 3), BatchSpan(4, 7)]


def _states(partition: SharePartition) -> dict[int, tuple[RecordState, int]]:
    return {o: (r.state, r.delivery_count) for o, r in sorted(partition.records.items())}


# m1 holds the first batch at its third delivery (LIMITS' delivery-count limit).
THIRD_DELIVERY = [
    ("acquire", ("m1", LOG[:1], 1, 0), [Acquired(0, 2, 1)]),
    ("ack", ("m1", [(0, 2, [RELEASE])], 0), ErrorCode.NONE),
    ("acquire", ("m1", LOG[:1], 3, 0), [Acquired(0, 2, 2)]),
    ("ack", ("m1", [(0, 2, [RELEASE])], 0), ErrorCode.NONE),
    ("acquire", ("m1", LOG[:1], 3, 0), [Acquired(0, 2, 3)]),
]

# (name, steps, start offset after, states after); a step is (action, args, expected answer)
CASES: list[tuple[str, list[tuple[str, tuple[Any, ...], Any]], int, dict[int, tuple[RecordState, int]]]] = [
    (
        "whole batches, at least max records",
        [("acquire", ("m1", LOG, 2, 0), [Acquired(0, 2, 1)])],
        0,
        {0: (Q, 1), 1: (Q, 1), 2: (Q, 1)},
    ),
    (
        "accept moves the start offset",
        [
            ("acquire", ("m1", LOG, 4, 0), [Acquired(0, 3, 1)]),
            ("ack", ("m1", [(0, 1, [ACCEPT])], 0), ErrorCode.NONE),
        ],
        2,
        {2: (Q, 1), 3: (Q, 1)},
    ),
    (
        "release: delivered again with count 2, to another member",
        [
            ("acquire", ("m1", LOG, 1, 0), [Acquired(0, 2, 1)]),
            ("ack", ("m1", [(0, 2, [RELEASE, ACCEPT, ACCEPT])], 0), ErrorCode.NONE),
            ("acquire", ("m2", LOG, 1, 0), [Acquired(0, 0, 2)]),
        ],
        0,
        {0: (Q, 2), 1: (K, 1), 2: (K, 1)},
    ),
    (
        "reject is never delivered again",
        [
            ("acquire", ("m1", LOG, 1, 0), [Acquired(0, 2, 1)]),
            ("ack", ("m1", [(0, 2, [REJECT])], 0), ErrorCode.NONE),
            ("acquire", ("m1", LOG, 1, 0), [Acquired(3, 3, 1)]),
        ],
        3,
        {3: (Q, 1)},
    ),
    (
        "another member's records: INVALID_RECORD_STATE, nothing changes",
        [
            ("acquire", ("m1", LOG, 1, 0), [Acquired(0, 2, 1)]),
            ("ack", ("m2", [(0, 0, [ACCEPT])], 0), ErrorCode.INVALID_RECORD_STATE),
            ("ack", ("m1", [(0, 0, [ACCEPT]), (5, 5, [ACCEPT])], 0), ErrorCode.INVALID_RECORD_STATE),
        ],
        0,
        {0: (Q, 1), 1: (Q, 1), 2: (Q, 1)},
    ),
    (
        "types neither one nor one per offset: INVALID_REQUEST",
        [
            ("acquire", ("m1", LOG, 1, 0), [Acquired(0, 2, 1)]),
            ("ack", ("m1", [(0, 2, [ACCEPT, ACCEPT])], 0), ErrorCode.INVALID_REQUEST),
        ],
        0,
        {0: (Q, 1), 1: (Q, 1), 2: (Q, 1)},
    ),
    (
        "lock expiry returns the records",
        [
            ("acquire", ("m1", LOG, 1, 0), [Acquired(0, 2, 1)]),
            ("expire", (999,), False),
            ("expire", (1000,), True),
            ("acquire", ("m2", LOG, 5, 1000), [Acquired(0, 2, 2), Acquired(3, 7, 1)]),
        ],
        0,
        {**{o: (Q, 2) for o in range(3)}, **{o: (Q, 1) for o in range(3, 8)}},
    ),
    (
        "renew restarts the lock",
        [
            ("acquire", ("m1", LOG, 1, 0), [Acquired(0, 2, 1)]),
            ("ack", ("m1", [(0, 2, [RENEW])], 900), ErrorCode.NONE),
            ("expire", (1000,), False),
            ("expire", (1900,), True),
        ],
        0,
        {0: (A, 1), 1: (A, 1), 2: (A, 1)},
    ),
    (
        "archived at the delivery-count limit",
        [
            ("acquire", ("m1", LOG[:1], 1, 0), [Acquired(0, 2, 1)]),
            ("ack", ("m1", [(0, 2, [RELEASE])], 0), ErrorCode.NONE),
            ("acquire", ("m1", LOG[:1], 1, 0), [Acquired(0, 0, 2)]),
            ("expire", (1000,), True),
            ("acquire", ("m1", LOG[:1], 1, 1000), [Acquired(0, 0, 3)]),
            ("ack", ("m1", [(0, 0, [RELEASE])], 1000), ErrorCode.NONE),
        ],
        1,
        {1: (A, 1), 2: (A, 1)},
    ),
    (
        "control batches and aborted transactions are archived undelivered",
        [
            (
                "acquire",
                ("m1", [BatchSpan(0, 1), BatchSpan(2, 2, True), BatchSpan(3, 4)], 9, 0),
                [Acquired(0, 1, 1), Acquired(3, 4, 1)],
            ),
            ("ack", ("m1", [(0, 1, [ACCEPT])], 0), ErrorCode.NONE),
        ],
        3,
        {3: (Q, 1), 4: (Q, 1)},
    ),
    (
        "gap acknowledgement archives an offset with no record",
        [
            ("acquire", ("m1", [BatchSpan(0, 3)], 1, 0), [Acquired(0, 3, 1)]),
            ("ack", ("m1", [(0, 3, [ACCEPT, GAP, GAP, ACCEPT])], 0), ErrorCode.NONE),
        ],
        4,
        {},
    ),
    (
        "released records are acquired before new batches, within max records",
        [
            ("acquire", ("m1", LOG[:1], 1, 0), [Acquired(0, 2, 1)]),
            ("ack", ("m1", [(0, 2, [ACCEPT, RELEASE, ACCEPT])], 0), ErrorCode.NONE),
            ("acquire", ("m2", LOG, 1, 0), [Acquired(1, 1, 2)]),
            ("acquire", ("m2", LOG, 2, 0), [Acquired(3, 7, 1)]),  # then whole batches: 3, 4-7
        ],
        1,
        {1: (Q, 2), 2: (K, 1), **{o: (Q, 1) for o in range(3, 8)}},
    ),
    (
        "what a byte limit left unread is acquired by the next fetch, from where it stopped",
        [
            ("acquire", ("m1", LOG[:1], 9, 0), [Acquired(0, 2, 1)]),  # one batch read (max_bytes)
            ("acquire", ("m2", LOG[1:2], 9, 0), [Acquired(3, 3, 1)]),
            ("acquire", ("m1", LOG, 9, 10), [Acquired(4, 7, 1)]),
        ],
        0,
        {o: (Q, 1) for o in range(8)},
    ),
    (
        "record limit mode takes at most max records",
        [
            ("acquire_strict", ("m1", LOG, 2, 0), [Acquired(0, 1, 1)]),
            ("acquire_strict", ("m2", LOG, 2, 0), [Acquired(2, 3, 1)]),
        ],
        0,
        {0: (Q, 1), 1: (Q, 1), 2: (Q, 1), 3: (Q, 1)},
    ),
    (
        "a member's share session ending releases what it holds",
        [
            ("acquire", ("m1", LOG[:1], 1, 0), [Acquired(0, 2, 1)]),
            ("acquire", ("m2", LOG, 1, 0), [Acquired(3, 3, 1)]),
            ("leave", ("m1",), True),
        ],
        0,
        {0: (A, 1), 1: (A, 1), 2: (A, 1), 3: (Q, 1)},
    ),
    (
        "a share session ending at the delivery-count limit: archived",
        [
            *THIRD_DELIVERY,
            ("leave", ("m1",), True),
        ],
        3,
        {},
    ),
    # Kafka 4.1's SharePartition.releaseAcquiredRecords (KAFKA-17541): what a leaving member
    # held was fetched, not handled, so its delivery count is given back.
    (
        "Kafka 4.1: a share session ending gives back the delivery count",
        [
            ("acquire", ("m1", LOG[:1], 1, 0), [Acquired(0, 2, 1)]),
            ("acquire", ("m2", LOG, 1, 0), [Acquired(3, 3, 1)]),
            ("leave_4_1", ("m1",), True),
        ],
        0,
        {0: (A, 0), 1: (A, 0), 2: (A, 0), 3: (Q, 1)},
    ),
    (
        "Kafka 4.1: a share session ending at the delivery-count limit: available again",
        [
            *THIRD_DELIVERY,
            ("leave_4_1", ("m1",), True),
            ("acquire", ("m2", LOG[:1], 3, 0), [Acquired(0, 2, 3)]),
        ],
        0,
        {0: (Q, 3), 1: (Q, 3), 2: (Q, 3)},
    ),
    (
        "a share session ending that holds nothing: nothing changes",
        [("acquire", ("m1", LOG[:1], 1, 0), [Acquired(0, 2, 1)]), ("leave", ("m2",), False)],
        0,
        {0: (Q, 1), 1: (Q, 1), 2: (Q, 1)},
    ),
]


@pytest.mark.parametrize(("steps", "start", "states"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_transitions(
    steps: list[tuple[str, tuple[Any, ...], Any]], start: int, states: dict[int, Any]
) -> None:
    partition = SharePartition(0)
    for action, args, expected in steps:
        if action == "acquire":
            member, spans, max_records, now = args
            answer: Any = partition.acquire(member, spans, max_records, LIMITS, now)
        elif action == "acquire_strict":
            member, spans, max_records, now = args
            answer = partition.acquire(member, spans, max_records, LIMITS, now, strict=True)
        elif action == "ack":
            member, batches, now = args
            answer = partition.acknowledge(member, batches, LIMITS, now)
        elif action == "expire":
            answer = partition.release_expired(LIMITS, args[0])
        elif action == "leave":
            answer = partition.release_member(args[0], LIMITS)
        else:
            answer = partition.release_member(args[0], LIMITS_4_1)
        assert answer == expected, (action, args)
    assert partition.start_offset == start
    assert _states(partition) == states


def test_in_flight_limit_stops_new_acquisition() -> None:
    limits = PartitionLimits(lock_duration_ms=1000, delivery_count_limit=3, max_record_locks=4)
    partition = SharePartition(0)
    assert partition.acquire("m", LOG, 1, limits, 0) == [Acquired(0, 2, 1)]
    assert partition.acquire("m", LOG, 9, limits, 0) == [Acquired(3, 3, 1)]
    assert partition.acquire("m", LOG, 9, limits, 0) == []  # 4 in flight
    partition.acknowledge("m", [(0, 1, [ACCEPT])], limits, 0)
    assert partition.acquire("m", LOG, 9, limits, 0) == [Acquired(4, 7, 1)]


def test_persisted_state_round_trips_with_acquired_as_available() -> None:
    partition = SharePartition(0)
    partition.acquire("m", LOG, 9, LIMITS, 0)
    partition.acknowledge("m", [(0, 0, [ACCEPT]), (2, 2, [ACCEPT]), (3, 3, [RELEASE])], LIMITS, 0)
    batches = partition.state_batches()
    assert batches == [
        StateBatch(1, 1, 0, 1),
        StateBatch(2, 2, 2, 1),
        StateBatch(3, 7, 0, 1),  # released and acquired alike: available, delivered once
    ]
    restored = SharePartition.restored(partition.start_offset, batches)
    assert (restored.start_offset, restored.next_offset) == (1, 8)
    assert restored.acquire("m2", [], 9, LIMITS, 0) == [Acquired(1, 1, 2), Acquired(3, 7, 2)]


def test_move_start_forgets_what_is_below() -> None:
    partition = SharePartition(0)
    partition.acquire("m", LOG, 1, LIMITS, 0)
    partition.move_start(2)
    assert (partition.start_offset, sorted(partition.records)) == (2, [2])
    partition.move_start(10)
    assert (partition.start_offset, partition.next_offset, partition.records) == (10, 10, {})
