from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.log import AppendHook, PartitionLog
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.memory import MemoryLog
from tests.storage.logs import NewLog, abandon, options


@pytest.fixture(params=["memory", "disk"])
def new_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[NewLog]:
    made: list[DiskLog] = []

    def make(on_append: AppendHook = lambda log: None) -> PartitionLog:
        if request.param == "memory":
            return MemoryLog(on_append)
        # A tiny segment size: every contract test also crosses segment rolls.
        directory = tmp_path / f"log-{len(made) + 1}"
        log = DiskLog.create(directory, LogConfig(segment_bytes=150), options(), on_append)
        made.append(log)
        return log

    yield make
    for log in made:
        abandon(log)
