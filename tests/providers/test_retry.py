"""The retry policy: what is retried, how long it waits, and what fails fast."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from app.providers.errors import (
    ProviderQuotaExhausted,
    ProviderRateLimited,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
)
from app.providers.retry import RetryPolicy, full_jitter, parse_retry_after
from testkit.fake_llm import Reply, error
from tests.providers.conftest import (
    SleepRecorder,
    anthropic_target,
    azure_target,
    gemini_target,
    openai_target,
    request_for,
)


async def test_429_waits_exactly_the_retry_after_seconds_then_succeeds(fake_llm, make_registry):
    sleep = SleepRecorder()
    registry = make_registry([openai_target(fake_llm.url)], sleep=sleep)
    fake_llm.script(error(429, "slow down", retry_after="7"))
    reply = await registry.get("gpt").complete(request_for())
    assert reply.text == "What is 2+2?"
    assert sleep.delays == [7.0]
    assert len(fake_llm.requests) == 2


async def test_retry_after_http_date_is_honoured(fake_llm, make_registry):
    sleep = SleepRecorder()
    registry = make_registry([anthropic_target(fake_llm.url)], sleep=sleep)
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    fake_llm.script(error(429, "rate limited", retry_after=when))
    await registry.get("claude").complete(request_for())
    assert len(sleep.delays) == 1
    assert 17 <= sleep.delays[0] <= 20


async def test_retry_after_ms_takes_precedence(fake_llm, make_registry):
    sleep = SleepRecorder()
    registry = make_registry([azure_target(fake_llm.url)], sleep=sleep)
    fake_llm.script(error(429, "busy", retry_after="9", headers={"retry-after-ms": "1500"}))
    await registry.get("az").complete(request_for())
    assert sleep.delays == [1.5]


async def test_gemini_retry_info_delay_is_honoured(fake_llm, make_registry):
    sleep = SleepRecorder()
    registry = make_registry([gemini_target(fake_llm.url)], sleep=sleep)
    body = {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED",
                      "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                   "retryDelay": "12s"}]}}  # fmt: skip
    fake_llm.script(Reply(status=429, body=body))
    await registry.get("gem").complete(request_for())
    assert sleep.delays == [12.0]


async def test_server_errors_back_off_with_full_jitter_within_the_cap(fake_llm, make_registry):
    sleep = SleepRecorder()
    registry = make_registry(
        [openai_target(fake_llm.url)], sleep=sleep, retry_base_seconds=2, retry_cap_seconds=5
    )
    fake_llm.script(error(500), error(502), error(503), error(529))
    await registry.get("gpt").complete(request_for())
    assert len(fake_llm.requests) == 5
    assert len(sleep.delays) == 4
    for attempt, delay in enumerate(sleep.delays, start=1):
        assert 0 <= delay <= min(5, 2 * 2 ** (attempt - 1))


async def test_attempts_are_capped_and_the_last_error_names_the_target(fake_llm, make_registry):
    registry = make_registry([openai_target(fake_llm.url)], retry_max_attempts=3)
    fake_llm.script(*[error(429, "Rate limit reached for gpt-test", retry_after="2")] * 5)
    with pytest.raises(ProviderRateLimited) as caught:
        await registry.get("gpt").complete(request_for())
    assert len(fake_llm.requests) == 3
    assert caught.value.status == 503
    assert caught.value.headers["Retry-After"] == "2"
    assert "'gpt'" in caught.value.detail
    assert "Rate limit reached for gpt-test" in caught.value.detail


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_never_retried(fake_llm, make_registry, status):
    sleep = SleepRecorder()
    registry = make_registry([openai_target(fake_llm.url)], sleep=sleep)
    fake_llm.script(error(status, "nope"))
    with pytest.raises(ProviderRejected) as caught:
        await registry.get("gpt").complete(request_for())
    assert len(fake_llm.requests) == 1
    assert sleep.delays == []
    assert caught.value.upstream_status == status


@pytest.mark.parametrize(
    ("make_target", "reply"),
    [
        (openai_target, error(429, "You exceeded your current quota", code="insufficient_quota")),
        (anthropic_target, Reply(status=429, body={"type": "error", "error": {
            "type": "rate_limit_error", "message": "spend cap",
            "details": {"error_code": "enforced_spend_limit_reached"}}})),
        (gemini_target, Reply(status=429, body={"error": {
            "code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                {"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}})),
        (anthropic_target, error(402, "billing")),
    ],
    ids=["openai-insufficient-quota", "anthropic-spend-limit", "gemini-per-day", "402"],
)  # fmt: skip
async def test_quota_exhaustion_fails_fast(fake_llm, make_registry, make_target, reply):
    sleep = SleepRecorder()
    target = make_target(fake_llm.url)
    registry = make_registry([target], sleep=sleep)
    fake_llm.script(reply, Reply())
    with pytest.raises(ProviderQuotaExhausted):
        await registry.get(target["name"]).complete(request_for())
    assert len(fake_llm.requests) == 1
    assert sleep.delays == []


@pytest.mark.parametrize("status", [408, 409])
async def test_timeout_and_conflict_statuses_are_retried(fake_llm, make_registry, status):
    registry = make_registry([openai_target(fake_llm.url)])
    fake_llm.script(error(status))
    await registry.get("gpt").complete(request_for())
    assert len(fake_llm.requests) == 2


async def test_connection_errors_are_retried_then_reported(make_registry):
    sleep = SleepRecorder()
    registry = make_registry(
        [openai_target("http://127.0.0.1:9")], sleep=sleep, retry_max_attempts=2
    )
    with pytest.raises(ProviderUnavailable) as caught:
        await registry.get("gpt").complete(request_for())
    assert len(sleep.delays) == 1
    detail = caught.value.detail
    assert detail.startswith("target 'gpt' (openai): 2 tries in ")
    assert "127.0.0.1" not in detail  # the target's address is never shown
    assert "cannot connect (Connection refused)" in detail
    assert "last: no connection (ClientConnectorError" in detail
    assert "OpenAI" not in detail  # the server is OpenAI-compatible, not OpenAI
    assert caught.value.extra["tries"] == 2
    assert [a.outcome for a in caught.value.attempts] == ["provider-unavailable"] * 2


async def test_a_hung_attempt_times_out_and_is_retried(fake_llm, make_registry):
    registry = make_registry([openai_target(fake_llm.url)], provider_attempt_timeout_seconds=0.3)
    fake_llm.script(Reply(hang=True))
    reply = await registry.get("gpt").complete(request_for())
    assert reply.text == "What is 2+2?"
    assert len(fake_llm.requests) == 2


async def test_the_overall_deadline_ends_the_call(fake_llm, make_registry):
    registry = make_registry(
        [openai_target(fake_llm.url)],
        provider_attempt_timeout_seconds=5,
        provider_deadline_seconds=0.3,
    )
    fake_llm.script(Reply(hang=True))
    with pytest.raises(ProviderTimeout) as caught:
        await registry.get("gpt").complete(request_for())
    assert caught.value.status == 504
    assert "deadline" in caught.value.detail


async def test_a_retry_after_beyond_the_deadline_is_not_waited_for(fake_llm, make_registry):
    sleep = SleepRecorder()
    registry = make_registry(
        [openai_target(fake_llm.url)], sleep=sleep, provider_deadline_seconds=10
    )
    fake_llm.script(error(429, "later", retry_after="60"))
    with pytest.raises(ProviderRateLimited) as caught:
        await registry.get("gpt").complete(request_for())
    assert sleep.delays == []
    assert caught.value.headers["Retry-After"] == "60"


async def test_target_retry_keys_override_the_settings(fake_llm, make_registry):
    sleep = SleepRecorder()
    target = openai_target(fake_llm.url, max_retries=1, retry_initial_delay_ms=100,
                           retry_max_delay_ms=100)  # fmt: skip
    registry = make_registry([target], sleep=sleep)
    fake_llm.script(error(500), error(500), Reply())
    with pytest.raises(ProviderUnavailable):
        await registry.get("gpt").complete(request_for())
    assert len(fake_llm.requests) == 2
    assert all(0 <= d <= 0.1 for d in sleep.delays)


def test_parse_retry_after_reads_seconds_dates_and_milliseconds():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    date = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": date}, now=lambda: now) == 30.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_full_jitter_stays_between_zero_and_the_capped_exponential_step():
    policy = RetryPolicy(
        base_seconds=1,
        cap_seconds=30,
        max_attempts=5,
        attempt_timeout_seconds=120,
        deadline_seconds=600,
    )
    rng = random.Random(1)
    for attempt in range(1, 10):
        values = [full_jitter(policy, attempt, rng) for _ in range(50)]
        ceiling = min(30, 2 ** (attempt - 1))
        assert all(0 <= v <= ceiling for v in values)
        assert max(values) > ceiling / 2
