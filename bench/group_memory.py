"""Per-group state after groups are gone: Python memory while groups are created and deleted.

Through the server's request path in process (an in-memory broker, no sockets, as
`bench.handle_frame`), each cycle makes a new group as the soak's churn does: JoinGroup twice
(MEMBER_ID_REQUIRED, then with the id), SyncGroup, three OffsetCommits and Heartbeats,
LeaveGroup, DeleteGroups. After every `--per-phase` cycles it collects garbage and prints the
memory tracemalloc traces and the live object count: with every group deleted (and its
tombstones compacted away at once: log.cleaner.delete.retention.ms=0) they must stay flat.
The largest differences between the last two phases are printed, so a growth names its line.

    python -m bench.group_memory [--phases 3] [--per-phase 8000]
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

import trio

from bench.handle_frame import TOPIC, call, join_alone
from bench.request_cpu import HEARTBEAT, OFFSET_COMMIT
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.net.context import TrioRequestContext
from kafka_shim.shim.net.listening import BoundListener
from kafka_shim.shim.net.server import Server

LEAVE_GROUP, DELETE_GROUPS = 13, 42


async def group_cycle(server: Server, ctx: TrioRequestContext, group: str) -> None:
    member = await join_alone(server, ctx, group, b"", b"")
    for offset in range(3):
        partition = {"partition_index": 0, "committed_offset": offset, "committed_metadata": ""}
        commit = {
            "group_id": group,
            "generation_id_or_member_epoch": member["generation_id"],
            "member_id": member["member_id"],
            "group_instance_id": None,
            "topics": [{"name": TOPIC, "partitions": [partition]}],
        }
        await call(server, ctx, OFFSET_COMMIT, commit)
        await call(server, ctx, HEARTBEAT, member)
    leave = {"group_id": group, "members": [{"member_id": member["member_id"], "group_instance_id": None}]}
    assert (await call(server, ctx, LEAVE_GROUP, leave, version=4)).error_code == 0
    deleted = await call(server, ctx, DELETE_GROUPS, {"groups_names": [group]}, version=1)
    assert deleted.results[0].error_code == 0, deleted


async def measure(phases: int, per_phase: int) -> None:
    broker = Broker(
        BrokerConfig(initial_rebalance_delay_ms=0, auto_create_topics=True, log_cleaner_delete_retention_ms=0)
    )
    broker.topics.create(TOPIC, 1)
    server = Server(broker)
    listener = BoundListener("PLAINTEXT", [], ("127.0.0.1", 0), ("127.0.0.1", 0))
    ctx = TrioRequestContext(server, "127.0.0.1", "127.0.0.1:1", listener)
    snapshots = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server._run_timers)
        for phase in range(phases):
            for i in range(per_phase):
                await group_cycle(server, ctx, f"churn-{phase}-{i}")
            gc.collect()
            snapshots.append(tracemalloc.take_snapshot())
            traced = tracemalloc.get_traced_memory()[0] / 2**20
            made, objects = (phase + 1) * per_phase, len(gc.get_objects())
            print(f"  {made:>7,} groups made and deleted: traced {traced:6.2f} MiB, objects {objects:,}")
        nursery.cancel_scope.cancel()
    if len(snapshots) >= 2:
        print("largest differences between the last two phases:")
        for stat in snapshots[-1].compare_to(snapshots[-2], "lineno")[:8]:
            print(f"  {stat}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=int, default=3)
    parser.add_argument("--per-phase", type=int, default=8_000, help="groups made and deleted per phase")
    args = parser.parse_args()
    tracemalloc.start(1)
    trio.run(measure, args.phases, args.per_phase)


if __name__ == "__main__":
    main()
