"""Judge calls: output-token budget, time limit (closed on the wire), and the retry budget."""

from __future__ import annotations

import asyncio
import random

import pytest

from app.providers.base import CallRole, ProviderRequest
from app.providers.errors import ProviderTimeout, ProviderUnavailable
from app.providers.retry import RetryPolicy, call_with_retries
from app.providers.runtime import retry_policy
from app.settings import Settings
from testkit.fake_llm import MODES, FakeLLM, Reply
from tests.providers.conftest import (
    VERDICT_SCHEMA,
    RegistryFactory,
    anthropic_target,
    gemini_target,
    openai_target,
    parse_targets,
    request_for,
)


def judge_request(**options: object) -> ProviderRequest:
    request = request_for(schema=VERDICT_SCHEMA, role=CallRole.JUDGE)
    if options:
        merged = request.options.model_copy(update=options)
        request = request.model_copy(update={"options": merged})
    return request


async def test_judge_calls_carry_the_judge_budget_and_candidate_calls_do_not(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    registry = make_registry(
        [openai_target(fake_llm.url), anthropic_target(fake_llm.url), gemini_target(fake_llm.url),
         {**openai_target(fake_llm.url, judge_max_output_tokens=300), "name": "small"}]
    )  # fmt: skip
    for name in ("gpt", "claude", "gem", "small"):
        await registry.get(name).complete(judge_request())
    await registry.get("gpt").complete(request_for())
    await registry.get("gpt").complete(judge_request(max_output_tokens=77))

    gpt, claude, gem, small, candidate, explicit = (r.json for r in fake_llm.requests)
    assert gpt["max_tokens"] == 1024  # EVAL_JUDGE_MAX_OUTPUT_TOKENS
    assert claude["max_tokens"] == 1024  # not Anthropic's 4096 default
    assert gem["generationConfig"]["maxOutputTokens"] == 1024
    assert small["max_tokens"] == 300
    assert "max_tokens" not in candidate
    assert explicit["max_tokens"] == 77


async def test_a_judge_that_runs_away_stops_at_the_budget(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    fake_llm.responder = MODES["runaway"]
    target = openai_target(fake_llm.url, judge_max_output_tokens=200)
    reply = await make_registry([target]).get("gpt").complete(judge_request())

    assert reply.finish_reason == "length"
    assert reply.cut_at_budget
    assert (reply.usage.output_tokens or 0) >= 200
    assert len(fake_llm.requests) == 1


async def test_a_judge_that_never_ends_is_cut_at_its_time_limit_and_the_request_closed(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    fake_llm.responder = MODES["runaway-unbounded"]
    target = openai_target(fake_llm.url, judge_timeout_seconds=0.3, max_retries=0)
    runtime = make_registry([target]).get("gpt")

    with pytest.raises(ProviderTimeout) as caught:
        await runtime.complete(judge_request())

    async with asyncio.timeout(5):
        while fake_llm.disconnects < 1:  # noqa: ASYNC110 - the server runs in a thread
            await asyncio.sleep(0.01)
    assert fake_llm.disconnects == 1
    assert len(fake_llm.requests) == 1
    assert caught.value.detail.startswith("target 'gpt' (openai): 1 try in ")
    assert "no reply within 0.3s (request closed)" in caught.value.detail
    limits = runtime.describe().retries
    assert limits[CallRole.JUDGE].attempt_timeout_seconds == 0.3
    assert limits[CallRole.CANDIDATE].attempt_timeout_seconds == 120.0


def test_judge_time_limit_and_budget_default_to_the_settings() -> None:
    (target,) = parse_targets([openai_target("http://127.0.0.1:9")])
    settings = Settings(judge_timeout_seconds=45, retry_budget_seconds=12)
    judge = retry_policy(settings, target, CallRole.JUDGE)
    candidate = retry_policy(settings, target, CallRole.CANDIDATE)
    assert (judge.attempt_timeout_seconds, candidate.attempt_timeout_seconds) == (45, 120)
    assert judge.budget_seconds == candidate.budget_seconds == 12


class FakeClock:
    """Time that passes only when the retry loop sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


async def server_down_until(restart_ends: float, policy: RetryPolicy) -> tuple[bool, list[float]]:
    """Whether a call rides out a restart ending at ``restart_ends``; when each try began."""
    clock = FakeClock()
    tried: list[float] = []

    async def attempt() -> str:
        tried.append(clock.now)
        if clock.now < restart_ends:
            raise ProviderUnavailable("no connection", target="local")
        return "up"

    try:
        await call_with_retries(
            attempt, policy, sleep=clock.sleep, clock=clock, rng=random.Random(7)
        )
    except ProviderUnavailable:
        return False, tried
    return True, tried


async def test_a_retry_budget_rides_out_a_restart_the_default_count_does_not() -> None:
    defaults, sized = parse_targets(
        [openai_target("http://127.0.0.1:9"),
         {**openai_target("http://127.0.0.1:9", max_retries=50, retry_budget_seconds=40),
          "name": "sized"}]
    )  # fmt: skip
    settings = Settings()

    survived, _ = await server_down_until(20.0, retry_policy(settings, defaults))
    assert not survived  # 5 attempts back off about 15 s at most
    survived, tried = await server_down_until(20.0, retry_policy(settings, sized))
    assert survived
    assert tried[-1] >= 20.0


async def test_no_retry_starts_after_the_retry_budget() -> None:
    policy = RetryPolicy(
        base_seconds=1, cap_seconds=1, max_attempts=1000, attempt_timeout_seconds=5,
        deadline_seconds=600, budget_seconds=10,
    )  # fmt: skip
    survived, tried = await server_down_until(float("inf"), policy)
    assert not survived
    assert all(start <= 10 for start in tried)
    assert 5 < len(tried) < 1000  # the budget ended it, not the count


async def test_a_retried_judge_call_reports_every_try(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    fake_llm.script(Reply(status=503), Reply(status=502))
    reply = await make_registry([openai_target(fake_llm.url)]).get("gpt").complete(judge_request())
    assert [(a.outcome, a.status) for a in reply.attempts] == [
        ("provider-unavailable", 503), ("provider-unavailable", 502), ("ok", 200)
    ]  # fmt: skip
    assert [r.status for r in fake_llm.requests] == [503, 502, 200]
