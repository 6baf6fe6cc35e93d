"""The ``admin`` op for the Python drivers: one step sequence, each client's admin API behind it.

Each client supplies an `AdminApi` (sync or async methods); `run_admin` runs the steps of
`compat.schema.ADMIN_STEPS` in order and reports each as an ``admin_step`` observation, with
broker errors normalized to Kafka's error names so the harness compares clients and brokers.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from compat.schema import ADMIN_STEPS, Command, admin_offsets, emit, extra_topic


class Unsupported(Exception):
    """The client's admin API has no call for this step (reported, never faked)."""


class AdminApi(Protocol):
    def create_topics(self, names: list[str], partitions: int) -> Any: ...
    def delete_topics(self, names: list[str]) -> Any: ...
    def list_topics(self) -> Any: ...  # -> list[str]
    def alter_offsets(self, group: str, topic: str, offsets: dict[int, int]) -> Any: ...
    def list_offsets(self, group: str, topic: str) -> Any: ...  # -> {partition: offset}
    def list_groups(self) -> Any: ...  # -> list[str]
    def describe_groups(self, groups: list[str]) -> Any: ...  # -> {name: (state, member count)}
    def delete_groups(self, groups: list[str]) -> Any: ...  # raises on a group's error
    def error_name(self, exc: BaseException) -> str | None: ...  # Kafka's name, None if not a broker error
    def close(self) -> Any: ...


async def resolved(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def run_admin(api: AdminApi, command: Command) -> None:
    topic, extra = command.topic, extra_topic(command.topic)
    groups = [command.group, command.other_group]

    async def listed_topics() -> list[str]:
        return sorted(set(await resolved(api.list_topics())) & {topic, extra})

    async def listed_groups() -> list[str]:
        return sorted(set(await resolved(api.list_groups())) & set(groups))

    async def described() -> dict[str, dict[str, Any]]:
        found = await resolved(api.describe_groups(groups))
        return {name: {"state": state, "members": count} for name, (state, count) in found.items()}

    steps: dict[str, Callable[[], Awaitable[Any]]] = {
        "create_topics": lambda: resolved(api.create_topics([topic, extra], command.partitions)),
        "delete_topics": lambda: resolved(api.delete_topics([extra])),
        "list_topics": listed_topics,
        "alter_offsets": lambda: resolved(
            api.alter_offsets(command.group, topic, admin_offsets(command.partitions))
        ),
        "list_offsets": lambda: resolved(api.list_offsets(command.group, topic)),
        "list_groups": listed_groups,
        "describe_groups": described,
        "delete_live_group": lambda: resolved(api.delete_groups([command.other_group])),
        "delete_group": lambda: resolved(api.delete_groups([command.group])),
        "list_groups_after": listed_groups,
    }
    assert tuple(steps) == ADMIN_STEPS
    try:
        for step, action in steps.items():
            try:
                result = await action()
            except Unsupported as exc:
                emit("admin_step", step=step, error=None, result=None, unsupported=str(exc))
                continue
            except Exception as exc:
                name = api.error_name(exc)
                if name is None:
                    raise
                emit("admin_step", step=step, error=name, result=None, unsupported=None)
                continue
            emit("admin_step", step=step, error=None, result=result, unsupported=None)
    finally:
        await resolved(api.close())
