"""Run an operator-trusted grader program: no shell, a time limit, a scratch folder, capped output.

``ProgramRunner.run`` starts ``argv`` directly (no shell, so nothing in it is shell syntax),
writes the payload to its stdin, and returns its stdout. The program runs in a fresh
temporary working folder (also its ``HOME`` and ``TMPDIR``, deleted afterwards) with a clean
environment (``PATH``, ``LANG`` and the caller's ``env``); arguments that name files of the
grader's folder (``../scripts/check.py``) are made absolute so they still resolve. Its whole
process group is killed when the time limit runs out, when its stdout or stderr pass the cap,
or when the caller is cancelled. Every refusal is a ``ProgramError`` saying why: the program
was not found or not executable, the folder is outside the allowed roots, it timed out, it
wrote too much, it exited non-zero (with the tail of its stderr).

Code graders (``code_judge``) and composite code aggregators use it; anything else that runs
a grader program (a ``python`` grader's source, written into the folder with ``files``)
goes through it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.errors import EvaluatorConfigError
from app.settings import Settings

STDERR_TAIL = 2000
_CHUNK = 65536


class ProgramError(EvaluatorConfigError):
    """A grader program could not run or did not finish properly (the message says why)."""


@dataclass(frozen=True)
class ProgramResult:
    """What a finished program wrote, and how long it took."""

    stdout: str
    stderr: str
    elapsed_ms: float


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    resolved = path.resolve()
    return any(resolved.is_relative_to(root.resolve()) for root in roots)


REAP_SECONDS = 5.0
"""Longest wait for a killed program's pipes to close."""


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Wait for a killed program, reading what its pipes still hold.

    The wait ends only once the pipes are closed, and a pipe left unread after the output cap
    never reaches its end: drained (the program is dead, so there is at most a pipe's
    buffer), both close; the time limit guards against a descendant that left the group.
    """
    with contextlib.suppress(TimeoutError, ProcessLookupError, OSError):
        async with asyncio.timeout(REAP_SECONDS):
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    while await stream.read(_CHUNK):
                        pass
            await process.wait()


class _OutputTooLarge(Exception):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.stream = stream


async def _read_capped(stream: asyncio.StreamReader, limit: int, name: str) -> bytes:
    data = bytearray()
    while chunk := await stream.read(_CHUNK):
        data.extend(chunk)
        if len(data) > limit:
            raise _OutputTooLarge(name)
    return bytes(data)


@dataclass(frozen=True)
class ProgramRunner:
    """Runs grader programs under the operator's limits.

    Attributes:
        roots: Folders a grader's own folder must lie in (the workspace roots).
        timeout_seconds: Time limit of one run.
        max_output_bytes: Most bytes the program may write to stdout (and to stderr).
        path: The ``PATH`` the program sees.
    """

    roots: tuple[Path, ...]
    timeout_seconds: float = 30.0
    max_output_bytes: int = 1024 * 1024
    path: str = "/usr/local/bin:/usr/bin:/bin"

    @classmethod
    def from_settings(cls, settings: Settings) -> ProgramRunner | None:
        """The operator's runner, or None when code graders are not enabled."""
        if not settings.code_graders:
            return None
        return cls(
            roots=tuple(settings.workspace_roots),
            timeout_seconds=settings.code_grader_timeout_seconds,
            max_output_bytes=settings.code_grader_max_output_bytes,
            path=settings.program_path(),
        )

    def resolve_argv(self, argv: Sequence[str], folder: Path | None) -> list[str]:
        """``argv`` with items naming existing files of ``folder`` made absolute.

        Raises:
            ProgramError: Empty argv, a folder outside the roots, or a program not found.
        """
        if not argv:
            raise ProgramError("the grader has no command")
        if folder is not None and not _inside(folder, self.roots):
            raise ProgramError(
                f"the grader's folder {str(folder)!r} is outside the workspace roots"
            )
        resolved = list(argv)
        if folder is not None:
            for index, item in enumerate(resolved):
                candidate = folder / item
                relative = not item.startswith("-") and not os.path.isabs(item)
                if relative and candidate.is_file() and _inside(candidate, self.roots):
                    resolved[index] = str(candidate.resolve())
        program = resolved[0]
        if os.sep in program:
            if not os.access(program, os.X_OK) or not Path(program).is_file():
                raise ProgramError(f"the grader program {argv[0]!r} is not an executable file")
        elif shutil.which(program, path=self.path) is None:
            raise ProgramError(f"the grader program {program!r} was not found on the PATH")
        return resolved

    async def run(
        self,
        argv: Sequence[str],
        stdin: bytes,
        *,
        folder: Path | None = None,
        env: Mapping[str, str] | None = None,
        files: Mapping[str, str] | None = None,
    ) -> ProgramResult:
        """Run ``argv`` on ``stdin`` and return its output; refusals raise ``ProgramError``.

        Args:
            argv: The program and its arguments (never given to a shell).
            stdin: Bytes written to the program's standard input.
            folder: The grader's folder: relative file arguments resolve against it.
            env: Extra environment variables.
            files: Files written into the working folder first (name -> text).
        """
        command = self.resolve_argv(argv, folder)
        workdir = Path(tempfile.mkdtemp(prefix="eval-grader-"))
        try:
            for name, text in (files or {}).items():
                (workdir / Path(name).name).write_text(text, encoding="utf-8")
            environment = {"PATH": self.path, "LANG": "C.UTF-8", "HOME": str(workdir)}
            environment |= {"TMPDIR": str(workdir), **(env or {})}
            return await self._run(command, stdin, workdir, environment)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    async def _run(
        self, command: list[str], stdin: bytes, workdir: Path, env: dict[str, str]
    ) -> ProgramResult:
        started = time.perf_counter()
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                cwd=str(workdir),
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise ProgramError(f"the grader program {command[0]!r} could not start: {exc}") from exc
        try:
            async with asyncio.timeout(self.timeout_seconds):
                stdout, stderr = await self._communicate(process, stdin)
                code = await process.wait()
        except TimeoutError:
            raise ProgramError(
                f"the grader program timed out after {self.timeout_seconds:g} s"
            ) from None
        except _OutputTooLarge as exc:
            raise ProgramError(
                f"the grader program wrote more than {self.max_output_bytes} bytes to {exc.stream}"
            ) from None
        finally:
            _kill(process)
            await asyncio.shield(_reap(process))
        err = stderr.decode("utf-8", "replace")
        if code != 0:
            tail = err.strip()[-STDERR_TAIL:] or "(no output on stderr)"
            raise ProgramError(f"the grader program exited with code {code}: {tail}")
        elapsed = (time.perf_counter() - started) * 1000
        return ProgramResult(stdout.decode("utf-8", "replace"), err, elapsed)

    async def _communicate(
        self, process: asyncio.subprocess.Process, stdin: bytes
    ) -> tuple[bytes, bytes]:
        assert process.stdout is not None
        assert process.stderr is not None

        async def feed() -> None:
            assert process.stdin
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(stdin)
                await process.stdin.drain()
            process.stdin.close()

        limit = self.max_output_bytes
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(feed())
                out = group.create_task(_read_capped(process.stdout, limit, "stdout"))
                err = group.create_task(_read_capped(process.stderr, limit, "stderr"))
        except BaseExceptionGroup as failed:
            raise failed.exceptions[0] from None
        return out.result(), err.result()
