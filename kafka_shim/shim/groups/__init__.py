"""The group service: one object that routes a group request to the coordinator of the
group's type and carries out what the coordinator answers (records, memory, timers, replies).

Shaped after Kafka's group-coordinator module: `GroupService` plays GroupCoordinatorService
(handlers call it and never pick a coordinator), the coordinators play CoordinatorShards
answering pure results, and `GroupEffects` plays the runtime that writes a result's records
before its changes are kept and its answer goes out."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafka_shim.shim.groups.effects import (
        COORDINATOR_RETRY_BACKOFF_MS,
        GroupEffects,
        coordinator_error,
        refusal,
    )
    from kafka_shim.shim.groups.service import (
        GroupService,
    )
    from kafka_shim.shim.groups.topics import (
        StoreTopics,
    )

# Each name is imported from its module on first use, not with the package: importing one
# module of the package (say groups.journal) then costs that module only, and the Kafka listener
# answers before the coordinators load (shim.coordinator_loading).
_HOMES = {
    "COORDINATOR_RETRY_BACKOFF_MS": "kafka_shim.shim.groups.effects",
    "GroupEffects": "kafka_shim.shim.groups.effects",
    "coordinator_error": "kafka_shim.shim.groups.effects",
    "refusal": "kafka_shim.shim.groups.effects",
    "GroupService": "kafka_shim.shim.groups.service",
    "StoreTopics": "kafka_shim.shim.groups.topics",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "COORDINATOR_RETRY_BACKOFF_MS",
    "GroupEffects",
    "GroupService",
    "StoreTopics",
    "coordinator_error",
    "refusal",
]
