"""The HTML page: an overview table (worst lag first, stalled consumers in red), then per
group its lag over time with rebalances marked, its commit rate, and its partitions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from html import escape
from typing import Any

from pyspark.sql import Row

from kafka_shim.pipeline.lag.svg import Series, time_chart

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td.name { text-align: left; }
tr.stalled td { background: #fde0e0; } .badge { color: #fff; background: #c62828; padding: 1px 6px; }
"""


def _seconds(value: datetime | None) -> float:
    return 0.0 if value is None else value.replace(tzinfo=value.tzinfo or UTC).timestamp()


def _when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def _table(headers: list[str], rows: Iterable[tuple[list[Any], bool]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for cells, stalled in rows:
        tds = "".join(
            f'<td class="name">{escape(c)}</td>' if isinstance(c, str) else f"<td>{c:,}</td>" for c in cells
        )
        body.append(f"<tr{' class=stalled' if stalled else ''}>{tds}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def render(
    current: list[Row], history: list[Row], rates: list[Row], rebalances: list[Row], title: str
) -> str:
    by_group: dict[str, list[Row]] = defaultdict(list)
    for row in current:
        by_group[row.group].append(row)
    totals = sorted(by_group.items(), key=lambda item: -sum(r.lag for r in item[1]))
    overview = _table(
        ["group", "topics", "partitions", "total lag", "stalled partitions"],
        (
            (
                [group, ", ".join(sorted({r.topic for r in rows})), len(rows), sum(r.lag for r in rows),
                 sum(r.stalled for r in rows)],
                any(r.stalled for r in rows),
            )
            for group, rows in totals
        ),
    )  # fmt: skip
    sections = [_group_section(g, rows, history, rates, rebalances) for g, rows in totals]
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{escape(title)}</h1>"
        f"<p>Generated {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC. Lag = log-end offset - committed offset; "
        "a partition is <span class='badge'>stalled</span> when it has lag and its committed offset "
        "has not moved for the stall threshold.</p><h2>Groups</h2>"
        f"{overview}{''.join(sections)}</body></html>"
    )


def _group_section(
    group: str, rows: list[Row], history: list[Row], rates: list[Row], rebalances: list[Row]
) -> str:
    lag: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for point in history:
        if point.group == group:
            lag[point.topic][_seconds(point.time)] += point.lag
    lag_series: Series = {topic: sorted(points.items()) for topic, points in lag.items()}
    rate_series: Series = {
        "commits/s": [(_seconds(r.time), r.commits_per_s) for r in rates if r.group == group]
    }
    markers = [(_seconds(r.time), f"gen {r.generation}") for r in rebalances if r.group == group]
    stalled = sum(r.stalled for r in rows)
    badge = f" <span class='badge'>{stalled} stalled</span>" if stalled else ""
    partitions = _table(
        ["topic", "partition", "committed", "log end", "lag", "commits", "last commit", "last progress"],
        (
            ([r.topic, r.partition, r.committed, r.log_end_offset or 0, r.lag, r.commits,
              _when(r.last_commit_time), _when(r.last_progress_time)], bool(r.stalled))
            for r in rows
        ),
    )  # fmt: skip
    return (
        f"<h2>{escape(group)}{badge}</h2>"
        + time_chart(f"{group}: lag by topic (records)", lag_series, markers, "lag")
        + time_chart(f"{group}: commit rate", rate_series, markers, "commits/s")
        + partitions
    )
