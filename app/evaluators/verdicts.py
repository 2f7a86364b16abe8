"""Score -> verdict -> case status, with thresholds settable per suite."""

from __future__ import annotations

from app.evaluation.records import CaseStatus, Verdict
from app.suites.model import Thresholds

DEFAULT_THRESHOLDS = Thresholds()

_STATUS_OF_VERDICT: dict[Verdict, CaseStatus] = {
    "pass": "passed",
    "borderline": "borderline",
    "fail": "failed",
}


def verdict_for(score: float, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> Verdict:
    """``pass`` from ``thresholds.pass_`` up, ``borderline`` from its floor up, else ``fail``."""
    if score >= thresholds.pass_:
        return "pass"
    if score >= thresholds.borderline:
        return "borderline"
    return "fail"


def status_for(verdict: Verdict) -> CaseStatus:
    """The case status a verdict gives (``pass`` -> ``passed``...)."""
    return _STATUS_OF_VERDICT[verdict]
