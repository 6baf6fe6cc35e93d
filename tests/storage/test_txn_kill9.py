"""kill -9 of a process writing transactions into a disk log (tests/storage/txn_writer.py),
at random moments, 12 times on the same log: after each crash the recovered log holds
every acknowledged write, and its transaction state (open transactions, the last stable
offset, the aborted ranges and the `.txnindex` files) equals what a full replay of its
batches derives, so no aborted or unfinished record is ever offered to read_committed.
The writer reopens the log after each crash and aborts what the killed run left open."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_shim.protocol.control_records import read_marker
from kafka_shim.protocol.records import iter_headers
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.log import AbortedTransaction
from kafka_shim.storage.producer_state import ProducerStates
from kafka_shim.storage.txn_index import TXN_INDEX_SUFFIX, AbortedTxn, TxnIndex
from tests.storage.logs import abandon
from tests.storage.txn_writer import CONFIG, OPTIONS

pytestmark = pytest.mark.slow

ROUNDS = 12
ROOT = Path(__file__).resolve().parents[2]


def crash_writer(directory: Path, seed: int, acks: int) -> int:
    """Run the writer until it acknowledged `acks` writes, kill -9 it; the last log end it acknowledged."""
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.txn_writer", str(directory), str(seed)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    acknowledged = -1
    try:
        for _ in range(acks):
            line = writer.stdout.readline()
            assert line.startswith("ack "), f"writer stopped: {line!r}"
            acknowledged = int(line.split()[1])
    finally:
        writer.kill()  # SIGKILL
        writer.wait(timeout=10)
        writer.stdout.close()
    return acknowledged


def replayed(log: DiskLog) -> tuple[ProducerStates, list[AbortedTxn]]:
    """The transaction state derived from every batch, read back through `read`."""
    data = log.read(log.log_start_offset, 1 << 30)
    batches = [(h, read_marker(data, h) if h.is_control else None) for h in iter_headers(data)]
    states = ProducerStates()
    return states, states.replay(batches)


def indexed(log: DiskLog) -> list[AbortedTxn]:
    entries: list[AbortedTxn] = []
    for path in sorted(log.directory.glob("*" + TXN_INDEX_SUFFIX)):
        index = TxnIndex(path)
        assert index.load(), path
        entries.extend(index.entries)
    return entries


def test_transaction_state_survives_kill_9(tmp_path: Path) -> None:
    rng = random.Random(20261123)
    directory = tmp_path / "t-0"
    for round_number in range(ROUNDS):
        acknowledged = crash_writer(directory, round_number + 1, rng.randint(5, 400))
        log = DiskLog.open(directory, CONFIG, OPTIONS, clean=False)
        assert log.log_end_offset >= acknowledged
        states, aborted = replayed(log)
        assert log.producers.ongoing_transactions() == states.ongoing_transactions()
        unstable = states.first_unstable_offset
        assert log.last_stable_offset == (log.log_end_offset if unstable is None else unstable)
        assert log.aborted_transactions(0, log.log_end_offset) == [
            AbortedTransaction(e.producer_id, e.first_offset) for e in aborted
        ]
        assert indexed(log) == aborted
        if round_number % 2:
            log.close()  # a clean stop between crashes: the next open trusts the snapshot
        else:
            abandon(log)
    assert len(log.segment_bases()) > 10
