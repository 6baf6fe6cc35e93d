"""kcat driver: `python -m compat.clients.kcat '<command json>'` translates commands into kcat runs.

kcat (Debian's, linking librdkafka 2.0.2) does the producing, the group consuming and the
ListOffsets query. It cannot create topics or read a group's committed offsets, so those two
steps go through confluent-kafka; the observations say which tool answered (`via`).
Committing is librdkafka's own: kcat's balanced consumer auto-commits and commits the final
positions when it closes, so there is no explicit commit to report.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading

from compat.clients.confluent import ConfluentOps
from compat.clients.runner import run
from compat.schema import Command, emit, message_key, message_value

# Unit separator: never inside our keys or values, so one split suffices.
FIELD_SEPARATOR = "\x1f"
QUERY_LINE = re.compile(r"\[(\d+)\]\s+offset\s+(-?\d+)")


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
                "-b",
                command.bootstrap,
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
                "-b",
                command.bootstrap,
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
        output = run_kcat(["-Q", "-b", command.bootstrap, *topics], command.timeout_s)
        latest = {int(p): int(offset) for p, offset in QUERY_LINE.findall(output)}
        committed = committed_offsets_via_confluent(command)
        emit(
            "offsets",
            committed=committed,
            latest=latest,
            via={"committed": "confluent-kafka", "latest": "kcat"},
        )

    def member(self, command: Command, stop: threading.Event) -> None:
        raise NotImplementedError("the kcat driver has no long-lived group member")


def committed_offsets_via_confluent(command: Command) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": command.bootstrap, "group.id": command.group})
    try:
        partitions = [TopicPartition(command.topic, p) for p in range(command.partitions)]
        committed = consumer.committed(partitions, timeout=command.timeout_s)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in committed if tp.offset >= 0}


if __name__ == "__main__":
    run(KcatOps())
