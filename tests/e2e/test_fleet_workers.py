"""Two ``eval-worker`` processes share one run on PostgreSQL: claims, a kill -9, fleet limits.

Real processes: an API (uvicorn, running no case itself), two workers, the fake LLM server
and the test PostgreSQL (``EVAL_TEST_POSTGRES_URL``). Candidates call the fake server; the
judge is the built-in mock target, so every request the fake server sees is a candidate's.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from testkit.fake_llm import FakeLLM
from testkit.server import running_service, running_worker, wait_until_healthy
from tests.runs.conftest import _reset_postgres, postgres_url

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
CASES = 2000
START = 120.0
"""Seconds each process may take to start: imports alone took 14 s at load 12 on 2 cores."""


def slow_start(url: str, process: subprocess.Popen[bytes]) -> None:
    wait_until_healthy(url, process, timeout=START)


@pytest.fixture
def database() -> str:
    url = postgres_url()
    if url is None:
        pytest.skip("PostgreSQL tests need EVAL_TEST_POSTGRES_URL (see scripts/ci_postgres.sh)")
    asyncio.run(_reset_postgres(url))
    return url


def fleet_env(tmp_path: Path, fake: FakeLLM, database: str, limit: int) -> dict[str, str]:
    targets = tmp_path / "targets.yaml"
    target = {"name": "fake", "provider": "openai", "base_url": f"{fake.url}/v1", "model": "m",
              "max_concurrency": limit}  # fmt: skip
    targets.write_text(yaml.safe_dump({"targets": [target]}), encoding="utf-8")
    return {
        "PATH": os.environ.get("PATH", ""),  # noqa: TID251
        "EVAL_DATA_DIR": str(tmp_path / "data"),
        "EVAL_TARGETS_FILE": str(targets),
        "EVAL_DATABASE_URL": database,
        "EVAL_LOG_LEVEL": "WARNING",
        "EVAL_EXECUTE_CASES": "false",
        "EVAL_CLAIM_TIMEOUT_SECONDS": "2",
        "EVAL_SAMPLE_RUN": "false",  # the workers' shares count this test's run only
    }


def submit(url: str, concurrency: int) -> str:
    cases = [
        {"id": f"c{index}", "expected_outcome": f"Answers {index}.",
         "input_messages": [{"role": "user", "content": f"Question {index}?"}]}
        for index in range(CASES)
    ]  # fmt: skip
    body = {"suite": {"dataset": "fleet", "evalcases": cases}, "target": "fake",
            "judge_target": "default", "max_concurrency": concurrency}  # fmt: skip
    response = httpx.post(f"{url}/runs", json=body, timeout=30)
    assert response.status_code == 202, response.text
    run_id: str = response.json()["id"]
    return run_id


def wait_for(url: str, run_id: str, predicate: Any, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}", timeout=10).json()
        if predicate(run):
            return run
        time.sleep(0.1)
    raise TimeoutError(f"run {run_id} did not get there: {run}")


def finished_by_worker(metrics_url: str, outcome: str = "stored") -> int:
    """Claimed cases the worker ended with ``outcome`` (``stored``: cases it stored)."""
    text = httpx.get(metrics_url, timeout=5).text
    found = re.findall(
        rf'eval_worker_cases_finished_total\{{[^}}]*outcome="{outcome}"[^}}]*\}} (\S+)', text
    )
    return int(sum(float(value) for value in found))


def exported_ids(url: str, run_id: str) -> list[str]:
    export = httpx.get(
        f"{url}/runs/{run_id}/results", headers={"accept": "application/x-ndjson"}, timeout=30
    )
    return [line.split('"eval_id":"', 1)[1].split('"', 1)[0] for line in export.text.splitlines()]


def calls_per_case(fake: FakeLLM) -> Counter[str]:
    pattern = re.compile(r"Question (\d+)\?")
    counts: Counter[str] = Counter()
    for recorded in list(fake.requests):
        match = pattern.search(recorded.messages_text())
        if match:
            counts[f"c{match.group(1)}"] += 1
    return counts


@pytest.fixture
def fleet(
    tmp_path: Path, fake_llm: FakeLLM, database: str, request: pytest.FixtureRequest
) -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    """The API and two workers; the target's limit is the test's ``limit`` mark (default 200)."""
    marker = request.node.get_closest_marker("limit")
    env = fleet_env(tmp_path, fake_llm, database, marker.args[0] if marker else 200)
    with ExitStack() as stack:
        url, _ = stack.enter_context(running_service(env, wait=slow_start))
        workers = [stack.enter_context(running_worker(env, start_seconds=START)) for _ in range(2)]
        yield url, workers


def test_two_workers_share_a_run_fairly_and_call_the_provider_once_per_case(
    fleet: tuple[str, list[tuple[str, Any]]], fake_llm: FakeLLM
) -> None:
    fake_llm.latency = 0.01
    url, workers = fleet
    run_id = submit(url, concurrency=40)
    run = wait_for(url, run_id, lambda run: run["status"] == "completed")

    shares = [finished_by_worker(metrics) for metrics, _ in workers]
    skipped = sum(finished_by_worker(metrics, "skipped") for metrics, _ in workers)
    assert run["progress"] == {"done": CASES, "total": CASES}
    assert sum(shares) == CASES  # each stored once (2030-2114 counted under load before)
    assert min(shares) >= CASES / 3, shares
    assert sorted(exported_ids(url, run_id)) == sorted(f"c{i}" for i in range(CASES))
    calls = calls_per_case(fake_llm)
    assert len(calls) == CASES
    # Once per case, unless a worker starved of CPU past the claim timeout (2 s here) lost
    # its claim to the other: that second run stores nothing and is counted as skipped.
    assert sum(calls.values()) - CASES <= skipped, (max(calls.values()), skipped)


def test_a_worker_killed_mid_run_loses_nothing_and_repeats_only_its_cases_in_flight(
    fleet: tuple[str, list[tuple[str, Any]]], fake_llm: FakeLLM
) -> None:
    fake_llm.latency = 0.02
    url, workers = fleet
    concurrency = 40
    run_id = submit(url, concurrency=concurrency)
    wait_for(url, run_id, lambda run: run["progress"]["done"] >= CASES // 4)
    workers[0][1].send_signal(signal.SIGKILL)
    workers[0][1].wait(timeout=10)
    run = wait_for(url, run_id, lambda run: run["status"] == "completed")

    ids = exported_ids(url, run_id)
    assert run["progress"] == {"done": CASES, "total": CASES}
    assert len(ids) == len(set(ids)) == CASES
    repeated = [case for case, count in calls_per_case(fake_llm).items() if count > 1]
    # Only the cases the killed worker had at the provider: at most the run's limit.
    assert len(repeated) <= concurrency


@pytest.mark.limit(20)
def test_a_target_limit_holds_across_both_workers(
    fleet: tuple[str, list[tuple[str, Any]]], fake_llm: FakeLLM
) -> None:
    fake_llm.latency = 0.05
    url, _ = fleet
    run_id = submit(url, concurrency=200)
    wait_for(url, run_id, lambda run: run["status"] == "completed")

    assert fake_llm.peak_in_flight <= 20
    assert fake_llm.peak_in_flight >= 15  # the limit is used, not just respected
