"""Small time-series charts as inline SVG: a report that opens offline, in any browser,
with nothing to install (a plotting library would add a heavy dependency for lines)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape

WIDTH, HEIGHT = 760, 260
LEFT, RIGHT, TOP, BOTTOM = 70, 170, 30, 40
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")

Series = dict[str, list[tuple[float, float]]]  # label -> [(epoch seconds, value)]


def _clock(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%H:%M:%S")


def time_chart(
    title: str, series: Series, markers: Sequence[tuple[float, str]] = (), y_label: str = ""
) -> str:
    """Lines over time (one colour per label, legend on the right) with dashed
    vertical markers (rebalances)."""
    points = [p for line in series.values() for p in line]
    if not points:
        return f"<p><em>{escape(title)}: no data</em></p>"
    xs = [x for x, _ in points] + [x for x, _ in markers]
    x0, x1 = min(xs), max(xs)
    y1 = max(max(y for _, y in points), 1.0)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x: float) -> float:
        return LEFT + (x - x0) / ((x1 - x0) or 1.0) * plot_w

    def sy(y: float) -> float:
        return TOP + plot_h - y / y1 * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" '
        f'font-size="11"><title>{escape(title)}</title>',
        f'<text x="{LEFT}" y="18" font-size="13" font-weight="bold">{escape(title)}</text>',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>',
    ]
    for i in range(5):  # horizontal grid with y labels
        value = y1 * i / 4
        y = sy(value)
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{value:,.0f}</text>')
    for x, label in ((x0, _clock(x0)), (x1, _clock(x1))):
        parts.append(
            f'<text x="{sx(x):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{label} UTC</text>'
        )
    parts.append(f'<text x="14" y="{TOP + plot_h / 2}" transform="rotate(-90 14 {TOP + plot_h / 2})" '
                 f'text-anchor="middle">{escape(y_label)}</text>')  # fmt: skip
    for x, label in markers:
        parts.append(f'<line x1="{sx(x):.1f}" x2="{sx(x):.1f}" y1="{TOP}" y2="{TOP + plot_h}" '
                     f'stroke="#888" stroke-dasharray="4 3"/>')  # fmt: skip
        parts.append(f'<text x="{sx(x) + 2:.1f}" y="{TOP + 10}" fill="#666">{escape(label)}</text>')
    for i, (label, line) in enumerate(sorted(series.items())):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in sorted(line))
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        legend_y = TOP + 14 * i + 8
        legend_x = WIDTH - RIGHT + 10
        parts.append(f'<rect x="{legend_x}" y="{legend_y - 8}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{WIDTH - RIGHT + 24}" y="{legend_y + 1}">{escape(label)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
