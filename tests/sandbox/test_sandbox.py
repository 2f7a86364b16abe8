"""The sandbox refuses to run anything where it cannot start, and sweeps dead processes' folders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.evaluators.programs import ProgramError, ProgramRunner
from app.sandbox import Sandbox, sweep_stale
from app.sandbox.command import Identity

HELLO = ["python3", "-c", "print('hello')"]


def runner(tmp_path: Path, sandbox: Sandbox | None = None) -> ProgramRunner:
    return ProgramRunner(roots=(tmp_path,), timeout_seconds=10, sandbox=sandbox or Sandbox())


async def test_a_program_runs_in_the_sandbox_and_its_secrets_are_scrubbed(tmp_path: Path) -> None:
    sandbox = Sandbox(secrets=("hunter2-secret",))
    argv = ["python3", "-c", "import os; print(os.getpid(), 'hunter2-secret')"]
    ran = await runner(tmp_path, sandbox).run(argv, b"")
    pid, word = ran.stdout.split()
    assert int(pid) < 10  # its own PID namespace
    assert word == "[redacted]"


async def test_without_bwrap_programs_are_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: None if name == "bwrap" else found(name, *a, **k)
    )
    with pytest.raises(ProgramError, match="bwrap not found") as refused:
        await runner(tmp_path).run(HELLO, b"")
    assert "install bubblewrap" in str(refused.value)


async def test_where_namespaces_are_not_allowed_programs_are_refused_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    fake = tools / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.defpath}")
    with pytest.raises(ProgramError, match="No permissions to create new namespace") as refused:
        await runner(tmp_path, Sandbox(identity=Identity())).run(HELLO, b"")
    assert "bubblewrap needs user namespaces" in str(refused.value)


async def test_a_program_outside_the_sandbox_is_refused_without_looking_at_it(
    tmp_path: Path,
) -> None:
    for program in (sys.executable, "/no/such/program", "../../bin/sh"):
        with pytest.raises(ProgramError, match="is not in the sandbox"):
            await runner(tmp_path).run([program], b"", folder=tmp_path)


def test_scratch_folders_of_dead_processes_are_swept(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = tmp_path / f"eval-grader-{child.pid}-abc"
    alive = tmp_path / f"eval-workspace-{os.getppid()}-abc"
    mine = tmp_path / f"eval-cli-{os.getpid()}-abc"
    young, old = tmp_path / "eval-grader-young1", tmp_path / "eval-grader-old1"
    other = tmp_path / "something-else"
    for folder in (dead, alive, mine, young, old, other):
        folder.mkdir()
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (day_ago, day_ago))
    assert sorted(sweep_stale(tmp_path)) == sorted([dead, old])
    assert all(folder.exists() for folder in (alive, mine, young, other))


async def test_a_grader_shared_by_suites_runs_from_its_own_folder_and_sees_no_other(
    tmp_path: Path,
) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "graders").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "private.txt").write_text("another suite's")
    (tmp_path / "graders" / "helper.py").write_text("WORD = 'shared'\n")
    (tmp_path / "graders" / "check.py").write_text(
        "import os, sys\n"
        "sys.path.insert(0, os.path.dirname(__file__))\n"
        "from helper import WORD\n"
        f"print(WORD, os.path.exists({str(tmp_path / 'other' / 'private.txt')!r}))\n"
    )
    ran = await runner(tmp_path).run(
        ["python3", "../graders/check.py"], b"", folder=tmp_path / "evals"
    )
    assert ran.stdout.split() == ["shared", "False"]


async def test_a_script_of_another_folder_of_the_root_may_be_the_program(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "graders").mkdir()
    script = tmp_path / "graders" / "run.sh"
    script.write_text('#!/bin/sh\necho "{\\"score\\": 1}"\n')
    script.chmod(0o755)
    ran = await runner(tmp_path).run(["../graders/run.sh"], b"", folder=tmp_path / "evals")
    assert ran.stdout.strip() == '{"score": 1}'
