"""``POST /evaluate`` request and response models, with the examples shown in ``/docs``."""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.evaluation.records import ResultRecord
from app.evaluation.summary import RunSummary
from app.schemas.suite_examples import (
    COMPARISON_TARGETS,
    CUSTOMER_SUPPORT_SUITE,
    QUICK_SUITE,
    REFUND_POLICY,
)
from app.schemas.suites import ENV_DESCRIPTION, MAX_ENV_VALUES

MAX_ARMS = 64
"""Most entries of a request's ``targets`` (a run on more targets is better split)."""


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
    targets: list[str | dict[str, Any]] | None = Field(
        None,
        max_length=MAX_ARMS,
        description=(
            "A name (string) runs the suite on that target: two names or more make a run of "
            "one arm per target (each case runs once per arm; records and summaries say "
            "their arm; default: the suite's own list, e.g. `providers:` or `targets:`). "
            "An object is a target for this request only, in the targets-file format "
            "(`{name, provider, model, base_url, api_key, ...}`); `target`, `judge_target` "
            "or a name of this list may name one. Objects are refused unless the operator "
            "enables inline targets; their URL must pass the service's allow-list; their "
            "keys are used for the calls and never stored, logged or echoed. Objects are not "
            "accepted by durable runs, which must be able to resume."
        ),
    )

    @property
    def target_names(self) -> list[str]:
        """The targets named by ``targets`` (the run's arms when there are several)."""
        return [entry for entry in self.targets or () if isinstance(entry, str)]

    @property
    def inline_targets(self) -> list[dict[str, Any]]:
        """The targets ``targets`` defines for this request only."""
        return [entry for entry in self.targets or () if isinstance(entry, dict)]

    @model_validator(mode="after")
    def _one_way_to_name_the_target(self) -> EvaluateRequest:
        if self.target is not None and len(set(self.target_names)) > 1:
            raise ValueError(
                "targets: names several targets (arms) and target names one: send one of them"
            )
        return self


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
        "three_targets": {
            "summary": "Two cases on three mock targets at once (one arm each: summaries "
            "per arm and overall)",
            "value": {"suite": QUICK_SUITE, "targets": list(COMPARISON_TARGETS)},
        },
    }
