"""Time per case and peak memory of durable runs of 1 000 and 10 000 cases on the mock target.

Each size runs in a fresh child process (so one run's peak does not hide the next): the app
is started in-process with a SQLite file in a temporary folder, a run is submitted through
the ASGI app, and the process's resident memory is sampled until the run completes. The
mock target answers at once, so the run's own clock (stored submission to last commit) per
case is the service's overhead per case: formatting is done at submission, so this is
reading the case, the candidate and judge calls, grading and storing the record. (The JSONL
export is left out: httpx's ASGI transport buffers a whole response in memory.)

    .venv/bin/python bench/runs_bench.py [--sizes 1000 10000] [--concurrency 32] [--loop asyncio]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def current_rss_mib() -> float:
    """Resident memory of this process now, in MiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def suite_of(size: int) -> dict[str, Any]:
    return {
        "dataset": "bench",
        "evalcases": [
            {
                "id": f"case-{index}",
                "expected_outcome": f"Answers question {index}.",
                "input_messages": [{"role": "user", "content": f"Question {index}?"}],
            }
            for index in range(size)
        ],
    }


async def measure(size: int, concurrency: int) -> dict[str, Any]:
    import httpx
    from asgi_lifespan import LifespanManager

    from app.main import create_app
    from app.settings import Settings

    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            data_dir=Path(folder), max_body_bytes=64 * 1024 * 1024, log_level="WARNING"
        )
        app = create_app(settings)
        async with LifespanManager(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                started = time.perf_counter()
                body = {"suite": suite_of(size), "max_concurrency": concurrency}
                response = await client.post("/runs", json=body)
                response.raise_for_status()
                run_id = response.json()["id"]
                del body, response
                cpu_started = time.process_time()  # every thread: the loop and SQLite's
                after_submit = current_rss_mib()
                during = after_submit
                while True:
                    run = (await client.get(f"/runs/{run_id}")).json()
                    during = max(during, current_rss_mib())
                    if run["status"] not in ("queued", "running"):
                        break
                    await asyncio.sleep(1.0)
                elapsed = time.perf_counter() - started
                cpu_seconds = time.process_time() - cpu_started
    created, finished = (datetime.fromisoformat(run[key]) for key in ("created_at", "finished_at"))
    run_seconds = (finished - created).total_seconds()
    return {
        "cases": size,
        "status": run["status"],
        "done": run["progress"]["done"],
        "seconds": round(elapsed, 2),
        "run_seconds": round(run_seconds, 2),
        "ms_per_case": round(1000 * run_seconds / size, 3),
        "cpu_ms_per_case": round(1000 * cpu_seconds / size, 3),
        "rss_after_submit_mib": round(after_submit, 1),
        "rss_peak_while_running_mib": round(during, 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }


def run_child(size: int, concurrency: int, loop: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", str(size), "--concurrency", str(concurrency),
               "--loop", loop]  # fmt: skip
    output = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
    figures: dict[str, Any] = json.loads(output.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument(
        "--loop",
        choices=["uvloop", "asyncio"],
        default="uvloop",
        help="event loop (default: uvloop, which uvicorn and eval-worker run the service on)",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        from app.worker import event_loop_factory

        factory = event_loop_factory() if args.loop == "uvloop" else None
        with asyncio.Runner(loop_factory=factory) as runner:
            print(json.dumps(runner.run(measure(args.child, args.concurrency))))
        return
    print("  cases     status     done  seconds  run s  ms/case  CPU ms/case  RSS after submit  "
          "peak RSS running  peak RSS")  # fmt: skip
    for size in args.sizes:
        f = run_child(size, args.concurrency, args.loop)
        print(
            f"{f['cases']:>7} {f['status']:>10} {f['done']:>8} {f['seconds']:>8} "
            f"{f['run_seconds']:>6} {f['ms_per_case']:>8} {f['cpu_ms_per_case']:>12} "
            f"{f['rss_after_submit_mib']:>13} MiB {f['rss_peak_while_running_mib']:>12} MiB "
            f"{f['peak_rss_mib']:>5} MiB"
        )


if __name__ == "__main__":
    main()
