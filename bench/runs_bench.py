"""Peak memory of durable runs of 1 000 and 10 000 cases on the mock target.

Each size runs in a fresh child process (so one run's peak does not hide the next): the app
is started in-process with a SQLite file in a temporary folder, a run is submitted through
the ASGI app, and the process's resident memory is sampled until the run completes.

    .venv/bin/python bench/runs_bench.py [--sizes 1000 10000] [--concurrency 32]
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
                after_submit = current_rss_mib()
                during = after_submit
                while True:
                    run = (await client.get(f"/runs/{run_id}")).json()
                    during = max(during, current_rss_mib())
                    if run["status"] not in ("queued", "running"):
                        break
                    await asyncio.sleep(1.0)
                elapsed = time.perf_counter() - started
                while_running = during
                exported = 0
                async with client.stream(
                    "GET", f"/runs/{run_id}/results", headers={"accept": "application/x-ndjson"}
                ) as stream:
                    async for _ in stream.aiter_lines():
                        exported += 1
                        if exported % 1000 == 0:
                            during = max(during, current_rss_mib())
    return {
        "cases": size,
        "status": run["status"],
        "error": run.get("error"),
        "done": run["progress"]["done"],
        "exported": exported,
        "seconds": round(elapsed, 2),
        "rss_after_submit_mib": round(after_submit, 1),
        "rss_peak_while_running_mib": round(while_running, 1),
        "rss_peak_while_exporting_mib": round(during, 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child, args.concurrency))))
        return
    print(f"{'cases':>7} {'status':>10} {'seconds':>8} {'after submit':>13} "
          f"{'peak running':>13} {'peak RSS':>9}")  # fmt: skip
    for size in args.sizes:
        output = subprocess.run(
            [sys.executable, __file__, "--child", str(size), "--concurrency", str(args.concurrency)],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        figures = json.loads(output.strip().splitlines()[-1])
        print(
            f"{figures['cases']:>7} {figures['status']:>10} {figures['seconds']:>8} "
            f"{figures['rss_after_submit_mib']:>10} MiB {figures['rss_peak_while_running_mib']:>9} MiB "
            f"{figures['peak_rss_mib']:>5} MiB"
        )


if __name__ == "__main__":
    main()
