"""Transactions: a consume-transform-produce loop with this client's transactional producer."""

from __future__ import annotations

from dataclasses import replace

from compat.drivers import Driver
from compat.scenario import Context
from compat.scenarios_data import KEYS, group_offsets, last_event, messages_of, topic_with_messages
from compat.schema import FENCE_VALUES, Command, Isolation

INPUT_MESSAGES = 300


def transactions(context: Context) -> None:
    """Input of 3 partitions copied to an output topic in transactions that also commit the
    input offsets, one transaction in three aborted on purpose and retried: read_committed
    sees every input record exactly once, read_uncommitted also the aborted copies, and the
    group's committed offsets are the input's end offsets. Then zombie fencing: a second
    producer with the same transactional id fences the first, whose next send or commit fails."""
    base = topic_with_messages(context, INPUT_MESSAGES, KEYS)
    output = context.name("output")
    context.run(replace(base, op="create_topic", topic=output))
    transacted = last_event(
        context.run(
            replace(
                base,
                op="transact",
                output=output,
                transactional_id=context.name("txn"),
                count=INPUT_MESSAGES,
                timeout_s=120,
            )
        ),
        "transacted",
    )
    assert transacted is not None, "the transactional loop did not finish"
    assert transacted["committed"] == INPUT_MESSAGES, f"committed {transacted['committed']} records"
    aborted = transacted["aborted"]
    assert aborted > 0, "no transaction was aborted"

    committed_read = messages_of(
        context.run(
            replace(
                base,
                op="consume",
                topic=output,
                group=context.name("committed-reader"),
                isolation="read_committed",
                count=INPUT_MESSAGES,
            )
        )
    )
    values = sorted(int(m["value"]) for m in committed_read)
    context.observe("read_committed: every input record exactly once", values == list(range(INPUT_MESSAGES)))
    assert values == list(range(INPUT_MESSAGES)), f"read_committed saw {len(values)} records"

    everything = messages_of(
        context.run(
            replace(
                base,
                op="consume",
                topic=output,
                group=context.name("uncommitted-reader"),
                isolation="read_uncommitted",
                count=INPUT_MESSAGES + aborted,
            )
        )
    )
    context.observe("read_uncommitted: the aborted copies too", len(everything) == INPUT_MESSAGES + aborted)
    assert len(everything) == INPUT_MESSAGES + aborted, f"read_uncommitted saw {len(everything)}"

    offsets = group_offsets(context, base)
    context.observe("committed input offsets = input end offsets", offsets["committed"] == offsets["latest"])
    assert offsets.partition_map("committed") == offsets.partition_map("latest"), "the loop's offsets"
    zombie_fencing(context, base)


# How long a reader waits for a record that must never come.
ABSENCE_WAIT_S = 8


def zombie_fencing(context: Context, base: Command) -> None:
    output = context.name("fenced")
    fence = replace(base, topic=output, output=output, partitions=1, transactional_id=context.name("zombie"))
    context.run(replace(fence, op="create_topic"))
    fenced = last_event(context.run(replace(fence, op="fence")), "fenced")
    assert fenced is not None, "the fenced producer's send or commit did not fail"
    context.observe("fenced producer's error", fenced["error"])
    before, zombie, after, _late = FENCE_VALUES

    def values(isolation: Isolation, count: int, timeout_s: float) -> list[str]:
        read = replace(fence, op="consume", group=context.name(f"fence-{isolation}"), isolation=isolation)
        return [m["value"] for m in messages_of(context.run(replace(read, count=count, timeout_s=timeout_s)))]

    committed = values("read_committed", 2, fence.timeout_s)
    context.observe("read_committed after fencing", committed)
    assert committed == [before, after], f"read_committed saw {committed}"
    # One more than can be there: the fenced producer's late record must never reach the log.
    everything = values("read_uncommitted", 4, ABSENCE_WAIT_S)
    assert everything == [before, zombie, after], f"read_uncommitted saw {everything}"


def transactions_not_applicable(driver: Driver) -> str | None:
    return driver.no_transactions
