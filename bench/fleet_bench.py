"""Durable runs on PostgreSQL, executed by 1 and 2 ``eval-worker`` processes.

Real processes: the fake LLM server (200 ms per call), an API process that runs no case
(uvicorn), ``eval-worker --workers K``, and the PostgreSQL named by ``--database-url``.
Each run has ``--cases`` multi-turn cases, candidate and judge both on the fake target, so a
case is two sequential calls and the physical limit is ceil(N / C) x 2 x L for C cases in
flight: C = 50 is 250 calls/s, C = 100 is 500 calls/s. Prints wall / ideal for each
(workers, calls/s), then the peak RSS of each worker process over a run of ``--rss-cases``.
With ``--repeat N`` each (calls/s, workers) runs N times, the worker counts alternating, and
the median ratio of each is printed at the end (this VM's figures move by up to 0.1 between
runs at 500 calls/s). Each round starts from an empty database and fresh processes, so a
run pays once-only costs (the target's limit rows, each process's structured-output probe);
``--warm`` measures instead a second run of the same size on the same processes, as a
service that is already running sees it.

    .venv/bin/python -m bench.fleet_bench --database-url postgresql+asyncpg://eval:eval@127.0.0.1/eval_bench
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from app.runs.database import create_engine
from app.runs.postgres.jobs import uninstall_queue_schema
from app.runs.tables import Base
from bench.evaluate_bench import fake_server, suite_document, write_targets
from testkit.server import free_port, running_service

ROOT = Path(__file__).resolve().parents[1]
LATENCY_MS = 200.0


async def reset_database(url: str) -> None:
    """Drop every table (ours and the queue's) so that each run starts from an empty database."""
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(Base.metadata.drop_all)
            await connection.run_sync(uninstall_queue_schema)
            await connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    finally:
        await engine.dispose()


def children_of(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def peak_rss_mib(pid: int) -> float:
    """The peak resident memory of a process (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@contextmanager
def workers(env: dict[str, str], count: int) -> Iterator[list[int]]:
    """``eval-worker --workers count``; yields the worker processes' ids once all serve."""
    port = free_port()
    command = [sys.executable, "-m", "app.worker", "--workers", str(count)]
    process = subprocess.Popen(
        [*command, "--metrics-port", str(port)], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        for index in range(count):
            while True:
                try:
                    httpx.get(f"http://127.0.0.1:{port + index}/metrics", timeout=1)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise TimeoutError("the workers did not start") from None
                    time.sleep(0.2)
        yield children_of(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def run_once(url: str, cases: int, concurrency: int) -> tuple[float, dict[str, Any]]:
    """Submit a run and wait for it; its own clock (created -> finished) in seconds."""
    body = {"suite": suite_document(cases), "target": "fake", "max_concurrency": concurrency}
    run = httpx.post(f"{url}/runs", json=body, timeout=600).raise_for_status().json()
    while run["status"] in ("queued", "running"):
        time.sleep(1.0)
        run = httpx.get(f"{url}/runs/{run['id']}", timeout=60).raise_for_status().json()
    created, finished = (datetime.fromisoformat(run[key]) for key in ("created_at", "finished_at"))
    return (finished - created).total_seconds(), run


def measure(
    database: str,
    folder: Path,
    fake_url: str,
    count: int,
    cases: int,
    concurrency: int,
    *,
    warm: bool = False,
) -> tuple[float, dict[str, Any], list[float]]:
    """One run with ``count`` worker processes; (seconds, run, peak RSS of each worker).

    ``warm``: the run measured is the second one of those processes (the first is the same).
    """
    asyncio.run(reset_database(database))
    targets = write_targets(folder, fake_url, concurrency=10 * concurrency)
    env = {
        "PATH": os.defpath,
        "EVAL_DATA_DIR": str(folder / "data"),
        "EVAL_TARGETS_FILE": str(targets),
        "EVAL_DATABASE_URL": database,
        "EVAL_EXECUTE_CASES": "false",
        "EVAL_LOG_LEVEL": "WARNING",
        "EVAL_MAX_BODY_BYTES": str(256 * 1024 * 1024),
        "EVAL_WORKER_MAX_CASES": str(2 * concurrency),
    }
    with running_service(env) as (url, _), workers(env, count) as pids:
        if warm:
            run_once(url, cases, concurrency)
        seconds, run = run_once(url, cases, concurrency)
        rss = [peak_rss_mib(pid) for pid in pids]
    return seconds, run, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--database-url", required=True, help="postgresql+asyncpg://...")
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--rss-cases", type=int, default=10_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--calls-per-second", type=int, nargs="+", default=[250, 500])
    parser.add_argument(
        "--repeat", type=int, default=1,
        help="rounds of every (rate, workers) run, interleaved; medians are printed at the end",
    )  # fmt: skip
    parser.add_argument(
        "--warm", action="store_true",
        help="measure each run after a first one on the same processes (not counted)",
    )  # fmt: skip
    args = parser.parse_args()
    ratios: dict[tuple[int, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as name, fake_server(LATENCY_MS) as fake_url:
        folder = Path(name)
        print(f"{args.cases} multi-turn cases, candidate + judge, {LATENCY_MS:g} ms per call")
        if args.warm:
            print("each run measured is the second of its processes (--warm)")
        for rate in args.calls_per_second:
            # C cases in flight make C calls at a time, each LATENCY_MS long: C / L calls/s.
            concurrency = rate * int(LATENCY_MS) // 1000
            ideal = math.ceil(args.cases / concurrency) * 2 * LATENCY_MS / 1000
            for _ in range(args.repeat):  # rounds alternate the worker counts: drift hits all
                for count in args.workers:
                    seconds, run, _ = measure(
                        args.database_url, folder, fake_url, count, args.cases, concurrency,
                        warm=args.warm,
                    )  # fmt: skip
                    ratios.setdefault((rate, count), []).append(seconds / ideal)
                    print(f"{rate:4} calls/s  {count} worker(s)  wall {seconds:7.2f} s  ideal "
                          f"{ideal:6.2f} s  ratio {seconds / ideal:5.2f}  "
                          f"done {run['progress']['done']}/{args.cases}")  # fmt: skip
        if args.repeat > 1:
            for (rate, count), values in ratios.items():
                listed = " ".join(f"{value:.2f}" for value in values)
                print(f"{rate:4} calls/s  {count} worker(s)  median ratio "
                      f"{statistics.median(values):5.2f}  ({listed})")  # fmt: skip
        concurrency = max(args.calls_per_second) * int(LATENCY_MS) // 1000
        count = max(args.workers)
        seconds, run, rss = measure(
            args.database_url, folder, fake_url, count, args.rss_cases, concurrency
        )
        peaks = ", ".join(f"{value:.0f} MiB" for value in rss)
        print(f"{args.rss_cases} cases, {count} worker(s): {seconds:.1f} s, "
              f"peak RSS per worker: {peaks}")  # fmt: skip


if __name__ == "__main__":
    main()
