"""``--markdown FILE``: a pull-request comment (GitHub-flavoured Markdown).

Regressions come first (when the run is compared with a base), then the summary per arm,
then the cases that did not pass, then links to the viewer. Tables are capped so a comment
stays readable; cell text is escaped (pipes, HTML, line breaks).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.cli.records import (
    STATUSES,
    Record,
    by_arm,
    first_miss,
    mean_score,
    number,
    pass_rate,
    percent,
    status_counts,
)

MAX_ROWS = 30
CELL_CHARS = 160


def cell(value: Any) -> str:
    """Text safe in a table cell: one line, no raw HTML, pipes escaped, shortened."""
    text = " ".join(str(value if value is not None else "").split())
    if len(text) > CELL_CHARS:
        text = text[: CELL_CHARS - 1] + "…"
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], more: int = 0) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    if more > 0:
        lines.append(f"\n…and {more} more.")
    return [*lines, ""]


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def difference_line(comparison: dict[str, Any]) -> str:
    """The paired test in one sentence."""
    d = comparison["difference"]
    if not d.get("pairs"):
        return "No case was graded in both runs."
    verdict = "**significant**" if d.get("significant") else "not significant"
    return (
        f"Mean score difference {_signed(d.get('mean_difference'))} over {d['pairs']} paired "
        f"cases (95% CI {_signed(d.get('ci_low'))} to {_signed(d.get('ci_high'))}, "
        f"{d.get('test')}, p = {number(d.get('p_value'))}): {verdict}."
    )


def regression_section(comparison: dict[str, Any], compare_url: str | None) -> list[str]:
    """Regressions against the base (worst first), the paired test, improvements counted."""
    base, counts = comparison["base"]["id"], comparison["counts"]
    regressions = [c for c in comparison["cases"] if c["change"] == "regression"]
    lines = [f"### Regressions against `{base}`: {counts['regression']}", ""]
    if regressions:
        rows = [
            (c["eval_id"], c["base"].get("verdict") or c["base"].get("status"),
             c["head"].get("verdict") or c["head"].get("status"), _signed(c.get("score_delta")))
            for c in regressions[:MAX_ROWS]
        ]  # fmt: skip
        lines += _table(("case", "base", "head", "score Δ"), rows, len(regressions) - MAX_ROWS)
    lines.append(difference_line(comparison))
    lines.append(f"Improvements: {counts['improvement']} · unchanged: {counts['unchanged']}.")
    if compare_url:
        lines.append(f"[Compare in the viewer]({compare_url})")
    return [*lines, ""]


def summary_section(records: Sequence[Record]) -> list[str]:
    """One row per arm: cases per status, pass rate, mean score."""
    rows = []
    for arm, records_of_arm in by_arm(records).items():
        counts = status_counts(records_of_arm)
        rows.append(
            (arm, *(counts[s] for s in STATUSES), len(records_of_arm),
             percent(pass_rate(records_of_arm)), number(mean_score(records_of_arm)))
        )  # fmt: skip
    return _table(("arm", *STATUSES, "total", "pass rate", "mean score"), rows)


def failing_section(records: Sequence[Record]) -> list[str]:
    """The cases that did not pass, errors first, then by score (lowest first)."""
    failing = [r for r in records if r.get("status") != "passed"]
    if not failing:
        return ["Every case passed.", ""]
    failing.sort(
        key=lambda r: (r.get("status") not in ("error", "judge_error"), r.get("score") or 0)
    )
    rows = [
        (r.get("eval_id"), r.get("status"), number(r.get("score")), first_miss(r))
        for r in failing[:MAX_ROWS]
    ]
    lines = [f"### Cases that did not pass: {len(failing)}", ""]
    return [
        *lines,
        *_table(("case", "status", "score", "first miss"), rows, len(failing) - MAX_ROWS),
    ]


def run_markdown(
    run: dict[str, Any],
    records: Sequence[Record],
    *,
    passed_gate: bool,
    comparison: dict[str, Any] | None = None,
    viewer_url: str | None = None,
    compare_url: str | None = None,
) -> str:
    """The comment for a run: headline, regressions (if compared), summary, failing cases."""
    mark = "✅" if passed_gate else "❌"
    rate = percent(pass_rate(records))
    passed = sum(r.get("status") == "passed" for r in records)
    title = f"{cell(run['name'])} (`{run['id']}`)" if run.get("name") else f"`{run['id']}`"
    lines = [
        f"## {mark} Eval run {title}: {passed}/{len(records)} passed ({rate})",
        "",
        f"Status **{run['status']}** · target `{run.get('target')}` · judge "
        f"`{run.get('judge_target') or '–'}`",
        "",
    ]
    if comparison is not None:
        lines += regression_section(comparison, compare_url)
    lines += ["### Summary", "", *summary_section(records)]
    lines += failing_section(records)
    if viewer_url:
        lines.append(f"[Open the run in the viewer]({viewer_url})")
    return "\n".join(lines).rstrip() + "\n"


def comparison_markdown(
    comparison: dict[str, Any], *, regressed: bool, compare_url: str | None = None
) -> str:
    """The comment for ``evalx compare``: the verdict, then the regressions."""
    mark = "❌" if regressed else "✅"
    head, base = comparison["head"]["id"], comparison["base"]["id"]
    lines = [
        f"## {mark} `{head}` against `{base}`",
        "",
        f"{comparison['shared']} shared cases · same suite: "
        f"{'yes' if comparison.get('same_suite') else 'no'}",
        "",
        *regression_section(comparison, compare_url),
    ]
    return "\n".join(lines).rstrip() + "\n"
