"""The tables the command prints when a run or a comparison is done (Rich)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

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

MAX_LISTED = 20


def print_run_summary(console: Console, run: dict[str, Any], records: Sequence[Record]) -> None:
    """Cases per status and arm, then the cases that did not pass (at most twenty)."""
    table = Table(title=f"Run {run['id']} · {run['status']}", title_justify="left")
    table.add_column("arm")
    for status in STATUSES:
        table.add_column(status, justify="right")
    table.add_column("total", justify="right")
    table.add_column("pass rate", justify="right")
    table.add_column("mean score", justify="right")
    for arm, records_of_arm in by_arm(records).items():
        counts = status_counts(records_of_arm)
        table.add_row(
            arm, *(str(counts[s]) for s in STATUSES), str(len(records_of_arm)),
            percent(pass_rate(records_of_arm)), number(mean_score(records_of_arm)),
        )  # fmt: skip
    console.print(table)
    failing = [r for r in records if r.get("status") != "passed"]
    if not failing:
        return
    listed = Table(title=f"Cases that did not pass ({len(failing)})", title_justify="left")
    for column in ("case", "status", "score", "first miss"):
        listed.add_column(column, overflow="fold")
    for record in failing[:MAX_LISTED]:
        listed.add_row(
            str(record.get("eval_id")), str(record.get("status")),
            number(record.get("score")), first_miss(record)[:200],
        )  # fmt: skip
    console.print(listed)
    if len(failing) > MAX_LISTED:
        console.print(f"…and {len(failing) - MAX_LISTED} more (see the reports).")


def print_comparison(console: Console, comparison: dict[str, Any]) -> None:
    """The regressions and improvements, then the paired test."""
    table = Table(
        title=f"{comparison['head']['id']} against {comparison['base']['id']}",
        title_justify="left",
    )
    for column in ("case", "change", "base", "head", "score Δ"):
        table.add_column(column)
    changed = [c for c in comparison["cases"] if c["change"] != "unchanged"]
    for case in changed[:MAX_LISTED]:
        delta = case.get("score_delta")
        table.add_row(
            case["eval_id"], case["change"],
            str(case["base"].get("verdict") or case["base"].get("status")),
            str(case["head"].get("verdict") or case["head"].get("status")),
            "–" if delta is None else f"{delta:+.3f}",
        )  # fmt: skip
    console.print(table)
    counts = comparison["counts"]
    console.print(
        f"regressions {counts['regression']} · improvements {counts['improvement']} · "
        f"unchanged {counts['unchanged']} · shared {comparison['shared']}",
        highlight=False,
    )
