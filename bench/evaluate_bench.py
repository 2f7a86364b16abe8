"""Benchmark the orchestrator: N cases against the fake LLM server with latency L, concurrency C.

Each case makes two sequential calls (candidate, then judge), so the ideal wall time is
ceil(N / C) x 2 x L; the ratio wall / ideal shows the overhead of everything else.

Run: .venv/bin/python -m bench.evaluate_bench [--cases 200] [--latency-ms 50]
     [--concurrency 20] [--uvicorn] [--runs] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import aiohttp
import httpx
import yaml

from app.evaluation.context import CaseContext
from app.evaluation.orchestrator import run_cases
from app.evaluation.plan import RunPlan, build_run_plan, format_options
from app.evaluation.records import ResultRecord
from app.formatting import format_prompt
from app.formatting.messages import Message
from app.providers.base import (
    CallRole,
    ModelOptions,
    ProviderKind,
    ProviderRequest,
    ProviderResponse,
)
from app.providers.registry import ProviderRegistry
from app.settings import Settings, with_targets_file
from app.suites.model import EvalCase, EvalSuite, FormattedCase
from testkit.server import free_port, running_service

ROOT = Path(__file__).resolve().parents[1]


def make_suite(cases: int) -> EvalSuite:
    return EvalSuite(
        dataset="bench",
        cases=tuple(
            EvalCase(
                id=f"case-{i}",
                expected_outcome="Explains the change and its risk.",
                input_messages=(
                    Message(role="system", content="You are a careful reviewer."),
                    Message(role="user", content=f"Review change #{i}: rename a variable."),
                    Message(role="assistant", content="Which file?"),
                    Message(role="user", content="src/app.py, line 10."),
                ),
            )
            for i in range(cases)
        ),
    )


def suite_document(cases: int) -> dict[str, object]:
    suite = make_suite(cases)
    return {
        "dataset": suite.dataset,
        "evalcases": [case.model_dump(mode="json", exclude_defaults=True) for case in suite.cases],
    }


@contextmanager
def fake_server(latency_ms: float) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "testkit.fake_llm", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--latency-ms", str(latency_ms)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the fake LLM server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def write_targets(folder: Path, url: str, concurrency: int) -> Path:
    target = {
        "name": "fake",
        "provider": "openai",
        "base_url": f"{url}/v1",
        "api_key": "sk-bench-0000000000",
        "model": "gpt-fake",
        "max_concurrency": concurrency,
        "max_retries": 0,
    }
    path = folder / "targets.yaml"
    path.write_text(yaml.safe_dump({"targets": [target]}), encoding="utf-8")
    return path


def formatted(suite: EvalSuite, plan: RunPlan) -> list[FormattedCase]:
    """Each case formatted once for the plan's candidate, as ``prepare_run`` does."""
    options = format_options(plan)
    return [
        FormattedCase(case=case, prompt=format_prompt(case.input_messages, {}, options))
        for case in suite.cases
    ]


async def in_process(settings: Settings, cases: int, concurrency: int) -> tuple[float, int, float]:
    """(wall seconds, cases passed, CPU seconds per case) of the orchestrator in process."""
    registry = ProviderRegistry(settings)
    suite = make_suite(cases)
    plan = build_run_plan(
        suite,
        registry,
        default_max_concurrency=concurrency,
        judge_attempts=3,
        target="fake",
        max_concurrency=concurrency,
    )
    passed = 0

    async def count(record: ResultRecord) -> None:
        nonlocal passed
        passed += record.status == "passed"

    try:
        started, cpu = time.perf_counter(), time.process_time()
        await run_cases(formatted(suite, plan), plan, CaseContext(providers=registry), count)
        return time.perf_counter() - started, passed, (time.process_time() - cpu) / cases
    finally:
        await registry.aclose()


async def raw_http_baseline(url: str, cases: int, concurrency: int) -> tuple[float, float]:
    """The same 2 x N calls (two in a row per case) made with bare aiohttp, the adapters'
    client, and no service logic: the stack's floor. (wall seconds, CPU seconds per case)."""
    slots = asyncio.Semaphore(concurrency)
    body = {"model": "gpt-fake", "messages": [{"role": "user", "content": "hi"}]}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as client:

        async def one_case() -> None:
            async with slots:
                for _ in range(2):
                    async with client.post(f"{url}/v1/chat/completions", json=body) as reply:
                        reply.raise_for_status()
                        await reply.read()

        started, cpu = time.perf_counter(), time.process_time()
        async with asyncio.TaskGroup() as group:
            for _ in range(cases):
                group.create_task(one_case())
        return time.perf_counter() - started, (time.process_time() - cpu) / cases


class InstantTarget:
    """A target that answers at once (echo, or a verdict for the judge): no I/O at all."""

    name = "instant"
    kind: ProviderKind = "api"
    judge_target = None
    system_prompt = None
    max_concurrency = None
    verdict = ProviderResponse(text='{"score": 1, "hits": [], "misses": [], "reasoning": "ok"}')

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        if request.role is CallRole.JUDGE:
            return self.verdict
        return ProviderResponse(text=request.question)

    def untaken_options(self, options: ModelOptions) -> list[str]:  # noqa: ARG002
        return []  # an instant reply takes every option

    def get(self, name: str) -> InstantTarget:  # noqa: ARG002 - one target for every name
        return self

    def names(self) -> list[str]:
        return [self.name]


async def orchestrator_cpu(cases: int) -> float:
    """Seconds of orchestrator work per case (formatting, prompts, parsing, records)."""
    suite = make_suite(cases)
    target = InstantTarget()
    plan = build_run_plan(suite, target, default_max_concurrency=50, judge_attempts=3)

    async def drop(record: ResultRecord) -> None:  # noqa: ARG001 - records are not kept
        return None

    started = time.process_time()
    await run_cases(formatted(suite, plan), plan, CaseContext(providers=target), drop)
    return (time.process_time() - started) / cases


def through_uvicorn(targets: Path, folder: Path, cases: int, concurrency: int) -> tuple[float, int]:
    env = {
        "PATH": os.defpath,
        "EVAL_DATA_DIR": str(folder / "data"),
        "EVAL_TARGETS_FILE": str(targets),
        "EVAL_EVALUATE_MAX_CASES": str(cases),
    }
    body = {"suite": suite_document(cases), "target": "fake", "max_concurrency": concurrency}
    with running_service(env) as (url, _):
        started = time.perf_counter()
        response = httpx.post(f"{url}/evaluate", json=body, timeout=600)
        wall = time.perf_counter() - started
    response.raise_for_status()
    return wall, response.json()["summary"]["counts"]["passed"]


def through_runs(targets: Path, folder: Path, cases: int, concurrency: int) -> tuple[float, int]:
    """Submit the suite as a durable run (SQLite) and wait for it: every case is committed."""
    env = {
        "PATH": os.defpath,
        "EVAL_DATA_DIR": str(folder / "runs-data"),
        "EVAL_TARGETS_FILE": str(targets),
    }
    body = {"suite": suite_document(cases), "target": "fake", "max_concurrency": concurrency}
    with running_service(env) as (url, _):
        run = httpx.post(f"{url}/runs", json=body, timeout=600).raise_for_status().json()
        while run["status"] in ("queued", "running"):
            time.sleep(0.25)  # each poll summarises the stored results: keep them rare
            run = httpx.get(f"{url}/runs/{run['id']}", timeout=30).raise_for_status().json()
    # The run's own clock: from the stored submission to the last committed case.
    created, finished = (datetime.fromisoformat(run[key]) for key in ("created_at", "finished_at"))
    return (finished - created).total_seconds(), run["summary"]["counts"]["passed"]


def report(
    label: str, wall: float, passed: int, ideal: float, cases: int, cpu: float | None = None
) -> None:
    """One row: wall time, its ratio to the physical limit, and CPU per case where measured."""
    ratio = wall / ideal
    per_case = f"   CPU per case {cpu * 1000:.2f} ms" if cpu is not None else ""
    print(f"{label:<12} wall {wall:7.3f} s   ideal {ideal:7.3f} s   ratio {ratio:5.2f}   "
          f"passed {passed}/{cases}{per_case}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--uvicorn", action="store_true", help="also run through uvicorn")
    parser.add_argument("--runs", action="store_true", help="also run as a durable run")
    parser.add_argument("--profile", action="store_true", help="profile with pyinstrument")
    args = parser.parse_args()
    ideal = math.ceil(args.cases / args.concurrency) * 2 * args.latency_ms / 1000
    print(f"N={args.cases} cases, L={args.latency_ms:g} ms, C={args.concurrency}")
    per_case = asyncio.run(orchestrator_cpu(max(args.cases, 500)))
    print(f"orchestrator CPU per case (instant in-memory target): {per_case * 1e6:.0f} us")
    with tempfile.TemporaryDirectory() as temp, fake_server(args.latency_ms) as url:
        folder = Path(temp)
        targets = write_targets(folder, url, args.concurrency)
        settings = with_targets_file(Settings(data_dir=folder / "data", targets_file=targets))
        if args.profile:
            from pyinstrument import Profiler

            with Profiler(async_mode="enabled") as profiler:
                wall, passed, cpu = asyncio.run(in_process(settings, args.cases, args.concurrency))
            profiler.print(show_all=False)
        else:
            wall, passed, cpu = asyncio.run(in_process(settings, args.cases, args.concurrency))
        report("in-process", wall, passed, ideal, args.cases, cpu)
        floor, cpu = asyncio.run(raw_http_baseline(url, args.cases, args.concurrency))
        report("bare aiohttp", floor, args.cases, ideal, args.cases, cpu)
        if args.uvicorn:
            wall, passed = through_uvicorn(targets, folder, args.cases, args.concurrency)
            report("uvicorn", wall, passed, ideal, args.cases)
        if args.runs:
            wall, passed = through_runs(targets, folder, args.cases, args.concurrency)
            report("durable run", wall, passed, ideal, args.cases)


if __name__ == "__main__":
    main()
