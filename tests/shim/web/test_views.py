"""The console's and /metrics' view of groups shows every type in one shape: here a share group,
whose members all hold its partitions and whose lag counts from the share partition's start
offset (what is acknowledged lies before it)."""

from __future__ import annotations

from kafka_shim.protocol.messages.share_fetch import ACCEPT
from kafka_shim.shim.groups.journal import GroupShape
from kafka_shim.shim.web import views
from tests.batches import batch
from tests.shim.handlers.test_share_groups import GROUP, fetch, harness, join


def test_a_share_group_shows_its_members_assignment_and_lag() -> None:
    h = harness()
    join(h, "m1")
    join(h, "m2")
    topic = h.broker.topics.get("t")
    assert topic is not None
    for value in (b"a", b"b", b"c"):
        topic.partitions[0].append(batch(value))
    fetch(h, "m1", 0, max_records=1)
    fetch(h, "m1", 1, acks=[(0, 0, [ACCEPT])])  # offset 0 acknowledged: the start moves to 1
    (group,) = [g for g in views.groups(h.broker) if g.group_id == GROUP]
    assert (group.group_type, group.state) == ("share", "Stable")
    assert sorted((m.member_id, m.assignment) for m in group.members) == [
        ("m1", (("t", 0),)),
        ("m2", (("t", 0),)),
    ]
    ((offset),) = group.offsets
    assert (offset.topic, offset.partition, offset.committed, offset.lag) == ("t", 0, 1, 2)
    assert views.group_shape(h.broker, GROUP) == GroupShape("share", "Stable", frozenset({"m1", "m2"}), 2)
