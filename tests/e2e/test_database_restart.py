"""The fleet survives its PostgreSQL restarting: runs complete, nothing lost or stored twice.

Real processes: an API (uvicorn, running cases too), an ``eval-worker``, the fake LLM server
and a PostgreSQL server of the test's own (``testkit.postgres``: its own data folder and
port, stopped and started by the test; the machine's clusters are never touched). Skipped
when PostgreSQL's binaries are not installed.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
import yaml

from testkit.fake_llm import FakeLLM, serve_fake_llm
from testkit.postgres import ThrowawayPostgres, throwaway_postgres
from testkit.server import ROOT, free_port, running_service, running_worker, wait_until_healthy

pytestmark = pytest.mark.slow
STALL_SECONDS = 120.0
START = 90.0
"""How long a process may take to start: on a loaded 2-core CI machine, imports alone have
taken 11 s."""


def slow_start(url: str, process: subprocess.Popen[bytes]) -> None:
    wait_until_healthy(url, process, timeout=START)


class Fleet:
    """The API and one worker on the test's PostgreSQL."""

    def __init__(self, server: ThrowawayPostgres, fake: FakeLLM, env: dict[str, str]) -> None:
        self.server = server
        self.fake = fake
        self.env = env
        self.url = ""
        self.worker_metrics = ""

    def restart_database(self, down_seconds: float = 2.0) -> None:
        self.server.stop()
        time.sleep(down_seconds)
        self.server.start()


@pytest.fixture(scope="module")
def database() -> Iterator[ThrowawayPostgres]:
    with throwaway_postgres() as server:
        if server is None:
            pytest.skip("PostgreSQL's binaries (/usr/lib/postgresql/*/bin) are not installed")
        yield server


@pytest.fixture(scope="module")
def fleet(database: ThrowawayPostgres, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    tmp = tmp_path_factory.mktemp("restart")
    with serve_fake_llm() as fake, ExitStack() as stack:
        targets = tmp / "targets.yaml"
        target = {"name": "fake", "provider": "openai", "base_url": f"{fake.url}/v1",
                  "model": "m", "max_concurrency": 50}  # fmt: skip
        targets.write_text(yaml.safe_dump({"targets": [target]}), encoding="utf-8")
        env = {
            "PATH": os.environ.get("PATH", ""),  # noqa: TID251
            "EVAL_DATA_DIR": str(tmp / "data"),
            "EVAL_TARGETS_FILE": str(targets),
            "EVAL_DATABASE_URL": database.url,
            "EVAL_LOG_LEVEL": "WARNING",
            "EVAL_SAMPLE_RUN": "false",
        }
        fleet = Fleet(database, fake, env)
        fleet.url, _ = stack.enter_context(running_service(env, wait=slow_start))
        fleet.worker_metrics, _ = stack.enter_context(running_worker(env, start_seconds=START))
        yield fleet


@pytest.fixture(autouse=True)
def database_running(database: ThrowawayPostgres) -> Iterator[None]:
    """Each test starts, and leaves, with the server up."""
    yield
    if not database.running():
        database.start()


def submit(url: str, cases: int, label: str) -> str:
    suite = [
        {"id": f"{label}{index}", "expected_outcome": f"Answers {index}.",
         "input_messages": [{"role": "user", "content": f"Question {label}{index}?"}]}
        for index in range(cases)
    ]  # fmt: skip
    body = {"suite": {"dataset": label, "evalcases": suite}, "target": "fake",
            "judge_target": "default", "max_concurrency": 20}  # fmt: skip
    response = httpx.post(f"{url}/runs", json=body, timeout=30)
    assert response.status_code == 202, response.text
    run_id: str = response.json()["id"]
    return run_id


def wait_for(what: str, check: Any, timeout: float = STALL_SECONDS) -> Any:
    """Poll ``check()`` until it returns something true (a stall bound, not a timing)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except httpx.TransportError as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(0.1)
    raise TimeoutError(f"{what}: still {last!r}")


def run_state(url: str, run_id: str) -> dict[str, Any]:
    state: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}", timeout=10).json()
    return state


def completed(url: str, run_id: str) -> dict[str, Any]:
    run: dict[str, Any] = wait_for(
        f"run {run_id}", lambda: (run := run_state(url, run_id))["status"] == "completed" and run
    )
    return run


def exported_ids(url: str, run_id: str) -> list[str]:
    export = httpx.get(
        f"{url}/runs/{run_id}/results", headers={"accept": "application/x-ndjson"}, timeout=30
    )
    return [line.split('"eval_id":"', 1)[1].split('"', 1)[0] for line in export.text.splitlines()]


def metric(metrics_url: str, name: str, **labels: str) -> float:
    """The sum of a metric's series whose labels include ``labels``."""
    total = 0.0
    for line in httpx.get(metrics_url, timeout=15).text.splitlines():
        match = re.match(rf"{name}(?:\{{([^}}]*)\}})? (\S+)$", line)
        found = (match.group(1) or "") if match else ""
        if match and all(f'{key}="{value}"' in found for key, value in labels.items()):
            total += float(match.group(2))
    return total


def readiness(url: str) -> tuple[int, dict[str, str]]:
    response = httpx.get(f"{url}/readyz", timeout=10)
    checks: dict[str, str] = response.json()["checks"]
    return response.status_code, checks


def stored(fleet: Fleet) -> tuple[float, float]:
    """Cases stored so far by the API process and by the worker."""
    name = "eval_worker_cases_finished_total"
    return (
        metric(f"{fleet.url}/metrics", name, outcome="stored"),
        metric(fleet.worker_metrics, name, outcome="stored"),
    )


def test_a_run_survives_postgresql_restarting_mid_run(fleet: Fleet) -> None:
    fleet.fake.latency = 0.05
    cases = 600
    run_id = submit(fleet.url, cases, "mid")
    wait_for("a sixth of the run", lambda: run_state(fleet.url, run_id)["progress"]["done"] >= 100)
    fleet.server.stop()
    # While it is away, both processes say which links are down.
    status, checks = wait_for(
        "the API noticing",
        lambda: (r := readiness(fleet.url))[1].get("case_queue", "ok") != "ok" and r,
        timeout=30,
    )
    assert status == 503
    assert checks["database"].startswith("failed")
    assert checks["case_queue"].startswith("down")
    assert checks["fleet_listener"].startswith("down")
    wait_for(
        "the worker noticing",
        lambda: metric(fleet.worker_metrics, "eval_database_link_up", link="case_queue") == 0,
        timeout=30,
    )
    wait_for(
        "the worker counting the outage",
        lambda: (
            metric(fleet.worker_metrics, "eval_database_link_failures_total", link="case_queue")
            >= 1
        ),
        timeout=30,
    )
    fleet.server.start()

    run = completed(fleet.url, run_id)
    ids = exported_ids(fleet.url, run_id)
    assert run["progress"] == {"done": cases, "total": cases}
    assert sorted(ids) == sorted(f"mid{index}" for index in range(cases))  # once each
    status, checks = wait_for("ready again", lambda: (r := readiness(fleet.url))[0] == 200 and r)
    assert set(checks.values()) == {"ok"}
    assert {"case_queue", "fleet_listener", "fleet_renewal", "runs_sweep"} <= set(checks)
    wait_for(
        "the worker's queue back",
        lambda: metric(fleet.worker_metrics, "eval_database_link_up", link="case_queue") == 1,
    )


def test_the_next_run_completes_after_postgresql_restarted_between_runs(fleet: Fleet) -> None:
    fleet.fake.latency = 0.01
    completed(fleet.url, submit(fleet.url, 50, "before"))
    fleet.restart_database()
    wait_for("ready again", lambda: readiness(fleet.url)[0] == 200)
    before = stored(fleet)
    run_id = submit(fleet.url, 400, "after")

    run = completed(fleet.url, run_id)
    assert run["progress"] == {"done": 400, "total": 400}
    after = stored(fleet)
    # Both processes claimed cases again: the API's queue and the worker's were reconnected.
    assert after[0] > before[0], (before, after)
    assert after[1] > before[1], (before, after)


def test_a_worker_told_to_stop_while_the_database_is_away_exits_within_5_s(
    database: ThrowawayPostgres, fleet: Fleet
) -> None:
    port = free_port()
    worker = subprocess.Popen(
        [sys.executable, "-m", "app.worker", "--metrics-port", str(port)],
        cwd=ROOT,
        env=fleet.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        metrics = f"http://127.0.0.1:{port}/metrics"
        wait_for("the worker", lambda: httpx.get(metrics, timeout=1).status_code == 200, START)
        database.stop()
        wait_for(
            "the worker noticing",
            lambda: metric(metrics, "eval_database_link_up", link="case_queue") == 0,
            timeout=30,
        )
        asked = time.monotonic()
        worker.send_signal(signal.SIGTERM)
        code = worker.wait(timeout=30)
        took = time.monotonic() - asked
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert code == 0
    assert took < 5.0  # the acceptance bound (it took ~34 s before)
