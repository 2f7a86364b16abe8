"""Scripted targets implementing the runtime protocol, for evaluator and orchestrator tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from app.evaluation.context import RunnableTarget
from app.evaluators.config import EvaluatorConfig
from app.formatting.messages import Message
from app.providers.base import (
    CallRole,
    ModelOptions,
    ProviderKind,
    ProviderRequest,
    ProviderResponse,
    Usage,
)
from app.providers.errors import ProviderUnavailable, UnknownTarget
from app.suites.model import EvalCase

Reply = str | Callable[[ProviderRequest], str]


def verdict_json(score: float = 0.9, **extra: object) -> str:
    body = {"score": score, "hits": ["covers the point"], "misses": [], "reasoning": "fine"}
    body.update(extra)
    return json.dumps(body)


@dataclass
class ScriptedTarget:
    """Answers candidate calls with ``candidate`` and judge calls from ``judge_replies`` in turn."""

    name: str = "fake"
    kind: ProviderKind = "api"
    judge_target: str | None = None
    system_prompt: str | None = None
    max_concurrency: int | None = None
    candidate: Reply = "candidate answer"
    judge_replies: list[Reply] = field(default_factory=lambda: [verdict_json()])
    delay: float = 0.0
    fail_cases: frozenset[str] = frozenset()
    requests: list[ProviderRequest] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0
    busy_at: int = 0
    busy: asyncio.Event = field(default_factory=asyncio.Event)

    def untaken_options(self, options: ModelOptions) -> list[str]:
        return []  # a scripted reply takes every option

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        self.requests.append(request)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.busy_at and self.in_flight >= self.busy_at:
            self.busy.set()
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if request.role is CallRole.CANDIDATE and request.case_id in self.fail_cases:
                raise ProviderUnavailable("upstream 503 after retries", target=self.name)
            if request.role is CallRole.CANDIDATE:
                reply = self.candidate
            else:
                judge_calls = sum(1 for r in self.requests if r.role is CallRole.JUDGE)
                reply = self.judge_replies[min(judge_calls, len(self.judge_replies)) - 1]
            text = reply(request) if callable(reply) else reply
            return ProviderResponse(text=text, usage=Usage(input_tokens=10, output_tokens=5))
        finally:
            self.in_flight -= 1

    def judge_requests(self) -> list[ProviderRequest]:
        return [r for r in self.requests if r.role is CallRole.JUDGE]


@dataclass
class FakeTargets:
    targets: Mapping[str, RunnableTarget]

    def get(self, name: str) -> RunnableTarget:
        if name not in self.targets:
            raise UnknownTarget(name, self.targets)
        return self.targets[name]

    def names(self) -> list[str]:
        return list(self.targets)


def make_case(
    case_id: str = "c1",
    *,
    text: str = "What is 2+2?",
    messages: tuple[Message, ...] | None = None,
    evaluators: tuple[EvaluatorConfig, ...] = (),
    reference: str = "",
) -> EvalCase:
    return EvalCase(
        id=case_id,
        expected_outcome="Says 4",
        input_messages=messages or (Message(role="user", content=text),),
        reference_answer=reference,
        evaluators=evaluators,
    )
