"""Consumer-group scenarios: join/leave/crash, static members, cooperative-sticky, mixed clients.

Members are driver subprocesses (so one can be SIGKILLed). Convergence (every partition owned
exactly once by the live members) is asserted with a deadline; how long it took is a timing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from compat.drivers import DRIVERS, Driver, DriverFailed
from compat.groups import GroupMembers, assert_kept, shares
from compat.scenario import Context
from compat.schema import Assignor, Command

PARTITIONS = 6  # more partitions than members, so a survivor visibly gains some
SESSION_TIMEOUT_MS = 6000
CONVERGE_DEADLINE_S = 60.0
# After a static member's restart, the others must see no rebalance for at least as long
# as it would take one to reach them: the old session's expiry plus a heartbeat interval
# (3 s by default in every client) and a margin.
QUIET_WINDOW_S = SESSION_TIMEOUT_MS / 1000 + 3 + 2
# The mixed group: a Java, a librdkafka and a kafka-python member (range assignor).
MIXED_MEMBERS = ("java", "confluent-kafka", "kafka-python")


def member_template(context: Context, assignor: Assignor) -> Command:
    template = context.create_topic(context.name("topic"), PARTITIONS)
    return replace(
        template,
        group=context.name("group"),
        assignor=assignor,
        session_timeout_ms=SESSION_TIMEOUT_MS,
        timeout_s=CONVERGE_DEADLINE_S,
    )


def join_leave_crash(context: Context) -> None:
    """Three members join 1 s apart; one closes (LeaveGroup); one is SIGKILLed (session expiry)."""
    template = member_template(context, context.driver.default_assignor())
    context.observe("assignor", template.assignor)
    join_leave_crash_of(context, template)


def join_leave_crash_of(context: Context, template: Command, label: str = "") -> None:
    """The phases of `join_leave_crash` for a group of `template`; `label` prefixes what is reported."""
    with GroupMembers(context.driver, template) as members:
        first_subscribe = members.start_staggered(["a", "b", "c"])
        joined = members.wait_converged(CONVERGE_DEADLINE_S)
        context.timing(
            f"{label}3 joined: all partitions owned, from first subscribe s", joined.at - first_subscribe
        )
        context.observe(f"{label}shares after joins", shares(joined))
        generations = members.generations()
        context.observe(f"{label}generations after joins", generations)

        closed_at = time.time()
        members.close("a")
        after_close = members.wait_converged(CONVERGE_DEADLINE_S)
        context.timing(f"{label}1 left: survivors own all, from close s", after_close.at - closed_at)
        context.observe(f"{label}shares after leave", shares(after_close))

        killed_at = time.time()
        members.kill("b")
        after_kill = members.wait_converged(CONVERGE_DEADLINE_S)
        context.timing(f"{label}1 crashed: survivor owns all, from SIGKILL s", after_kill.at - killed_at)
        context.observe(f"{label}shares after crash", shares(after_kill))
        context.observe(f"{label}generations after crash", members.generations())
        assert_generations_rise(members.generations(), generations)


def assert_generations_rise(later: list[int | None], earlier: list[int | None]) -> None:
    known_later = [g for g in later if g is not None]
    known_earlier = [g for g in earlier if g is not None]
    if known_later and known_earlier:
        assert min(known_later) > max(known_earlier), f"generation did not advance: {earlier} -> {later}"


def static_restart(context: Context) -> None:
    """A static member (group.instance.id) is SIGKILLed and restarted: same partitions, no rebalance."""
    template = member_template(context, context.driver.default_assignor())
    instance = {"s": f"{template.group}-static-s"}
    with GroupMembers(context.driver, template) as members:
        members.start_staggered(["a", "b", "s"], static=instance)
        before = members.wait_converged(CONVERGE_DEADLINE_S)
        others = {name: members.members[name] for name in ("a", "b")}
        seen = {name: len(member.events("assignment")) for name, member in others.items()}
        generation_before = members.members["s"].last("assignment")
        assert generation_before is not None

        killed_at = time.time()
        members.kill("s")
        restarted = members.start("s", instance["s"])
        back = restarted.wait_for(lambda obs: obs.event == "assignment", timeout_s=CONVERGE_DEADLINE_S)
        context.timing("static member has its partitions back, from SIGKILL s", back.ts - killed_at)
        same = sorted(back["partitions"]) == sorted(before.owners["s"])
        context.observe("same partitions after restart", same)
        assert same, f"static member got {back.fields} back, had {before.owners['s']}\n{members.describe()}"
        if generation_before["generation"] is not None:
            context.observe("generation unchanged", back["generation"] == generation_before["generation"])
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
        context.observe("others rebalanced", False)
        assert members.convergence() is not None


def cooperative_sticky(context: Context) -> None:
    """Incremental rebalancing: as members join and one leaves, survivors never lose a partition."""
    template = member_template(context, "cooperative-sticky")
    with GroupMembers(context.driver, template) as members:
        first_subscribe = members.start_staggered(["a", "b", "c"])
        joined = members.wait_converged(CONVERGE_DEADLINE_S)
        context.timing("3 joined: all partitions owned, from first subscribe s", joined.at - first_subscribe)
        context.observe("shares after joins", shares(joined))
        # Every assignment a survivor reports from here on must keep what it owned: an eager
        # rebalance would first report the revocation of everything.
        seen = {name: len(members.members[name].events("assignment")) for name in ("b", "c")}
        closed_at = time.time()
        members.close("a")
        after_close = members.wait_converged(CONVERGE_DEADLINE_S)
        context.timing("1 left: survivors own all, from close s", after_close.at - closed_at)
        context.observe("shares after leave", shares(after_close))
        assert_kept(joined, after_close)
        for name in ("b", "c"):
            since = members.members[name].events("assignment")[seen[name] :]
            assert all(set(joined.owners[name]) <= set(obs["partitions"]) for obs in since), (
                f"{name} had partitions revoked during an incremental rebalance: {since}"
            )
        context.observe("survivors kept their partitions", True)


def mixed_members(driver: Driver) -> dict[str, str]:
    """The mixed group for this client: Java, librdkafka and kafka-python, with this client in it."""
    clients = {name: name for name in MIXED_MEMBERS}
    if driver.librdkafka:
        clients["confluent-kafka"] = driver.name  # kcat stands in as the librdkafka member
    elif driver.name not in clients:
        clients[driver.name] = driver.name
    return {f"m-{client}": client for client in clients.values()}


def mixed_group(context: Context) -> None:
    """Java, librdkafka and kafka-python members (plus this client) in one range group."""
    template = member_template(context, "range")
    roles = mixed_members(context.driver)
    drivers = {name: context.other_driver(client) for name, client in roles.items()}
    with GroupMembers(context.driver, template) as members:
        first_subscribe = members.start_staggered(list(roles), drivers=drivers)
        joined = members.wait_converged(CONVERGE_DEADLINE_S)
        context.timing(f"{len(roles)} joined: all owned, from first subscribe s", joined.at - first_subscribe)
        context.observe("members", sorted(roles.values()))
        context.observe("shares after joins", shares(joined))
        assert_range_shape(joined.owners)
        leaving = f"m-{context.client}"
        closed_at = time.time()
        members.close(leaving)
        after_close = members.wait_converged(CONVERGE_DEADLINE_S)
        context.timing(f"{context.client} left: others own all, from close s", after_close.at - closed_at)
        context.observe("shares after leave", shares(after_close))
        assert_range_shape(after_close.owners)


def assert_range_shape(owners: dict[str, list[int]]) -> None:
    """The range assignor gives each member one contiguous block, sizes differing by at most one."""
    sizes = [len(owned) for owned in owners.values()]
    assert max(sizes) - min(sizes) <= 1, f"unbalanced range assignment: {owners}"
    for name, owned in owners.items():
        assert sorted(owned) == list(range(min(owned), max(owned) + 1)), f"{name}: not a range: {owners}"


def needs_assignor(assignor: Assignor) -> Callable[[Driver], str | None]:
    def check(driver: Driver) -> str | None:
        return driver.assignor_missing(assignor)

    return check


def static_not_applicable(driver: Driver) -> str | None:
    return driver.no_static_members


def mixed_not_applicable(driver: Driver) -> str | None:
    return driver.assignor_missing("range")


assert set(MIXED_MEMBERS) <= set(DRIVERS)
