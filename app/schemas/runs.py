"""Durable runs API: request and response models, with the examples shown in ``/docs``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.evaluation.arms import RunArm
from app.evaluation.summary import RunSummary
from app.evaluators.config import EvaluatorConfig
from app.schemas.evaluate import EvaluateRequest
from app.schemas.suite_examples import COMPARISON_TARGETS, QUICK_SUITE

RunStatusName = Literal["queued", "running", "completed", "cancelled", "failed"]
CaseStatusName = Literal["passed", "borderline", "failed", "judge_error", "error"]
NDJSON_MEDIA_TYPE = "application/x-ndjson"
SAMPLE_RUN_ID = "run_sample"
SAMPLE_ARMS_RUN_ID = "run_sample_arms"
"""The sample run on the three mock targets (three arms): the example of ``/compare``."""
"""The run a fresh server creates on the mock target, so that ``/docs`` examples can use it."""
MAX_TAGS = 20
TAG_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/@+=-]*$"
Tag = Annotated[
    str,
    StringConstraints(min_length=1, max_length=100, pattern=TAG_PATTERN),
    Field(
        description="A letter or digit, then letters, digits and `. _ : / @ + = -` "
        "(no spaces), at most 100 characters.",
        examples=["main"],
    ),
]
TAGS_DESCRIPTION = (
    "Labels to find the run by (`GET /runs?tag=`), such as the branch or release it ran "
    f"for; at most {MAX_TAGS}, repeats count once."
)


class RunRequest(EvaluateRequest):
    """The ``/evaluate`` body, run in the background; ``cache`` turns on the response cache."""

    cache: bool = Field(
        False,
        description=(
            "Store candidate and judge replies by a hash of the exact provider request and "
            "reuse them (errors are never cached; a hit is marked in the record's `cached`)."
        ),
    )
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS, description=TAGS_DESCRIPTION)


class RunPatch(BaseModel):
    """What can change on a run: its tags."""

    model_config = ConfigDict(extra="forbid")
    tags: list[Tag] = Field(
        max_length=MAX_TAGS,
        description="The run's tags from now on (replaces them; `[]` removes every tag).",
        examples=[["main", "release-2.1"]],
    )


class RegradeRequest(BaseModel):
    """What to grade differently: new evaluators for every case and/or another judge."""

    model_config = ConfigDict(extra="forbid")
    evaluators: list[EvaluatorConfig] | None = Field(
        None,
        description=(
            "Evaluators that replace every case's own (same shape as in a suite). Graders that "
            "would run a program or call out (code graders, prompt programs, code aggregators, "
            "any `command` or `cwd`) are refused (422): programs run only as a suite file "
            "under a workspace root names them."
        ),
        examples=[[{"name": "mentions_four", "type": "contains", "value": "4"}]],
    )
    judge_target: str | None = Field(
        None,
        description="Judge target (default: the first run's judge target).",
        examples=["default"],
    )
    cache: bool | None = Field(None, description="Response cache (default: the first run's).")
    tags: list[Tag] = Field(
        default_factory=list,
        max_length=MAX_TAGS,
        description="The regrade's tags (a regrade does not take the first run's: it is "
        "another run, and a tag finds the newest run carrying it).",
    )
    keep_reviews: bool = Field(
        True,
        description="Give the regrade the verdicts people set on the first run's cases "
        "(false: the regrade's graders alone decide).",
    )


class RunProgress(BaseModel):
    """Cases finished out of all cases of the run."""

    done: int = Field(examples=[12])
    total: int = Field(examples=[40])


class RunObject(BaseModel):
    """A durable run, with the summary of the cases finished so far."""

    id: str = Field(examples=["run_5f0c6d3e8a7b4f3c9e2d1a0b"])
    status: RunStatusName
    progress: RunProgress
    summary: RunSummary | None = Field(
        None, description="Over the cases finished so far (final once the run has finished)."
    )
    target: str = Field(examples=["default"])
    judge_target: str | None = Field(None, examples=["default"])
    name: str | None = Field(
        None,
        description="The suite's name (its `dataset`, else `name`, else its file's name), or "
        "the eval's for `/v1` runs.",
        examples=["customer-support"],
    )
    tags: list[str] = Field(
        default_factory=list, description="The run's tags, sorted.", examples=[["main"]]
    )
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    kind: Literal["evaluate", "regrade"] = "evaluate"
    parent_run_id: str | None = Field(None, description="The run a regrade grades again.")
    error: str | None = Field(None, description="Why a `failed` run failed.")
    arms: list[RunArm] | None = Field(
        None,
        description=(
            "A run on several targets: its arms (each case runs once per arm); null for a "
            "run on one target."
        ),
    )


class RunList(BaseModel):
    """One page of runs, newest first."""

    runs: list[RunObject]
    next_cursor: str | None = Field(None, description="Pass as `cursor` for the next page.")


class ResultPage(BaseModel):
    """One page of a run's result records, in case order."""

    results: list[dict[str, Any]] = Field(description="Result records (see `ResultRecord`).")
    next_cursor: str | None = Field(None, description="Pass as `cursor` for the next page.")


class ProgressEvent(BaseModel):
    """The data of a ``progress`` event: cases finished out of all cases (of every arm)."""

    run_id: str = Field(examples=[SAMPLE_RUN_ID])
    done: int = Field(examples=[1])
    total: int = Field(examples=[2])
    arm: RunArm | None = Field(
        None,
        description="In a run with arms, the arm of the case just finished (absent otherwise).",
    )


class RunCompletedEvent(BaseModel):
    """The data of the ``run_completed`` event, the stream's last: final status and summary."""

    run_id: str = Field(examples=[SAMPLE_RUN_ID])
    status: RunStatusName
    done: int = Field(examples=[2])
    total: int = Field(examples=[2])
    summary: RunSummary


def sample_run_request() -> RunRequest:
    """The request of the sample run: the quick suite on the mock target ``default``."""
    return RunRequest(suite=QUICK_SUITE, target="default")


def sample_arms_request() -> RunRequest:
    """The request of the sample run with arms: the quick suite on the three mock targets."""
    return RunRequest(suite=QUICK_SUITE, targets=list(COMPARISON_TARGETS))


def regrade_examples() -> dict[str, Any]:
    """Named OpenAPI examples of a ``POST /runs/{run_id}/regrade`` body."""
    return {
        "new_evaluator": {
            "summary": "Grade every stored answer with another evaluator",
            "value": {"evaluators": [{"name": "mentions_four", "type": "contains", "value": "4"}]},
        },
        "other_judge": {
            "summary": "Grade again with another judge target",
            "value": {"judge_target": "default"},
        },
    }


def run_examples() -> dict[str, Any]:
    """Named OpenAPI examples of a ``POST /runs`` JSON body (on the mock target)."""
    return {
        "mock_quickstart": {
            "summary": "Two cases on the built-in mock target, with the response cache",
            "value": {"suite": QUICK_SUITE, "target": "default", "cache": True},
        },
        "three_targets": {
            "summary": "The same cases on three mock targets at once (one arm each); then "
            "GET /runs/{run_id}/compare",
            "value": {"suite": QUICK_SUITE, "targets": list(COMPARISON_TARGETS)},
        },
    }
