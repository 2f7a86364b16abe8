"""The result record: one JSON object per case (also one JSONL line). Never holds a secret."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.formatting.messages import ChatMessage

CaseStatus = Literal["passed", "borderline", "failed", "judge_error", "error"]
Verdict = Literal["pass", "borderline", "fail"]


class RawRequest(BaseModel):
    """What the candidate was given."""

    model_config = ConfigDict(populate_by_name=True)
    question: str
    guidelines: str
    guideline_paths: list[str]
    chat_prompt: list[ChatMessage] = Field(alias="chatPrompt")


class EvaluatorRawRequest(BaseModel):
    """What the judge was given (the first judge evaluator of the case)."""

    model_config = ConfigDict(populate_by_name=True)
    user_prompt: str = Field(alias="userPrompt")
    system_prompt: str = Field(alias="systemPrompt")
    target: str


class EvaluatorResult(BaseModel):
    """The outcome of one evaluator on one case."""

    name: str
    type: str
    score: float | None
    verdict: Verdict | None
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    weight: float = 1.0
    status: Literal["ok", "judge_error", "error"] = "ok"
    raw_output: str | None = Field(
        None, description="The judge's raw reply, kept when it could not be parsed."
    )
    details: dict[str, Any] | None = None


class TokenUsage(BaseModel):
    """Tokens of one role's calls (summed over attempts)."""

    input_tokens: int = 0
    output_tokens: int = 0


class RoleUsage(BaseModel):
    """Token usage split by role."""

    candidate: TokenUsage = Field(default_factory=TokenUsage)
    judge: TokenUsage = Field(default_factory=TokenUsage)


class RoleLatency(BaseModel):
    """Milliseconds spent in each role's calls."""

    candidate: float | None = None
    judge: float | None = None


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
    judge_target: str | None = None
    timestamp: datetime
    raw_request: RawRequest | None = None
    evaluator_raw_request: EvaluatorRawRequest | None = None
    evaluator_results: list[EvaluatorResult] = Field(default_factory=list)
    usage: RoleUsage = Field(default_factory=RoleUsage)
    latency_ms: RoleLatency = Field(default_factory=RoleLatency)
    cached: dict[str, bool] | None = Field(
        None, description="Which roles' replies came from the response cache."
    )
    error: str | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The record as the wire shows it (aliases such as ``chatPrompt``)."""
        return self.model_dump(mode="json", by_alias=True)
