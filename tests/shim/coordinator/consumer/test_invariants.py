"""Random joins, heartbeats, leaves and session expiries: no partition is ever held by two
members (the harness checks after every call), and once everyone heartbeats the group
settles with every partition held exactly once."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.shim.coordinator.consumer.harness import TOPIC, Driver

NAMES = ["a", "b", "c", "d"]
ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["join", "beat", "ack", "leave", "wait"]), st.sampled_from(NAMES), st.booleans()
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(actions=ACTIONS, assignor=st.sampled_from(["uniform", "range"]))
def test_never_held_twice_and_settles(actions: list[tuple[str, str, bool]], assignor: str) -> None:
    driver = Driver(session_timeout_ms=10_000)
    for action, name, flag in actions:
        group = driver.coordinator.group("g")
        member = None if group is None else group.members.get(name)
        if action == "join":
            driver.join(name, server_assignor=assignor)
        elif member is None:
            continue
        elif action == "beat":  # says nothing of what it owns
            driver.beat(name, member.member_epoch)
        elif action == "ack":  # reports exactly its assignment (or, flag, nothing at all)
            driver.beat(name, member.member_epoch, owned={} if flag else dict(member.assigned))
        elif action == "leave":
            driver.beat(name, -1)
        else:
            driver.advance(6_000)
    group = driver.coordinator.group("g")
    if group is None or not group.members:
        return
    live = list(group.members)
    driver.settle(live, rounds=len(live) + 4)
    held = sorted(p for m in group.members.values() for p in m.assigned.get(TOPIC.topic_id, ()))
    assert held == list(range(TOPIC.partitions))
    assert group.state.value == "Stable"
