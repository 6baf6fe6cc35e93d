"""Client quotas as Kafka keeps them (KIP-546): values per entity, its validation for
AlterClientQuotas, its filters for DescribeClientQuotas, and the lookup that picks the quota
a request is held to, in the precedence order of Kafka's ClientQuotaManager.

An entity is a set of (type, name) parts, a name of None being the type's default entity
(`<default>` in kafka-configs.sh). Pure: changes are handed to `on_change` to be kept.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_client_quotas import MATCH_DEFAULT, MATCH_EXACT, MATCH_SPECIFIED

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

# (type, name): a name of None is the default entity of the type.
EntityPart = tuple[str, str | None]
Entity = tuple[EntityPart, ...]  # sorted by type, each type once


class ValueKind(Enum):
    LONG = "Long"
    INT = "Integer"
    DOUBLE = "Double"


# Kafka's QuotaConfigs: the keys a user / client-id entity takes, and those of an ip entity.
CLIENT_KEYS = {
    PRODUCER_BYTE_RATE: ValueKind.LONG,
    CONSUMER_BYTE_RATE: ValueKind.LONG,
    REQUEST_PERCENTAGE: ValueKind.DOUBLE,
    CONTROLLER_MUTATION_RATE: ValueKind.DOUBLE,
}
IP_KEYS = {CONNECTION_CREATION_RATE: ValueKind.INT}


@dataclass(frozen=True)
class Refusal:
    code: ErrorCode
    message: str | None


def entity_of(parts: Iterable[EntityPart]) -> Entity:
    """Ordered by type alone: a part's name may be None (the default entity), and an entity
    naming a type twice must reach validation (Kafka's "duplicate entity entry"), not fail to sort."""
    return tuple(sorted(parts, key=lambda part: part[0]))


def describe_entity(entity: Entity) -> str:
    """Kafka's ClientQuotaEntity text, as its error messages show it."""
    return "ClientQuotaEntity(entries={" + ", ".join(f"{t}={n}" for t, n in entity) + "})"


def _entity_refusal(parts: list[EntityPart]) -> Refusal | None:
    """Kafka 3.9's ClientQuotaControlManager checks (validateEntity, then
    configKeysForEntityType), in its order and words."""
    if not parts:
        return Refusal(ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")
    seen: set[str] = set()
    for kind, name in parts:
        if kind in seen:
            return Refusal(
                ErrorCode.INVALID_REQUEST, f"Invalid client quota entity, duplicate entity entry {kind}"
            )
        if kind not in ENTITY_TYPES:
            return Refusal(ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {kind}")
        if name == "":
            return Refusal(ErrorCode.INVALID_REQUEST, f"Empty {kind} not supported")
        seen.add(kind)
    if IP in seen and len(seen) > 1:
        # (sic: Kafka's message runs "should" and "not" together)
        return Refusal(
            ErrorCode.INVALID_REQUEST,
            "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
        )
    ip = dict(parts).get(IP)
    if ip is not None and not _is_ip(ip):
        return Refusal(ErrorCode.INVALID_REQUEST, f"{ip} is not a valid IP or resolvable host.")
    return None


def _is_ip(text: str) -> bool:
    # Kafka accepts what InetAddress.getByName resolves; a dev broker resolves no names.
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# The largest value of each integral kind (Kafka's "too large for a LONG" / "an INT").
_LARGEST = {ValueKind.LONG: (2**63 - 1, "a LONG"), ValueKind.INT: (2**31 - 1, "an INT")}


def _value_refusal(keys: Mapping[str, ValueKind], key: str, value: float) -> Refusal | None:
    """Kafka 3.9's validateQuotaKeyValue: a known key, a positive value, integral where the key
    is, and within its type."""
    kind = keys.get(key)
    if kind is None:
        return Refusal(ErrorCode.INVALID_REQUEST, f"Invalid configuration key {key}")
    if value <= 0:
        return Refusal(ErrorCode.INVALID_REQUEST, f"Quota {key} must be greater than 0")
    if kind is ValueKind.DOUBLE:
        return None
    largest, name = _LARGEST[kind]
    if value > largest:
        return Refusal(ErrorCode.INVALID_REQUEST, f"Proposed value for {key} is too large for {name}.")
    if abs(value % 1.0) > 1e-6:
        return Refusal(ErrorCode.INVALID_REQUEST, f"{key} cannot be a fractional value.")
    return None


_MATCH_NAMES = {
    MATCH_EXACT: "MATCH_TYPE_EXACT",
    MATCH_DEFAULT: "MATCH_TYPE_DEFAULT",
    MATCH_SPECIFIED: "MATCH_TYPE_SPECIFIED",
}


def _component_refusal(
    kind: str, match_type: int, match: str | None, earlier: Mapping[str, object]
) -> Refusal | None:
    """A DescribeClientQuotas filter component as Kafka 3.9's ClientQuotasImage.describe checks it."""
    if not kind:
        return Refusal(ErrorCode.INVALID_REQUEST, "Invalid empty entity type.")
    if kind in earlier:
        return Refusal(
            ErrorCode.INVALID_REQUEST, f"Entity type {kind} cannot appear more than once in the filter."
        )
    if kind not in ENTITY_TYPES:
        return Refusal(ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {kind}")
    if match_type not in _MATCH_NAMES:
        return Refusal(ErrorCode.INVALID_REQUEST, f"Unknown match type {match_type}")
    if (match is None) == (match_type == MATCH_EXACT):
        also = "set match string to null" if match is None else "also specified a match string"
        return Refusal(
            ErrorCode.INVALID_REQUEST, f"Request specified {_MATCH_NAMES[match_type]}, but {also}."
        )
    return None


class QuotaFilterError(Exception):
    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message or refusal.code.name)
        self.refusal = refusal


_MAX_REMEMBERED = 10_000

# A DescribeClientQuotas filter component: EXACT (a name), DEFAULT, or any entity of the type.
Match = tuple[int, str | None]


class ClientQuotas:
    def __init__(
        self,
        stored: Mapping[Entity, Mapping[str, float]] | None = None,
        on_change: Callable[[Mapping[Entity, Mapping[str, float]]], None] = lambda quotas: None,
    ) -> None:
        self._quotas: dict[Entity, dict[str, float]] = {e: dict(v) for e, v in (stored or {}).items() if v}
        # quota_for's answers, per (user, client-id, key), until the quotas change: the
        # eight-level lookup would otherwise run on every Produce and Fetch.
        self._found: dict[tuple[str, str, str], tuple[float, tuple[str, str]] | None] = {}
        self._on_change = on_change

    @property
    def quotas(self) -> Mapping[Entity, Mapping[str, float]]:
        return self._quotas

    def replace(self, stored: Mapping[Entity, Mapping[str, float]]) -> None:
        """The quotas as another broker process left them (shim.processes.cluster_metadata):
        kept in memory only, the file already says them."""
        self._quotas = {entity: dict(values) for entity, values in stored.items() if values}
        self._found.clear()

    # -- AlterClientQuotas -----------------------------------------------------------------

    def alter(
        self, entries: list[tuple[list[EntityPart], list[tuple[str, float | None]]]], validate_only: bool
    ) -> list[Refusal | None]:
        """One result per entry (an op's value None removes the key). An entry with any
        refused op changes nothing; the valid entries are applied unless validate_only."""
        results: list[Refusal | None] = []
        changes: dict[Entity, dict[str, float | None]] = {}
        seen: set[Entity] = set()
        for parts, ops in entries:
            entity = entity_of(parts)
            keys = [key for key, _ in ops]
            if entity in seen or len(set(keys)) != len(keys):
                # Kafka's controller answers a key named twice with this too: the entity already
                # has a result ("Duplicate quota key ..."), which the duplicate check overwrites.
                refusal: Refusal | None = Refusal(
                    ErrorCode.INVALID_REQUEST, f"Ignoring duplicate entity {describe_entity(entity)}"
                )
            else:
                refusal = self._entry_refusal(parts, ops)
            seen.add(entity)
            results.append(refusal)
            if refusal is None:
                changes[entity] = dict(ops)
        if not validate_only and changes:
            quotas = {entity: dict(values) for entity, values in self._quotas.items()}
            for entity, entity_ops in changes.items():
                values = quotas.setdefault(entity, {})
                for key, value in entity_ops.items():
                    if value is None:
                        values.pop(key, None)
                    else:
                        values[key] = value
                if not values:
                    del quotas[entity]
            self._on_change(quotas)  # written first: a failed write (OSError) changes nothing
            self._quotas = quotas
            self._found.clear()
        return results

    @staticmethod
    def _entry_refusal(parts: list[EntityPart], ops: list[tuple[str, float | None]]) -> Refusal | None:
        refusal = _entity_refusal(parts)
        if refusal is not None:
            return refusal
        valid_keys = IP_KEYS if parts[0][0] == IP else CLIENT_KEYS
        for key, value in ops:
            refusal = None if value is None else _value_refusal(valid_keys, key, value)
            if refusal is not None:
                return refusal
        return None

    # -- DescribeClientQuotas ----------------------------------------------------------------

    def describe(
        self, components: list[tuple[str, int, str | None]], strict: bool
    ) -> dict[Entity, dict[str, float]]:
        """The entities matching every component (strict: and no other part), with their values.
        QuotaFilterError for a filter Kafka refuses."""
        filters: dict[str, Match] = {}
        for kind, match_type, match in components:
            refusal = _component_refusal(kind, match_type, match, filters)
            if refusal is not None:
                raise QuotaFilterError(refusal)
            filters[kind] = (match_type, match)
        if not filters:
            return {} if strict else {e: dict(v) for e, v in self._quotas.items()}
        if IP in filters and len(filters) > 1:
            raise QuotaFilterError(
                Refusal(
                    ErrorCode.INVALID_REQUEST,
                    "Invalid entity filter component combination. IP filter component should not be used "
                    "with user or clientId filter component.",
                )
            )
        return {
            entity: dict(values)
            for entity, values in self._quotas.items()
            if _matches(entity, filters, strict)
        }

    # -- enforcement ---------------------------------------------------------------------------

    def quota_for(self, user: str, client_id: str, key: str) -> tuple[float, tuple[str, str]] | None:
        """The `key` quota a (user, client-id) connection is held to and the tags of the sensor
        it shares (Kafka's DefaultQuotaCallback: a quota set on a user is shared by all its
        clients; one on a default entity is each user's / client's own), or None: unlimited."""
        asked = (user, client_id, key)
        if asked in self._found:
            return self._found[asked]
        if len(self._found) >= _MAX_REMEMBERED:  # clients inventing ids: start over
            self._found.clear()
        found = self._found[asked] = self._lookup(user, client_id, key)
        return found

    def _lookup(self, user: str, client_id: str, key: str) -> tuple[float, tuple[str, str]] | None:
        for entity, tags in (
            (((CLIENT_ID, client_id), (USER, user)), (user, client_id)),
            (((CLIENT_ID, None), (USER, user)), (user, client_id)),
            (((USER, user),), (user, "")),
            (((CLIENT_ID, client_id), (USER, None)), (user, client_id)),
            (((CLIENT_ID, None), (USER, None)), (user, client_id)),
            (((USER, None),), (user, "")),
            (((CLIENT_ID, client_id),), ("", client_id)),
            (((CLIENT_ID, None),), ("", client_id)),
        ):
            value = self._quotas.get(entity, {}).get(key)
            if value is not None:
                return value, tags
        return None

    def ip_quota(self, ip: str) -> float | None:
        """The connection_creation_rate of an IP: its own, else the default IP entity's."""
        for entity in (_ip_entity(ip), _ip_entity(None)):
            value = self._quotas.get(entity, {}).get(CONNECTION_CREATION_RATE)
            if value is not None:
                return value
        return None


def _ip_entity(ip: str | None) -> Entity:
    return ((IP, ip),)


def _matches(entity: Entity, filters: Mapping[str, Match], strict: bool) -> bool:
    parts = dict(entity)
    if strict and set(parts) != set(filters):
        return False
    for kind, (match_type, match) in filters.items():
        if kind not in parts:
            return False
        name = parts[kind]
        if match_type == MATCH_EXACT and name != match:
            return False
        if match_type == MATCH_DEFAULT and name is not None:
            return False
    return True
