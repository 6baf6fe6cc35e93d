"""Fault rules of the test broker: which requests (match) get what misbehaviour (action).

One model for every front end: the pytest fixture and BrokerThread, the control endpoint
(shim.testbroker.control_api), `kafka-shim ctl` and a rules file all hand `FaultRules.add` a
spec, the same JSON-shaped mapping:

    {"api": "OffsetCommit", "group": "g", "error": "REBALANCE_IN_PROGRESS", "times": 1}

Match keys (all optional, all must hold): `api` (name or key), `versions` ("3+", "0-7"),
`client_id`, `principal` ("User:alice"), `group`, `transactional_id`, `topic`, `partition`.
A request matches a topic or partition key when any topic or partition it names does.

Actions: `error` (a Kafka error name or code: the request is not handled, its answer carries
the error where Kafka puts it, see protocol.error_answers; `"where": "top"` for the top-level
code), `delay_ms` (alone: the real answer, that much later; with `error`: the error, late),
`"action": "no_answer"` (never answered; the client's request times out), `"action": "close"`
(the connection is closed instead), `"action": "drop_answer"` (handled, its effects stand, then
the connection is closed instead of answered: the lost acknowledgement a client retries),
`"action": "pause_fetch"` (Fetch returns no records of the matched topic/partitions until the
rule is cleared; nothing else changes). How often: every time until cleared, `times: N`,
and/or `fraction: 0.3` drawn from a `seed`ed generator.

The model is pure: the server asks `decide` before running a handler (a single attribute
check while no rule exists) and carries out the firing it returns; the fetch handler asks
`paused`. Each firing is counted on its rule and logged, in memory and at INFO.
"""

from __future__ import annotations

import json
import logging
import random
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.named import Named, TopicNames, named
from kafka_shim.protocol.schema import ALL, VersionRange

log = logging.getLogger("kafka_shim.faults")

ACTIONS = ("error", "delay", "no_answer", "close", "drop_answer", "pause_fetch")
MATCH_KEYS = (
    "api",
    "versions",
    "broker",
    "client_id",
    "principal",
    "group",
    "transactional_id",
    "topic",
    "partition",
)
_RULE_KEYS = frozenset({*MATCH_KEYS, "action", "error", "delay_ms", "times", "fraction", "seed", "where"})
FIRINGS_KEPT = 1000
FETCH_KEY = 1


class FaultSpecError(ValueError):
    """A rule spec that cannot be a rule: its message names the key and what is wrong."""


def api_key_of(value: object) -> int:
    """An API by Kafka's name ("OffsetCommit") or key (8)."""
    if isinstance(value, int) and not isinstance(value, bool) and value in APIS:
        return value
    if isinstance(value, str):
        for key, api in APIS.items():
            if api.name.lower() == value.lower() or str(key) == value:
                return key
    raise FaultSpecError(f"api: no API {value!r} (names as Kafka spells them, e.g. OffsetCommit, or keys)")


def error_code_of(value: object) -> ErrorCode:
    try:
        if isinstance(value, str) and not value.lstrip("-").isdigit():
            return ErrorCode[value.upper()]
        return ErrorCode(int(value))  # type: ignore[call-overload]
    except (KeyError, ValueError, TypeError):
        raise FaultSpecError(f"error: no Kafka error {value!r} (e.g. NOT_LEADER_OR_FOLLOWER or 6)") from None


# -- what a request names (looked at only when a rule asks) ---------------------------------


@dataclass
class RequestView:
    """One request as rules and recordings match it."""

    api_key: int
    api_version: int
    client_id: str | None
    principal: str
    body: Mapping[str, Any]
    topic_names: TopicNames = lambda topic_id: None
    node_id: int = 0  # the (emulated) broker it came to
    _named: Named | None = None

    def named(self) -> Named:
        """What the request names (its groups, transactional ids, topics with the partitions
        named of each), as its declaration marks it (protocol.named); read once, when a rule asks."""
        if self._named is None:
            api = APIS.get(self.api_key)
            self._named = (
                Named() if api is None else named(api.request, self.api_version, self.body, self.topic_names)
            )
        return self._named


# -- matching ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    """Which requests a rule (or a recording query) is about; None matches anything."""

    api_key: int | None = None
    versions: VersionRange = ALL
    broker: int | None = None
    client_id: str | None = None
    principal: str | None = None
    group: str | None = None
    transactional_id: str | None = None
    topic: str | None = None
    partition: int | None = None

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Match:
        def text(key: str) -> str | None:
            value = spec.get(key)
            if value is not None and not isinstance(value, str):
                raise FaultSpecError(f"{key}: expected a string, got {value!r}")
            return value

        def integer(key: str) -> int | None:
            value = spec.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise FaultSpecError(f"{key}: expected an integer, got {value!r}")
            return value

        versions = spec.get("versions")
        try:
            version_range = ALL if versions is None else VersionRange.parse(str(versions))
        except ValueError:
            raise FaultSpecError(f"versions: {versions!r} is not a range such as 3+, 0-7 or 4") from None
        return cls(
            api_key=None if spec.get("api") is None else api_key_of(spec["api"]),
            versions=version_range,
            broker=integer("broker"),
            client_id=text("client_id"),
            principal=text("principal"),
            group=text("group"),
            transactional_id=text("transactional_id"),
            topic=text("topic"),
            partition=integer("partition"),
        )

    def matches(self, request: RequestView) -> bool:
        if self.api_key is not None and request.api_key != self.api_key:
            return False
        if request.api_version not in self.versions:
            return False
        if self.broker is not None and request.node_id != self.broker:
            return False
        if self.client_id is not None and request.client_id != self.client_id:
            return False
        if self.principal is not None and request.principal != self.principal:
            return False
        if self.group is not None and self.group not in request.named().groups:
            return False
        if (
            self.transactional_id is not None
            and self.transactional_id not in request.named().transactional_ids
        ):
            return False
        if self.topic is None and self.partition is None:
            return True
        return any(self.names(topic, partitions) for topic, partitions in request.named().partitions.items())

    def names(self, topic: str, partitions: set[int] | int) -> bool:
        """Whether a topic (and partitions: a set, or one index) falls under this match."""
        if self.topic is not None and topic != self.topic:
            return False
        if self.partition is None:
            return True
        return self.partition == partitions if isinstance(partitions, int) else self.partition in partitions

    def to_json(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "api": None if self.api_key is None else APIS[self.api_key].name,
            "versions": None if self.versions == ALL else self.versions.text(),
            "broker": self.broker,
            "client_id": self.client_id,
            "principal": self.principal,
            "group": self.group,
            "transactional_id": self.transactional_id,
            "topic": self.topic,
            "partition": self.partition,
        }
        return {key: value for key, value in fields.items() if value is not None}


# -- rules ------------------------------------------------------------------------------------


@dataclass
class FaultRule:
    id: int
    match: Match
    action: str
    error: ErrorCode | None = None
    delay_ms: int = 0
    times: int | None = None  # None: until cleared
    fraction: float = 1.0
    seed: int | None = None
    top_level: bool = False
    fired: int = 0
    _random: random.Random = field(default_factory=random.Random, repr=False)

    @classmethod
    def from_spec(cls, rule_id: int, spec: Mapping[str, Any]) -> FaultRule:
        if not isinstance(spec, Mapping):
            raise FaultSpecError(f"a rule is a JSON object, got {spec!r}")
        unknown = set(spec) - _RULE_KEYS
        if unknown:
            raise FaultSpecError(
                f"unknown key(s) {', '.join(sorted(unknown))}; rules take {', '.join(sorted(_RULE_KEYS))}"
            )
        error = None if spec.get("error") is None else error_code_of(spec["error"])
        delay_ms = _number(spec, "delay_ms", 0, int)
        action = spec.get("action") or ("error" if error is not None else "delay" if delay_ms else None)
        if action not in ACTIONS:
            raise FaultSpecError(
                f"action: one of {', '.join(ACTIONS)} (or give error or delay_ms), got {action!r}"
            )
        if (action == "error") != (error is not None):
            raise FaultSpecError("error: an error rule names its Kafka error, and only an error rule does")
        match = Match.from_spec(spec)
        if action == "pause_fetch" and match.topic is None:
            raise FaultSpecError("pause_fetch: name the topic (and partition) whose fetches pause")
        times = spec.get("times")
        if times is not None and (not isinstance(times, int) or isinstance(times, bool) or times < 1):
            raise FaultSpecError(f"times: a positive integer (leave it out for until cleared), got {times!r}")
        fraction = _number(spec, "fraction", 1.0, float, maximum=1.0)
        if not 0.0 < fraction <= 1.0:
            raise FaultSpecError(f"fraction: within (0, 1], got {fraction}")
        where = spec.get("where", "partitions")
        if where not in ("partitions", "top"):
            raise FaultSpecError(
                f"where: partitions (where Kafka puts it, the default) or top, got {where!r}"
            )
        seed = spec.get("seed")
        if seed is not None and not isinstance(seed, int):
            raise FaultSpecError(f"seed: an integer, got {seed!r}")
        return cls(
            rule_id,
            match,
            action,
            error,
            delay_ms,
            times,
            fraction,
            seed,
            where == "top",
            _random=random.Random(seed),
        )

    @property
    def spent(self) -> bool:
        return self.times is not None and self.fired >= self.times

    def to_json(self) -> dict[str, Any]:
        described: dict[str, Any] = {"id": self.id, **self.match.to_json(), "action": self.action}
        if self.error is not None:
            described["error"] = self.error.name
            if self.top_level:
                described["where"] = "top"
        if self.delay_ms:
            described["delay_ms"] = self.delay_ms
        if self.times is not None:
            described["times"] = self.times
        if self.fraction < 1.0:
            described["fraction"] = self.fraction
            described["seed"] = self.seed
        described["fired"] = self.fired
        described["active"] = not self.spent
        return described


# The longest delay a rule holds a request: Kafka's timeouts are int32 milliseconds, so no
# client waits longer than this for an answer anyway.
MAX_DELAY_MS = (1 << 31) - 1


def _number(
    spec: Mapping[str, Any], key: str, default: Any, kind: type, maximum: float = MAX_DELAY_MS
) -> Any:
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= maximum:
        raise FaultSpecError(f"{key}: a number from 0 to {maximum}, got {value!r}")
    return kind(value)


@dataclass(frozen=True)
class Firing:
    """A rule that fired: what the server carries out, and the log's entry."""

    rule: FaultRule
    api_key: int
    api_version: int
    client_id: str | None
    at_ms: int

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule.id,
            "action": self.rule.action,
            "error": None if self.rule.error is None else self.rule.error.name,
            "api": APIS[self.api_key].name,
            "version": self.api_version,
            "client_id": self.client_id,
            "at_ms": self.at_ms,
        }


class FaultRules:
    """The broker's rules. Owned by the broker's event loop: every front end calls it there."""

    def __init__(self) -> None:
        # Rules that can still fire, in the order added; the server's only check is `if active`.
        self.active: list[FaultRule] = []
        self._pausing: list[FaultRule] = []
        self._all: dict[int, FaultRule] = {}
        self._next_id = 1
        self.firings: deque[Firing] = deque(maxlen=FIRINGS_KEPT)

    def add(self, spec: Mapping[str, Any]) -> FaultRule:
        """A new rule from its spec (FaultSpecError if it is not one)."""
        rule = FaultRule.from_spec(self._next_id, spec)
        self._next_id += 1
        self._all[rule.id] = rule
        (self._pausing if rule.action == "pause_fetch" else self.active).append(rule)
        log.info("fault rule %d added: %s", rule.id, rule.to_json())
        return rule

    def rules(self) -> list[FaultRule]:
        return list(self._all.values())

    def clear(self, rule_id: int | None = None) -> int:
        """Remove one rule (KeyError if there is none such) or, without an id, all; how many went."""
        gone = list(self._all) if rule_id is None else [rule_id]
        for each in gone:
            rule = self._all.pop(each)
            for rules in (self.active, self._pausing):
                if rule in rules:
                    rules.remove(rule)
        return len(gone)

    def decide(self, request: RequestView, now_ms: int) -> Firing | None:
        """The first active rule that matches `request` and fires (its fraction drawn), or None."""
        for rule in self.active:
            if not rule.match.matches(request):
                continue
            if rule.fraction < 1.0 and rule._random.random() >= rule.fraction:
                continue
            return self._fired(rule, request.api_key, request.api_version, request.client_id, now_ms)
        return None

    def paused(self, topic: str, partition: int, now_ms: int) -> bool:
        """Whether fetches of this partition are paused (a firing of the pausing rule)."""
        for rule in self._pausing:
            if rule.match.names(topic, partition):
                self._fired(rule, FETCH_KEY, -1, None, now_ms)
                return True
        return False

    @property
    def pausing(self) -> bool:
        return bool(self._pausing)

    def _fired(
        self, rule: FaultRule, api_key: int, version: int, client_id: str | None, now_ms: int
    ) -> Firing:
        rule.fired += 1
        if rule.spent:
            self.active.remove(rule)
        firing = Firing(rule, api_key, version, client_id, now_ms)
        self.firings.append(firing)
        if rule.action != "pause_fetch" or rule.fired == 1:  # a paused partition is polled often
            log.info(
                "fault rule %d fired on %s v%d from client %s: %s",
                rule.id,
                APIS[api_key].name,
                version,
                client_id,
                rule.action,
            )
        return firing


def load_fault_rules(rules: FaultRules, path: Path) -> list[FaultRule]:
    """Add the rules of a rules file: a JSON list of specs (FaultSpecError naming the file)."""
    try:
        specs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FaultSpecError(f"fault rules file {path}: {exc}") from exc
    if not isinstance(specs, list):
        raise FaultSpecError(f"fault rules file {path}: a JSON list of rules, got {type(specs).__name__}")
    try:
        return [rules.add(spec) for spec in specs]
    except FaultSpecError as exc:
        raise FaultSpecError(f"fault rules file {path}: {exc}") from exc
