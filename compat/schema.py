"""The one command/observation schema every client driver speaks.

A driver is a program (Python module, node script, Java class, or kcat behind a
translator) that receives one JSON `Command` as its only argument and prints one JSON
`Observation` per line on stdout. The node and Java drivers implement the same schema;
this module is its definition, keep them in step with it.

Commands (field `op`):
- ``create_topic``: create `topic` with `partitions` partitions (an existing topic is fine).
- ``produce``: send `count` messages; message i has key ``key-{i % key_count}`` and value
  ``str(i)``, sent in order of i, then flush. Emits ``produced`` once all are acknowledged.
- ``consume``: join `group`, subscribe to `topic` from the earliest offset, read until `count`
  messages or `timeout_s`, commit the positions synchronously, close. Emits ``message`` for
  each record, then ``committed``. `isolation` is the consumer's isolation level
  (``read_uncommitted`` or ``read_committed``).
- ``transact``: a transactional consume-transform-produce loop. A read_committed consumer in
  `group` reads `topic` from the earliest offset; the records of each poll (at most
  `TRANSACTION_RECORDS`) make one transaction of a producer with `transactional_id`: each
  record is produced to `output` with its key and value, the consumer's positions are sent
  to the transaction (send_offsets_to_transaction), and it commits. Every third
  transaction is first run and aborted on purpose (its records sent before the abort, so they
  are in the log), then run again with the same records.
  Until `count` records are committed, or `timeout_s`. Emits ``transaction`` per transaction
  ended, then ``transacted``.
- ``fence``: zombie fencing with two producers of one `transactional_id`, writing to `output`
  (values of `FENCE_VALUES`). The first commits ``before``, then begins a transaction and
  sends ``zombie`` (acknowledged, so it is in the log). The second initializes with the same
  id, which fences the first and aborts its open transaction, and commits ``after``. The
  first then sends ``late`` and commits. Emits ``fenced`` {error} with the client's error
  (exception type and message) when the first's send or commit fails, as it must; a first
  producer that commits anyway is reported as ``error``.
- ``offsets``: emit one ``offsets`` observation: the group's committed offsets and the
  latest offsets (ListOffsets, timestamp -1) of every partition of `topic`.
- ``member``: join `group` and stay in it, emitting ``assignment`` after every change of the
  owned partitions, until stdin yields the line ``close`` (or EOF): then close cleanly
  (LeaveGroup where the client sends one) and emit ``closed``.
  With `group_protocol` "consumer" the member uses KIP-848 (``group.protocol=consumer``,
  `assignor` as ``group.remote.assignor``: "uniform" or "range"); with `topic_pattern` it
  subscribes to that regular expression (resolved by the broker) instead of `topic`.
- ``swarm``: many ``member``s in this one process (threads or tasks, so hundreds fit on a
  small machine): `groups` groups named ``{group}-{i}`` of `members` members each, all
  subscribed to `topic`. Every ``assignment`` and ``closed`` carries ``member``
  (``"{i}/{j}"``) and ``group``; one ``close`` line closes them all.
- ``create_user``: with the client's admin API, create SCRAM credentials `mechanism` for
  `user` with `password` (AlterUserScramCredentials, 4096 iterations); emits ``user_created``.
- ``admin``: with the client's admin API, run the steps of `ADMIN_STEPS` in order on
  `topic`, `group` (a group that exists only through offsets the step ``alter_offsets``
  commits) and `other_group` (a group the harness keeps one live member in), emitting one
  ``admin_step`` per step. A step the admin API lacks is reported with ``unsupported``.
- ``acls`` (Java driver; the broker runs an authorizer with allow.everyone.if.no.acl.found):
  create topics `topic` and ``{topic}-denied``, create ACLs letting User:ANONYMOUS write
  and read `topic` and read `group`, and User:bob (not this client) write the denied topic,
  read `other_group` and describe topics prefixed ``{topic}-``; then list them, produce and
  consume where allowed and where not, delete User:bob's and list again, emitting one
  ``acl_step`` per step.
- ``cluster_admin`` (Java driver): with the admin API, create `topic` (`partitions`), describe
  it two partitions a response, describe broker 0's log dirs, elect partition 0's preferred
  leader, reassign it to broker 0 and then to broker 1, list reassignments, move it to the
  first log dir and then to ``/no/such/dir``; then produce ``v0``..``v2`` to partition 0,
  commit offset 1 with leader epoch 0 for `group` and read from there with a consumer
  assigned the partition: one ``admin_step`` per step (``describe_topics``: partition ->
  leader; ``describe_log_dirs``: the paths; ``elect_leaders``: partition -> error name;
  ``list_reassignments``: how many; ``consume_committed``: the first value read).

- ``share_member`` (clients with a KIP-932 share consumer): join share group `group` on `topic`
  (explicit acknowledgement), acknowledge each record as `share_acknowledgement` says, commit
  after each poll, until stdin yields ``close``: then close (what is pending is committed by the
  close) and emit ``closed``. Emits ``share_delivery`` {value, count, ack} per record.

Every op connects as `security` says (empty: PLAINTEXT), in librdkafka's config names, which
each driver translates to its client's: ``security.protocol``, ``sasl.mechanism``,
``sasl.username``, ``sasl.password``, ``ssl.ca.location`` (the CA's PEM file),
``ssl.certificate.location`` / ``ssl.key.location`` (the client's certificate and key, PEM),
``ssl.keystore.location`` (both in one PEM file, for the Java client).

Observations (field `event`, plus `ts`, seconds since the epoch as a float, from the
driver's clock — tests on one machine compare them with `time.time()`):
- ``ready`` {} - the client is constructed and about to talk to the broker.
- ``created`` {topic}
- ``produced`` {count}
- ``subscribing`` {group}
- ``assignment`` {partitions: [int], generation: int | null} - the full set now owned.
- ``message`` {partition, offset, key, value}
- ``committed`` {offsets: {partition: offset}}
- ``offsets`` {committed: {partition: offset}, latest: {partition: offset}}
- ``admin_step`` {step, error: Kafka error name (e.g. "NON_EMPTY_GROUP") | null, result,
  unsupported: reason | null}; results per step are listed at `ADMIN_STEPS`.
- ``acl_step`` {step, error: Kafka error name | null, result, seconds}: ``describe_acls``
  and ``delete_acls`` results are sorted ``TYPE:PATTERN:name:principal:OPERATION:PERMISSION``.
- ``transaction`` {outcome: "commit" | "abort", records: n}
- ``transacted`` {committed: records committed, aborted: records aborted}
- ``fenced`` {error: the fenced producer's error, "Type: message"}
- ``user_created`` {user}
- ``closed`` {}
- ``error`` {message} - the driver then exits non-zero.
Partition numbers are JSON object keys, hence strings on the wire; `Observation`
accessors turn them back into ints.
"""

from __future__ import annotations

import contextvars
import json
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Op = Literal[
    "create_topic",
    "produce",
    "consume",
    "offsets",
    "member",
    "swarm",
    "admin",
    "acls",
    "quotas",
    "features",
    "transact",
    "fence",
    "create_user",
    "cluster_admin",
    "share_member",
]
Isolation = Literal["read_uncommitted", "read_committed"]
TRANSACTION_RECORDS = 10
# Every ABORT_EVERY-th transaction of ``transact`` is aborted on purpose, then retried.
ABORT_EVERY = 3
# What the ``fence`` op writes, in order: the zombie's committed record, its record that the
# fencing aborts, the successor's committed record, and the zombie's record after being fenced.
FENCE_VALUES = ("before", "zombie", "after", "late")
Assignor = Literal["range", "roundrobin", "cooperative-sticky", "uniform"]
GroupProtocol = Literal["classic", "consumer"]
# ``share_member``: a record whose value (an int) is a multiple of this is released at its first
# delivery (the group delivers it again) and accepted after; every other record is accepted.
SHARE_RELEASE_EVERY = 10


def share_acknowledgement(value: str, delivery_count: int) -> str:
    """How a ``share_member`` acknowledges a record: "release" or "accept"."""
    released = value.isdigit() and int(value) % SHARE_RELEASE_EVERY == 0 and delivery_count <= 1
    return "release" if released else "accept"


@dataclass(frozen=True)
class Command:
    op: Op
    bootstrap: str
    topic: str
    partitions: int = 3
    count: int = 0
    key_count: int = 50
    group: str = ""
    timeout_s: float = 30.0
    assignor: Assignor = "range"
    session_timeout_ms: int = 6000
    group_instance_id: str | None = None
    client_id: str = "compat"
    other_group: str = ""
    groups: int = 1
    members: int = 1
    group_protocol: GroupProtocol = "classic"
    topic_pattern: str | None = None
    isolation: Isolation = "read_uncommitted"
    output: str = ""
    transactional_id: str = ""
    security: dict[str, str] = field(default_factory=dict)
    user: str = ""
    password: str = ""
    mechanism: str = "SCRAM-SHA-256"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Command:
        return cls(**json.loads(text))


# The admin op's steps, in order, and what each reports as `result`:
ADMIN_STEPS = (
    "create_topics",  # create `topic` and `extra_topic(topic)`; result null
    "delete_topics",  # delete `extra_topic(topic)`; result null
    "list_topics",  # result: sorted names of those two that are listed
    "alter_offsets",  # commit `admin_offsets(partitions)` for `group`; result null
    "list_offsets",  # result: {partition: offset} committed for `group` on `topic`
    "list_groups",  # result: sorted names of `group`, `other_group` that are listed
    "describe_groups",  # result: {name: {"state": "STABLE" | "EMPTY" | ..., "members": n}}
    "delete_live_group",  # delete `other_group` (it has a member): error expected
    "delete_group",  # delete `group`; result null
    "list_groups_after",  # as list_groups
)


def extra_topic(topic: str) -> str:
    return f"{topic}-extra"


def admin_offsets(partitions: int) -> dict[int, int]:
    """The offsets the admin op commits: distinct per partition, so a mix-up shows."""
    return {p: p + 1 for p in range(partitions)}


def group_state(name: str) -> str:
    """Kafka's group state names normalized across clients ("Stable", STABLE, "stable")."""
    return name.replace("_", "").replace(" ", "").upper()


def message_key(index: int, key_count: int) -> str:
    return f"key-{index % key_count}"


def message_value(index: int) -> str:
    return str(index)


def decoded(data: bytes | str | None) -> str | None:
    """A record key or value as observed: text, or None for a null (reported, not hidden)."""
    return data.decode() if isinstance(data, bytes) else data


def emit_message(
    partition: int | None, offset: int | None, key: bytes | str | None, value: bytes | str | None
) -> None:
    """The ``message`` observation every consuming driver reports for a record it received."""
    emit("message", partition=partition, offset=offset, key=decoded(key), value=decoded(value))


@dataclass
class Observation:
    event: str
    ts: float
    fields: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, line: str) -> Observation:
        data = json.loads(line)
        return cls(event=data.pop("event"), ts=float(data.pop("ts")), fields=data)

    def __getitem__(self, name: str) -> Any:
        return self.fields[name]

    def partition_map(self, name: str) -> dict[int, int]:
        """A {partition: offset} field with its JSON string keys turned back into ints."""
        return {int(partition): int(offset) for partition, offset in self.fields[name].items()}


# Set per member thread/task of a ``swarm``: every observation that member emits carries it.
MEMBER_LABEL: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "member_label", default=None
)
_STDOUT_LOCK = threading.Lock()  # swarm members print from many threads: whole lines only


def emit(event: str, **fields: Any) -> None:
    """Print one observation line (used by the Python drivers); flushed so readers see it now."""
    line = json.dumps({"event": event, "ts": time.time(), **(MEMBER_LABEL.get() or {}), **fields}) + "\n"
    with _STDOUT_LOCK:
        sys.stdout.write(line)
        sys.stdout.flush()
