"""Programs start without running Python's at-fork hooks in the child (uvloop issue #749)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.sandbox.process import run_command
from app.sandbox.spawn import spawn

ROOT = Path(__file__).resolve().parents[2]

# A lock held by the parent at fork time (as another thread holds logging's), taken again by an
# after-in-child hook: under uvloop's own spawn the child ran the hook and hung before exec,
# and the event loop with it. The hook gives up after a while so the old code ends, late.
SCRIPT = """
import os, sys, threading
from pathlib import Path
import uvloop
from app.evaluation.repositories import _Git
from app.sandbox.process import run_command

marker = Path(sys.argv[1])
held = threading.Lock()
held.acquire()

def in_child() -> None:
    marker.write_text("an at-fork hook ran in the child")
    held.acquire(timeout=5)

os.register_at_fork(after_in_child=in_child)

async def main() -> list[str]:
    said = []
    for _ in range(3):
        ran = await run_command(
            ["sh", "-c", "cat; echo ok"], b"in:", cwd=Path("/tmp"), env={"PATH": os.defpath},
            timeout_seconds=30, max_output_bytes=1024,
        )
        said.append(ran.stdout.decode().strip())
        status, output = await _Git("r", "file", 30)._run(["--version"], Path("/tmp"))
        said.append(f"{status} {output.split()[0]}")
    return said

print(uvloop.run(main()))
"""


def test_a_program_started_under_uvloop_runs_no_at_fork_hook_in_its_child(tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    ran = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(marker)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,  # a stall bound only: the old code ends after 6 hangs of 5 s
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(["in:ok", "0 git"] * 3)
    assert not marker.exists()


async def test_a_spawned_program_is_waited_for_and_its_pipes_closed(tmp_path: Path) -> None:
    child = await spawn(
        ["sh", "-c", "read line; echo out $line; echo err >&2; exit 7"],
        cwd=tmp_path,
        env={"PATH": os.defpath},
    )
    assert child.stdin is not None
    assert child.stdout is not None
    assert child.stderr is not None
    child.stdin.write(b"hi\n")
    await child.stdin.drain()
    child.stdin.close()
    assert await child.stdout.read() == b"out hi\n"
    assert await child.stderr.read() == b"err\n"
    assert await child.wait() == 7
    assert child.returncode == 7
    child.close()


async def test_a_killed_program_reports_the_signal_and_many_exit_without_a_thread_each(
    tmp_path: Path,
) -> None:
    threads = len(os.listdir("/proc/self/task"))
    children = [
        await spawn(["sleep", "30"], cwd=tmp_path, env={"PATH": os.defpath}) for _ in range(20)
    ]
    assert len(os.listdir("/proc/self/task")) == threads
    for child in children:
        child.kill()
    codes = await asyncio.gather(*(child.wait() for child in children))
    assert codes == [-9] * 20
    for child in children:
        child.close()


async def test_a_program_that_is_not_there_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await run_command(
            ["/nonexistent/program"],
            b"",
            cwd=tmp_path,
            env={},
            timeout_seconds=5,
            max_output_bytes=10,
        )
