"""A run survives SIGKILL (and SIGTERM) of a real uvicorn process and completes on restart."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from testkit.fake_llm import JUDGE_MARKER, FakeLLM
from testkit.server import running_service

pytestmark = pytest.mark.slow
CASES = 24


def service_env(tmp_path: Path, fake: FakeLLM) -> dict[str, str]:
    targets = tmp_path / "targets.yaml"
    target = {"name": "fake", "provider": "openai", "base_url": f"{fake.url}/v1", "model": "m"}
    targets.write_text(yaml.safe_dump({"targets": [target]}), encoding="utf-8")
    return {
        "PATH": os.environ.get("PATH", ""),  # noqa: TID251
        "EVAL_DATA_DIR": str(tmp_path / "data"),
        "EVAL_TARGETS_FILE": str(targets),
        "EVAL_LOG_LEVEL": "WARNING",
        # A restarted process is a new lease holder: it takes over once the killed one's
        # lease expires.
        "EVAL_RUN_LEASE_SECONDS": "3",
    }


def wait_for(url: str, run_id: str, predicate: Any, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}", timeout=5).json()
        if predicate(run):
            return run
        time.sleep(0.05)
    raise TimeoutError(f"run {run_id} did not get there: {run}")


def stored_case_ids(data_dir: Path, run_id: str) -> set[str]:
    with sqlite3.connect(data_dir / "eval.db") as connection:
        rows = connection.execute("SELECT eval_id FROM results WHERE run_id = ?", (run_id,))
        return {eval_id for (eval_id,) in rows}


def calls_per_case(fake: FakeLLM) -> Counter[str]:
    counts: Counter[str] = Counter()
    for recorded in fake.requests:
        text = recorded.messages_text()
        if JUDGE_MARKER in text:
            continue
        for index in range(CASES):
            if f"Question {index}?" in text:
                counts[f"c{index}"] += 1
    return counts


def submit(url: str) -> str:
    suite = {
        "dataset": "crash",
        "evalcases": [
            {
                "id": f"c{index}",
                "expected_outcome": f"Answers {index}.",
                "input_messages": [{"role": "user", "content": f"Question {index}?"}],
            }
            for index in range(CASES)
        ],
    }
    body = {"suite": suite, "target": "fake", "max_concurrency": 2}
    response = httpx.post(f"{url}/runs", json=body, timeout=10)
    assert response.status_code == 202
    run_id: str = response.json()["id"]
    return run_id


def interrupt(url: str, process: subprocess.Popen[bytes], run_id: str, done: int, sig: int) -> None:
    wait_for(url, run_id, lambda run: run["progress"]["done"] >= done)
    process.send_signal(sig)
    process.wait(timeout=20)


def test_a_run_killed_then_stopped_mid_way_completes_after_restarts_without_repeats(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.latency = 0.1
    env = service_env(tmp_path, fake_llm)
    data_dir = tmp_path / "data"
    with running_service(env) as (url, process):
        run_id = submit(url)
        interrupt(url, process, run_id, 4, signal.SIGKILL)
    after_kill, calls_at_kill = stored_case_ids(data_dir, run_id), calls_per_case(fake_llm)
    with running_service(env) as (url, process):
        interrupt(url, process, run_id, len(after_kill) + 4, signal.SIGTERM)
    after_term, calls_at_term = stored_case_ids(data_dir, run_id), calls_per_case(fake_llm)
    assert 4 <= len(after_kill) < len(after_term) < CASES

    with running_service(env) as (url, _):
        run = wait_for(url, run_id, lambda run: run["status"] == "completed")
        export = httpx.get(
            f"{url}/runs/{run_id}/results", headers={"accept": "application/x-ndjson"}, timeout=10
        )
    ids = [line.split('"eval_id":"', 1)[1].split('"', 1)[0] for line in export.text.splitlines()]
    assert run["progress"] == {"done": CASES, "total": CASES}
    assert sorted(ids) == sorted(f"c{index}" for index in range(CASES))
    calls = calls_per_case(fake_llm)
    # A case stored before an interruption is never called again afterwards.
    assert {case: calls[case] for case in after_kill} == {c: calls_at_kill[c] for c in after_kill}
    assert {case: calls[case] for case in after_term} == {c: calls_at_term[c] for c in after_term}
    assert set(calls) == {f"c{index}" for index in range(CASES)}
