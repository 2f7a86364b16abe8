"""Run a grader program a suite names, confined in the sandbox, and read what it printed.

``ProgramRunner.run`` resolves ``argv`` (no shell, so nothing in it is shell syntax;
arguments naming files of the grader's folder, ``../scripts/check.py``, made absolute so they
still resolve) and runs it through ``app.sandbox`` (bubblewrap: its own namespaces, a
read-only runtime, its folder read-only, a fresh scratch folder as working folder, ``HOME``
and ``TMPDIR``, a case workspace when it has one, no network, resource limits, its whole
process tree killed at the time limit, output capped and scrubbed of every configured
secret). Every refusal is a ``ProgramError`` saying why: the sandbox cannot start here, the
program was not found or lies outside what the sandbox shows, the folder is outside the
allowed roots, it timed out, it wrote too much, it exited non-zero (with the tail of its
stderr).

Code graders (``code_judge``), composite code aggregators, judge prompt programs, workspace
hooks and the ``/v1`` ``python`` grader use it; nothing else starts a program a suite names.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.errors import EvaluatorConfigError
from app.sandbox import (
    Identity,
    Limits,
    Mounts,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    new_folder,
)
from app.sandbox.sandbox import DEFAULT_RUNTIME
from app.sandbox.scrub import secret_list
from app.settings import Settings

STDERR_TAIL = 2000


class ProgramError(EvaluatorConfigError):
    """A grader program could not run or did not finish properly (the message says why)."""


class ProgramNotFound(ProgramError):
    """The program named is not on the sandbox's PATH (its runtime lacks that interpreter)."""


class ProgramExitError(ProgramError):
    """A program that ran and exited non-zero: ``code`` and the tail of its stderr."""

    def __init__(self, code: int, tail: str) -> None:
        super().__init__(f"the grader program exited with code {code}: {tail}")
        self.code = code
        self.tail = tail


@dataclass(frozen=True)
class ProgramResult:
    """What a finished program wrote (secrets scrubbed), and how long it took."""

    stdout: str
    stderr: str
    elapsed_ms: float


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    resolved = path.resolve()
    return any(resolved.is_relative_to(root.resolve()) for root in roots)


def sandbox_from_settings(settings: Settings) -> Sandbox:
    """The operator's sandbox: limits, runtime, user and the secrets to scrub."""
    limits = Limits(
        cpu_seconds=settings.sandbox_cpu_seconds,
        memory_bytes=settings.sandbox_memory_bytes,
        processes=settings.sandbox_max_processes,
        file_bytes=settings.sandbox_max_file_bytes,
        open_files=settings.sandbox_max_open_files,
        tmp_bytes=settings.sandbox_tmp_bytes,
    )
    return Sandbox(
        limits=limits,
        runtime=(*DEFAULT_RUNTIME, *settings.sandbox_runtime),
        identity=Identity(uid=settings.sandbox_uid, gid=settings.sandbox_uid),
        secrets=secret_list(settings.secret_values()),
    )


@dataclass(frozen=True)
class ProgramRunner:
    """Runs grader programs in the sandbox, under the operator's limits.

    Attributes:
        roots: Folders a grader's own folder must lie in (the workspace roots).
        timeout_seconds: Time limit of one run.
        max_output_bytes: Most bytes the program may write to stdout (and to stderr).
        sandbox: The sandbox every program runs in.
    """

    roots: tuple[Path, ...]
    timeout_seconds: float = 30.0
    max_output_bytes: int = 1024 * 1024
    sandbox: Sandbox = field(default_factory=Sandbox)

    @classmethod
    def from_settings(cls, settings: Settings) -> ProgramRunner | None:
        """The operator's runner, or None when code graders are not enabled."""
        if not settings.code_graders:
            return None
        return cls(
            roots=tuple(settings.workspace_roots),
            timeout_seconds=settings.code_grader_timeout_seconds,
            max_output_bytes=settings.code_grader_max_output_bytes,
            sandbox=sandbox_from_settings(settings),
        )

    def resolve_argv(
        self, argv: Sequence[str], folder: Path | None, shown: Sequence[Path] = ()
    ) -> list[str]:
        """``argv`` with items naming existing files of ``folder`` made absolute.

        ``shown`` are other folders the program sees (a case workspace): an absolute program
        path must lie in one of them, in ``folder`` or in the sandbox's runtime.

        Raises:
            ProgramError: Empty argv, a folder outside the roots, or a program not found.
        """
        if not argv:
            raise ProgramError("the grader has no command")
        if folder is not None and not _inside(folder, self.roots):
            raise ProgramError("the grader's folder is outside the workspace roots")
        resolved = list(argv)
        if folder is not None:
            for index, item in enumerate(resolved):
                candidate = folder / item
                relative = not item.startswith("-") and not os.path.isabs(item)
                if relative and _is_file(candidate) and _inside(candidate, self.roots):
                    resolved[index] = str(candidate.resolve())
        program = resolved[0]
        if os.sep not in program:
            if shutil.which(program, path=self.sandbox.path) is None:
                raise ProgramNotFound(
                    f"the grader program {program!r} was not found on the sandbox's PATH "
                    f"({self.sandbox.path})"
                )
            return resolved
        places = [*shown, *([folder] if folder is not None else [])]
        absolute = os.path.normpath(program)
        from_root = program != argv[0]  # a file of the roots: its folder is shown read-only
        if not os.path.isabs(program) or not (
            from_root or self.sandbox.visible(absolute) or _inside(Path(absolute), places)
        ):
            raise ProgramError(
                f"the grader program {argv[0]!r} is not in the sandbox: name a program of its "
                "runtime (python3, node...) or a file of the grader's folder"
            )
        if not os.access(program, os.X_OK) or not Path(program).is_file():
            raise ProgramError(f"the grader program {argv[0]!r} is not an executable file")
        return resolved

    async def run(
        self,
        argv: Sequence[str],
        stdin: bytes,
        *,
        folder: Path | None = None,
        env: Mapping[str, str] | None = None,
        files: Mapping[str, str] | None = None,
        workspace: Path | None = None,
        proxy_socket: Path | None = None,
    ) -> ProgramResult:
        """Run ``argv`` on ``stdin`` in the sandbox and return its output.

        Args:
            argv: The program and its arguments (never given to a shell).
            stdin: Bytes written to the program's standard input.
            folder: The grader's folder (read-only): relative file arguments resolve in it.
            env: Extra environment variables.
            files: Files written into the working folder first (name -> text).
            workspace: The case's workspace folder (writable), when it has one.
            proxy_socket: The target proxy's socket, reached at ``127.0.0.1`` inside.

        Raises:
            ProgramError: The program may not run, could not run or failed.
        """
        shown = (workspace,) if workspace is not None else ()
        command = self.resolve_argv(argv, folder, shown)
        readable = self._readable(argv, command, folder)
        mounts = self._mounts(readable, shown, files or {}, proxy_socket)
        try:
            finished = await self.sandbox.run(
                command,
                stdin,
                mounts,
                env=env,
                timeout_seconds=self.timeout_seconds,
                max_output_bytes=self.max_output_bytes,
            )
        except SandboxUnavailable as exc:
            raise ProgramError(str(exc)) from None
        except SandboxError as exc:
            raise ProgramError(f"the grader program {exc}") from None
        finally:
            shutil.rmtree(mounts.workdir, ignore_errors=True)
        if finished.code != 0:
            tail = finished.stderr.strip()[-STDERR_TAIL:] or "(no output on stderr)"
            raise ProgramExitError(finished.code, tail)
        return ProgramResult(finished.stdout, finished.stderr, finished.elapsed_ms)

    def _readable(
        self, argv: Sequence[str], command: Sequence[str], folder: Path | None
    ) -> tuple[Path, ...]:
        """The grader's folder and the folders of the files its arguments name in the roots.

        ``../graders/check.ts`` (AgentV's layout: graders shared by several suites) is made
        absolute by ``resolve_argv``; its folder is shown read-only too, nothing else of the
        root.
        """
        if folder is None:
            return ()
        folders = [folder.resolve()]
        for given, resolved in zip(argv, command, strict=True):
            if given != resolved:
                parent = Path(resolved).parent
                if not any(parent.is_relative_to(shown) for shown in folders):
                    folders.append(parent)
        return tuple(folders)

    def _mounts(
        self,
        readable: tuple[Path, ...],
        shown: tuple[Path, ...],
        files: Mapping[str, str],
        proxy_socket: Path | None,
    ) -> Mounts:
        """A fresh scratch folder holding ``files``, and what the program sees besides it."""
        workdir = new_folder("grader")
        for name, text in files.items():
            (workdir / Path(name).name).write_text(text, encoding="utf-8")
        self.sandbox.hand_over(workdir)
        return Mounts(
            workdir=workdir,
            writable=shown,
            read_only=readable,
            proxy_socket=proxy_socket,
        )


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; an argument that cannot be a path (too long) is not."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False
