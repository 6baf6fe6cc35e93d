"""Scenarios about data and offsets: round trip, commit and resume, the admin API."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

from compat.drivers import Driver
from compat.groups import GroupMembers
from compat.scenario import Context
from compat.schema import ADMIN_STEPS, Command, Observation, admin_offsets

PARTITIONS = 3
MESSAGES = 1000
KEYS = 50
RESUME_MESSAGES = 300
RESUME_FIRST_READ = 120


def messages_of(observations: list[Observation]) -> list[Observation]:
    return [obs for obs in observations if obs.event == "message"]


def last_event(observations: list[Observation], event: str) -> Observation | None:
    found = [obs for obs in observations if obs.event == event]
    return found[-1] if found else None


def check_partitions(messages: list[Observation]) -> dict[int, int]:
    """Per partition: offsets contiguous, producer order kept, each key in one partition.

    Returns the message count per partition.
    """
    by_partition: dict[int, list[Observation]] = defaultdict(list)
    for message in messages:
        by_partition[message["partition"]].append(message)
    partition_of_key: dict[str, set[int]] = defaultdict(set)
    for partition, records in by_partition.items():
        offsets = [m["offset"] for m in records]
        assert offsets == list(range(offsets[0], offsets[0] + len(offsets))), (
            f"partition {partition}: offsets not contiguous: {offsets[:10]}..."
        )
        sequence = [int(m["value"]) for m in records]
        assert sequence == sorted(sequence), f"partition {partition}: producer order lost"
        for m in records:
            partition_of_key[m["key"]].add(partition)
    split_keys = {key: parts for key, parts in partition_of_key.items() if len(parts) != 1}
    assert not split_keys, f"keys spread over several partitions: {split_keys}"
    return {p: len(by_partition.get(p, [])) for p in range(PARTITIONS)}


def group_offsets(context: Context, base: Command) -> Observation:
    (offsets,) = [obs for obs in context.run(replace(base, op="offsets")) if obs.event == "offsets"]
    return offsets


def topic_with_messages(context: Context, count: int, key_count: int) -> Command:
    """Creates a topic and produces `count` keyed messages with this client; returns the base command."""
    base = context.command(
        op="create_topic",
        topic=context.name("topic"),
        partitions=PARTITIONS,
        group=context.name("group"),
        timeout_s=60,
    )
    context.run(base)
    context.run(replace(base, op="produce", count=count, key_count=key_count))
    return base


def roundtrip(context: Context) -> None:
    """Create a topic, produce keyed messages, consume them in a group, commit, read offsets back."""
    base = topic_with_messages(context, MESSAGES, KEYS)
    consumed = context.run(replace(base, op="consume", count=MESSAGES))
    messages = messages_of(consumed)
    assert sorted(int(m["value"]) for m in messages) == list(range(MESSAGES)), "each message exactly once"
    counts = check_partitions(messages)
    assert len({m["key"] for m in messages}) == KEYS
    expected = {p: n for p, n in counts.items() if n}
    committed = last_event(consumed, "committed")
    if committed is not None:  # kcat commits inside librdkafka on close and reports nothing
        assert committed.partition_map("offsets") == expected, "the consumer's commit"
    offsets = group_offsets(context, base)
    context.observe("messages per partition", counts)
    context.observe("committed (OffsetFetch)", offsets.partition_map("committed"))
    context.observe("latest (ListOffsets)", offsets.partition_map("latest"))
    assert offsets.partition_map("committed") == expected, "OffsetFetch returns the commit"
    assert offsets.partition_map("latest") == counts, "ListOffsets(latest) is the next offset"


def commit_and_resume(context: Context) -> None:
    """A consumer reads part of a topic and commits; the next one in the group resumes there."""
    base = topic_with_messages(context, RESUME_MESSAGES, 30)
    first = messages_of(context.run(replace(base, op="consume", count=RESUME_FIRST_READ)))
    assert len(first) >= RESUME_FIRST_READ, f"first consumer read {len(first)} of {RESUME_FIRST_READ}"
    read_first = check_partitions(first)
    committed = group_offsets(context, base).partition_map("committed")
    context.observe("committed after first read", committed)
    assert committed == {p: n for p, n in read_first.items() if n}, "commit covers what was read"

    second = messages_of(context.run(replace(base, op="consume", count=RESUME_MESSAGES - len(first))))
    check_partitions(second)
    for partition in {m["partition"] for m in second}:
        start = min(m["offset"] for m in second if m["partition"] == partition)
        assert start == committed.get(partition, 0), (
            f"partition {partition}: resumed at {start}, committed {committed.get(partition, 0)}"
        )
    values = sorted(int(m["value"]) for m in first + second)
    assert values == list(range(RESUME_MESSAGES)), "the two consumers read everything exactly once"
    final = group_offsets(context, base)
    context.observe("committed at end", final.partition_map("committed"))
    assert final.partition_map("committed") == final.partition_map("latest"), "all committed at the end"


def admin_expectations(unsupported: set[str], partitions: int) -> dict[str, Any]:
    """What each admin step should answer, given the steps this client cannot do."""
    offsets_exist = "alter_offsets" not in unsupported
    listed = ["group", "other_group"] if offsets_exist else ["other_group"]
    described: dict[str, Any] = {"other_group": {"state": "STABLE", "members": 1}}
    # A group that never existed is described as Dead (DescribeGroups before v6).
    described["group"] = {"state": "EMPTY" if offsets_exist else "DEAD", "members": 0}
    after = [name for name in listed if name != "group" or "delete_group" in unsupported]
    return {
        "create_topics": None,
        "delete_topics": None,
        "list_topics": ["topic"],
        "alter_offsets": None,
        "list_offsets": {str(p): o for p, o in admin_offsets(partitions).items()} if offsets_exist else {},
        "list_groups": listed,
        "describe_groups": described,
        "delete_live_group": "error NON_EMPTY_GROUP",
        "delete_group": None,
        "list_groups_after": after,
    }


def normalized_step(step: Observation, names: dict[str, str]) -> Any:
    """A step's answer with this run's names replaced by their roles (diffable across runs)."""
    if step["error"] is not None:
        return f"error {step['error']}"

    def rename(value: Any) -> Any:
        if isinstance(value, str):
            return names.get(value, value)
        if isinstance(value, list):
            return [rename(item) for item in value]
        if isinstance(value, dict):
            return {rename(str(key)): rename(item) for key, item in value.items()}
        return value

    return rename(step["result"])


def admin(context: Context) -> None:
    """Topics and groups through the client's admin API, with one live group beside an idle one."""
    topic, group, other_group = context.name("topic"), context.name("group"), context.name("live")
    live_topic = context.name("live-topic")
    template = replace(context.create_topic(live_topic, PARTITIONS), group=other_group)
    with GroupMembers(context.driver, replace(template, assignor=context.driver.default_assignor())) as live:
        live.start("live-member").wait_for(lambda obs: obs.event == "assignment", timeout_s=60)
        observations = context.run(
            context.command(
                op="admin",
                topic=topic,
                partitions=PARTITIONS,
                group=group,
                other_group=other_group,
                timeout_s=60,
            )
        )
    steps = {obs["step"]: obs for obs in observations if obs.event == "admin_step"}
    assert tuple(steps) == ADMIN_STEPS, f"admin steps reported: {list(steps)}"
    unsupported = {name for name, step in steps.items() if step["unsupported"]}
    context.notes.extend(f"{name} n/a: {steps[name]['unsupported']}" for name in sorted(unsupported))
    names = {topic: "topic", f"{topic}-extra": "extra_topic", group: "group", other_group: "other_group"}
    answers = {name: normalized_step(step, names) for name, step in steps.items() if name not in unsupported}
    context.observations.update(answers)
    expected = admin_expectations(unsupported, PARTITIONS)
    wrong = {
        name: f"got {answer!r}, expected {expected[name]!r}"
        for name, answer in answers.items()
        if answer != expected[name]
    }
    assert not wrong, f"admin steps answered wrongly: {wrong}"


def admin_not_applicable(driver: Driver) -> str | None:
    return driver.no_admin
