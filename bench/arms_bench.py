"""A durable run of N cases on T targets (arms) against the fake LLM server: time and memory.

Each target is its own model on one fake LLM server (latency L per call) with its own limit
of C calls at once; the cases are graded by a check (no judge), so each (case, arm) is one
call. The arms run at once, so the physical limit of the run is that of its slowest arm:
ceil(N / C) x L. The run is timed by its own clock (stored submission to the last committed
case) in a real uvicorn process on SQLite, and compared with the same suite on one target;
the service's peak resident memory (VmHWM) is read before it stops, and the CPU time it used
during the run (one event loop: on a shared machine the run cannot be faster than that CPU
time takes to get), with the load average it started at.

    .venv/bin/python -m bench.arms_bench [--cases 2000] [--targets 3] [--latency-ms 200]
        [--concurrency 50]
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench.evaluate_bench import fake_server
from testkit.server import running_service


def suite_document(cases: int) -> dict[str, Any]:
    return {
        "dataset": "arms-bench",
        "evalcases": [
            {
                "id": f"case-{index}",
                "input_messages": [{"role": "user", "content": f"Question {index}?"}],
                "evaluators": [{"name": "answered", "type": "is_json", "negate": True}],
            }
            for index in range(cases)
        ],
    }


def write_targets(folder: Path, url: str, names: list[str], concurrency: int) -> Path:
    targets = [
        {
            "name": name,
            "provider": "openai",
            "base_url": f"{url}/v1",
            "api_key": "sk-bench-0000000000",
            "model": f"model-{name}",
            "max_concurrency": concurrency,
            "max_retries": 0,
        }
        for name in names
    ]
    path = folder / "targets.yaml"
    path.write_text(yaml.safe_dump({"targets": targets}), encoding="utf-8")
    return path


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User and system CPU time the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_run(
    env: dict[str, str], body: dict[str, Any]
) -> tuple[float, dict[str, Any], float, float]:
    """The run's own seconds, the finished run, the service's peak RSS in MiB and the CPU
    seconds it used meanwhile (its event loop is one thread: a run cannot take less)."""
    with running_service(env) as (url, process):
        before = cpu_seconds(process.pid)
        run = httpx.post(f"{url}/runs", json=body, timeout=600).raise_for_status().json()
        while run["status"] in ("queued", "running"):
            time.sleep(0.5)  # each poll summarises the stored results: keep them rare
            run = httpx.get(f"{url}/runs/{run['id']}", timeout=60).raise_for_status().json()
        peak = peak_rss_mib(process.pid)
        cpu = cpu_seconds(process.pid) - before
    created, finished = (datetime.fromisoformat(run[key]) for key in ("created_at", "finished_at"))
    return (finished - created).total_seconds(), run, peak, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--targets", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()
    names = [f"arm{index}" for index in range(args.targets)]
    limit = math.ceil(args.cases / args.concurrency) * args.latency_ms / 1000
    print(
        f"N={args.cases} cases x {args.targets} targets, L={args.latency_ms:g} ms, "
        f"C={args.concurrency} per target; physical limit of the slowest arm {limit:.2f} s"
    )
    suite = suite_document(args.cases)
    with tempfile.TemporaryDirectory() as temp, fake_server(args.latency_ms) as url:
        folder = Path(temp)
        env = {
            "PATH": os.defpath,
            "EVAL_TARGETS_FILE": str(write_targets(folder, url, names, args.concurrency)),
            "EVAL_SAMPLE_RUN": "false",
            "EVAL_LOG_LEVEL": "WARNING",
        }
        for label, body in (
            ("one target", {"suite": suite, "target": names[0]}),
            (f"{args.targets} targets", {"suite": suite, "targets": names}),
        ):
            data = folder / label.replace(" ", "-")
            load = os.getloadavg()[0]
            seconds, run, peak, cpu = timed_run({**env, "EVAL_DATA_DIR": str(data)}, body)
            done = run["progress"]["done"]
            print(
                f"{label:>10}: {done} (case, arm) records in {seconds:6.2f} s = "
                f"{seconds / limit:.2f}x the limit; service CPU {cpu:.2f} s "
                f"({cpu / max(done, 1) * 1000:.2f} ms a record); peak RSS {peak:.0f} MiB; "
                f"load average {load:.1f} on {os.cpu_count()} cores"
            )


if __name__ == "__main__":
    main()
