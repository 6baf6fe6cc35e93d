"""Storage refusals, each carrying the Kafka error code a handler answers with."""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode


class StorageError(Exception):
    """`message` None: Kafka answers this refusal without one (its exception's null message)."""

    def __init__(self, code: ErrorCode, message: str | None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message


class StorageStartupError(Exception):
    """The data directory cannot be opened safely; the broker must not start.
    The message is for the operator and names the file at fault."""


class CorruptLog(StorageStartupError):
    pass


class DataDirInUse(StorageStartupError):
    pass
