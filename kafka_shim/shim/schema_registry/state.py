"""The registry's state as the `_schemas` topic's records leave it: subjects and their
versions, the global ids, compatibility levels and modes. Pure: it applies records in log
order (shim.schema_registry.store reads them) and answers look-ups; it never writes. Applying
a record Confluent's registry wrote gives the same state Confluent's KafkaStoreMessageHandler
and lookup cache keep."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace

from kafka_shim.shim.schema_registry import records
from kafka_shim.shim.schema_registry.records import Key, RecordError, SchemaValue

log = logging.getLogger("kafka_shim.schema_registry")


class RegistryState:
    def __init__(self) -> None:
        # subject -> version -> what was registered (soft-deleted versions stay, marked).
        self.subjects: dict[str, dict[int, SchemaValue]] = {}
        # id -> the (subject, version) pairs holding it: one id per distinct schema.
        self.ids: dict[int, set[tuple[str, int]]] = {}
        self.configs: dict[str | None, str] = {}  # None: the registry-wide level
        self.modes: dict[str | None, str] = {}
        self.max_id = 0  # the next new schema gets max_id + 1, as Confluent's store counts

    # -- applying the topic's records ------------------------------------------------------

    def apply(self, raw_key: bytes | None, raw_value: bytes | None) -> None:
        """One record of the topic; one that is not Confluent's JSON is skipped, logged."""
        if raw_key is None:
            log.warning("skipped a record of the schemas topic without a key")
            return
        try:
            key = records.decode_key(raw_key)
            self._apply(key, raw_value)
        except RecordError as exc:
            log.warning("skipped a record of the schemas topic: %s", exc)

    def _apply(self, key: Key, raw_value: bytes | None) -> None:
        if key.keytype == records.SCHEMA:
            assert key.subject is not None and key.version is not None
            if raw_value is None:
                self._remove(key.subject, key.version)
            else:
                self._put(records.decode_schema(raw_value))
        elif key.keytype == records.CONFIG:
            self._set(self.configs, key.subject, raw_value, "compatibilityLevel")
        elif key.keytype == records.MODE:
            self._set(self.modes, key.subject, raw_value, "mode")
        elif key.keytype == records.DELETE_SUBJECT and raw_value is not None and key.subject is not None:
            upto = records.decode_fields(raw_value).get("version")
            for version, value in list(self.subjects.get(key.subject, {}).items()):
                if isinstance(upto, int) and version <= upto and not value.deleted:
                    self._put(replace(value, deleted=True))
        elif key.keytype == records.CLEAR_SUBJECT and raw_value is not None and key.subject is not None:
            for version, value in list(self.subjects.get(key.subject, {}).items()):
                if value.deleted:
                    self._remove(key.subject, version)
        # NOOP: Confluent's marker for reading up to the end; nothing to apply.

    def _put(self, value: SchemaValue) -> None:
        versions = self.subjects.setdefault(value.subject, {})
        earlier = versions.get(value.version)
        if earlier is not None and earlier.id != value.id:
            self._unlink(earlier)
        versions[value.version] = value
        self.ids.setdefault(value.id, set()).add((value.subject, value.version))
        self.max_id = max(self.max_id, value.id)

    def _remove(self, subject: str, version: int) -> None:
        versions = self.subjects.get(subject, {})
        value = versions.pop(version, None)
        if value is not None:
            self._unlink(value)
        if not versions:
            self.subjects.pop(subject, None)

    def _unlink(self, value: SchemaValue) -> None:
        holders = self.ids.get(value.id)
        if holders is not None:
            holders.discard((value.subject, value.version))
            if not holders:
                del self.ids[value.id]

    @staticmethod
    def _set(table: dict[str | None, str], subject: str | None, raw_value: bytes | None, field: str) -> None:
        if raw_value is None:
            table.pop(subject, None)
            return
        setting = records.decode_fields(raw_value).get(field)
        if isinstance(setting, str):
            table[subject] = setting
        else:
            table.pop(subject, None)  # a value without it (metadata only): no level of its own

    # -- look-ups --------------------------------------------------------------------------

    def versions(self, subject: str, *, deleted: bool = False) -> list[SchemaValue]:
        """The subject's versions, oldest first; soft-deleted ones only with `deleted`."""
        found = self.subjects.get(subject, {})
        return [found[v] for v in sorted(found) if deleted or not found[v].deleted]

    def live_subjects(self, *, deleted: bool = False) -> list[str]:
        return sorted(s for s in self.subjects if self.versions(s, deleted=deleted))

    def by_id(self, schema_id: int, *, deleted: bool = True) -> SchemaValue | None:
        """A version holding `schema_id` (a live one first)."""
        holders = sorted(self.ids.get(schema_id, ()))
        values = [self.subjects[s][v] for s, v in holders]
        live = [value for value in values if not value.deleted]
        if live:
            return live[0]
        return values[0] if values and deleted else None

    def holders(self, schema_id: int, *, deleted: bool = False) -> Iterator[SchemaValue]:
        for subject, version in sorted(self.ids.get(schema_id, ())):
            value = self.subjects[subject][version]
            if deleted or not value.deleted:
                yield value

    def config(self, subject: str | None) -> str | None:
        return self.configs.get(subject)

    def mode(self, subject: str | None) -> str | None:
        return self.modes.get(subject)
