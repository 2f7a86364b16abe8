"""Score -> verdict -> case status, with thresholds settable per suite."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.evaluators.results import CaseStatus, Verdict


class Thresholds(BaseModel):
    """Score thresholds for verdicts: ``pass`` at or above ``pass_``, else ``borderline``...

    ``rule`` says how a case's graders make its verdict: ``weighted`` (the weighted mean
    against these marks; a required grader, or one with its own pass mark, that failed fails
    the case), ``all_pass`` (promptfoo's rule for a test without a ``threshold``: the case
    passes when every grader of weight above 0 passed) or ``mean`` (promptfoo's rule for a
    test with a ``threshold``: the weighted mean against ``pass_`` alone).
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True)
    pass_: float = Field(0.8, alias="pass", ge=0, le=1)
    borderline: float = Field(0.6, ge=0, le=1)
    rule: Literal["weighted", "all_pass", "mean"] = "weighted"


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
