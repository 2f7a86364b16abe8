"""``POST /evaluate`` request and response models, with the examples shown in ``/docs``."""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from app.evaluation.records import ResultRecord
from app.evaluation.summary import RunSummary
from app.schemas.suite_examples import CUSTOMER_SUPPORT_SUITE, QUICK_SUITE, REFUND_POLICY
from app.schemas.suites import ENV_DESCRIPTION, MAX_ENV_VALUES


class EvaluateRequest(BaseModel):
    """A suite to run against a candidate target, graded by a judge target."""

    model_config = ConfigDict(extra="forbid")
    suite: dict[str, Any] | str = Field(
        description=(
            "The suite (an AgentV eval file): an object, its YAML or JSON text, or the path "
            "of a suite file under a workspace root."
        )
    )
    files: dict[str, str] = Field(
        default_factory=dict,
        description="Inline file contents, keyed by the path the cases use; checked first.",
    )
    env: dict[str, str] = Field(
        default_factory=dict, max_length=MAX_ENV_VALUES, description=ENV_DESCRIPTION
    )
    target: str | None = Field(
        None, description="Candidate target (default: the suite's `target`, else `default`)."
    )
    judge_target: str | None = Field(
        None,
        description="Judge target (default: the target's `judge_target`, else the target).",
    )
    max_concurrency: int | None = Field(
        None, ge=1, le=1000, description="Cases run at once (default: the target's, else 8)."
    )
    case_ids: list[str] | None = Field(None, description="Run only these cases.")
    budget_usd: float | None = Field(
        None,
        gt=0,
        description=(
            "Cost budget in US dollars (default: the suite's `budget_usd`): once the run's "
            "finished cases cost this much, no more case starts."
        ),
    )
    guideline_patterns: list[str] | None = Field(
        None, description="Globs naming guideline files (default: the suite's)."
    )
    allow_missing_files: bool = Field(
        False, description="Skip referenced files found nowhere, with a warning."
    )
    targets: list[dict[str, Any]] | None = Field(
        None,
        description=(
            "Targets for this request only, in the targets-file format (`{name, provider, "
            "model, base_url, api_key, ...}`); `target` or `judge_target` may name one. "
            "Refused unless the operator enables inline targets; their URL must pass the "
            "service's allow-list; their keys are used for the calls and never stored, "
            "logged or echoed. Not accepted by durable runs, which must be able to resume."
        ),
    )


class EvaluateResponse(BaseModel):
    """Every case's result record (in suite order) and the run's summary."""

    summary: RunSummary
    results: list[ResultRecord]


def evaluate_examples() -> dict[str, Any]:
    """Named OpenAPI examples of a ``/evaluate`` JSON body (all run on the mock target)."""
    return {
        "mock_quickstart": {
            "summary": "Two cases on the built-in mock target (it echoes; its judge counts "
            "expected words)",
            "value": {"suite": QUICK_SUITE, "target": "default"},
        },
        "support_suite": {
            "summary": "A multi-turn support suite with rubrics, its policy file inline",
            "value": {
                "suite": yaml.safe_load(CUSTOMER_SUPPORT_SUITE),
                "files": {"policies/refunds.md": REFUND_POLICY},
                "target": "default",
                "max_concurrency": 4,
            },
        },
    }
