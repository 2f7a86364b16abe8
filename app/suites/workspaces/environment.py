"""AgentV's July-2026 ``environment`` and ``extensions``, read as a suite's workspace.

AgentV 4.42.4 knows neither key (its validator calls them unknown fields), so their reading
comes from AgentV's July files and their READMEs: ``environment`` (a mapping, or ``file://``
a YAML file holding one) with ``type: host`` (the default), ``workdir`` (the folder the
agent works in: here each case gets a fresh copy of it, as of a workspace ``template``),
``setup`` (``command``, ``cwd``, ``timeout_ms``: run before each case, as a ``before_all``
hook) and ``env`` (variables of the environment's programs: its setup and the extensions).
The case's folder stands for the workdir: a setup argument naming the workdir names the
case's folder, and ``AGENTV_ENVIRONMENT_WORKDIR`` holds it. A workdir that is no folder of
the suite is one its setup makes (AgentV's samples clone a repository into it): each case's
folder then starts empty and the setup fills it; a setup that fails (no network to clone
from, its script missing) is an error of each case, at run time. ``type: docker`` (or an
``image`` without a type) is refused by name, as a workspace's ``docker`` is.
``extensions`` lists lifecycle functions,
``file://MODULE.mjs:beforeAll`` (or ``beforeEach``, ``afterEach``): a JavaScript module's
exported function, called with ``{workspace_path, eval_dir, eval_case_id}`` at that point of
the case's workspace, after the ``environment`` hooks. It runs in the sandbox with ``node``
through a driver of ours, like every hook (a TypeScript module under ``bun``, as AgentV runs
it; a Python module, promptfoo's ``file://hooks.py:fn``, under ``python3``). A function with
any other name is promptfoo's catch-all extension: called at each of those points with
``(point name, context)``. ``afterAll`` (promptfoo's) runs once per run, when every case has
finished, with its ``results`` (``app/evaluation/workspaces.py``'s ``run_after_all``).
``agentv:agent-rules`` is read by ``agent_rules.py``. Refused by name: AgentV's other
built-in extensions (``agentv:...``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe, warn_unknown_keys
from app.suites.model import Workspace, WorkspaceHook
from app.suites.reading import refuse
from app.suites.workspaces.agent_rules import is_agent_rules

FILE_PREFIX = "file://"
ENVIRONMENT_KEYS = frozenset({"type", "workdir", "setup", "env"})
WORKSPACE_PATH = "{{workspace_path}}"
"""Stands for the case's workspace folder in a hook's arguments and variables."""
WORKDIR_VARIABLE = "AGENTV_ENVIRONMENT_WORKDIR"
"""Holds the environment's workdir (the case's folder) for its setup and extensions."""
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
POINTS = {
    "beforeAll": "before_all",
    "beforeEach": "before_each",
    "afterEach": "after_each",
    "afterAll": "after_all",  # once per run, with its results (promptfoo's)
}
EXTENSION_TIMEOUT_SECONDS = 60.0
NODE_ENV = (("OPENSSL_CONF", "/dev/null"),)
"""The sandbox shows no /etc/ssl: node would stop at start reading OpenSSL's configuration."""
EXTENSION_DRIVER = """\
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
const [file, name, point] = process.argv.slice(1);
let text = "";
for await (const chunk of process.stdin) text += chunk;
const context = JSON.parse(text || "{}");
const loaded = await import(pathToFileURL(resolve(file)).href);
const hook = loaded[name] ?? loaded.default?.[name];
if (typeof hook !== "function") {
  console.error(`${file} exports no function ${name}`);
  process.exit(2);
}
await (point ? hook(point, context) : hook(context));
"""
"""Calls the named export of the module with the hook's context (its stdin); a catch-all
extension with the point's name first."""
PYTHON_EXTENSION_DRIVER = """\
import importlib.util, json, os, sys
file, name, *point = sys.argv[1:]
context = json.loads(sys.stdin.read() or "{}")
sys.path.insert(0, os.path.dirname(os.path.abspath(file)))
spec = importlib.util.spec_from_file_location("extension", file)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
hook = getattr(module, name, None)
if not callable(hook):
    sys.exit(f"{file} defines no function {name}")
hook(*point, context)
"""
"""Calls the named function of a Python module as the JavaScript driver does."""


def environment_reference(document: Mapping[str, Any]) -> str | None:
    """The YAML file ``environment: file://PATH`` names, if it names one."""
    value = document.get("environment")
    if isinstance(value, str) and value.strip():
        return value.strip().removeprefix(FILE_PREFIX)
    return None


def environment_workspace(
    value: Any, where: DocumentPath, findings: Findings
) -> dict[str, Any] | None:
    """The workspace mapping (``template``, ``hooks``) an ``environment`` stands for."""
    if not isinstance(value, dict):
        findings.error(where, f"must be a mapping or a file://, not {describe(value)}")
        return None
    kind = value.get("type", "docker" if "image" in value else "host")
    if kind != "host":
        refuse(
            findings,
            (*where, "type"),
            f"environment type {kind!r}",
            "this service starts no containers: a host environment (a workdir) is read",
        )
        return None
    warn_unknown_keys(value, ENVIRONMENT_KEYS, where, findings)
    workspace: dict[str, Any] = {}
    workdir = value.get("workdir")
    if workdir is not None:
        if not (isinstance(workdir, str) and workdir.strip()):
            findings.error((*where, "workdir"), f"must be a folder's path, not {describe(workdir)}")
            return None
        workspace["template"] = workdir.strip().rstrip("/") or "."
    if "setup" in value:
        workspace["hooks"] = {"before_all": value["setup"]}
    return workspace


def environment_env(value: Any, where: DocumentPath, findings: Findings) -> dict[str, str]:
    """An environment's ``env``: each name and its value (a string; numbers written out)."""
    if not isinstance(value, dict) or value.get("env") is None:
        return {}
    given, path = value["env"], (*where, "env")
    if not isinstance(given, dict):
        findings.error(path, f"must be a mapping of names to values, not {describe(given)}")
        return {}
    env: dict[str, str] = {}
    for name, item in given.items():
        if not (isinstance(name, str) and ENV_NAME.fullmatch(name)):
            findings.error(path, f"{name!r} is not a variable name (letters, digits, _)")
        elif isinstance(item, bool) or not isinstance(item, str | int | float):
            findings.error((*path, name), f"must be a string, not {describe(item)}")
        else:
            env[name] = str(item)
    if env:
        findings.warn(
            path,
            "given to the environment's setup and extensions; the target (the agent) runs "
            "with its own configuration's env",
        )
    return env


def in_environment(workspace: Workspace, env: Mapping[str, str]) -> Workspace:
    """The workspace's setup and extensions as programs of the environment.

    The case's folder stands for the workdir: a setup argument naming the workdir (from the
    setup's ``cwd``) names the case's folder, and ``AGENTV_ENVIRONMENT_WORKDIR`` holds it;
    ``env`` goes to the setup and every extension.
    """
    suite_env = tuple(env.items())
    update: dict[str, Any] = {}
    if workspace.before_all is not None:
        setup = workspace.before_all
        command = tuple(
            WORKSPACE_PATH if _names(workspace.template, setup.cwd, item) else item
            for item in setup.command
        )
        setup = setup.model_copy(update={"command": command})
        update["before_all"] = _of_environment(setup, suite_env)
    update["extensions"] = tuple(
        (point, _of_environment(hook, suite_env)) for point, hook in workspace.extensions
    )
    return workspace.model_copy(update=update)


def _of_environment(hook: WorkspaceHook, suite_env: tuple[tuple[str, str], ...]) -> WorkspaceHook:
    env = (*hook.env, (WORKDIR_VARIABLE, WORKSPACE_PATH))
    return hook.model_copy(update={"env": env, "suite_env": suite_env})


def _names(workdir: str | None, cwd: str | None, argument: str) -> bool:
    """Whether a setup argument is the workdir's path (both relative to the suite file)."""
    if workdir is None or argument.startswith("-") or posixpath.isabs(argument):
        return False
    return posixpath.normpath(posixpath.join(cwd or ".", argument)) == workdir


def read_extensions(
    value: Any, folder: str, findings: Findings
) -> tuple[tuple[str, WorkspaceHook], ...]:
    """Each ``file://MODULE:function`` extension as ``(hook point, hook)``."""
    where: DocumentPath = ("extensions",)
    if value is None:
        return ()
    if not isinstance(value, list):
        findings.error(where, f"must be a list of extensions, not {describe(value)}")
        return ()
    found: list[tuple[str, WorkspaceHook]] = []
    for index, item in enumerate(value):
        if isinstance(item, dict) and is_agent_rules(item):
            continue  # read by app/suites/workspaces/agent_rules.py
        found.extend(_extension(item, folder, (*where, index), findings))
    return tuple(found)


def _extension(
    item: Any, folder: str, where: DocumentPath, findings: Findings
) -> list[tuple[str, WorkspaceHook]]:
    """The extension's hooks: one at its point, or a catch-all's at every point."""
    if not isinstance(item, str) or not item.strip():
        findings.error(where, f"must be 'file://MODULE:function', not {describe(item)}")
        return []
    text = item.strip()
    if is_agent_rules(text):
        return []  # read by app/suites/workspaces/agent_rules.py
    if text.startswith("agentv:"):
        refuse(
            findings,
            where,
            f"the built-in extension {text!r}",
            "AgentV's only built-in extension read here is agentv:agent-rules",
        )
        return []
    module, _, function = text.removeprefix(FILE_PREFIX).rpartition(":")
    if not text.startswith(FILE_PREFIX) or not module or not function.isidentifier():
        findings.error(
            where,
            f"must be 'file://MODULE:function' (beforeAll, beforeEach, afterEach, afterAll "
            f"or a function called at each), not {text!r}",
        )
        return []
    if function in POINTS:
        return [(POINTS[function], _extension_hook(module, function, folder, ()))]
    return [
        (point, _extension_hook(module, function, folder, (name,)))
        for name, point in POINTS.items()
    ]


def _extension_hook(
    module: str, function: str, folder: str, point: tuple[str, ...]
) -> WorkspaceHook:
    """The hook calling ``function`` of ``module`` (with the point's name, for a catch-all)."""
    # TypeScript runs under bun, as AgentV runs it and as user-defined grader types run here
    # (node 20 has no type stripping); the same driver works under both.
    if module.endswith(".py"):
        command: tuple[str, ...] = ("python3", "-I", "-c", PYTHON_EXTENSION_DRIVER)
    elif module.endswith((".ts", ".mts", ".cts")):
        command = ("bun", "-e", EXTENSION_DRIVER)
    else:
        command = ("node", "--input-type=module", "-e", EXTENSION_DRIVER)
    return WorkspaceHook(
        command=(*command, module, function, *point),
        cwd=posixpath.normpath(folder),
        timeout_seconds=EXTENSION_TIMEOUT_SECONDS,
        env=NODE_ENV,
    )
