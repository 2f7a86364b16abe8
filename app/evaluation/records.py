"""The result record: one JSON object per case (also one JSONL line). Never holds a secret."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.evaluation.arms import RunArm
from app.evaluation.tool_loop import CandidateStep
from app.evaluators.results import CaseStatus, EvaluatorRawRequest, EvaluatorResult, Verdict
from app.formatting.messages import ChatMessage
from app.providers.base import ToolCall


class RawRequest(BaseModel):
    """What the candidate was given."""

    model_config = ConfigDict(populate_by_name=True)
    question: str
    guidelines: str
    guideline_paths: list[str]
    chat_prompt: list[ChatMessage] = Field(alias="chatPrompt")


class TokenUsage(BaseModel):
    """Tokens of one role's calls (summed over every reply received)."""

    input_tokens: int = 0
    output_tokens: int = 0


class RoleUsage(BaseModel):
    """Token usage split by role."""

    candidate: TokenUsage = Field(default_factory=TokenUsage)
    judge: TokenUsage = Field(default_factory=TokenUsage)


class TargetUsage(BaseModel):
    """One target's calls in a case, whichever role they were for (candidate, judges)."""

    requests: int = Field(
        0, description="Requests actually sent: failed tries included, cached replies not."
    )
    input_tokens: int = 0
    output_tokens: int = 0

    def plus(self, other: TargetUsage) -> TargetUsage:
        """This usage and ``other`` together."""
        return TargetUsage(
            requests=self.requests + other.requests,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


class RoleLatency(BaseModel):
    """Milliseconds spent in each role's calls, failed ones and retry waits included."""

    candidate: float | None = None
    judge: float | None = None


class RoleCost(BaseModel):
    """US dollars per role, summed over the calls whose target reported a cost."""

    candidate: float | None = None
    judge: float | None = None

    def total(self) -> float | None:
        """Every role's cost together (None when no call reported or was priced)."""
        known = [spent for spent in (self.candidate, self.judge) if spent is not None]
        return sum(known) if known else None


class RoleAttempts(BaseModel):
    """Requests actually sent per role: retries, fallbacks and judge re-asks included."""

    candidate: int = 0
    judge: int = 0


class TrialRun(BaseModel):
    """One trial of a case."""

    trial: int
    status: CaseStatus
    score: float | None
    passed: bool
    candidate_answer: str | None = None
    error: str | None = None


class ScoreSpread(BaseModel):
    """How the trials' scores spread (None without scores)."""

    mean: float | None = None
    std_dev: float | None = Field(None, description="Sample standard deviation (0 for one).")
    min: float | None = None
    max: float | None = None


class TrialsSummary(BaseModel):
    """A case's trials: the strategy, how many passed, pass@k and the spread of scores."""

    requested: int
    count: int = Field(description="Trials run (fewer than requested after an early exit).")
    strategy: Literal["pass_any", "pass_all", "mean"]
    passed: int
    pass_at_k: dict[str, float] = Field(
        description="pass@k by k: the chance that one of k trials passes (unbiased estimate)."
    )
    scores: ScoreSpread
    runs: list[TrialRun]


TurnStatus = Literal["passed", "borderline", "failed", "judge_error", "error", "skipped"]


class TurnResult(BaseModel):
    """One turn of a live conversation: what the candidate saw and said, and its grade."""

    turn: int = Field(description="The turn's number, from 1.")
    status: TurnStatus = Field(
        description="As a case's status; `skipped`: not run, an earlier turn failed (`stop`)."
    )
    score: float | None = None
    verdict: Verdict | None = None
    question: str | None = Field(
        None, description="The question the candidate was given on this turn (its whole history)."
    )
    candidate_answer: str | None = None
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    evaluator_results: list[EvaluatorResult] = Field(default_factory=list)
    evaluator_raw_request: EvaluatorRawRequest | None = None
    error: str | None = None


class ResultRecord(BaseModel):
    """One case's result."""

    model_config = ConfigDict(populate_by_name=True)
    eval_id: str
    dataset: str
    conversation_id: str | None = None
    status: CaseStatus
    score: float | None
    verdict: Verdict | None
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    candidate_answer: str | None = None
    target: str
    arm: RunArm | None = Field(
        None, description="The arm of a run on several targets (null for one target)."
    )
    judge_target: str | None = None
    timestamp: datetime
    raw_request: RawRequest | None = None
    evaluator_raw_request: EvaluatorRawRequest | None = None
    evaluator_results: list[EvaluatorResult] = Field(default_factory=list)
    usage: RoleUsage = Field(default_factory=RoleUsage)
    usage_by_target: dict[str, TargetUsage] = Field(
        default_factory=dict,
        description=(
            "Requests and tokens per target called, whatever the role (a target that is both "
            "candidate and judge is one entry): `usage` and `attempts` split by target."
        ),
    )
    latency_ms: RoleLatency = Field(default_factory=RoleLatency)
    attempts: RoleAttempts = Field(
        default_factory=RoleAttempts,
        description=(
            "Requests actually sent per role, failed tries included; replies from the "
            "response cache send none."
        ),
    )
    cached: dict[str, bool] | None = Field(
        None, description="Which roles' replies came from the response cache."
    )
    cost_usd: RoleCost = Field(
        default_factory=RoleCost,
        description="What the calls cost per role, when their targets report it.",
    )
    tool_calls: list[ToolCall] = Field(
        default_factory=list,
        description="Tool calls the candidate target reported with its answer, in order.",
    )
    candidate_steps: list[CandidateStep] | None = Field(
        None,
        description=(
            "A tool-calling candidate's provider calls, one per step of its tool loop, each "
            "with its usage and latency (API targets with tools, or that called tools)."
        ),
    )
    trials: TrialsSummary | None = Field(
        None, description="A case run several times (`repeat`): each trial and pass@k."
    )
    file_changes: str | None = Field(
        None,
        description=(
            "What the candidate changed in its workspace, as a unified diff in git's format "
            "('' for nothing), when the suite has a workspace."
        ),
    )
    turns: list[TurnResult] | None = Field(
        None,
        description=(
            "A live conversation (`mode: conversation`): each turn's answer and grade. The "
            "case's score aggregates them; `candidate_answer` and `raw_request` are the last "
            "turn's, `evaluator_results` the graders of the whole conversation."
        ),
    )
    error: str | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The record as the wire shows it (aliases such as ``chatPrompt``)."""
        return self.model_dump(mode="json", by_alias=True)
