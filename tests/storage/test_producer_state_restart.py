"""Idempotent producer state across restarts of a disk log: a snapshot at a clean close,
the log's own batches after a crash. Batches from kafka-python 3.0.12's builder."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log_recovery import PRODUCER_SNAPSHOT_FILE
from tests.storage.logs import disk_log, reopen
from tests.storage.test_producer_state import produced

CLEAN_OR_CRASH = pytest.mark.parametrize("clean", [True, False], ids=["clean", "crash"])


def assert_duplicate_of(log: DiskLog, retry: RecordBatches, base_offset: int) -> None:
    end = log.log_end_offset
    result = log.append(retry)
    assert (result.base_offset, result.duplicate) == (base_offset, True)
    assert log.log_end_offset == end  # not written twice


def refusal(log: DiskLog, batch: RecordBatches) -> ErrorCode:
    with pytest.raises(StorageError) as info:
        log.append(batch)
    return info.value.code


@CLEAN_OR_CRASH
def test_a_retry_after_a_restart_gets_its_first_offsets(tmp_path: Path, clean: bool) -> None:
    log = disk_log(tmp_path / "t-0")
    log.append(produced(0))
    log.append(produced(2))
    log = reopen(log, clean=clean)
    assert_duplicate_of(log, produced(2), 2)
    assert_duplicate_of(log, produced(0), 0)


@CLEAN_OR_CRASH
def test_sequences_and_epochs_are_still_checked_after_a_restart(tmp_path: Path, clean: bool) -> None:
    log = disk_log(tmp_path / "t-0")
    log.append(produced(0, epoch=1))
    log = reopen(log, clean=clean)
    assert refusal(log, produced(5, epoch=1)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert refusal(log, produced(2, epoch=0)) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert log.append(produced(2, epoch=1)).base_offset == 2


def test_batches_written_after_the_last_clean_close_are_replayed_after_a_crash(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0")
    log.append(produced(0))
    log = reopen(log, clean=True)  # the snapshot holds sequence 0-1
    log.append(produced(2))
    log = reopen(log, clean=False)  # sequence 2-3 only in the log
    assert_duplicate_of(log, produced(0), 0)
    assert_duplicate_of(log, produced(2), 2)
    assert log.append(produced(4)).base_offset == 4


def test_a_snapshot_claiming_more_than_the_log_holds_is_not_trusted(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0")
    log.append(produced(0))
    log.close()
    # As if the tail it describes had been cut by recovery: producer 9 never made it.
    phantom = {"end": 50, "producers": {"9": {"epoch": 0, "batches": [[0, 9, 40, 49]]}}}
    (log.directory / PRODUCER_SNAPSHOT_FILE).write_text(json.dumps(phantom))
    log = DiskLog.open(log.directory, log.config, log.options, clean=False)
    assert_duplicate_of(log, produced(0), 0)
    assert log.append(produced(7, pid=9)).base_offset == 2  # unknown again: any sequence


def test_an_unreadable_snapshot_is_ignored_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = disk_log(tmp_path / "t-0")
    log.append(produced(0))
    log.close()
    (log.directory / PRODUCER_SNAPSHOT_FILE).write_text('{"end": 2, "producers": {"x": ')
    with caplog.at_level(logging.WARNING, logger="kafka_shim.storage"):
        log = DiskLog.open(log.directory, log.config, log.options, clean=True)
    (warning,) = [r.getMessage() for r in caplog.records]
    assert PRODUCER_SNAPSHOT_FILE in warning and "rebuilt from the log" in warning
    assert_duplicate_of(log, produced(0), 0)
