"""Parse/build cost of the hot APIs' messages: kafka-shim's construct structs
(the schema of record), the codec protocol.codegen derives from them (what
Message.parse/build run), and kafka-python's own codec, on the same bytes in
one run.

    python -m bench.codec [--seconds 0.3] [--repeat 5]

kafka-python (3.x) decodes with a generated, schema-driven codec of its own;
it is the nearest Python peer doing the same work on the same bytes.
"""

from __future__ import annotations

import argparse
import importlib
import timeit
import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

from kafka_shim.protocol import types as t
from kafka_shim.protocol.messages import APIS

RECORDS = bytes(16 * 1024)  # opaque to both codecs: only its length matters

CASES: list[tuple[int, str, int, dict[str, Any]]] = [
    (12, "request", 4, {"group_id": "group-1", "generation_id": 3, "member_id": "member-" + "x" * 36}),
    (
        8,
        "request",
        8,
        {
            "group_id": "group-1",
            "generation_id_or_member_epoch": 3,
            "member_id": "member-1",
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {"partition_index": p, "committed_offset": 1000 + p, "committed_metadata": ""}
                        for p in range(3)
                    ],
                }
            ],
        },
    ),
    (
        0,
        "request",
        9,
        {
            "acks": -1,
            "timeout_ms": 30000,
            "topic_data": [{"name": "orders", "partition_data": [{"index": 0, "records": RECORDS}]}],
        },
    ),
    (
        1,
        "response",
        12,
        {
            "responses": [
                {
                    "topic": "orders",
                    "partitions": [
                        {"partition_index": p, "high_watermark": 5000, "records": RECORDS} for p in range(3)
                    ],
                }
            ]
        },
    ),
    (
        3,
        "response",
        12,
        {
            "brokers": [{"node_id": 0, "host": "127.0.0.1", "port": 9092}],
            "cluster_id": "c",
            "topics": [
                {
                    "name": f"topic-{t}",
                    "topic_id": uuid.uuid4(),
                    "partitions": [
                        {"partition_index": p, "leader_id": 0, "replica_nodes": [0], "isr_nodes": [0]}
                        for p in range(3)
                    ],
                }
                for t in range(3)
            ],
        },
    ),
]

PEER_MODULES = (
    "kafka.protocol.consumer.group",
    "kafka.protocol.consumer.fetch",
    "kafka.protocol.producer",
    "kafka.protocol.metadata",
)


def kafka_python_class(name: str) -> Any:
    for module in PEER_MODULES:
        cls = getattr(importlib.import_module(module), name, None)
        if cls is not None:
            return cls
    return None


def per_op_us(func: Callable[[], object], seconds: float, repeat: int) -> float:
    """Best of `repeat` timings: the least disturbed by whatever else the machine runs."""
    number = 1
    while timeit.timeit(func, number=number) < seconds:
        number *= 2
    return min(timeit.repeat(func, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.3, help="minimum time per measurement")
    parser.add_argument("--repeat", type=int, default=5, help="measurements per figure (best is kept)")
    args = parser.parse_args()

    def measure(func: Callable[[], object]) -> float:
        return per_op_us(func, args.seconds, args.repeat)

    print(f"{'':<28}{'construct':>20}{'derived':>20}{'kafka-python':>20}")
    print(f"{'message (µs/op)':<28}" + f"{'parse':>10}{'build':>10}" * 3)
    for key, side, version, sample in CASES:
        api = APIS[key]
        message = api.request if side == "request" else api.response
        struct_ = message.struct(version)
        data = message.build(sample, version)
        figures = [
            measure(partial(t.parse_exact, struct_, data, "bench")),
            measure(partial(t.build_bytes, struct_, sample, "bench")),
            measure(partial(message.parse, data, version)),
            measure(partial(message.build, sample, version)),
        ]
        columns = "".join(f"{figure:>10.1f}" for figure in figures)
        peer = kafka_python_class(message.name)
        if peer is not None:
            decoded = peer.decode(data, version=version)
            decode = measure(partial(peer.decode, data, version=version))
            encode = measure(decoded.encode)
            columns += f"{decode:>10.1f}{encode:>10.1f}"
        else:
            columns += f"{'n/a':>10}{'n/a':>10}"
        print(f"{f'{message.name} v{version}':<28}{columns}")


if __name__ == "__main__":
    main()
