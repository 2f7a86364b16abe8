"""AgentV's July-2026 ``environment`` and ``extensions``, read as a suite's workspace.

AgentV 4.42.4 knows neither key (its validator calls them unknown fields), so their reading
comes from AgentV's July files and their READMEs: ``environment`` (a mapping, or ``file://``
a YAML file holding one) with ``type: host`` (the default), ``workdir`` (the folder the
agent works in: here each case gets a fresh copy of it, as of a workspace ``template``) and
``setup`` (``command``, ``cwd``, ``timeout_ms``: run before each case, as a ``before_all``
hook). ``type: docker`` (or an ``image`` without a type) and ``env`` are refused by name, as
a workspace's ``docker`` and ``env`` are. ``extensions`` lists lifecycle functions,
``file://MODULE.mjs:beforeAll`` (or ``beforeEach``, ``afterEach``): a JavaScript module's
exported function, called with ``{workspace_path, eval_dir, eval_case_id}`` at that point of
the case's workspace, after the ``environment`` hooks. It runs in the sandbox with ``node``
through a driver of ours, like every hook (a TypeScript module under ``bun``, as AgentV runs
it). Refused by name: AgentV's built-in extensions (``agentv:...``, whose behaviour no
published AgentV shows) and ``afterAll`` (cases never share a workspace here).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe, warn_unknown_keys
from app.suites.model import WorkspaceHook
from app.suites.reading import refuse

FILE_PREFIX = "file://"
ENVIRONMENT_KEYS = frozenset({"type", "workdir", "setup", "env"})
ENVIRONMENT_REFUSED = {
    "env": "environment variables are not supported: give them to the target's env",
}
POINTS = {"beforeAll": "before_all", "beforeEach": "before_each", "afterEach": "after_each"}
EXTENSION_TIMEOUT_SECONDS = 60.0
NODE_ENV = (("OPENSSL_CONF", "/dev/null"),)
"""The sandbox shows no /etc/ssl: node would stop at start reading OpenSSL's configuration."""
EXTENSION_DRIVER = """\
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
const [file, name] = process.argv.slice(1);
let text = "";
for await (const chunk of process.stdin) text += chunk;
const context = JSON.parse(text || "{}");
const loaded = await import(pathToFileURL(resolve(file)).href);
const hook = loaded[name] ?? loaded.default?.[name];
if (typeof hook !== "function") {
  console.error(`${file} exports no function ${name}`);
  process.exit(2);
}
await hook(context);
"""
"""Calls the named export of the module with the hook's context (its stdin)."""


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
    for key, why in ENVIRONMENT_REFUSED.items():
        if key in value:
            refuse(findings, (*where, key), f"environment '{key}'", why)
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
        extension = _extension(item, folder, (*where, index), findings)
        if extension is not None:
            found.append(extension)
    return tuple(found)


def _extension(
    item: Any, folder: str, where: DocumentPath, findings: Findings
) -> tuple[str, WorkspaceHook] | None:
    if not isinstance(item, str) or not item.strip():
        findings.error(where, f"must be 'file://MODULE:function', not {describe(item)}")
        return None
    text = item.strip()
    if text.startswith("agentv:"):
        refuse(
            findings,
            where,
            f"the built-in extension {text!r}",
            "AgentV 4.42.4 has no such extension, so there is no behaviour to follow",
        )
        return None
    module, _, function = text.removeprefix(FILE_PREFIX).rpartition(":")
    if not text.startswith(FILE_PREFIX) or not module or function not in (*POINTS, "afterAll"):
        findings.error(
            where,
            f"must be 'file://MODULE:beforeAll' (or beforeEach, afterEach), not {text!r}",
        )
        return None
    if function == "afterAll":
        refuse(findings, where, "an 'afterAll' extension", "cases never share a workspace here")
        return None
    # TypeScript runs under bun, as AgentV runs it and as user-defined grader types run here
    # (node 20 has no type stripping); the same driver works under both.
    typescript = module.endswith((".ts", ".mts", ".cts"))
    runtime = ("bun", "-e") if typescript else ("node", "--input-type=module", "-e")
    hook = WorkspaceHook(
        command=(*runtime, EXTENSION_DRIVER, module, function),
        cwd=posixpath.normpath(folder),
        timeout_seconds=EXTENSION_TIMEOUT_SECONDS,
        env=NODE_ENV,
    )
    return POINTS[function], hook
