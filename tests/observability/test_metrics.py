"""Prometheus metrics: HTTP counters by route template, provider recorder, scrape-time state."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.main import create_app
from app.observability.metrics import Metrics
from app.providers.limiter import LimiterState
from app.schemas.openai_examples import SAMPLE_EVAL_RUN_ID
from app.schemas.runs import SAMPLE_ARMS_RUN_ID, SAMPLE_RUN_ID
from app.settings import Settings
from tests.conftest import ClientFactory, started, wait_for_run


def samples(exposition: str | bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, keyed by name and sorted labels."""
    text = exposition.decode() if isinstance(exposition, bytes) else exposition
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_a_scrape_after_requests_counts_them_by_route_template_and_status(
    client: httpx.AsyncClient,
) -> None:
    await client.get("/healthz")
    await client.get("/healthz")
    await client.get("/no/such/route")

    response = await client.get("/metrics")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    found = samples(response.text)
    healthz = (("method", "GET"), ("route", "/healthz"), ("status", "200"))
    unmatched = (("method", "GET"), ("route", "<unmatched>"), ("status", "404"))
    assert found[("eval_http_requests_total", healthz)] == 2
    assert found[("eval_http_requests_total", unmatched)] == 1
    latency = (("le", "+Inf"), ("method", "GET"), ("route", "/healthz"))
    assert found[("eval_http_request_duration_seconds_bucket", latency)] == 2


async def test_the_limiter_of_every_target_and_role_is_read_at_scrape_time(
    client: httpx.AsyncClient,
) -> None:
    found = samples((await client.get("/metrics")).text)

    for role in ("candidate", "judge"):
        labels = (("role", role), ("target", "default"))
        assert found[("eval_provider_limiter_limit", labels)] >= 1
        assert found[("eval_provider_limiter_in_flight", labels)] == 0


async def test_apps_have_separate_registries(tmp_path: Path) -> None:
    # No sample run: its calls on the mock would be this app's own.
    app = create_app(Settings(data_dir=tmp_path / "data", sample_run=False))
    async with started(app):
        other = Metrics()
        other.record_provider_call("t", "candidate", "ok", 0.1)

        mine = samples(await app.state.metrics.scrape())

    assert not any(name.startswith("eval_provider_calls") for name, _ in mine)


async def test_provider_calls_retries_and_429s_are_counted_by_target_role_and_outcome() -> None:
    metrics = Metrics()
    metrics.record_provider_call("gpt", "candidate", "ok", 0.2)
    metrics.record_provider_call("gpt", "candidate", "rate_limited", 1.5)
    metrics.record_retry("gpt", "judge", "rate_limited")
    metrics.record_rate_limited("gpt", "judge")

    found = samples(await metrics.scrape())

    ok = (("outcome", "ok"), ("role", "candidate"), ("target", "gpt"))
    assert found[("eval_provider_calls_total", ok)] == 1
    retry = (("reason", "rate_limited"), ("role", "judge"), ("target", "gpt"))
    assert found[("eval_provider_retries_total", retry)] == 1
    assert found[("eval_provider_rate_limited_total", (("role", "judge"), ("target", "gpt")))] == 1
    duration = (("role", "candidate"), ("target", "gpt"))
    assert found[("eval_provider_call_duration_seconds_count", duration)] == 2


class CountingStore:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    async def count_by_status(self) -> dict[str, dict[str, int]]:
        if self.fail:
            raise ConnectionError("database is down")
        return {"runs": {"running": 2, "succeeded": 5}, "cases": {"pending": 7, "passed": 3}}


class FixedLimiters:
    def limiter_states(self) -> list[tuple[str, str, LimiterState]]:
        state = LimiterState(limit=2, max_limit=4, in_flight=1, waiting=0, recent_429s=3)
        return [("a", "candidate", state), ("a", "judge", state)]


async def test_runs_and_cases_by_status_come_from_the_store_counters() -> None:
    metrics = Metrics()
    metrics.watch(limiters=FixedLimiters(), statuses=CountingStore())

    found = samples(await metrics.scrape())

    assert found[("eval_runs", (("status", "running"),))] == 2
    assert found[("eval_runs", (("status", "succeeded"),))] == 5
    assert found[("eval_cases", (("status", "pending"),))] == 7


async def test_a_failing_count_leaves_the_counts_out_but_the_scrape_succeeds() -> None:
    metrics = Metrics()
    metrics.watch(limiters=FixedLimiters(), statuses=CountingStore(fail=True))
    metrics.record_provider_call("t", "judge", "ok", 1.0)

    found = samples(await metrics.scrape())

    assert not any(name in ("eval_runs", "eval_cases") for name, _ in found)
    assert any(name == "eval_provider_calls_total" for name, _ in found)


@pytest.mark.usefixtures("sample_runs")
async def test_the_stored_runs_and_cases_are_counted(
    client: httpx.AsyncClient,
) -> None:
    # A fresh server holds the sample runs: two cases that pass on the mock target, the
    # same two on the three mock targets (terse fails the second), and the /v1 sample
    # run's two given answers (one right).
    await wait_for_run(client, SAMPLE_RUN_ID)
    await wait_for_run(client, SAMPLE_ARMS_RUN_ID)
    await wait_for_run(client, SAMPLE_EVAL_RUN_ID)
    found = samples((await client.get("/metrics")).text)

    assert found[("eval_runs", (("status", "completed"),))] == 3
    assert found[("eval_cases", (("status", "passed"),))] == 3 + 5
    assert found[("eval_cases", (("status", "failed"),))] == 1 + 1
    assert found[("eval_cases", (("status", "pending"),))] == 0


async def test_limiter_states_come_from_the_watched_source() -> None:
    metrics = Metrics()
    metrics.watch(limiters=FixedLimiters(), statuses=CountingStore())

    found = samples(await metrics.scrape())

    assert found[("eval_provider_limiter_in_flight", (("role", "judge"), ("target", "a")))] == 1
    assert (
        found[("eval_provider_limiter_recent_429s", (("role", "candidate"), ("target", "a")))] == 3
    )


async def test_provider_calls_made_by_an_evaluation_are_counted(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data", sample_run=False)) as client:
        await count_an_evaluation(client)


async def count_an_evaluation(client: httpx.AsyncClient) -> None:
    suite = {
        "evalcases": [
            {
                "id": "c1",
                "expected_outcome": "Says hello",
                "input_messages": [{"role": "user", "content": "hello"}],
            }
        ]
    }
    response = await client.post("/evaluate", json={"suite": suite})
    assert response.status_code == 200, response.text
    scrape = (await client.get("/metrics")).text
    assert 'eval_provider_calls_total{outcome="ok",role="candidate",target="default"} 1.0' in scrape
    assert 'eval_provider_calls_total{outcome="ok",role="judge",target="default"} 1.0' in scrape
