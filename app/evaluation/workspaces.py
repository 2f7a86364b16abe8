"""Each case's agent workspace: a fresh copy of the template, its hooks, and what changed.

A case of a suite with a ``workspace`` works in a folder of its own: a copy of the
template (or an empty folder) with the workspace's repositories checked out in it
(``repositories``), prepared by ``before_all`` and then ``before_each``. The
candidate's agent runs there, and the graders get the folder (``workspace_path``) and what
the candidate changed in it (``file_changes``: a unified diff in git's format against the
folder as the hooks left it). ``after_each`` runs once the case is graded; then the folder
is removed. Every trial of a case gets its own folder, so no case ever sees another's work.

Hooks run through the code graders' ``ProgramRunner`` (no shell, clean environment, time
limit, capped output). A hook reads ``{workspace_path, eval_case_id, eval_run_id,
eval_dir}`` as JSON on stdin (``eval_dir``: its folder, the suite file's unless ``cwd``),
and ``{{workspace_path}}`` in its arguments is the folder. Hooks of one point run in order
(the workspace's own, then AgentV's extensions). A ``before_*`` hook that fails fails its
case (``WorkspaceError``); a failing ``after_each`` is logged.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import os
import shutil
import stat
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.evaluation.agent_rules import AgentRulesError, AgentRulesPaths, agent_rules_paths, merged
from app.evaluation.links import LinkRefused, copy_without_links
from app.evaluation.records import ResultRecord
from app.evaluation.repositories import RepoCheckouts, RepositoryError
from app.evaluators.code.programs import ProgramError, ProgramRunner
from app.sandbox import new_folder
from app.suites.model import AgentRules, Workspace, WorkspaceHook

logger = logging.getLogger("app.evaluation")

SKIPPED_FOLDERS = frozenset({".git", "node_modules", "__pycache__", ".agentv"})
"""Folders ``file_changes`` never looks into."""
MAX_FILE_BYTES = 512 * 1024
"""Larger files are left out of ``file_changes`` (as are files that are not UTF-8 text)."""
PLACEHOLDER = "{{workspace_path}}"

Snapshot = dict[str, str]
"""Text files of a folder: relative path (``/``-separated) -> content."""


class WorkspaceError(Exception):
    """A case's workspace could not be set up (the message names the step and why)."""


def snapshot(folder: Path) -> Snapshot:
    """Every text file under ``folder`` (symbolic links and skipped folders left out)."""
    found: Snapshot = {}
    for current, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if name not in SKIPPED_FOLDERS)
        for name in files:
            path = Path(current, name)
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "\0" not in text:
                found[path.relative_to(folder).as_posix()] = text
    return found


def file_changes(before: Snapshot, after: Snapshot) -> str:
    """What changed from ``before`` to ``after``, as git prints it ('' for nothing).

    A created or deleted file always has its ``---``/``+++`` lines, even when empty.
    """
    parts: list[str] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        lines = [f"diff --git a/{path} b/{path}"]
        if old is None:
            lines.append("new file mode 100644")
        elif new is None:
            lines.append("deleted file mode 100644")
        lines.append("--- /dev/null" if old is None else f"--- a/{path}")
        lines.append("+++ /dev/null" if new is None else f"+++ b/{path}")
        hunks = difflib.unified_diff(
            (old or "").splitlines(), (new or "").splitlines(), lineterm="", n=3
        )
        lines.extend(list(hunks)[2:])  # its own ---/+++ lines are above
        parts.append("\n".join(lines))
    return "\n".join(parts)


@dataclass(frozen=True)
class CaseWorkspace:
    """A case's workspace folder and its files as the hooks left them.

    ``agent_rules_paths``: what AgentV's ``agentv:agent-rules`` staged or found (empty when
    the suite names no such extension).
    """

    path: Path
    baseline: Snapshot
    agent_rules_paths: AgentRulesPaths = field(default_factory=dict)

    async def changes(self) -> str:
        """What was changed in the folder since the hooks ran, as a unified diff."""
        return file_changes(self.baseline, await asyncio.to_thread(snapshot, self.path))


@asynccontextmanager
async def case_workspace(
    spec: Workspace,
    programs: ProgramRunner | None,
    case_id: str,
    repositories: RepoCheckouts | None = None,
) -> AsyncIterator[CaseWorkspace]:
    """A fresh workspace for one case (one trial), removed on exit.

    ``repositories`` clones the workspace's repositories (once for every case it serves).

    Raises:
        WorkspaceError: The template could not be copied, a repository could not be
            checked out or a ``before_*`` hook failed.
    """
    folder = new_folder("workspace")
    path = folder / "workspace"
    finished = False
    try:
        await asyncio.to_thread(_copy, spec.template, path)
        checkouts = repositories or RepoCheckouts()
        for repo in spec.repos:
            try:
                await checkouts.place(repo, path)
            except RepositoryError as exc:
                raise WorkspaceError(str(exc)) from None
        if programs is not None:  # hooks and graders run as the sandbox's user
            await asyncio.to_thread(programs.sandbox.hand_over, path)
        rules: AgentRulesPaths = {}
        for name in ("before_all", "before_each"):
            for hook in spec.at(name):
                await _run_hook(name, hook, programs, path, case_id, _step(spec, hook))
            for extension in (r for r in spec.agent_rules if r.point == name):
                rules = merged(rules, await _agent_rules(extension, path, programs))
        yield CaseWorkspace(path, await asyncio.to_thread(snapshot, path), rules)
        finished = True
    except Exception:
        finished = True
        raise
    finally:
        for hook in spec.at("after_each") if finished else ():  # not when cancelled
            try:
                await _run_hook("after_each", hook, programs, path, case_id)
            except WorkspaceError as exc:
                logger.warning("case %r: %s", case_id, exc)
        shutil.rmtree(folder, ignore_errors=True)


def _step(spec: Workspace, hook: WorkspaceHook) -> str | None:
    """How errors name a hook: an AgentV environment's ``before_all`` is its setup."""
    setup = spec.declared_as == "environment" and hook is spec.before_all
    return "the environment's setup" if setup else None


async def _agent_rules(
    rules: AgentRules, path: Path, programs: ProgramRunner | None
) -> AgentRulesPaths:
    """Stage or find the agent's rules in the case's folder (files copied, no program run)."""
    try:
        found = await asyncio.to_thread(agent_rules_paths, rules, path)
    except AgentRulesError as exc:
        raise WorkspaceError(str(exc)) from None
    if programs is not None and rules.staged:  # the agent and hooks run as the sandbox's user
        await asyncio.to_thread(programs.sandbox.hand_over, path)
    return found


def _copy(template: str | None, path: Path) -> None:
    if template is None:
        path.mkdir()
        return
    try:
        copy_without_links(Path(template), path)
        _writable(path)
    except LinkRefused as exc:
        raise WorkspaceError(f"the workspace template {template!r}: {exc}") from None
    except OSError as exc:
        raise WorkspaceError(
            f"the workspace template {template!r} could not be copied: {exc}"
        ) from None


def _writable(path: Path) -> None:
    """Let the copy's owner write everywhere in it: it is the case's working folder.

    The template may be read-only (a suite checked out or mounted read-only), and hooks and
    the agent run as the sandbox's user, who owns the copy but could not write in it.
    """
    for parent, folders, files in os.walk(path):
        for name in (".", *folders, *files):
            entry = os.path.join(parent, name)
            mode = os.lstat(entry).st_mode
            if not stat.S_ISLNK(mode):
                os.chmod(entry, stat.S_IMODE(mode) | stat.S_IWUSR)


async def _run_hook(
    name: str,
    hook: WorkspaceHook,
    programs: ProgramRunner | None,
    path: Path,
    case_id: str | None,
    label: str | None = None,
    context: Mapping[str, object] | None = None,
) -> None:
    """Run one hook in ``path``; ``context`` adds to what it reads on stdin."""
    label = label or f"workspace hook {name!r}"
    if programs is None:
        raise WorkspaceError(f"{label} cannot run: code graders (programs) are not enabled")
    argv = [item.replace(PLACEHOLDER, str(path)) for item in hook.command]
    if hook.suite_env:  # set inside the sandbox, for the program alone (see WorkspaceHook)
        argv = ["env", *(f"{key}={value}" for key, value in hook.suite_env), *argv]
    stdin = {
        "workspace_path": str(path),
        "eval_case_id": case_id,
        "eval_run_id": None,
        "eval_dir": hook.cwd,  # the suite file's folder (AgentV's extension context)
        **(context or {}),
    }
    runner = replace(programs, timeout_seconds=hook.timeout_seconds)
    if name == "after_each":  # the agent may have added files as the service's user
        await asyncio.to_thread(programs.sandbox.hand_over, path)
    try:
        await runner.run(
            argv,
            json.dumps(stdin).encode(),
            folder=Path(hook.cwd) if hook.cwd else None,
            env={key: value.replace(PLACEHOLDER, str(path)) for key, value in hook.env},
            workspace=path,
        )
    except ProgramError as exc:
        raise WorkspaceError(f"{label} failed: {exc.detail}") from None


async def run_after_all(
    spec: Workspace | None, programs: ProgramRunner | None, records: Sequence[ResultRecord]
) -> None:
    """Run promptfoo's ``afterAll`` extensions once every case of a run has finished.

    Each reads the hooks' context plus ``results`` (the run's records as the API shows them),
    in an empty folder of its own. What it returns is not used; a failure never fails the
    run: it is logged as a warning.
    """
    hooks = spec.at("after_all") if spec is not None else ()
    if not hooks:
        return
    results = [record.model_dump(mode="json", by_alias=True) for record in records]
    folder = new_folder("workspace")
    path = folder / "workspace"
    try:
        path.mkdir()
        if programs is not None:
            await asyncio.to_thread(programs.sandbox.hand_over, path)
        for hook in hooks:
            try:
                label = "the afterAll extension"
                await _run_hook(
                    "after_all", hook, programs, path, None, label, {"results": results}
                )
            except WorkspaceError as exc:
                logger.warning("%s", exc)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
