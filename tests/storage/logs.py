"""Making logs for storage tests: disk options with real files
and real fsync, and the factory type the contract tests are parametrized by."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.log_config import LogConfig
from tests.helpers import FakeClock

NewLog = Callable[..., PartitionLog]
"""new_log(on_append=...) -> an empty log."""


def options(clock: FakeClock | None = None, **changes: object) -> DiskOptions:
    base = DiskOptions(fsync=FsyncPolicy.ALWAYS, clock=clock or FakeClock())
    return replace(base, **changes)  # type: ignore[arg-type]


def disk_log(directory: Path, opts: DiskOptions | None = None, **config: object) -> DiskLog:
    return DiskLog.create(directory, LogConfig(**config), opts or options())  # type: ignore[arg-type]


def abandon(log: DiskLog) -> None:
    """Let go of the log's descriptors as a crash would: no seal, no producer snapshot. A test
    that leaves a log open to act out a crash would otherwise hold its files until the pytest
    process ends, and a long run reaches descriptors past 1024, which `select()` refuses."""
    for segment in log._segments:
        segment.close()


def reopen(log: DiskLog, *, clean: bool) -> DiskLog:
    """The same directory opened again, as after a clean stop or a crash."""
    if clean:
        log.close()
    return DiskLog.open(log.directory, log.config, log.options, clean=clean)
