from __future__ import annotations

from pathlib import Path

import pytest

from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.log import AppendHook, PartitionLog
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.memory import MemoryLog
from tests.storage.logs import NewLog, options


@pytest.fixture(params=["memory", "disk"])
def new_log(request: pytest.FixtureRequest, tmp_path: Path) -> NewLog:
    made = 0

    def make(on_append: AppendHook = lambda log: None) -> PartitionLog:
        nonlocal made
        if request.param == "memory":
            return MemoryLog(on_append)
        made += 1
        # A tiny segment size: every contract test also crosses segment rolls.
        return DiskLog.create(tmp_path / f"log-{made}", LogConfig(segment_bytes=150), options(), on_append)

    return make
