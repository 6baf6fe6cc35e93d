"""The broker's state, shared by all handlers: config, topics, groups, clock."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from shim.config import BrokerConfig


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class Broker:
    def __init__(self, config: BrokerConfig, clock: Callable[[], int] = wall_clock_ms) -> None:
        self.config = config
        self.clock = clock
        self.node_id = config.node_id
        self.cluster_id = uuid.uuid4().hex[:22]
        # The port clients should use; the server sets it once it is bound
        # (port 0 in the config means "any free port").
        self.advertised_port = config.port
        # The server replaces this with a wake-up for Fetch long polls.
        self.on_append: Callable[[], None] = lambda: None
        # Filled in by the storage and coordinator layers:
        # self.topics = ...   (storage: topic-partition logs)
        # self.groups = ...   (shim.coordinator: the group coordinator)

    @property
    def advertised_host(self) -> str:
        return self.config.advertised
