"""Benchmark the sandbox: what confining a code grader adds to one case.

Runs the same small grader program (python3 reading the case on stdin and printing a score)
N times unconfined (started directly, the physical limit: the interpreter's own start) and N
times through ``ProgramRunner`` (scratch folder, bubblewrap with its namespaces, prlimit and,
as root, setpriv), and ``true`` through the same runner (the sandbox alone), interleaved.
Prints medians of wall time and of CPU time (user + system of every process, from a cgroup:
``bench/cgroup_cpu.py``; a loaded machine stretches wall time far more than CPU time), the
overhead per case and the ratio to the unconfined run, and the load average meanwhile.

Run: .venv/bin/python -m bench.sandbox_bench [--runs 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path

from app.evaluators.code.programs import ProgramRunner
from app.sandbox import Sandbox
from app.sandbox.process import run_command
from app.sandbox.sandbox import SANDBOX_PATH
from bench.cgroup_cpu import CgroupCpu

CORES = os.cpu_count() or 1

GRADER = (
    "import json, sys\n"
    "case = json.load(sys.stdin)\n"
    "print(json.dumps({'score': 1.0 if '4' in case['answer'] else 0.0}))\n"
)
CASE = json.dumps({"question": "2+2?", "answer": "It is 4."}).encode()


@dataclass
class Series:
    """Wall and CPU time of each run of one kind, in ms."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


async def timed(run: Awaitable[None], series: Series, meter: CgroupCpu | None) -> None:
    """Run ``run``, adding its wall time and (when measured) CPU time to ``series``."""
    cpu = meter.seconds() if meter else 0.0
    started = time.perf_counter()
    await run
    series.wall.append((time.perf_counter() - started) * 1000)
    if meter:
        series.cpu.append((meter.seconds() - cpu) * 1000)


async def unconfined(folder: Path) -> None:
    exited = await run_command(
        ["python3", str(folder / "grade.py")],
        CASE,
        cwd=folder,
        env={"PATH": SANDBOX_PATH, "LANG": "C.UTF-8"},
        timeout_seconds=30,
        max_output_bytes=1 << 20,
    )
    assert exited.code == 0, exited.stderr


async def sandboxed(runner: ProgramRunner, folder: Path) -> None:
    ran = await runner.run(["python3", "grade.py"], CASE, folder=folder)
    assert json.loads(ran.stdout)["score"] == 1.0


async def chain(runner: ProgramRunner) -> None:
    """The sandbox alone: ``true`` through the same runner (scratch folder, bwrap, limits)."""
    await runner.run(["true"], b"")


def median(values: list[float]) -> str:
    return f"{statistics.median(values):6.1f}" if values else "   n/a"


async def main(runs: int) -> None:
    meter = CgroupCpu.open()
    load = os.getloadavg()[0]
    try:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name) / "grader"
            folder.mkdir()
            (folder / "grade.py").write_text(GRADER)
            runner = ProgramRunner(roots=(Path(name),), sandbox=Sandbox())
            await sandboxed(runner, folder)  # the probe, once per process
            plain, confined, alone = Series(), Series(), Series()
            for _ in range(runs):
                await timed(unconfined(folder), plain, meter)
                await timed(sandboxed(runner, folder), confined, meter)
                await timed(chain(runner), alone, meter)
    finally:
        if meter:
            meter.close()
    load = max(load, os.getloadavg()[0])
    pairs = [b - a for a, b in zip(plain.wall, confined.wall, strict=True)]
    spread = statistics.quantiles(pairs, n=4)
    print(f"runs: {runs} each, interleaved; medians; load average up to {load:.1f}, {CORES} cores")
    print(f"{'':40} wall ms   CPU ms (user+sys, every process)")
    for label, series in (
        ("unconfined python3 grader (the limit):", plain),
        ("sandboxed (ProgramRunner, bwrap):", confined),
        ("the sandbox alone (`true` in it):", alone),
    ):
        print(f"{label:40} {median(series.wall)}   {median(series.cpu)}")
    overhead = statistics.median(confined.wall) - statistics.median(plain.wall)
    print(
        f"overhead per case: {overhead:.1f} ms wall (quartiles of the paired differences "
        f"{spread[0]:.1f}-{spread[2]:.1f} ms), ratio to the limit "
        f"{statistics.median(confined.wall) / statistics.median(plain.wall):.2f}"
    )
    if meter:
        cpu = statistics.median(confined.cpu) - statistics.median(plain.cpu)
        print(f"overhead per case in CPU: {cpu:.1f} ms (load inflates it little)")
    else:
        print("CPU: not measured (needs root and a cpuacct or cgroup v2 hierarchy)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    asyncio.run(main(parser.parse_args().runs))
