"""Log compaction cost on `__consumer_offsets`-shaped logs (in-process, no broker).

    python -m bench.compaction [--megabytes 50] [--rounds 3]

Two shapes, both through the same record formats the coordinator writes:
- a cleaner pass (storage.compaction: latest_offsets, last_records, compact)
  over a log of OffsetCommits of 10 partitions each, 1000 groups
  committing round-robin: MB/s;
- the in-memory offsets topic (OffsetsLog over MemoryLog): one-offset commits
  of one group, as bench.commits makes them; the append cost per commit
  including its share of compaction, and the longest single append (the stall
  a compaction pass puts on one request).

Times are CPU time (time.process_time): the machine is shared, and wall
clock would count other processes' turns.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from statistics import median

from kafka_shim.protocol.offsets_records import OffsetKey, OffsetsRecord, OffsetValue, encode_record
from kafka_shim.protocol.record_codec import Record, encode_batch
from kafka_shim.storage import compaction
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.offsets_log import OffsetsLog
from kafka_shim.storage.producer_state import LastRecord
from kafka_shim.storage.topics import TopicStore

GROUPS = 1000
PARTITIONS_PER_COMMIT = 10
NOW = 1_700_000_000_000
SEGMENT_BYTES = 4 * 1024 * 1024


def commit_batch(base_offset: int, commit: int) -> bytes:
    records = []
    for p in range(PARTITIONS_PER_COMMIT):
        record = OffsetsRecord(
            OffsetKey(f"group-{commit % GROUPS}", "t", p), OffsetValue(commit, -1, "", NOW + commit)
        )
        key, value = encode_record(record)
        records.append(Record(base_offset + p, NOW + commit, key, value))
    return encode_batch(records)


def offsets_segments(megabytes: float) -> list[bytes]:
    """Segments of SEGMENT_BYTES (the last one partial) holding `megabytes` of commits."""
    segments: list[bytes] = []
    current: list[bytes] = []
    size = offset = commit = 0
    while sum(map(len, segments)) + size < megabytes * 1e6:
        batch = commit_batch(offset, commit)
        current.append(batch)
        size += len(batch)
        offset += PARTITIONS_PER_COMMIT
        commit += 1
        if size >= SEGMENT_BYTES:
            segments.append(b"".join(current))
            current, size = [], 0
    segments.append(b"".join(current))
    return segments


def timed_s(action: Callable[[], object]) -> float:
    started = time.process_time()
    action()
    return time.process_time() - started


def cleaner_pass(segments: list[bytes]) -> dict[str, float]:
    """Seconds for each call of one pass: every segment but the last is cleaned."""
    latest: dict[bytes, int] = {}
    producers: dict[int, LastRecord] = {}
    times = {
        # Kafka's key map covers the segments cleaned, not the active one.
        "latest_offsets": timed_s(lambda: latest.update(compaction.latest_offsets(segments[:-1]))),
        "last_records": timed_s(lambda: producers.update(compaction.last_records(segments))),
        "compact": timed_s(
            lambda: compaction.compact(
                segments[:-1],
                latest,
                now_ms=NOW,
                delete_retention_ms=LogConfig().delete_retention_ms,
                active_producers=producers,
            )
        ),
    }
    times["pass"] = sum(times.values())
    return times


def memory_commits(commits: int) -> tuple[float, float]:
    """(mean µs per appended commit, longest append in ms) on the in-memory offsets topic."""
    log = OffsetsLog(TopicStore(lambda topic, partition: MemoryLog()), 1)
    longest = 0.0
    started = time.process_time()
    for i in range(commits):
        record = OffsetsRecord(OffsetKey("g", "t", 0), OffsetValue(i, -1, "", NOW + i))
        began = time.process_time()
        log.append([record], NOW + i)
        longest = max(longest, time.process_time() - began)
    return (time.process_time() - started) / commits * 1e6, longest * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=50.0)
    parser.add_argument("--commits", type=int, default=20_000, help="in-memory one-offset commits")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    segments = offsets_segments(args.megabytes)
    total = sum(map(len, segments)) / 1e6
    passes = [cleaner_pass(segments) for _ in range(args.rounds)]
    print(f"cleaner pass over {total:.1f} MB in {len(segments)} segments (median of {args.rounds}):")
    for name in passes[0]:
        seconds = median([p[name] for p in passes])
        print(f"  {name:<24}{seconds:8.2f} s  {total / seconds:8.1f} MB/s", flush=True)
    runs = [memory_commits(args.commits) for _ in range(args.rounds)]
    print(
        f"in-memory offsets topic, {args.commits:,} one-offset commits (median of {args.rounds}): "
        f"{median([r[0] for r in runs]):.1f} µs per append, longest append "
        f"{median([r[1] for r in runs]):.1f} ms",
        flush=True,
    )


if __name__ == "__main__":
    main()
