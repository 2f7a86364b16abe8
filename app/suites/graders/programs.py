"""Code graders and the workspace get their folders from the suite file, or are refused.

A code grader (``code_judge``, a composite's ``code_judge`` aggregator, a judge whose
prompt a program prints, promptfoo's ``python`` asserts and ``javascript`` files) runs a
program the suite names. It runs only when the operator enables code graders, and only for a
suite file read from a workspace root: its folder is then the suite file's folder (or its
``cwd`` relative to that folder, inside the same root), set here as an absolute path. A
suite sent in a request body never runs a program, whatever ``cwd`` it writes. Each refusal
is one error per grader, at the first case that uses it, naming the grader. A suite's
``workspace`` is placed the same way (``place_workspace``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath

from app.evaluators.code.code_judge import DISABLED
from app.evaluators.code.program_asserts import needs_program_folder
from app.evaluators.config import EvaluatorConfig
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings
from app.suites.model import AgentRules, EvalCase, EvalSuite, Workspace, WorkspaceHook
from app.suites.reading import CaseOrigin
from app.suites.workspaces.git_sources import GitSources
from app.suites.workspaces.repos import place_repos

SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".sh")
"""Arguments that name a program file of the suite: a prompt program's must exist."""
WORKSPACE_INLINE = (
    "a workspace is set up only for a suite file read from a workspace root (name the suite by "
    "its path), never for a suite sent in the request body"
)
INLINE = (
    "code graders run only in a suite file read from a workspace root (name the suite by its "
    "path), never in a suite sent in the request body"
)


@dataclass(frozen=True)
class CodePolicy:
    """Whether code graders may run, where the suite file sits, which repositories it may clone.

    Attributes:
        enabled: The operator's ``code_graders`` setting.
        folder: ``(root, folder inside root)`` of the suite file; None for a request body.
        git: Where a workspace's repositories may be cloned from.
    """

    enabled: bool
    folder: tuple[Path, PurePosixPath] | None
    git: GitSources = field(default_factory=GitSources)


def place_code_graders(
    suite: EvalSuite, origins: Mapping[str, CaseOrigin], policy: CodePolicy, findings: Findings
) -> EvalSuite:
    """The suite with every code grader's ``cwd`` made absolute; refusals go to ``findings``."""
    reported: set[str] = set()
    cases: list[EvalCase] = []
    for case in suite.cases:
        where = origins[case.id].path if case.id in origins else ()
        place = partial(_place, policy=policy, findings=findings, where=where, reported=reported)
        placed = case.with_graders(place)
        if case.scoring_function is not None:  # promptfoo's assertScoringFunction
            function = place(case.scoring_function)
            placed = placed.model_copy(update={"scoring_function": function})
        cases.append(placed)
    return suite.model_copy(update={"cases": tuple(cases)})


def _place(
    grader: EvaluatorConfig,
    policy: CodePolicy,
    findings: Findings,
    where: tuple[str | int, ...],
    reported: set[str],
) -> EvaluatorConfig:
    update: dict[str, object] = {}
    if grader.evaluators:
        children = tuple(_place(c, policy, findings, where, reported) for c in grader.evaluators)
        if children != grader.evaluators:
            update["evaluators"] = children
    aggregator = grader.aggregator
    if aggregator is not None and aggregator.type == "code_judge":
        declared = (aggregator.model_extra or {}).get("cwd")
        folder = _folder(grader, declared, policy, findings, where, reported)
        update["aggregator"] = aggregator.model_copy(update={"cwd": folder})
    runs = needs_program_folder(grader) or grader.prompt_program is not None
    runs = runs or bool(grader.preprocessors)
    if grader.type == "code_judge" or runs:
        folder = _folder(grader, grader.cwd, policy, findings, where, reported)
        update["cwd"] = folder
        # A code grader's missing script fails when it runs (exit non-zero: score 0, as in
        # AgentV); a judge prompt program's or preprocessor's is an error here already (AgentV
        # refuses the case).
        commands = [grader.prompt_program.command] if grader.prompt_program else []
        commands += [preprocessor.command for preprocessor in grader.preprocessors]
        for command in commands if folder is not None else []:
            missing = _missing_script(command, Path(str(folder)))
            if missing is not None and grader.name not in reported:
                reported.add(grader.name)
                findings.error(
                    where,
                    f"grader {grader.name!r} ({grader.type}) cannot run: its program file "
                    f"{missing!r} does not exist",
                )
    return grader.model_copy(update=update) if update else grader


def _missing_script(command: Sequence[str], folder: Path) -> str | None:
    """A relative script path of ``command`` (``x.py``, ``scripts/x.ts``) not in ``folder``."""
    for item in command:
        relative = not item.startswith("-") and not item.startswith("/")
        if relative and item.endswith(SCRIPT_SUFFIXES) and not (folder / item).is_file():
            return item
    return None


def _folder(
    grader: EvaluatorConfig,
    declared: object,
    policy: CodePolicy,
    findings: Findings,
    where: tuple[str | int, ...],
    reported: set[str],
) -> str | None:
    """The absolute folder the grader's program runs from, or None (error recorded once)."""
    problem: str | None = None
    folder: str | None = None
    if not policy.enabled:
        problem = DISABLED
    elif policy.folder is None:
        problem = INLINE
    else:
        relative = declared if isinstance(declared, str) and declared.strip() else "."
        folder = folder_inside(policy.folder, relative)
        if folder is None:
            problem = f"its cwd {relative!r} leaves the workspace root"
    if problem is not None and grader.name not in reported:
        reported.add(grader.name)
        findings.error(where, f"grader {grader.name!r} ({grader.type}) cannot run: {problem}")
    return folder


def folder_inside(suite_folder: tuple[Path, PurePosixPath], relative: str) -> str | None:
    """``relative`` (to the suite file's folder) as an absolute path; None outside the root."""
    root, inside = suite_folder
    joined = posixpath.normpath(posixpath.join(str(inside), relative))
    if relative.startswith("/") or joined == ".." or joined.startswith("../"):
        return None
    folder = (root / joined).resolve()
    return str(folder) if folder.is_relative_to(root.resolve()) else None


def place_workspace(suite: EvalSuite, policy: CodePolicy, findings: Findings) -> EvalSuite:
    """The suite with its workspace's template and hook folders made absolute.

    A workspace copies a folder of the server and its hooks run programs, so it needs a
    suite file read from a workspace root, and hooks need code graders enabled; a template
    must be a folder inside that root. Each repository gets where it is cloned from.
    """
    workspace = suite.workspace
    if workspace is None:
        return suite
    where: tuple[str | int, ...] = (workspace.declared_as,)
    if policy.folder is None:
        findings.error(where, f"a workspace cannot be set up: {WORKSPACE_INLINE}")
        return suite
    if workspace.hooks() and not policy.enabled:
        findings.error((*where, "hooks"), f"workspace hooks cannot run: {DISABLED}")
    update: dict[str, object] = {}
    if workspace.template is not None:
        update["template"] = _placed_template(workspace, policy.folder, findings)
    if workspace.repos:
        inside_root = partial(folder_inside, policy.folder)
        repos = (*where, "repos")
        update["repos"] = place_repos(workspace.repos, inside_root, policy.git, repos, findings)
    placed = partial(_placed_hook, policy.folder, findings)
    for name in ("before_all", "before_each", "after_each"):
        hook = getattr(workspace, name)
        if hook is not None:
            update[name] = placed(hook, (*where, "hooks", name, "cwd"))
    if workspace.extensions:
        update["extensions"] = _placed_extensions(workspace, policy.folder, findings)
    if workspace.agent_rules:
        update["agent_rules"] = _placed_agent_rules(workspace, policy.folder, findings)
    return suite.model_copy(update={"workspace": workspace.model_copy(update=update)})


def _placed_hook(
    suite_folder: tuple[Path, PurePosixPath],
    findings: Findings,
    hook: WorkspaceHook,
    where: tuple[str | int, ...],
) -> WorkspaceHook:
    """The hook with its ``cwd`` made absolute (an error when it leaves the root)."""
    cwd = folder_inside(suite_folder, hook.cwd or ".")
    if cwd is None:
        findings.error(where, f"cwd {hook.cwd!r} leaves the workspace root")
    return hook.model_copy(update={"cwd": cwd})


def _placed_template(
    workspace: Workspace, suite_folder: tuple[Path, PurePosixPath], findings: Findings
) -> str | None:
    """The template's absolute folder; None (an empty start) for a workdir its setup makes."""
    assert workspace.template is not None
    where: DocumentPath = (workspace.declared_as,)
    template = folder_inside(suite_folder, workspace.template)
    if template is not None and Path(template).is_dir():
        return template
    if _made_by_setup(workspace, template):
        findings.warn((*where, "workdir"), _MADE_BY_SETUP.format(workspace.template))
    else:
        findings.error(*_no_template(workspace, where))
    return None


_MADE_BY_SETUP = (
    "workdir {!r} is no folder of the suite: each case's folder starts empty and the "
    "environment's setup makes it (a setup that fails is an error of each case)"
)


def _made_by_setup(workspace: Workspace, template: str | None) -> bool:
    """An environment's workdir its setup makes: not there, inside the root, with a setup."""
    return (
        workspace.declared_as == "environment"
        and workspace.before_all is not None
        and template is not None
        and not Path(template).exists()
    )


def _no_template(workspace: Workspace, where: DocumentPath) -> tuple[DocumentPath, str]:
    """Where and why the workspace's template (an environment's ``workdir``) is not there."""
    if workspace.declared_as == "environment":
        return (*where, "workdir"), (
            f"workdir {workspace.template!r}: no such folder inside the workspace root (a "
            "workdir is a folder of the suite, copied for each case, or one the "
            "environment's setup makes)"
        )
    return (*where, "template"), (
        f"template {workspace.template!r}: no such folder inside the workspace root"
    )


def _placed_agent_rules(
    workspace: Workspace, suite_folder: tuple[Path, PurePosixPath], findings: Findings
) -> tuple[AgentRules, ...]:
    """Each agent-rules path made absolute: a file or folder inside the workspace root."""
    placed: list[AgentRules] = []
    for rules in workspace.agent_rules:
        staged: list[tuple[str, tuple[str, ...]]] = []
        for kind, paths in rules.staged:
            found: list[str] = []
            for path in paths:
                absolute = folder_inside(suite_folder, path)
                if absolute is None or not Path(absolute).exists():
                    findings.error(
                        ("extensions",),
                        f"agentv:agent-rules {kind} path {path!r} does not exist inside the "
                        "workspace root",
                    )
                else:
                    found.append(absolute)
            staged.append((kind, tuple(found)))
        placed.append(rules.model_copy(update={"staged": tuple(staged)}))
    return tuple(placed)


def _placed_extensions(
    workspace: Workspace, suite_folder: tuple[Path, PurePosixPath], findings: Findings
) -> tuple[tuple[str, WorkspaceHook], ...]:
    """AgentV's extensions placed as hooks are; a module that is not there is an error."""
    extensions: list[tuple[str, WorkspaceHook]] = []
    reported: set[str] = set()  # a catch-all extension is a hook at every point: say it once
    for index, (name, hook) in enumerate(workspace.extensions):
        extension = _placed_hook(suite_folder, findings, hook, ("extensions", index))
        missing = _missing_script(hook.command, Path(extension.cwd)) if extension.cwd else None
        if missing is not None and missing not in reported:  # as a missing prompt program is
            reported.add(missing)
            findings.error(("extensions", index), f"its module {missing!r} does not exist")
        extensions.append((name, extension))
    return tuple(extensions)
