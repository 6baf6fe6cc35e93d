"""Under every coordinator test: each write to a classic member's fields, past its
construction, is kept for the undo first (`Group.changing`, read by `SavedGroup`). A path that
forgot it fails here, where a failed write would otherwise leave that member changed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafka_shim.shim.coordinator.group import Group, SavedGroup
from kafka_shim.shim.coordinator.member import Member


@pytest.fixture(autouse=True)
def member_writes_are_kept_for_undo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    kept: set[int] = set()  # the members passed to `changing` since the step began
    changing, saved = Group.changing, SavedGroup.__init__

    def keep(group: Group, member: Member) -> Member:
        kept.add(id(member))
        return changing(group, member)

    def begin(self: SavedGroup, group: Group, with_offsets: bool) -> None:
        kept.clear()
        saved(self, group, with_offsets)

    def write(member: Member, name: str, value: Any) -> None:
        if name in member.__dict__ and id(member) not in kept:
            raise AssertionError(f"{name} of member {member.member_id} written without Group.changing")
        object.__setattr__(member, name, value)

    monkeypatch.setattr(Group, "changing", keep)
    monkeypatch.setattr(SavedGroup, "__init__", begin)
    monkeypatch.setattr(Member, "__setattr__", write)
    yield
