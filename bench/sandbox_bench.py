"""Benchmark the sandbox: what confining a code grader adds to one case.

Runs the same small grader program (python3 reading the case on stdin and printing a score)
N times unconfined (started directly, the physical limit: the interpreter's own start) and N
times through ``ProgramRunner`` (scratch folder, bubblewrap with its namespaces, prlimit and,
as root, setpriv), one after the other, interleaved. Prints medians, the overhead per case and
the ratio to the unconfined run.

Run: .venv/bin/python -m bench.sandbox_bench [--runs 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path

from app.evaluators.programs import ProgramRunner
from app.sandbox import Sandbox
from app.sandbox.process import run_command

GRADER = (
    "import json, sys\n"
    "case = json.load(sys.stdin)\n"
    "print(json.dumps({'score': 1.0 if '4' in case['answer'] else 0.0}))\n"
)
CASE = json.dumps({"question": "2+2?", "answer": "It is 4."}).encode()


async def timed(run: Awaitable[None]) -> float:
    """Wall time of ``run``, in ms."""
    started = time.perf_counter()
    await run
    return (time.perf_counter() - started) * 1000


async def unconfined(folder: Path) -> None:
    exited = await run_command(
        ["python3", str(folder / "grade.py")],
        CASE,
        cwd=folder,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
        timeout_seconds=30,
        max_output_bytes=1 << 20,
    )
    assert exited.code == 0, exited.stderr


async def sandboxed(runner: ProgramRunner, folder: Path) -> None:
    ran = await runner.run(["python3", "grade.py"], CASE, folder=folder)
    assert json.loads(ran.stdout)["score"] == 1.0


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name) / "grader"
        folder.mkdir()
        (folder / "grade.py").write_text(GRADER)
        runner = ProgramRunner(roots=(Path(name),), sandbox=Sandbox())
        await sandboxed(runner, folder)  # the probe, once per process
        plain: list[float] = []
        confined: list[float] = []
        for _ in range(runs):
            plain.append(await timed(unconfined(folder)))
            confined.append(await timed(sandboxed(runner, folder)))
    bare, boxed = statistics.median(plain), statistics.median(confined)
    spread = statistics.quantiles([b - a for a, b in zip(plain, confined, strict=True)], n=4)
    print(f"runs: {runs} each, interleaved; medians")
    print(f"unconfined python3 grader (the limit): {bare:6.1f} ms")
    print(f"sandboxed (ProgramRunner, bwrap):      {boxed:6.1f} ms")
    print(
        f"overhead per case: {boxed - bare:.1f} ms (quartiles of the paired differences "
        f"{spread[0]:.1f}-{spread[2]:.1f} ms); ratio to the limit {boxed / bare:.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    asyncio.run(main(parser.parse_args().runs))
