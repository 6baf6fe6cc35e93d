"""CPU per request of the server's generic request path, in process, without sockets.

The dispatch step (`Server.dispatch.handle_frame`, shim.net.dispatch) and the timer wake-up
each request is followed by, called on real request frames by a broker keeping its data on disk
(in a temporary directory, fsync on an interval, as `python -m kafka_shim` runs; `--memory` for
none): what a request costs
between the frame and its answer (header parsing, dispatch, codecs, handler, coordinator,
deadlines, the log append), for A/B comparisons of that path alone. Sockets, framing and
Trio's scheduling are what `bench.request_cpu` adds; the kinds are its kinds and a JoinGroup. Run it from
two checkouts to compare them.

    python -m bench.handle_frame [--requests 20000] [--rounds 5] [--memory]
"""

from __future__ import annotations

import argparse
import struct
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

import trio

from bench.request_cpu import (
    FETCH,
    HEARTBEAT,
    JOIN_GROUP,
    KINDS,
    OFFSET_COMMIT,
    PRODUCE,
    SYNC_GROUP,
    VERSIONS,
    assignment,
    commit_body,
    fetch_body,
    join_request,
    produce_body,
    subscription,
)
from kafka_shim.protocol.messages import APIS
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.net.context import TrioRequestContext
from kafka_shim.shim.net.listening import BoundListener
from kafka_shim.shim.net.server import Server
from tests.wire import encode_request

_LENGTH = struct.Struct(">i")
TOPIC, FETCHED_TOPIC, GROUP = "bench-frames", "bench-frames-fetched", "g-bench-frames"
REJOIN_GROUP = f"{GROUP}-rejoins"
# request_cpu's kinds, and a JoinGroup (the group service's deferred-answer path).
FRAME_KINDS = (*KINDS, "JoinGroup")


async def call(
    server: Server, ctx: TrioRequestContext, api_key: int, body: dict[str, Any], version: int | None = None
) -> Any:
    """The parsed answer to one request, through the server's request path (at the version
    librdkafka sends, unless told)."""
    version = VERSIONS[api_key] if version is None else version
    answer = await server.dispatch.handle_frame(ctx, encode_request(api_key, version, 0, body, "bench"))
    assert isinstance(answer, bytes)  # the bench's context never asks for records left in files
    api = APIS[api_key]
    return api.response.parse(answer[4 + (5 if api.response_header_flexible(version) else 4) :], version)


async def join_alone(
    server: Server, ctx: TrioRequestContext, group: str, metadata: bytes, assigned: bytes
) -> dict[str, Any]:
    """Join `group` as its only member (MEMBER_ID_REQUIRED, then with the id) and sync:
    the member's identity as Heartbeat names it."""
    body = join_request(group, metadata)
    body["member_id"] = (await call(server, ctx, JOIN_GROUP, body)).member_id
    joined = await call(server, ctx, JOIN_GROUP, body)
    assert joined.error_code == 0, joined
    member = {
        "group_id": group,
        "generation_id": joined.generation_id,
        "member_id": joined.member_id,
        "group_instance_id": None,
    }
    sync = {
        **member,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "assignments": [{"member_id": joined.member_id, "assignment": assigned}],
    }
    synced = await call(server, ctx, SYNC_GROUP, sync)
    assert synced.error_code == 0, synced
    return member


async def heartbeat_frame(server: Server, ctx: TrioRequestContext) -> bytes:
    """A Heartbeat of the only member of a stable group."""
    member = await join_alone(server, ctx, GROUP, subscription(TOPIC), assignment(TOPIC))
    return encode_request(HEARTBEAT, VERSIONS[HEARTBEAT], 0, member, "bench")


async def rejoin_frame(server: Server, ctx: TrioRequestContext) -> bytes:
    """A JoinGroup of the only member of a stable group, with the metadata it joined with: the
    classic coordinator answers it at once (a leader's rejoin is a rebalance that completes
    with it), through the deferred-answer path every JoinGroup takes."""
    member = await join_alone(server, ctx, REJOIN_GROUP, subscription(TOPIC), assignment(TOPIC))
    body = join_request(REJOIN_GROUP, subscription(TOPIC))
    body["member_id"] = member["member_id"]
    assert (await call(server, ctx, JOIN_GROUP, body)).error_code == 0
    return frame(JOIN_GROUP, body)


async def cpu_per_request(server: Server, ctx: TrioRequestContext, frames: list[bytes]) -> float:
    """CPU µs per request over `frames`, each answered as the connection task does."""
    started = time.process_time()
    for frame in frames:
        await server.dispatch.handle_frame(ctx, frame)
        server.wake_timers_if_sooner()
    return (time.process_time() - started) / len(frames) * 1e6


def frame(api_key: int, body: dict[str, Any]) -> bytes:
    return encode_request(api_key, VERSIONS[api_key], 0, body, "bench")


async def measure(requests: int, rounds: int, data_dir: Path | None) -> dict[str, list[float]]:
    broker = Broker(
        BrokerConfig(
            initial_rebalance_delay_ms=0, num_partitions=1, auto_create_topics=True, data_dir=data_dir
        )
    )
    broker.topics.create(TOPIC, 1)
    broker.topics.create(FETCHED_TOPIC, 1)
    server = Server(broker)
    listener = BoundListener("PLAINTEXT", [], ("127.0.0.1", 0), ("127.0.0.1", 0))
    ctx = TrioRequestContext(server, "127.0.0.1", "127.0.0.1:1", listener)
    samples: dict[str, list[float]] = {kind: [] for kind in FRAME_KINDS}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server._run_timers)
        what_fetch_reads = frame(PRODUCE, produce_body(FETCHED_TOPIC))
        await server.dispatch.handle_frame(ctx, what_fetch_reads)
        frames = {
            "OffsetCommit": [
                frame(OFFSET_COMMIT, commit_body(f"{GROUP}-commits", TOPIC, i)) for i in range(requests)
            ],
            "Heartbeat": [await heartbeat_frame(server, ctx)] * requests,
            "Produce": [frame(PRODUCE, produce_body(TOPIC))] * requests,
            "Fetch": [frame(FETCH, fetch_body(FETCHED_TOPIC, 0))] * requests,  # its one record
            "JoinGroup": [await rejoin_frame(server, ctx)] * requests,
        }
        for _ in range(rounds):
            for kind in FRAME_KINDS:
                samples[kind].append(await cpu_per_request(server, ctx, frames[kind]))
        nursery.cancel_scope.cancel()
    broker.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000, help="requests per kind and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--memory", action="store_true", help="an in-memory broker")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-handle-frame-") as data_dir:
        samples = trio.run(measure, args.requests, args.rounds, None if args.memory else Path(data_dir))
    for kind, values in samples.items():
        rounds = ", ".join(f"{v:.1f}" for v in values)
        print(f"{kind:>14}: median {median(values):6.1f} µs CPU/request (rounds: {rounds})")


if __name__ == "__main__":
    main()
