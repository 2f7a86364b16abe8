"""The service's side: a uvicorn process, each case through ``POST /evaluate`` on its own."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from scripts.conformance.agentv.fake import LoggingFake
from scripts.conformance.agentv.install import TOOLS_VARIABLE
from scripts.conformance.agentv.model import CaseRun, GraderRun, SuiteRun
from scripts.conformance.agentv.peer import TARGET_NAMES
from testkit.server import running_service, wait_until_healthy

KEY = "sk-service"
_TIMEOUT_SECONDS = 180.0


def _targets(url: str) -> str:
    return json.dumps(
        [
            {"name": name, "provider": "openai", "base_url": f"{url}/v1", "api_key": KEY,
             "model": "fake-model", **({} if name == "grader" else {"judge_target": "grader"})}
            for name in TARGET_NAMES
        ]
    )  # fmt: skip


@contextmanager
def running(root: Path, fake: LoggingFake) -> Iterator[httpx.Client]:
    """The service with ``root`` as its workspace root and the fake LLM as every target."""
    with tempfile.TemporaryDirectory(prefix="service-conformance-") as data:
        env = dict(
            os.environ,
            EVAL_TARGETS=_targets(fake.url),
            EVAL_WORKSPACE_ROOTS=str(root),
            EVAL_CODE_GRADERS="true",
            EVAL_DATA_DIR=data,
            EVAL_DATABASE_URL=f"sqlite+aiosqlite:///{data}/eval.db",
            EVAL_SAMPLE_RUN="false",
            # The repositories AgentV's examples clone: allowed, as AgentV allows any (there
            # is no network here, so both sides fail to clone them alike).
            EVAL_GIT_REMOTES="https://github.com/EntityProcess/",
        )
        env.pop("EVAL_TARGETS_FILE", None)
        tools = os.environ.get(TOOLS_VARIABLE)
        if tools:  # bun and uv: /usr/local/bin links to them, the sandbox must see them
            env["EVAL_SANDBOX_RUNTIME"] = tools
        with (
            running_service(env, wait=_patient) as (url, _),
            httpx.Client(base_url=url, timeout=_TIMEOUT_SECONDS) as client,
        ):
            yield client


def _patient(url: str, process: subprocess.Popen[bytes]) -> None:
    """Wait for the service as long as a busy machine needs (start-up migrates a database)."""
    wait_until_healthy(url, process, timeout=180.0)


def _verdict(record: dict[str, Any]) -> str:
    status = record.get("status")
    return {"passed": "pass", "failed": "fail"}.get(str(status), "error")


def _graders(record: dict[str, Any]) -> list[GraderRun]:
    """The record's graders; a live conversation's turns as ``turn-N`` ones (AgentV's names)."""
    graders = [
        GraderRun(
            name=str(item.get("name")),
            type=str(item.get("type")),
            score=item.get("score"),
            passed=item.get("passed") is True
            or (item.get("passed") is None and item.get("verdict") == "pass"),
            note=None if item.get("status") == "ok" else item.get("reasoning"),
        )
        for item in record.get("evaluator_results") or []
    ]
    turns = [
        GraderRun(f"turn-{turn['turn']}", "rubrics", turn.get("score"), turn["verdict"] == "pass")
        for turn in record.get("turns") or []
        if turn.get("status") != "skipped"
    ]
    return turns + graders


def _problem(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}"
    errors = body.get("errors") if isinstance(body, dict) else None
    if isinstance(errors, list) and errors:
        return "; ".join(f"{e.get('path', '')}: {e.get('message', '')}" for e in errors[:3])
    return str(body.get("detail", body) if isinstance(body, dict) else body)


def run_suite(client: httpx.Client, suite: str, case_ids: list[str], fake: LoggingFake) -> SuiteRun:
    """Run each of ``case_ids`` of ``suite`` (a path under the root) on its own."""
    run = SuiteRun()
    for case_id in case_ids:
        fake.take()
        response = client.post(
            "/evaluate",
            json={"suite": suite, "target": "default", "case_ids": [case_id],
                  "max_concurrency": 1},
        )  # fmt: skip
        log = fake.take(KEY)
        if response.status_code != 200:
            problem = _problem(response)
            if "case" in problem.lower() and case_id in problem:
                continue
            return SuiteRun(refused=problem)
        for record in response.json().get("results", []):
            run.cases[str(record["eval_id"])] = CaseRun(
                case_id=str(record["eval_id"]),
                verdict=_verdict(record),
                score=record.get("score"),
                graders=_graders(record),
                requests=log,
                error=record.get("error"),
            )
    return run
