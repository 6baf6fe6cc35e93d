"""Groups of real consumers: convergence after joins, a clean leave, a crash; static members.

Members are driver subprocesses (so one can be SIGKILLed) against a broker subprocess.
Timings are printed (see the terminal summary), never asserted; convergence is asserted
with a generous deadline.
"""

from __future__ import annotations

import time

import pytest

from compat.drivers import Driver, DriverFailed, DriverProcess
from compat.groups import Convergence, GroupMembers
from compat.schema import Assignor, Command, Observation
from compat.targets import RunningBroker
from tests.compat.conftest import RecordTiming, require

PARTITIONS = 6  # more partitions than members, so a survivor visibly gains some
SESSION_TIMEOUT_MS = 6000
SUBSCRIBE_INTERVAL_S = 1.0
CONVERGE_DEADLINE_S = 60.0
# After a static member's restart, the others must see no rebalance for at least as long
# as it would take one to reach them: the old session's expiry plus a heartbeat interval
# (3 s by default in every client) and a margin.
QUIET_WINDOW_S = SESSION_TIMEOUT_MS / 1000 + 3 + 2

pytestmark = [pytest.mark.clients, pytest.mark.slow, pytest.mark.timeout(300)]

GROUP_CASES = [
    pytest.param("kafka-python", "range", id="kafka-python-range"),
    pytest.param("confluent-kafka", "range", id="confluent-kafka-range"),
    pytest.param("confluent-kafka", "cooperative-sticky", id="confluent-kafka-cooperative-sticky"),
    # kafkajs ships only a round-robin assigner.
    pytest.param("kafkajs", "roundrobin", id="kafkajs-roundrobin"),
    pytest.param("java", "cooperative-sticky", id="java-cooperative-sticky"),
]


def member_template(broker: RunningBroker, names: tuple[str, str], assignor: Assignor) -> Command:
    topic, group = names
    return Command(
        op="member",
        bootstrap=broker.bootstrap,
        topic=topic,
        partitions=PARTITIONS,
        group=group,
        assignor=assignor,
        session_timeout_ms=SESSION_TIMEOUT_MS,
        timeout_s=CONVERGE_DEADLINE_S,
    )


def create_topic(driver: Driver, template: Command) -> None:
    driver.run(
        Command(
            op="create_topic",
            bootstrap=template.bootstrap,
            topic=template.topic,
            partitions=PARTITIONS,
            timeout_s=30,
        )
    )


def subscribed(member: DriverProcess) -> Observation:
    return member.wait_for(lambda obs: obs.event == "subscribing", timeout_s=CONVERGE_DEADLINE_S)


def start_staggered(members: GroupMembers, names: list[str], static: dict[str, str] | None = None) -> float:
    """Start members SUBSCRIBE_INTERVAL_S apart (the scenario's schedule); returns the first subscribe."""
    first: float | None = None
    previous: float | None = None
    for name in names:
        if previous is not None:
            time.sleep(max(0.0, previous + SUBSCRIBE_INTERVAL_S - time.time()))
        previous = subscribed(members.start(name, (static or {}).get(name))).ts
        first = first if first is not None else previous
    assert first is not None
    return first


def assert_kept(before: Convergence, after: Convergence) -> None:
    """Cooperative rebalancing: survivors keep what they owned and only gain."""
    for name, partitions in after.owners.items():
        assert set(before.owners[name]) <= set(partitions), (
            f"{name} lost partitions: {before.owners} -> {after.owners}"
        )


@pytest.mark.parametrize(("client", "assignor"), GROUP_CASES)
def test_group_of_three_joins_leaves_and_crashes(
    client: str,
    assignor: Assignor,
    broker_process: RunningBroker,
    names: tuple[str, str],
    record_timing: RecordTiming,
) -> None:
    driver = require(client)
    template = member_template(broker_process, names, assignor)
    create_topic(driver, template)
    label = f"{client}/{assignor}"
    with GroupMembers(driver, template) as members:
        first_subscribe = start_staggered(members, ["a", "b", "c"])
        joined = members.wait_converged(CONVERGE_DEADLINE_S)
        record_timing(
            f"{label}: 3 members own all partitions, from first subscribe", joined.at - first_subscribe
        )

        closed_at = time.time()
        members.close("a")
        after_close = members.wait_converged(CONVERGE_DEADLINE_S)
        record_timing(f"{label}: survivors own all partitions, from close", after_close.at - closed_at)

        killed_at = time.time()
        members.kill("b")
        after_kill = members.wait_converged(CONVERGE_DEADLINE_S)
        record_timing(f"{label}: survivor owns all partitions, from SIGKILL", after_kill.at - killed_at)

        if assignor == "cooperative-sticky":
            assert_kept(joined, after_close)
            assert_kept(after_close, after_kill)


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka"])
def test_static_member_restart_keeps_partitions_without_rebalance(
    client: str, broker_process: RunningBroker, names: tuple[str, str], record_timing: RecordTiming
) -> None:
    driver = require(client)
    template = member_template(broker_process, names, "range")
    create_topic(driver, template)
    instance = {"s": f"{names[1]}-static-s"}
    with GroupMembers(driver, template) as members:
        start_staggered(members, ["a", "b", "s"], static=instance)
        before = members.wait_converged(CONVERGE_DEADLINE_S)
        others = {name: members.members[name] for name in ("a", "b")}
        seen = {name: len(member.events("assignment")) for name, member in others.items()}
        generation_before = members.members["s"].last("assignment")
        assert generation_before is not None

        killed_at = time.time()
        members.kill("s")
        restarted = members.start("s", instance["s"])
        back = restarted.wait_for(lambda obs: obs.event == "assignment", timeout_s=CONVERGE_DEADLINE_S)
        record_timing(f"{client}: static member has its partitions back, from SIGKILL", back.ts - killed_at)
        assert sorted(back["partitions"]) == sorted(before.owners["s"]), (
            f"static member got {back.fields} back, had {before.owners['s']}\n{members.describe()}"
        )
        if generation_before["generation"] is not None:
            assert back["generation"] == generation_before["generation"], "no new generation"

        # No rebalance reaches the others (each would report an assignment): watched until a
        # rebalance caused by the restart or by the old session's expiry would have arrived.
        quiet_until = time.monotonic() + max(0.0, killed_at + QUIET_WINDOW_S - time.time())
        while time.monotonic() < quiet_until:
            for name, member in others.items():
                new = member.events("assignment")[seen[name] :]
                if new:
                    raise DriverFailed(
                        f"{name} was rebalanced by the static restart: {new}\n{members.describe()}"
                    )
                assert member.running, member.diagnosis()
            time.sleep(0.1)
        assert members.convergence() is not None
