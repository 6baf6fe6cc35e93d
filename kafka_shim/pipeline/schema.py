"""The rows the source produces: Spark's Kafka source schema, column for column."""

from __future__ import annotations

from typing import Final

BASE_COLUMNS: Final = (
    "key binary, value binary, topic string, partition int, offset long, "
    "timestamp timestamp, timestampType int"
)
HEADERS_COLUMN: Final = "headers array<struct<key: string, value: binary>>"


def source_schema_ddl(include_headers: bool) -> str:
    return f"{BASE_COLUMNS}, {HEADERS_COLUMN}" if include_headers else BASE_COLUMNS
