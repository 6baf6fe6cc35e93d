"""AlterClientQuotas / DescribeClientQuotas through the wire schemas, and the produce and
fetch byte-rate quotas they set, on a fake clock: Kafka's validation messages, its filters
(exact, default, any; strict), its precedence of user / client-id entities, and throttling."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_client_quotas import MATCH_DEFAULT, MATCH_EXACT, MATCH_SPECIFIED
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.quotas.client_quotas import ClientQuotas, entity_of
from kafka_shim.storage.faults import FAULTS
from tests.batches import make_batch
from tests.helpers import Harness

DESCRIBE, ALTER, PRODUCE, FETCH, CREATE_TOPICS = 48, 49, 0, 1, 19
NONE, INVALID = ErrorCode.NONE, ErrorCode.INVALID_REQUEST


def part(kind: str, name: str | None) -> dict[str, Any]:
    return {"entity_type": kind, "entity_name": name}


def op(key: str, value: float = 0.0, remove: bool = False) -> dict[str, Any]:
    return {"key": key, "value": value, "remove": remove}


def alter(
    h: Harness,
    *entries: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    validate: bool = False,
    version: int = 1,
    principal: str = "User:ANONYMOUS",
) -> list[tuple[int, str | None]]:
    request = {"entries": [{"entity": e, "ops": o} for e, o in entries], "validate_only": validate}
    response = h.call(ALTER, version, request, h.context(version, principal))
    return [(e.error_code, e.error_message) for e in response.entries]


def describe(
    h: Harness,
    *components: tuple[str, int, str | None],
    strict: bool = False,
    version: int = 1,
    principal: str = "User:ANONYMOUS",
) -> Any:
    request = {
        "components": [{"entity_type": t, "match_type": m, "match": n} for t, m, n in components],
        "strict": strict,
    }
    return h.call(DESCRIBE, version, request, h.context(version, principal))


def fetch_request(topic: str, partitions: list[int]) -> dict[str, Any]:
    """A Fetch v11 body reading `partitions` of `topic` from offset 0, at once, up to 1 MiB each."""
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {"partition": p, "fetch_offset": 0, "partition_max_bytes": 1 << 20} for p in partitions
                ],
            }
        ],
    }


def entries(response: Any) -> dict[tuple[tuple[str, str | None], ...], dict[str, float]]:
    assert response.error_code == NONE, response.error_message
    return {
        tuple(sorted((p.entity_type, p.entity_name) for p in e.entity)): {v.key: v.value for v in e["values"]}
        for e in response.entries
    }


def test_set_describe_and_remove_quotas() -> None:
    h = Harness()
    alice = [part("user", "alice")]
    alice_app = [part("user", "alice"), part("client-id", "app")]
    default_client = [part("client-id", None)]
    assert (
        alter(
            h,
            (alice, [op("producer_byte_rate", 1024)]),
            (alice_app, [op("consumer_byte_rate", 2048)]),
            (default_client, [op("request_percentage", 12.5)]),
        )
        == [(NONE, None)] * 3
    )
    assert entries(describe(h)) == {
        (("user", "alice"),): {"producer_byte_rate": 1024.0},
        (("client-id", "app"), ("user", "alice")): {"consumer_byte_rate": 2048.0},
        (("client-id", None),): {"request_percentage": 12.5},
    }
    # A user filter (not strict) matches every entity naming that user.
    assert set(entries(describe(h, ("user", MATCH_EXACT, "alice")))) == {
        (("user", "alice"),),
        (("client-id", "app"), ("user", "alice")),
    }
    assert set(entries(describe(h, ("user", MATCH_EXACT, "alice"), strict=True))) == {(("user", "alice"),)}
    assert set(entries(describe(h, ("client-id", MATCH_DEFAULT, None)))) == {(("client-id", None),)}
    assert set(
        entries(describe(h, ("client-id", MATCH_SPECIFIED, None), ("user", MATCH_SPECIFIED, None)))
    ) == {(("client-id", "app"), ("user", "alice"))}
    assert entries(describe(h, strict=True)) == {}
    assert alter(h, (alice, [op("producer_byte_rate", remove=True)])) == [(NONE, None)]
    assert (("user", "alice"),) not in entries(describe(h))


def test_validate_only_changes_nothing() -> None:
    h = Harness()
    assert alter(h, ([part("user", "bob")], [op("producer_byte_rate", 10)]), validate=True) == [(NONE, None)]
    assert entries(describe(h)) == {}


def test_kafka_validation_messages() -> None:
    """Kafka 3.9's ClientQuotaControlManager words (the corpus, tests/fidelity, recorded them)."""
    h = Harness()
    refused = alter(
        h,
        ([], [op("producer_byte_rate", 1)]),
        ([part("user", "")], [op("producer_byte_rate", 1)]),
        ([part("group", "g")], [op("producer_byte_rate", 1)]),
        ([part("ip", "1.2.3.4"), part("user", "a")], [op("connection_creation_rate", 1)]),
        ([part("ip", "not an ip")], [op("connection_creation_rate", 1)]),
        ([part("user", "a")], [op("connection_creation_rate", 1)]),
        ([part("ip", "1.2.3.4")], [op("producer_byte_rate", 1)]),
        ([part("user", "b")], [op("producer_byte_rate", 1.5)]),
        ([part("user", "c")], [op("producer_byte_rate", 1), op("producer_byte_rate", 2)]),
        ([part("user", "d")], [op("producer_byte_rate", -1)]),
        ([part("user", "e")], [op("producer_byte_rate", 2.0**64)]),
        ([part("ip", None)], [op("connection_creation_rate", 5)]),
    )
    assert refused == [
        (INVALID, "Invalid empty client quota entity"),
        (INVALID, "Empty user not supported"),
        (INVALID, "Unhandled client quota entity type: group"),
        (INVALID, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"),
        (INVALID, "not an ip is not a valid IP or resolvable host."),
        (INVALID, "Invalid configuration key connection_creation_rate"),
        (INVALID, "Invalid configuration key producer_byte_rate"),
        (INVALID, "producer_byte_rate cannot be a fractional value."),
        (INVALID, "Ignoring duplicate entity ClientQuotaEntity(entries={user=c})"),
        (INVALID, "Quota producer_byte_rate must be greater than 0"),
        (INVALID, "Proposed value for producer_byte_rate is too large for a LONG."),
        (NONE, None),
    ]
    # Only the valid entry was applied.
    assert entries(describe(h)) == {(("ip", None),): {"connection_creation_rate": 5.0}}


def test_an_entity_type_named_twice_default_and_named_is_refused_as_kafka_does() -> None:
    """Found by the fuzz slice: a default and a named part of one type used to fail to sort."""
    h = Harness()
    refused = alter(h, ([part("user", None), part("user", "a")], [op("producer_byte_rate", 1)]))
    assert refused == [(INVALID, "Invalid client quota entity, duplicate entity entry user")]


@pytest.mark.parametrize(
    ("components", "code", "message"),
    [  # Kafka 3.9's ClientQuotasImage.describe, in its order of checks
        ([("", MATCH_SPECIFIED, None)], INVALID, "Invalid empty entity type."),
        (
            [("user", MATCH_DEFAULT, None), ("user", MATCH_SPECIFIED, None)],
            INVALID,
            "Entity type user cannot appear more than once in the filter.",
        ),
        ([("group", MATCH_SPECIFIED, None)], ErrorCode.UNSUPPORTED_VERSION, "Unsupported entity type group"),
        ([("user", 7, None)], INVALID, "Unknown match type 7"),
        (
            [("user", MATCH_EXACT, None)],
            INVALID,
            "Request specified MATCH_TYPE_EXACT, but set match string to null.",
        ),
        (
            [("user", MATCH_DEFAULT, "a")],
            INVALID,
            "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.",
        ),
        (
            [("ip", MATCH_SPECIFIED, None), ("user", MATCH_SPECIFIED, None)],
            INVALID,
            "Invalid entity filter component combination. IP filter component should not be used with "
            "user or clientId filter component.",
        ),
    ],
)
def test_describe_filter_errors(
    components: list[tuple[str, int, str | None]], code: int, message: str
) -> None:
    refused = describe(Harness(), *components)
    assert (refused.error_code, refused.error_message, refused.entries) == (code, message, None)


def test_authorized_as_kafka_apis_does() -> None:
    h = Harness(authorizer_class_name=STANDARD_AUTHORIZER, super_users="User:admin")
    refused = describe(h, principal="User:alice")
    assert (refused.error_code, refused.entries) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    assert alter(h, ([part("user", "x")], [op("producer_byte_rate", 1)]), principal="User:alice") == [
        (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    ]
    assert alter(h, ([part("user", "x")], [op("producer_byte_rate", 1)]), principal="User:admin") == [
        (NONE, None)
    ]


def test_quotas_survive_a_restart(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path)
    assert alter(h, ([part("user", None), part("client-id", "app")], [op("consumer_byte_rate", 4096)])) == [
        (NONE, None)
    ]
    h.broker.close()
    again = Harness(data_dir=tmp_path)
    assert entries(describe(again)) == {
        (("client-id", "app"), ("user", None)): {"consumer_byte_rate": 4096.0}
    }
    again.broker.close()


def test_precedence_of_user_and_client_id_quotas() -> None:
    """ClientQuotaManager's order, most specific first, and whose sensor the quota is."""
    levels = [
        ((("client-id", "app"), ("user", "alice")), ("alice", "app")),
        ((("client-id", None), ("user", "alice")), ("alice", "app")),
        ((("user", "alice"),), ("alice", "")),
        ((("client-id", "app"), ("user", None)), ("alice", "app")),
        ((("client-id", None), ("user", None)), ("alice", "app")),
        ((("user", None),), ("alice", "")),
        ((("client-id", "app"),), ("", "app")),
        ((("client-id", None),), ("", "app")),
    ]
    quotas = ClientQuotas(
        {entity_of(entity): {"producer_byte_rate": float(i)} for i, (entity, _) in enumerate(levels)}
    )
    for i, (entity, tags) in enumerate(levels):
        assert quotas.quota_for("alice", "app", "producer_byte_rate") == (float(i), tags)
        quotas = ClientQuotas({e: v for e, v in quotas.quotas.items() if e != entity_of(entity)})
    assert quotas.quota_for("alice", "app", "producer_byte_rate") is None


def produce(h: Harness, values: list[bytes], acks: int = 1) -> Any:
    h.broker.topics.auto_create("t")  # as the client's Metadata request would (Produce creates none)
    batch = make_batch(values)
    request = {
        "acks": acks,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}],
    }
    return h.call(PRODUCE, 9, request), len(batch)


def test_a_producer_over_its_byte_rate_is_throttled_and_muted() -> None:
    h = Harness(auto_create_topics=True)
    assert alter(h, ([part("client-id", "handler-test")], [op("producer_byte_rate", 1000)])) == [(NONE, None)]
    first, size = produce(h, [b"x" * 2000])
    assert first.throttle_time_ms == 0 and size <= 10_000  # within 10 windows' worth
    second, size2 = produce(h, [b"x" * 20_000])
    expected = round(((size + size2) / 10 - 1000) / 1000 * 10_000)
    assert abs(second.throttle_time_ms - expected) <= 1
    assert h.last is not None and h.last.throttle_ms == second.throttle_time_ms  # the server mutes for it
    assert second.responses[0].partition_responses[0].error_code == NONE  # the data was appended


def test_a_throttled_fetch_is_answered_without_data() -> None:
    h = Harness(auto_create_topics=True)
    produce(h, [b"y" * 30_000])
    assert alter(h, ([part("user", "ANONYMOUS")], [op("consumer_byte_rate", 1000)])) == [(NONE, None)]
    request = fetch_request("t", [0])
    throttled = h.call(FETCH, 11, request)
    assert throttled.throttle_time_ms > 0
    assert throttled.responses == []
    # The bytes not sent were taken back: the rate is still under the quota for small reads.
    assert alter(h, ([part("user", "ANONYMOUS")], [op("consumer_byte_rate", remove=True)])) == [(NONE, None)]
    assert h.call(FETCH, 11, request).throttle_time_ms == 0


def test_a_fetch_is_capped_at_the_quota_windows_worth() -> None:
    """Kafka's getMaxValueInQuotaWindow: at 1000 B/s over 10 windows a fetch returns at most
    10000 bytes (the first partition whole, KIP-74), so it is served rather than throttled
    empty for ever."""
    h = Harness()
    h.broker.topics.create("two", 2)
    for index in (0, 1):
        request = {
            "acks": 1,
            "timeout_ms": 1000,
            "topic_data": [
                {"name": "two", "partition_data": [{"index": index, "records": make_batch([b"z" * 8000])}]}
            ],
        }
        h.call(PRODUCE, 9, request)
    assert alter(h, ([part("client-id", "handler-test")], [op("consumer_byte_rate", 1000)])) == [(NONE, None)]
    fetch = fetch_request("two", [0, 1])
    answered = h.call(FETCH, 11, fetch)
    assert answered.throttle_time_ms == 0
    sizes = [len(p.records or b"") for p in answered.responses[0].partitions]
    assert sizes[0] > 8000 and sizes[1] == 0


def test_quotas_that_cannot_be_written_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path)
    alice = [part("user", "alice")]
    assert alter(h, (alice, [op("producer_byte_rate", 1024)])) == [(NONE, None)]
    FAULTS.arm("file:quotas.json", errno=errno.ENOSPC)
    try:
        ((code, message),) = alter(h, (alice, [op("producer_byte_rate", 9)]))
    finally:
        FAULTS.clear()
    assert code == ErrorCode.KAFKA_STORAGE_ERROR and message is not None
    assert entries(describe(h)) == {(("user", "alice"),): {"producer_byte_rate": 1024.0}}
