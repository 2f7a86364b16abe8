"""The CPU processes of ``app.evaluators.offload.cpu_process`` end with their service."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

STARTER = """
import sys, time
from app.evaluators.offload import cpu_process
pool = cpu_process._executor()
for future in [pool.submit(time.sleep, 0.5) for _ in range(cpu_process.PROCESSES)]:
    future.result()  # both started and serving
print(" ".join(str(pid) for pid in pool._processes), flush=True)
time.sleep(600)
"""


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"  # a zombie has ended; only its parent has yet to collect it


def test_cpu_processes_end_when_the_service_is_killed_outright() -> None:
    # A service killed with SIGKILL never shuts its pool down: before, its CPU processes
    # waited on their queue for ever (90 of them piled up over one test session).
    service = subprocess.Popen(
        [sys.executable, "-c", STARTER], stdout=subprocess.PIPE, text=True, cwd=Path.cwd()
    )
    with service:
        try:
            assert service.stdout is not None
            children = [int(pid) for pid in service.stdout.readline().split()]
            assert len(children) == 2
            assert all(map(_running, children))
        finally:
            os.kill(service.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30  # the bound of a stall, not a benchmark
    while any(map(_running, children)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(_running, children))


SERVICES = """
import asyncio, sys
from asgi_lifespan import LifespanManager
from app.evaluators.offload import cpu_process
from app.main import create_app
from app.settings import Settings

async def one_app(folder):
    app = create_app(Settings(data_dir=folder, sample_run=False))
    async with LifespanManager(app, startup_timeout=60, shutdown_timeout=60):
        pids = set(cpu_process._executor()._processes)
    return pids, cpu_process._pool

async def main(folder):
    first, _ = await one_app(folder + "/a")
    second, left = await one_app(folder + "/b")
    print("alone", len(first), first == second, left is None)
    with cpu_process.hold():
        first, _ = await one_app(folder + "/c")
        second, left = await one_app(folder + "/d")
        print("held", len(first), first == second, left is not None)
    print("after", cpu_process._pool is None)

asyncio.run(main(sys.argv[1]))
"""


def test_a_service_stops_its_cpu_processes_unless_the_process_holds_them(tmp_path: Path) -> None:
    # A server process builds one app: its shutdown stops them (uvicorn ends a SIGTERM'd
    # process right after it). A process building app after app holds them once for all.
    done = subprocess.run(
        [sys.executable, "-c", SERVICES, str(tmp_path)],
        capture_output=True, text=True, cwd=Path.cwd(), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == [
        "alone 2 False True",
        "held 2 True True",
        "after True",
    ]
    assert "leaked" not in done.stderr
