"""A partition's refusal, with what Kafka answers beside the error code."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode


class PartitionRefused(Exception):
    """The partition's records are refused: Kafka's error code, its message (None: Kafka
    passes none), LogValidator's record errors and, with NOT_LEADER_OR_FOLLOWER, the leader
    (KIP-951)."""

    def __init__(
        self, code: ErrorCode, message: str | None = None, record_errors: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.record_errors = record_errors or []
        self.current_leader: dict[str, int] | None = None
