"""A run on three targets survives SIGKILL: no (case, arm) lost, none stored or called twice."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections import Counter
from pathlib import Path

import httpx
import pytest
import yaml

from testkit.fake_llm import FakeLLM
from testkit.server import running_service
from tests.e2e.test_crash_recovery import interrupt, wait_for

pytestmark = pytest.mark.slow
CASES = 12
TARGETS = ("a", "b", "c")


def service_env(tmp_path: Path, fake: FakeLLM) -> dict[str, str]:
    targets = tmp_path / "targets.yaml"
    listed = [
        {"name": name, "provider": "openai", "base_url": f"{fake.url}/v1", "model": f"m{name}"}
        for name in TARGETS
    ]
    targets.write_text(yaml.safe_dump({"targets": listed}), encoding="utf-8")
    return {
        "PATH": os.environ.get("PATH", ""),  # noqa: TID251
        "EVAL_DATA_DIR": str(tmp_path / "data"),
        "EVAL_TARGETS_FILE": str(targets),
        "EVAL_LOG_LEVEL": "WARNING",
    }


def stored(data_dir: Path, run_id: str) -> list[tuple[str, int]]:
    with sqlite3.connect(data_dir / "eval.db") as connection:
        rows = connection.execute("SELECT eval_id, arm FROM results WHERE run_id = ?", (run_id,))
        return [(eval_id, arm) for eval_id, arm in rows]


def calls(fake: FakeLLM) -> Counter[tuple[str, int]]:
    counts: Counter[tuple[str, int]] = Counter()
    for recorded in fake.requests:
        text = recorded.messages_text()
        arm = TARGETS.index(recorded.json["model"][1:])
        for index in range(CASES):
            if f"Question {index}?" in text:
                counts[f"c{index}", arm] += 1
    return counts


def test_a_run_with_three_arms_killed_mid_way_completes_with_each_case_and_arm_once(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.latency = 0.1
    env = service_env(tmp_path, fake_llm)
    data_dir = tmp_path / "data"
    suite = {
        "dataset": "crash-arms",
        "evalcases": [
            {
                "id": f"c{index}",
                "input_messages": [{"role": "user", "content": f"Question {index}?"}],
                "evaluators": [{"name": "any", "type": "is_json", "negate": True}],
            }
            for index in range(CASES)
        ],
    }
    with running_service(env) as (url, process):
        body = {"suite": suite, "targets": list(TARGETS), "max_concurrency": 1}
        response = httpx.post(f"{url}/runs", json=body, timeout=10)
        assert response.status_code == 202, response.text
        run_id = response.json()["id"]
        interrupt(url, process, run_id, 6, signal.SIGKILL)
    before, calls_before = stored(data_dir, run_id), calls(fake_llm)
    total = CASES * len(TARGETS)
    assert 6 <= len(before) < total

    with running_service(env) as (url, _):
        run = wait_for(url, run_id, lambda run: run["status"] == "completed")
    after = stored(data_dir, run_id)
    assert run["progress"] == {"done": total, "total": total}
    assert sorted(after) == sorted((f"c{i}", arm) for i in range(CASES) for arm in range(3))
    final = calls(fake_llm)
    # A (case, arm) stored before the kill was never sent to its target again.
    assert {key: final[key] for key in before} == {key: calls_before[key] for key in before}
    assert [arm["summary"]["total"] for arm in run["summary"]["arms"]] == [CASES] * 3
