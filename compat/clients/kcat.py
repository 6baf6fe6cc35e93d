"""kcat driver: `python -m compat.clients.kcat '<command json>'` translates commands into kcat runs.

kcat (Debian's, linking librdkafka 2.0.2; or any librdkafka put first on LD_LIBRARY_PATH)
does the producing, the group consuming, group membership and the ListOffsets query. It
cannot create topics or read a group's committed offsets, so those two steps go through
confluent-kafka; the observations say which tool answered (`via`). Committing is
librdkafka's own: kcat's balanced consumer auto-commits and commits the final positions
when it closes, so there is no explicit commit to report.

A ``member`` is a `kcat -G` balanced consumer whose rebalance lines on stderr become
``assignment`` observations; ``close`` is SIGTERM (kcat then closes the consumer and leaves
the group), and kcat dies with this translator (PR_SET_PDEATHSIG) so a SIGKILLed member
really vanishes.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import signal
import subprocess
import threading

from compat.clients.confluent import ConfluentOps, connection, security
from compat.clients.runner import AssignmentTracker, run
from compat.schema import Command, emit, message_key, message_value

# Unit separator: never inside our keys or values, so one split suffices.
FIELD_SEPARATOR = "\x1f"
QUERY_LINE = re.compile(r"\[(\d+)\]\s+offset\s+(-?\d+)")
# "% Group g rebalanced (memberid m): assigned: t [0], t [1]" (eager) or
# "% Group g rebalanced: incremental revoke of 2 partition(s) (memberid m, ...): t [0], t [1]"
# The partition list follows the last colon (topic names cannot contain one).
REBALANCE_LINE = re.compile(r"^% Group .* rebalanced\b.*?\b(assign|revoke)\w*.*:([^:]*)$")
PARTITION_IN_LIST = re.compile(r"\[(\d+)\]")
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Runs in the kcat child before exec: SIGKILL it when this translator dies."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def kcat_binary() -> str:
    path = shutil.which("kcat")
    if path is None:
        raise RuntimeError("kcat is not on PATH (Debian package: kcat)")
    return path


def run_kcat(args: list[str], timeout_s: float, stdin: str | None = None) -> str:
    result = subprocess.run(
        [kcat_binary(), *args], input=stdin, capture_output=True, text=True, timeout=timeout_s + 5
    )
    # kcat reports delivery and consumer errors on stderr, not always with a failing exit code.
    errors = [line for line in result.stderr.splitlines() if "ERROR" in line]
    if result.returncode != 0 or errors:
        raise RuntimeError(
            f"kcat {' '.join(args)} exited {result.returncode}: {result.stderr.strip()[-2000:]}"
        )
    return result.stdout


def broker_args(command: Command) -> list[str]:
    """-b and the security settings (librdkafka's names, as `command.security` has them)."""
    settings = security(command)
    return ["-b", command.bootstrap, *(arg for item in settings.items() for arg in ("-X", "=".join(item)))]


def group_options(command: Command) -> list[str]:
    return [
        "-X",
        f"session.timeout.ms={command.session_timeout_ms}",
        "-X",
        f"partition.assignment.strategy={command.assignor}",
        "-X",
        "auto.offset.reset=earliest",
    ]


class KcatOps:
    def create_topic(self, command: Command) -> None:
        ConfluentOps().create_topic(command)

    def produce(self, command: Command) -> None:
        lines = "".join(
            f"{message_key(i, command.key_count)}{FIELD_SEPARATOR}{message_value(i)}\n"
            for i in range(command.count)
        )
        run_kcat(
            [
                "-P",
                *broker_args(command),
                "-t",
                command.topic,
                "-K",
                r"\x1f",
                "-X",
                f"client.id={command.client_id}",
            ],
            command.timeout_s,
            stdin=lines,
        )
        emit("produced", count=command.count)

    def consume(self, command: Command) -> None:
        emit("subscribing", group=command.group)
        output = run_kcat(
            [
                *broker_args(command),
                "-G",
                command.group,
                *group_options(command),
                "-c",
                str(command.count),
                "-f",
                f"%p{FIELD_SEPARATOR}%o{FIELD_SEPARATOR}%k{FIELD_SEPARATOR}%s\\n",
                command.topic,
            ],
            command.timeout_s,
        )
        for line in output.splitlines():
            partition, offset, key, value = line.split(FIELD_SEPARATOR)
            emit("message", partition=int(partition), offset=int(offset), key=key, value=value)

    def offsets(self, command: Command) -> None:
        topics = [arg for p in range(command.partitions) for arg in ("-t", f"{command.topic}:{p}:-1")]
        output = run_kcat(["-Q", *broker_args(command), *topics], command.timeout_s)
        latest = {int(p): int(offset) for p, offset in QUERY_LINE.findall(output)}
        committed = committed_offsets_via_confluent(command)
        emit(
            "offsets",
            committed=committed,
            latest=latest,
            via={"committed": "confluent-kafka", "latest": "kcat"},
        )

    def member(self, command: Command, stop: threading.Event) -> None:
        instance = (
            ["-X", f"group.instance.id={command.group_instance_id}"] if command.group_instance_id else []
        )
        argv = [
            kcat_binary(),
            *broker_args(command),
            *("-G", command.group, "-X", f"client.id={command.client_id}"),
            *group_options(command),
            *instance,
            command.topic,
        ]
        emit("subscribing", group=command.group)
        kcat = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=die_with_parent,
        )
        watcher = threading.Thread(target=report_rebalances, args=(kcat, AssignmentTracker()), daemon=True)
        watcher.start()
        while not stop.wait(0.2):
            if kcat.poll() is not None:
                watcher.join(timeout=5)
                raise RuntimeError(f"kcat member exited {kcat.returncode}")
        kcat.send_signal(signal.SIGTERM)  # kcat closes its consumer: LeaveGroup
        kcat.wait(timeout=30)
        watcher.join(timeout=5)
        emit("closed")

    def admin(self, command: Command) -> None:
        raise NotImplementedError("kcat has no admin operations")


def report_rebalances(kcat: subprocess.Popen[str], tracker: AssignmentTracker) -> None:
    assert kcat.stderr is not None
    for line in kcat.stderr:
        match = REBALANCE_LINE.match(line)
        if match is None:
            if "ERROR" in line:
                emit("error", message=line.strip())
            continue
        partitions = (int(p) for p in PARTITION_IN_LIST.findall(match.group(2)))
        # Eager rebalances revoke all then assign all; cooperative ones carry increments.
        if match.group(1) == "assign":
            tracker.add(partitions)
        else:
            tracker.remove(partitions)


def committed_offsets_via_confluent(command: Command) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(connection(command) | {"group.id": command.group})
    try:
        partitions = [TopicPartition(command.topic, p) for p in range(command.partitions)]
        committed = consumer.committed(partitions, timeout=command.timeout_s)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in committed if tp.offset >= 0}


if __name__ == "__main__":
    run(KcatOps())
