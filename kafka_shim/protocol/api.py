"""An API: its key, its request and response schemas, and its versions."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_shim.protocol.schema import Message, VersionRange

API_VERSIONS_KEY = 18


@dataclass(frozen=True)
class Api:
    key: int
    name: str
    request: Message
    response: Message

    @property
    def versions(self) -> VersionRange:
        return self.request.versions

    def is_flexible(self, version: int) -> bool:
        return version in self.request.flexible

    def response_header_flexible(self, version: int) -> bool:
        return self.key != API_VERSIONS_KEY and self.is_flexible(version)
