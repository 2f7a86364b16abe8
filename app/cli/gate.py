"""The exit code of a finished run or comparison: the bar it is held to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.cli.problems import EXIT_GATE_FAILED, EXIT_PASSED, EXIT_RUN_FAILED
from app.cli.records import Record, pass_rate, percent


@dataclass(frozen=True)
class Verdict:
    """An exit code and the sentence that explains it."""

    exit_code: int
    reason: str

    @property
    def passed(self) -> bool:
        """Whether the command exits 0."""
        return self.exit_code == EXIT_PASSED


def regressed(comparison: dict[str, Any]) -> bool:
    """Whether the head is significantly worse than the base (the paired test)."""
    difference = comparison["difference"]
    mean = difference.get("mean_difference")
    return bool(difference.get("significant")) and mean is not None and mean < 0


def run_verdict(
    run: dict[str, Any],
    records: Sequence[Record],
    min_pass_rate: float | None,
    comparison: dict[str, Any] | None = None,
) -> Verdict:
    """2 when the run did not complete; 1 when it missed its bar or regressed; else 0.

    The bar is ``min_pass_rate`` when given, else every case passing (each case's verdict
    under the suite's thresholds).
    """
    if run["status"] != "completed":
        why = f": {run['error']}" if run.get("error") else ""
        return Verdict(EXIT_RUN_FAILED, f"run {run['id']} ended {run['status']}{why}")
    rate = pass_rate(records)
    if min_pass_rate is None:
        if rate != 1.0:
            failing = sum(r.get("status") != "passed" for r in records)
            return Verdict(EXIT_GATE_FAILED, f"{failing} of {len(records)} cases did not pass")
    elif rate is None or rate < min_pass_rate:
        return Verdict(
            EXIT_GATE_FAILED, f"pass rate {percent(rate)} is below {percent(min_pass_rate)}"
        )
    if comparison is not None and regressed(comparison):
        return Verdict(EXIT_GATE_FAILED, comparison_reason(comparison))
    return Verdict(EXIT_PASSED, f"pass rate {percent(rate)}")


def comparison_reason(comparison: dict[str, Any]) -> str:
    """``significantly worse than run_x (mean -0.120, p = 0.004)`` or the opposite."""
    difference = comparison["difference"]
    mean, p = difference.get("mean_difference"), difference.get("p_value")
    figures = f"mean {mean:+.3f}, p = {p:.3g}" if mean is not None and p is not None else "no pairs"
    worse = "significantly worse" if regressed(comparison) else "not significantly worse"
    return f"{comparison['head']['id']} is {worse} than {comparison['base']['id']} ({figures})"
