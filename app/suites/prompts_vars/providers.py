"""The suite's ``providers`` (or AgentV's ``targets``) of the prompts/providers/vars layout.

Each provider names a target (its label, else its id) and is an arm of the run; a
provider's ``config`` gives its tools (the rest is the target's own business, warned about)
and its ``prompts`` narrows its arms to those prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.prompts_vars.prompts import Prompt, prompts_named
from app.suites.target_lists import read_target_list
from app.suites.tool_use import TOOL_USE_KEYS, ToolUse, read_tool_use


def read_providers(
    document: Mapping[str, Any], findings: Findings, texts: Mapping[str, str], prompts: list[Prompt]
) -> tuple[tuple[str, ...], ToolUse | None, dict[str, ToolUse], dict[str, tuple[str, ...]]]:
    """The providers named (targets), their tools (of one alone; of each of several), prompts.

    Several providers make a run of one arm per provider (the target x prompt matrix), each
    with the tools of its config; a provider's ``prompts`` narrows its arms to those prompts.
    """
    if "targets" in document:  # AgentV's list in this layout
        if "providers" in document:
            findings.error(("targets",), "name the targets once: 'providers' or 'targets'")
        return read_target_list(document, findings), None, {}, {}
    providers = document.get("providers", document.get("target"))
    if providers is None:
        return (), None, {}, {}
    listed = providers if isinstance(providers, list) else [providers]
    names: list[str] = []
    tools: list[ToolUse | None] = []
    target_prompts: dict[str, tuple[str, ...]] = {}
    for index, provider in enumerate(listed):
        where: DocumentPath = (
            ("providers", index) if isinstance(providers, list) else ("providers",)
        )
        if isinstance(provider, dict):
            name, tool_use = provider_entry(provider, where, findings, texts)
            if name is not None and "prompts" in provider:
                chosen = prompts_named(provider["prompts"], prompts, (*where, "prompts"), findings)
                target_prompts[name] = tuple(prompt.id for prompt in chosen)
        elif isinstance(provider, str) and provider.strip():
            name, tool_use = provider.strip(), None
        else:
            findings.error(where, f"must name a target, not {describe(provider)}")
            continue
        if name is not None:
            names.append(name)
            tools.append(tool_use)
    return (
        tuple(names),
        tools[0] if len(tools) == 1 else None,
        (
            {name: tool_use for name, tool_use in zip(names, tools, strict=True) if tool_use}
            if len(names) > 1
            else {}
        ),
        target_prompts,
    )


def provider_entry(
    provider: Mapping[str, Any],
    where: DocumentPath,
    findings: Findings,
    texts: Mapping[str, str],
) -> tuple[str | None, ToolUse | None]:
    """``{id, label?, config?}``: the target its label (else id) names, and the config's tools.

    The rest of ``config`` (temperature, models...) is the target's business: warned about.
    """
    name = provider.get("label") or provider.get("id")
    if not isinstance(name, str) or not name.strip():
        findings.error(where, "an inline provider needs an 'id' or 'label' naming a target")
        return None, None
    for key in sorted(set(provider) - {"id", "label", "config", "prompts"}):
        findings.warn((*where, key), "not read: the target's own settings apply")
    config = provider.get("config") or {}
    if not isinstance(config, dict):
        findings.error((*where, "config"), f"must be a mapping, not {describe(config)}")
        return None, None
    for key in sorted(set(config) - TOOL_USE_KEYS):
        findings.warn((*where, "config", key), "not read: the target's own settings apply")
    return name.strip(), read_tool_use(config, (*where, "config"), findings, texts)
