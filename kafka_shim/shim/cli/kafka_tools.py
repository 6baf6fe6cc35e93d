"""`kafka-shim topics|groups|produce|consume`: the everyday look-ups of Kafka's own shell tools
(kafka-topics.sh, kafka-consumer-groups.sh, the console producer and consumer), for any Kafka
broker, not only this one. They talk through confluent-kafka (librdkafka's AdminClient,
Producer and Consumer, a dependency of the default install), imported only when one of these
commands runs.

    kafka-shim topics list | describe TOPIC... | delete TOPIC...
    kafka-shim topics create TOPIC [--partitions N] [--config K=V]
    kafka-shim groups list | describe GROUP | lag GROUP
    kafka-shim groups reset-offsets GROUP --topic T (--to-earliest | --to-latest | --to-offset N) [--execute]
    kafka-shim produce TOPIC [--key-separator SEP]          # one record per line of stdin
    kafka-shim consume TOPIC [--group G] [--from-beginning] [--max-messages N]

Every command takes `--bootstrap-server HOST:PORT` (default $KAFKA_BOOTSTRAP_SERVERS, else
localhost:9092) and `--timeout-s S` (default 10): a broker that does not answer in time is an
error naming it in one line, never a hang. librdkafka's own log lines (a `%3|...|FAIL|` per
connection attempt) go to Python logging, shown only with `--verbose`; the last error among them
ends the one-line error.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, TextIO

DEFAULT_BOOTSTRAP = "localhost:9092"
# librdkafka's log lines, handed to Python logging through confluent-kafka's `logger` setting.
CLIENT_LOG = logging.getLogger("kafka_shim.tools.librdkafka")


class ToolError(Exception):
    """What went wrong, said in one line (exit 1)."""


class _LastClientError(logging.Handler):
    """Keeps librdkafka's last error line (its reason for a failed connection, say)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.last: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        # "FAIL [rdkafka#producer-1] [thrd:HOST:PORT/bootstrap]: HOST:PORT/bootstrap: Connect to ...":
        # the reason follows the thread's name and the broker's.
        text = record.getMessage().rpartition("]: ")[2]
        broker, sep, reason = text.partition(": ")
        self.last = reason if sep and "/" in broker else text


_LAST_CLIENT_ERROR = _LastClientError()


def _client(args: argparse.Namespace, **settings: Any) -> dict[str, Any]:
    """A confluent-kafka configuration: the broker, and librdkafka's logs to CLIENT_LOG."""
    return {"bootstrap.servers": args.bootstrap_server, "logger": CLIENT_LOG, **settings}


def _with_client_error(text: str, client: Any) -> str:
    """`text`, ended by librdkafka's last error line where there is one."""
    client.poll(0)  # serves the log lines librdkafka queued
    last = _LAST_CLIENT_ERROR.last
    return text if last is None else f"{text} ({last})"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap-server",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS", DEFAULT_BOOTSTRAP),
        help="HOST:PORT of any Kafka broker (default $KAFKA_BOOTSTRAP_SERVERS, else %(default)s)",
    )
    parser.add_argument("--timeout-s", type=float, default=10.0, help="how long to wait for the broker")
    parser.add_argument("--verbose", action="store_true", help="show the client's (librdkafka's) log lines")


def build_parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"kafka-shim {command}")
    if command in ("topics", "groups"):
        actions = parser.add_subparsers(dest="action", required=True)
    if command == "topics":
        _common(actions.add_parser("list", help="topic names"))
        describe = actions.add_parser("describe", help="partitions, leaders and configs set")
        describe.add_argument("topics", nargs="+")
        create = actions.add_parser("create", help="create a topic")
        create.add_argument("topic")
        create.add_argument("--partitions", type=int, default=-1, help="default: the broker's num.partitions")
        create.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
        delete = actions.add_parser("delete", help="delete topics")
        delete.add_argument("topics", nargs="+")
        for sub in (describe, create, delete):
            _common(sub)
    elif command == "groups":
        _common(actions.add_parser("list", help="consumer groups and their states"))
        for name, text in (("describe", "state, members and assignments"), ("lag", "lag per partition")):
            sub = actions.add_parser(name, help=text)
            sub.add_argument("group")
            _common(sub)
        reset = actions.add_parser("reset-offsets", help="set a group's committed offsets (group empty)")
        reset.add_argument("group")
        reset.add_argument("--topic", required=True)
        to = reset.add_mutually_exclusive_group(required=True)
        to.add_argument("--to-earliest", action="store_true")
        to.add_argument("--to-latest", action="store_true")
        to.add_argument("--to-offset", type=int)
        reset.add_argument("--execute", action="store_true", help="apply (default: only show the plan)")
        _common(reset)
    elif command == "produce":
        parser.add_argument("topic")
        parser.add_argument("--key-separator", help="split each line into key and value at the first SEP")
        _common(parser)
    else:
        parser.add_argument("topic")
        parser.add_argument("--group", help="consumer group (default: none, nothing committed)")
        parser.add_argument("--from-beginning", action="store_true")
        parser.add_argument("--max-messages", type=int, help="stop after N records")
        _common(parser)
    return parser


def _reason(exc: Exception) -> str:
    """A client error's own words: KafkaException's KafkaError `str()`, else the exception."""
    error = exc.args[0] if exc.args else None
    text = getattr(error, "str", None)
    return str(text()) if callable(text) else str(exc)


def _wait(future: Any, args: argparse.Namespace, what: str) -> Any:
    try:
        return future.result(timeout=args.timeout_s)
    except TimeoutError:
        raise ToolError(f"{args.bootstrap_server} did not answer {what} within {args.timeout_s} s") from None
    except Exception as exc:  # confluent-kafka's KafkaException and friends: one line
        raise ToolError(f"{what}: {_reason(exc)}") from None


def _admin(args: argparse.Namespace) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient(_client(args, **{"socket.timeout.ms": int(args.timeout_s * 1000)}))


def _metadata(admin: Any, args: argparse.Namespace) -> Any:
    try:
        return admin.list_topics(timeout=args.timeout_s)
    except Exception as exc:
        text = f"no answer from {args.bootstrap_server}: {_reason(exc)}"
        raise ToolError(_with_client_error(text, admin)) from None


def topics(args: argparse.Namespace, out: TextIO) -> None:
    from confluent_kafka.admin import ConfigResource, NewTopic, ResourceType

    admin = _admin(args)
    if args.action == "list":
        for name in sorted(_metadata(admin, args).topics):
            print(name, file=out)
    elif args.action == "describe":
        known = _metadata(admin, args).topics
        for name in args.topics:
            topic = known.get(name)
            if topic is None or topic.error is not None:
                raise ToolError(f"no topic {name!r} on {args.bootstrap_server}")
            print(f"Topic: {name}\tPartitionCount: {len(topic.partitions)}", file=out)
            resource = ConfigResource(ResourceType.TOPIC, name)
            entries = _wait(admin.describe_configs([resource])[resource], args, f"DescribeConfigs {name}")
            set_here = {k: e.value for k, e in sorted(entries.items()) if not e.is_default}
            print(f"\tConfigs: {','.join(f'{k}={v}' for k, v in set_here.items())}", file=out)
            for index, partition in sorted(topic.partitions.items()):
                replicas = ",".join(map(str, partition.replicas))
                print(f"\tPartition: {index}\tLeader: {partition.leader}\tReplicas: {replicas}", file=out)
    elif args.action == "create":
        configs = dict(text.split("=", 1) for text in args.config)
        new = NewTopic(args.topic, num_partitions=args.partitions, config=configs)
        _wait(admin.create_topics([new])[args.topic], args, f"CreateTopics {args.topic}")
        print(f"Created topic {args.topic}.", file=out)
    else:
        for name, future in admin.delete_topics(args.topics).items():
            _wait(future, args, f"DeleteTopics {name}")
            print(f"Deleted topic {name}.", file=out)


def _end_offsets(
    admin: Any, args: argparse.Namespace, partitions: Iterable[Any], spec: Any
) -> dict[tuple[str, int], int]:
    from confluent_kafka import TopicPartition

    request = {TopicPartition(tp.topic, tp.partition): spec for tp in partitions}
    if not request:
        return {}
    answers = admin.list_offsets(request, request_timeout=args.timeout_s)
    return {(tp.topic, tp.partition): _wait(f, args, "ListOffsets").offset for tp, f in answers.items()}


def _committed(admin: Any, args: argparse.Namespace) -> list[Any]:
    from confluent_kafka import ConsumerGroupTopicPartitions

    futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(args.group)])
    result = _wait(futures[args.group], args, f"OffsetFetch {args.group}")
    return list(result.topic_partitions or [])


def _existing_group(admin: Any, args: argparse.Namespace, committed: list[Any] | None = None) -> Any:
    """The group's description; ToolError for a group the broker does not know (Kafka answers
    an unknown group as Dead with no members: one that only committed offsets is Empty)."""
    from confluent_kafka import ConsumerGroupState

    futures = admin.describe_consumer_groups([args.group], request_timeout=args.timeout_s)
    group = _wait(futures[args.group], args, f"DescribeGroups {args.group}")
    unknown = group.state in (ConsumerGroupState.DEAD, ConsumerGroupState.UNKNOWN) and not group.members
    if unknown and not committed:
        raise ToolError(f"Consumer group '{args.group}' does not exist.")
    return group


def lag(admin: Any, args: argparse.Namespace, out: TextIO) -> None:
    """Every partition of the topics the group committed to or is assigned, as
    kafka-consumer-groups.sh --describe lists them: one not committed shows `-` and its lag
    counted from the log start (what a consumer reading from the earliest offset has to read)."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    committed = {(tp.topic, tp.partition): tp.offset for tp in _committed(admin, args) if tp.offset >= 0}
    group = _existing_group(admin, args, list(committed))
    assigned = {(tp.topic, tp.partition) for m in group.members for tp in m.assignment.topic_partitions}
    known = _metadata(admin, args).topics
    topic_names = sorted({topic for topic, _ in committed.keys() | assigned})
    partitions = [
        TopicPartition(name, index)
        for name in topic_names
        if name in known and known[name].error is None
        for index in sorted(known[name].partitions)
    ]
    ends = _end_offsets(admin, args, partitions, OffsetSpec.latest())
    not_committed = [tp for tp in partitions if (tp.topic, tp.partition) not in committed]
    starts = _end_offsets(admin, args, not_committed, OffsetSpec.earliest())
    print("TOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG", file=out)
    for tp in partitions:
        key = (tp.topic, tp.partition)
        end = ends[key]
        current = committed.get(key)
        shown, behind = ("-", end - starts[key]) if current is None else (str(current), end - current)
        print(f"{tp.topic}\t{tp.partition}\t{shown}\t{end}\t{behind}", file=out)


def groups(args: argparse.Namespace, out: TextIO) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    admin = _admin(args)
    if args.action == "list":
        listed = _wait(admin.list_consumer_groups(request_timeout=args.timeout_s), args, "ListGroups")
        for group in sorted(listed.valid, key=lambda g: g.group_id):
            print(f"{group.group_id}\t{group.state.name}", file=out)
    elif args.action == "describe":
        group = _existing_group(admin, args)
        state, assignor = group.state.name, group.partition_assignor
        print(f"Group: {group.group_id}\tState: {state}\tAssignor: {assignor}", file=out)
        for member in group.members:
            assigned = ",".join(f"{tp.topic}-{tp.partition}" for tp in member.assignment.topic_partitions)
            print(f"\t{member.member_id}\t{member.client_id}\t{member.host}\t{assigned}", file=out)
    elif args.action == "lag":
        lag(admin, args, out)
    else:
        topic = _metadata(admin, args).topics.get(args.topic)
        if topic is None or topic.error is not None:
            raise ToolError(f"no topic {args.topic!r} on {args.bootstrap_server}")
        partitions = [TopicPartition(args.topic, index) for index in sorted(topic.partitions)]
        if args.to_offset is not None:
            targets = {(tp.topic, tp.partition): args.to_offset for tp in partitions}
        else:
            spec = OffsetSpec.earliest() if args.to_earliest else OffsetSpec.latest()
            targets = _end_offsets(admin, args, partitions, spec)
        print("TOPIC\tPARTITION\tNEW-OFFSET", file=out)
        for (name, index), offset in sorted(targets.items()):
            print(f"{name}\t{index}\t{offset}", file=out)
        if not args.execute:
            print("(dry run: add --execute to commit these offsets)", file=out)
            return
        request = ConsumerGroupTopicPartitions(
            args.group, [TopicPartition(name, index, offset) for (name, index), offset in targets.items()]
        )
        _wait(admin.alter_consumer_group_offsets([request])[args.group], args, f"OffsetCommit {args.group}")


def produce(args: argparse.Namespace, out: TextIO, lines: Iterable[str] = sys.stdin) -> None:
    from confluent_kafka import Producer

    producer = Producer(_client(args, **{"message.timeout.ms": int(args.timeout_s * 1000)}))
    failures: list[str] = []
    count = 0
    for line in lines:
        text = line.rstrip("\n")
        key: str | None = None
        if args.key_separator is not None and args.key_separator in text:
            key, text = text.split(args.key_separator, 1)
        producer.produce(
            args.topic,
            text.encode(),
            key=None if key is None else key.encode(),
            on_delivery=lambda err, _msg: failures.append(str(err)) if err else None,
        )
        producer.poll(0)
        count += 1
    if producer.flush(args.timeout_s) > 0 or failures:
        text = f"{len(failures) or 'some'} records not acknowledged: {failures[:1] or 'timed out'}"
        raise ToolError(_with_client_error(text, producer))
    print(f"{count} records written to {args.topic}", file=sys.stderr)


def consume(args: argparse.Namespace, out: TextIO) -> None:
    import time
    import uuid

    from confluent_kafka import Consumer

    consumer = Consumer(
        _client(
            args,
            **{
                "group.id": args.group or f"kafka-shim-consume-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": args.group is not None,
                "auto.offset.reset": "earliest" if args.from_beginning else "latest",
            },
        )
    )
    consumer.subscribe([args.topic])
    read = 0
    idle_since = time.monotonic()
    try:
        while args.max_messages is None or read < args.max_messages:
            message = consumer.poll(0.5)
            if message is None:
                if args.max_messages is not None and time.monotonic() - idle_since > args.timeout_s:
                    break  # asked for N and fewer came: stop rather than wait for ever
                continue
            if message.error() is not None:
                raise ToolError(f"consume {args.topic}: {message.error()}")
            idle_since = time.monotonic()
            print((message.value() or b"").decode(errors="replace"), file=out, flush=True)
            read += 1
    except KeyboardInterrupt:
        pass
    finally:
        consumer.close()


COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], None]] = {
    "topics": topics,
    "groups": groups,
    "produce": produce,
    "consume": consume,
}


def main(argv: list[str]) -> int:
    """`argv`: the command (topics, groups, produce, consume) and its arguments."""
    command, rest = argv[0], argv[1:]
    args = build_parser(command).parse_args(rest)
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s", stream=sys.stderr)
    CLIENT_LOG.propagate = args.verbose  # otherwise kept for the error line, not printed
    if _LAST_CLIENT_ERROR not in CLIENT_LOG.handlers:
        CLIENT_LOG.addHandler(_LAST_CLIENT_ERROR)
    _LAST_CLIENT_ERROR.last = None
    try:
        COMMANDS[command](args, sys.stdout)
    except ToolError as exc:
        print(f"kafka-shim {command}: {exc}", file=sys.stderr)
        return 1
    return 0
