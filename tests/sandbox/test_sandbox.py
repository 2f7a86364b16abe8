"""The sandbox refuses to run anything where it cannot start, and sweeps dead processes' folders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import uvloop

from app.evaluators.code.programs import ProgramError, ProgramRunner
from app.sandbox import Sandbox, sweep_stale
from app.sandbox.command import Identity
from app.sandbox.process import run_command

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


def test_a_program_that_exits_without_reading_its_input_is_not_an_error_under_uvloop() -> None:
    # The service runs on uvloop (uvicorn picks it), which refuses a write to a pipe it has
    # seen closed with a RuntimeError: the sandbox's probe (``true``) met it in the image.
    async def runs() -> list[int]:
        codes = []
        for size in (0, 10, 1 << 20) * 15:
            exited = await run_command(
                ["sh", "-c", "exec 0<&-; exit 3"],
                b"x" * size,
                cwd=Path("/tmp"),
                env={"PATH": os.defpath},
                timeout_seconds=10,
                max_output_bytes=1024,
            )
            codes.append(exited.code)
        return codes

    assert uvloop.run(runs()) == [3] * 45


async def test_what_a_container_refuses_is_given_up_least_needed_first_and_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A container's seccomp profile refuses sethostname and masks parts of /proc: bwrap then
    # fails on --hostname and --proc (as in the project's image under Podman). The sandbox
    # runs without those two, keeps every namespace, and says so once.
    tools = tmp_path / "bin"
    tools.mkdir()
    real = shutil.which("bwrap")
    (tools / "bwrap").write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do\n'
        '  [ "$arg" = --hostname ] && { echo "bwrap: Can\'t set hostname" >&2; exit 1; }\n'
        '  [ "$arg" = --proc ] && { echo "bwrap: Can\'t mount proc" >&2; exit 1; }\n'
        "done\n"
        f'exec {real} "$@"\n'
    )
    (tools / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.defpath}")
    argv = ["python3", "-c", "import os; print(os.getpid(), os.listdir('/proc'))"]
    for _ in range(2):
        pid, listed = (await runner(tmp_path).run(argv, b"")).stdout.split()
        assert int(pid) < 10  # its own PID namespace
        assert listed == "[]"  # and an empty /proc
    warned = [r.getMessage() for r in caplog.records if r.name == "app.sandbox"]
    assert warned == [
        "the program sandbox runs without the host name 'sandbox' (the UTS namespace keeps "
        "the host's), a fresh /proc (it is empty) (bwrap: Can't set hostname; bwrap: Can't "
        "mount proc)"
    ]


async def test_a_program_reads_the_runtimes_files_under_etc(tmp_path: Path) -> None:
    # Run by root, the program's user could not enter the /etc bwrap made to hold them (0700):
    # the dynamic linker then searched every library folder, and /etc/alternatives was lost.
    argv = ["python3", "-c", "print(len(open('/etc/ld.so.cache', 'rb').read()) > 0)"]
    ran = await runner(tmp_path).run(argv, b"")
    assert ran.stdout.strip() == "True"


async def test_a_runtime_folder_under_tmp_is_seen_over_the_private_tmp(tmp_path: Path) -> None:
    # A checkout under /tmp whose tool folder is added to the runtime (the AgentV harness's
    # bun and uv): the private /tmp was mounted over it, and bwrap then failed to start.
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "marker").write_text("seen")
    sandbox = Sandbox(runtime=(*Sandbox().runtime, str(tools)))
    argv = ["python3", "-c", f"print(open('{tools}/marker').read())"]
    ran = await runner(tmp_path / "work", sandbox).run(argv, b"")
    assert ran.stdout.strip() == "seen"


async def test_a_probe_that_times_out_gives_up_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a loaded machine the first probe may not finish in time: that says nothing about
    # what bwrap allows, so the program is refused this once, and the next one is confined
    # as fully as before (its host name is still the sandbox's).
    tools = tmp_path / "bin"
    tools.mkdir()
    slow = tmp_path / "slow"
    slow.touch()
    (tools / "bwrap").write_text(  # slow on the first try only (it asks for the host name)
        "#!/bin/sh\n"
        f'case "$*" in *--hostname*) [ -e {slow} ] && sleep 5;; esac\n'
        f'exec {shutil.which("bwrap")} "$@"\n'
    )
    (tools / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.defpath}")
    monkeypatch.setattr("app.sandbox.sandbox.PROBE_SECONDS", 0.5)
    argv = ["python3", "-c", "import socket; print(socket.gethostname())"]
    with pytest.raises(ProgramError, match="could not be tried here: TimeoutError"):
        await runner(tmp_path).run(argv, b"")
    slow.unlink()
    assert (await runner(tmp_path).run(argv, b"")).stdout.strip() == "sandbox"
