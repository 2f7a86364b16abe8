"""Charts drawn server-side as SVG: the score histogram and the verdict bar.

Colours come from the stylesheet through class names (the CSP allows no inline style).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from markupsafe import Markup, escape

from app.evaluation.summary import STATUSES, HistogramBin
from app.evaluators.results import CaseStatus

_WIDTH, _HEIGHT, _LABELS = 360, 140, 18


def histogram_svg(bins: Sequence[HistogramBin]) -> Markup:
    """Columns of scores per bin, each labelled with its count and range."""
    if not bins:
        return Markup('<p class="muted">No scores yet.</p>')
    tallest = max(b.count for b in bins) or 1
    width = _WIDTH / len(bins)
    plot = _HEIGHT - 2 * _LABELS
    parts = []
    for index, item in enumerate(bins):
        height = plot * item.count / tallest
        x, y = index * width, _LABELS + plot - height
        label = f"{item.low:.1f}–{item.high:.1f}"
        parts.append(
            f'<g class="bin" data-low="{item.low}" data-count="{item.count}">'
            f"<title>{label}: {item.count}</title>"
            f'<rect class="bar" x="{x + 4:.1f}" y="{y:.1f}" width="{width - 8:.1f}" '
            f'height="{height:.1f}"/>'
            f'<text x="{x + width / 2:.1f}" y="{y - 4:.1f}" '
            f'text-anchor="middle">{item.count}</text>'
            f'<text class="axis" x="{x + width / 2:.1f}" y="{_HEIGHT - 4}" '
            f'text-anchor="middle">{label}</text></g>'
        )
    return Markup(
        f'<svg class="chart histogram" role="img" viewBox="0 0 {_WIDTH} {_HEIGHT}" '
        f'width="{_WIDTH}" height="{_HEIGHT}" aria-label="Score histogram">'
        + "".join(parts)
        + "</svg>"
    )


def verdict_bar_svg(counts: Mapping[CaseStatus, int]) -> Markup:
    """One bar split by case status, in the order passed to error."""
    total = sum(counts.get(status, 0) for status in STATUSES)
    if not total:
        return Markup('<p class="muted">No cases finished yet.</p>')
    parts, x = [], 0.0
    for status in STATUSES:
        count = counts.get(status, 0)
        if not count:
            continue
        width = _WIDTH * count / total
        parts.append(
            f'<rect class="status-{escape(status)}" data-status="{escape(status)}" '
            f'data-count="{count}" x="{x:.1f}" y="0" width="{width:.1f}" height="22">'
            f"<title>{escape(status)}: {count}</title></rect>"
        )
        x += width
    return Markup(
        f'<svg class="chart verdicts" role="img" viewBox="0 0 {_WIDTH} 22" width="{_WIDTH}" '
        f'height="22" aria-label="Cases by status">' + "".join(parts) + "</svg>"
    )
