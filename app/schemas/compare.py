"""``GET /runs/compare``: two runs compared case by case, with a paired significance test."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.evaluation.arm_comparison import ArmPairComparison
from app.evaluation.arms import RunArm
from app.evaluation.comparison import CaseComparison, PairedDifference


class RunSide(BaseModel):
    """One of the two runs compared."""

    id: str = Field(examples=["run_5f0c6d3e8a7b4f3c9e2d1a0b"])
    status: str = Field(examples=["completed"])
    target: str = Field(examples=["default"])
    datasets: list[str] = Field(description="Datasets of its records.", examples=[["quick"]])
    cases: int = Field(description="Cases with a record.", examples=[40])
    only_here: int = Field(
        description="Of those, cases whose id the other run has no record of.", examples=[0]
    )


class ComparisonCounts(BaseModel):
    """How many shared cases got worse, better, or stayed."""

    regression: int = 0
    improvement: int = 0
    unchanged: int = 0


class RunComparison(BaseModel):
    """``head`` against ``base``: per-case deltas (regressions first) and the paired summary."""

    base: RunSide
    head: RunSide
    same_suite: bool = Field(description="Whether both runs' records come from one dataset.")
    shared: int = Field(description="Case ids with a record in both runs.", examples=[40])
    counts: ComparisonCounts
    difference: PairedDifference
    cases: list[CaseComparison] = Field(
        description="Regressions (worst first), then improvements (best first), then unchanged."
    )


class ArmsComparison(BaseModel):
    """Every pair of a run's arms compared (paired t-test, Holm-adjusted), with a verdict."""

    run_id: str
    arms: list[RunArm] = Field(description="The run's arms (none for a run on one target).")
    pairs: list[ArmPairComparison] = Field(
        description="Each pair of arms, the earlier arm as base: k arms give k(k-1)/2 pairs."
    )


def comparison_example() -> dict[str, Any]:
    """A comparison as ``GET /runs/compare`` returns it, for the OpenAPI document."""
    side = {"status": "completed", "target": "default", "datasets": ["quick"], "cases": 3}
    return {
        "base": {"id": "run_base", **side, "only_here": 0},
        "head": {"id": "run_head", **side, "only_here": 0},
        "same_suite": True,
        "shared": 3,
        "counts": {"regression": 1, "improvement": 1, "unchanged": 1},
        "difference": {
            "pairs": 3,
            "mean_difference": -0.1,
            "ci_low": -0.8,
            "ci_high": 0.6,
            "confidence": 0.95,
            "test": "paired t-test",
            "p_value": 0.62,
            "significant": False,
        },
        "cases": [
            {
                "eval_id": "refund-policy",
                "change": "regression",
                "base": {"status": "passed", "score": 0.9, "verdict": "pass"},
                "head": {"status": "failed", "score": 0.4, "verdict": "fail"},
                "score_delta": -0.5,
                "verdict_changed": True,
                "answers": None,
            },
            {
                "eval_id": "greeting",
                "change": "improvement",
                "base": {"status": "passed", "score": 0.8, "verdict": "pass"},
                "head": {"status": "passed", "score": 1.0, "verdict": "pass"},
                "score_delta": 0.2,
                "verdict_changed": False,
                "answers": None,
            },
            {
                "eval_id": "arithmetic",
                "change": "unchanged",
                "base": {"status": "passed", "score": 1.0, "verdict": "pass"},
                "head": {"status": "passed", "score": 1.0, "verdict": "pass"},
                "score_delta": 0.0,
                "verdict_changed": False,
                "answers": None,
            },
        ],
    }
