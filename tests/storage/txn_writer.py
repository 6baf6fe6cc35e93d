"""A process that writes transactions into one disk log until it is killed (by
test_txn_kill9.py, with kill -9): transactional batches of a few producers, COMMIT
and ABORT markers, segment rolls. It prints `ack <log end offset>` after each write
has returned. On start it reopens the log as after a crash and aborts the
transactions a killed run left open, as the coordinator does when they time out.

    python -m tests.storage.txn_writer DIRECTORY SEED
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy
from kafka_shim.storage.log_config import LogConfig
from tests.batches import make_batch

# Small segments: a run rolls many times, so crashes land around rolls too.
CONFIG = LogConfig(segment_bytes=1500)
OPTIONS = DiskOptions(fsync=FsyncPolicy.NEVER)  # kill -9 keeps what reached the OS
PRODUCERS = 4
NOW = 1_700_000_000_000


def open_log(directory: Path) -> DiskLog:
    if directory.exists():
        return DiskLog.open(directory, CONFIG, OPTIONS, clean=False)
    return DiskLog.create(directory, CONFIG, OPTIONS)


def main(directory: Path, seed: int) -> None:
    rng = random.Random(seed)
    log = open_log(directory)
    epochs = {producer_id: entry.epoch for producer_id, entry in log.producers}
    for producer_id in log.producers.ongoing_transactions():
        log.write_txn_marker(producer_id, epochs[producer_id], False, 0, NOW)
        print(f"ack {log.log_end_offset}", flush=True)
    # Fresh producer ids per run: sequences start at 0.
    sequences = {seed * 100 + n: 0 for n in range(PRODUCERS)}
    open_transactions: set[int] = set()
    while True:
        producer_id = rng.choice(list(sequences))
        if producer_id in open_transactions and rng.random() < 0.4:
            log.write_txn_marker(producer_id, 0, rng.random() < 0.6, 0, NOW)
            open_transactions.discard(producer_id)
        else:
            count = rng.randint(1, 3)
            values = [b"%d-%d" % (producer_id, sequences[producer_id] + i) for i in range(count)]
            batch = make_batch(
                values,
                producer_id=producer_id,
                producer_epoch=0,
                base_sequence=sequences[producer_id],
                transactional=True,
            )
            log.append(RecordBatches.parse(batch))
            sequences[producer_id] += count
            open_transactions.add(producer_id)
        print(f"ack {log.log_end_offset}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
