"""Removing the directories of deleted partitions, on a thread of its own.

A DeleteTopics is answered once the topic catalog no longer holds the topic (as Kafka's
controller answers once its metadata record is committed); the directories go afterwards,
as Kafka's log manager deletes a deleted log's files later (its `-delete` directories).
Removing 30,000 directories takes a minute of a journalled disk's time (2 ms each): on the
event loop it would stall every client. Until a name's directories are gone the name stays
taken (`removing`), so a new topic of that name cannot have its directories pulled away.

A broker stopped before the removal ended leaves directories the catalog no longer names:
`orphan_partitions` finds them at the next start, and they are removed the same way.
"""

from __future__ import annotations

import logging
import re
import shutil
import threading
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable
from functools import partial
from pathlib import Path

from kafka_shim.storage import faults
from kafka_shim.storage.log import PartitionLog

log = logging.getLogger("kafka_shim.storage")

_PARTITION_DIRECTORY = re.compile(r"(.+)-(\d+)")


def orphan_partitions(data_dir: Path, counts: dict[str, int]) -> dict[str, list[Path]]:
    """The partition directories of `data_dir` that no topic of the catalog (`counts`: each
    topic's partition count) holds, by topic name."""
    orphans: dict[str, list[Path]] = {}
    for entry in data_dir.iterdir():
        match = _PARTITION_DIRECTORY.fullmatch(entry.name)
        if match is None or not entry.is_dir():
            continue
        name, index = match.group(1), int(match.group(2))
        if index >= counts.get(name, 0):
            orphans.setdefault(name, []).append(entry)
    return orphans


class LogRemover:
    """The one thread that closes deleted logs and removes their directories, oldest
    deletion first. `remove` and `removing` are called from any thread."""

    def __init__(self) -> None:
        self._queue: deque[tuple[str, list[PartitionLog], list[Path]]] = deque()
        self._pending: Counter[str] = Counter()  # jobs queued or running, by topic name
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="kafka-shim-removal", daemon=True)
        self._thread.start()

    def remove(self, name: str, logs: Collection[PartitionLog], directories: Iterable[Path] = ()) -> None:
        """Close `logs` and remove their directories (and `directories`), in the background."""
        with self._lock:
            self._queue.append((name, list(logs), list(directories)))
            self._pending[name] += 1
            self._wake.notify()

    def removing(self, name: str) -> bool:
        """Whether directories of topic `name` are still being removed."""
        with self._lock:
            return self._pending[name] > 0

    def idle(self) -> bool:
        with self._lock:
            return not self._pending

    def stop(self) -> None:
        """Stop after the log being removed; what is left is found again at the next start."""
        with self._lock:
            self._stopping = True
            self._wake.notify()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._stopping:
                    self._wake.wait()
                if self._stopping:
                    return
                name, logs, directories = self._queue[0]
            for partition_log in logs:
                if self._stopping:
                    return
                self._each(partition_log.delete, name)
            for directory in directories:
                if self._stopping:
                    return
                self._each(partial(_remove_directory, directory), name)
            with self._lock:
                self._queue.popleft()
                self._pending[name] -= 1
                if not self._pending[name]:
                    del self._pending[name]

    @staticmethod
    def _each(work: Callable[[], object], name: str) -> None:
        try:
            work()
        except Exception as exc:  # a directory that cannot go stays: logged, the rest goes on
            log.error("cannot remove a partition directory of deleted topic %s: %r", name, exc)


def _remove_directory(directory: Path) -> None:
    faults.check("remove")
    shutil.rmtree(directory, ignore_errors=True)
