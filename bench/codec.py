"""Parse/build cost of the hot APIs' messages: kafka-shim's construct schemas
side by side with kafka-python's own codec for the same bytes, in one run.

    python -m bench.codec [--seconds 0.3]

kafka-python (3.x) decodes with a generated, schema-driven codec of its own;
it is the nearest Python peer doing the same work on the same bytes.
"""

from __future__ import annotations

import argparse
import importlib
import timeit
import uuid
from collections.abc import Callable
from typing import Any

from protocol.messages import APIS

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


def per_op_us(func: Callable[[], object], seconds: float) -> float:
    number = 1
    while True:
        elapsed = timeit.timeit(func, number=number)
        if elapsed >= seconds:
            return elapsed / number * 1e6
        number *= 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.3, help="minimum time per measurement")
    args = parser.parse_args()
    print(
        f"{'message':<28}{'shim parse':>12}{'shim build':>12}{'k-py decode':>13}{'k-py encode':>13}  (µs/op)"
    )
    for key, side, version, sample in CASES:
        api = APIS[key]
        message = api.request if side == "request" else api.response
        data = message.build(sample, version)
        parse = per_op_us(lambda m=message, d=data, v=version: m.parse(d, v), args.seconds)
        build = per_op_us(lambda m=message, s=sample, v=version: m.build(s, v), args.seconds)
        peer = kafka_python_class(message.name)
        if peer is not None:
            decoded = peer.decode(data, version=version)
            decode = per_op_us(lambda p=peer, d=data, v=version: p.decode(d, version=v), args.seconds)
            encode = per_op_us(lambda o=decoded: o.encode(), args.seconds)
            peer_cols = f"{decode:>13.1f}{encode:>13.1f}"
        else:
            peer_cols = f"{'n/a':>13}{'n/a':>13}"
        label = f"{message.name} v{version}"
        print(f"{label:<28}{parse:>12.1f}{build:>12.1f}{peer_cols}")


if __name__ == "__main__":
    main()
