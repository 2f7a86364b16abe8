"""What a grader reports: a verdict, the grader's result, and what it sent a judge.

The case-level types built on them (the result record) live in ``app.evaluation``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CaseStatus = Literal["passed", "borderline", "failed", "judge_error", "error"]
Verdict = Literal["pass", "borderline", "fail"]


class EvaluatorRawRequest(BaseModel):
    """What the judge was given (the first judge evaluator of the case)."""

    model_config = ConfigDict(populate_by_name=True)
    user_prompt: str = Field(alias="userPrompt")
    system_prompt: str = Field(alias="systemPrompt")
    target: str


class EvaluatorResult(BaseModel):
    """The outcome of one grader on one case: name, score, pass/fail, weight and reasoning."""

    name: str
    type: str
    score: float | None
    verdict: Verdict | None
    passed: bool | None = Field(
        None,
        description=(
            "Whether the grader passed: its score reached its pass mark (its own `threshold`, "
            "else the case's pass threshold); null when it could not grade."
        ),
    )
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    weight: float = 1.0
    status: Literal["ok", "judge_error", "error"] = "ok"
    raw_output: str | None = Field(
        None,
        description=(
            "The judge's raw reply: the graded one, or the last one when none could be parsed."
        ),
    )
    details: dict[str, Any] | None = None
