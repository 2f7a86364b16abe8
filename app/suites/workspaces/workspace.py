"""A suite's ``workspace`` (AgentV's agent workspace) into a ``Workspace``.

``workspace`` is a mapping, or the path of a YAML file holding one (its own relative paths
are then relative to that file). Read here: ``template`` (a folder), ``repos`` (read by
``workspace_repos``), ``hooks`` with ``before_all``, ``before_each`` and ``after_each``
(each ``command`` or ``script``, with ``timeout_ms`` and ``cwd``; ``after_each.reset`` is
met by design, as every case starts from a fresh copy), ``hooks.enabled: false`` and
``isolation: per_case``. Refused, each naming itself: ``docker``, a fixed ``path``/``mode:
static``, ``env``, ``isolation: shared`` (cases run at once here, so they never share a
folder) and ``after_all``.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping
from typing import Any

from app.errors import DocumentError
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import MISSING, Findings, describe, pick, warn_unknown_keys
from app.suites.documents.parsing import parse_yaml
from app.suites.model import Workspace, WorkspaceHook
from app.suites.reading import refuse
from app.suites.workspaces.agent_rules import read_agent_rules
from app.suites.workspaces.environment import (
    environment_env,
    environment_reference,
    environment_workspace,
    in_environment,
    read_extensions,
)
from app.suites.workspaces.repos import read_repos

HOOKS = ("before_all", "before_each", "after_each")
KEYS = frozenset({"template", "repos", "hooks", "isolation"})
REFUSED = {
    "docker": "this service starts no containers: the agent target runs the agent",
    "path": "a fixed workspace folder is not supported: each case gets a copy of 'template'",
    "mode": "workspace modes are not supported: each case gets a copy of 'template'",
    "env": "workspace environment variables are not supported: give them to the target's env",
    "pool": "workspace pools are not supported: each case gets a copy of 'template'",
}
HOOK_KEYS = frozenset({"command", "script", "timeout_ms", "timeoutMs", "cwd", "reset"})
RESETS = frozenset({"none", "fast", "strict"})
DEFAULT_TIMEOUT_MS = 60_000
MAX_TIMEOUT_MS = 3_600_000
"""Longest a workspace hook may run (an hour)."""


def workspace_reference(document: Mapping[str, Any]) -> str | None:
    """The path of a workspace file, when ``workspace`` (or ``environment``) names one."""
    value = document.get("workspace")
    if isinstance(value, str) and value.strip():
        return value.strip()
    return environment_reference(document) if "workspace" not in document else None


def read_workspace(
    document: Mapping[str, Any], texts: Mapping[str, str], findings: Findings
) -> Workspace | None:
    """The suite's workspace (None when it has none or it is broken: errors say why).

    AgentV's July ``environment`` and ``extensions`` are read here too
    (``app/suites/workspaces/environment.py``).
    """
    key = "workspace" if "workspace" in document else "environment"
    if key == "workspace" and document.get("environment") is not None:
        findings.error(("environment",), "give the workspace once: 'workspace' or 'environment'")
    value = document.get(key, MISSING)
    where: DocumentPath = (key,)
    extensions = read_extensions(document.get("extensions"), ".", findings)
    agent_rules = read_agent_rules(document.get("extensions"), findings)
    added = {"extensions": extensions, "agent_rules": agent_rules, "declared_as": key}
    if value is MISSING or value is None:
        return Workspace.model_validate(added) if extensions or agent_rules else None
    folder = "."
    if isinstance(value, str) and value.strip():
        reference = workspace_reference(document)
        if reference is None or reference not in texts:
            return None  # reading the file recorded why
        folder = posixpath.dirname(reference) or "."
        try:
            value = parse_yaml(texts[reference])
        except DocumentError as exc:
            findings.error(where, f"{key} file {reference!r}: {exc.detail}")
            return None
    env: dict[str, str] = {}
    if key == "environment":
        env = environment_env(value, where, findings)
        value = environment_workspace(value, where, findings)
        if value is None:
            return None
    if not isinstance(value, dict):
        findings.error(where, f"must be a mapping or a workspace file, not {describe(value)}")
        return None
    workspace = _workspace(value, folder, where, findings)
    if workspace is None:
        return None
    workspace = workspace.model_copy(update=added)
    return in_environment(workspace, env) if key == "environment" else workspace


def _workspace(
    value: Mapping[str, Any], folder: str, where: DocumentPath, findings: Findings
) -> Workspace | None:
    warn_unknown_keys(value, KEYS | frozenset(REFUSED), where, findings)
    for key, why in REFUSED.items():
        if key in value:
            refuse(findings, (*where, key), f"workspace '{key}'", why)
    isolation = value.get("isolation", "per_case")
    if isolation != "per_case":
        refuse(
            findings,
            (*where, "isolation"),
            f"isolation {isolation!r}",
            "cases run at once here, so each works in its own copy (isolation: per_case)",
        )
    template = value.get("template")
    if template is not None and not (isinstance(template, str) and template.strip()):
        findings.error((*where, "template"), f"must be a folder's path, not {describe(template)}")
        template = None
    repos = read_repos(value.get("repos", []), folder, (*where, "repos"), findings)
    hooks = _hooks(value.get("hooks"), folder, (*where, "hooks"), findings)
    if findings.errors:
        return None
    return Workspace(
        template=posixpath.normpath(posixpath.join(folder, template.strip())) if template else None,
        repos=repos,
        **hooks,
    )


def _hooks(
    value: Any, folder: str, where: DocumentPath, findings: Findings
) -> dict[str, WorkspaceHook]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        findings.error(where, f"must be a mapping of hooks, not {describe(value)}")
        return {}
    warn_unknown_keys(value, frozenset({*HOOKS, "enabled", "after_all"}), where, findings)
    if "after_all" in value:
        refuse(
            findings,
            (*where, "after_all"),
            "hook 'after_all'",
            "cases never share a workspace here; clean up in 'after_each'",
        )
    enabled = value.get("enabled", True)
    if not isinstance(enabled, bool):
        findings.error((*where, "enabled"), f"must be true or false, not {describe(enabled)}")
        return {}
    hooks: dict[str, WorkspaceHook] = {}
    for name in HOOKS:
        if name in value:
            hook = _hook(value[name], folder, (*where, name), findings)
            if hook is not None and enabled:
                hooks[name] = hook
    return hooks


def _hook(value: Any, folder: str, where: DocumentPath, findings: Findings) -> WorkspaceHook | None:
    if not isinstance(value, dict):
        findings.error(where, f"must be a mapping with 'command', not {describe(value)}")
        return None
    warn_unknown_keys(value, HOOK_KEYS, where, findings)
    reset = value.get("reset", "none")
    if reset not in RESETS:
        findings.error((*where, "reset"), f"must be one of none, fast, strict, not {reset!r}")
    key, command = pick(value, ("command", "script"), where, findings)
    if command is MISSING:
        return None  # a hook with only 'reset': every case starts from a fresh copy anyway
    argv = shlex.split(command) if isinstance(command, str) else command
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        findings.error((*where, key), "must be a non-empty list of strings (program, arguments)")
        return None
    _, timeout = pick(value, ("timeout_ms", "timeoutMs"), where, findings)
    timeout = DEFAULT_TIMEOUT_MS if timeout is MISSING else timeout
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT_MS  # NaN and infinity fail this too
    ):
        findings.error(
            (*where, "timeout_ms"),
            f"must be a number of milliseconds from 1 to {MAX_TIMEOUT_MS}, not {timeout!r}",
        )
        return None
    cwd = value.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        findings.error((*where, "cwd"), f"must be a folder's path, not {describe(cwd)}")
        return None
    return WorkspaceHook(
        command=tuple(argv),
        cwd=posixpath.normpath(posixpath.join(folder, cwd or ".")),
        timeout_seconds=timeout / 1000,
    )
