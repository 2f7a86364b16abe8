"""The suite's ``providers`` (or AgentV's ``targets``) of the prompts/providers/vars layout.

Each provider names a target (its label, else its id) and is an arm of the run; a
provider's ``config`` gives its arm's model settings and tools (``provider_config``), and its
``prompts`` narrows its arms to those prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.providers.base import ModelOptions
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.prompts_vars.legacy_functions import as_tool_keys
from app.suites.prompts_vars.prompts import Prompt, prompts_named
from app.suites.prompts_vars.provider_config import api_family, read_model_settings, tool_keys
from app.suites.target_lists import read_target_list
from app.suites.tool_callbacks import CALLBACKS_KEY, callback_keys, read_callbacks
from app.suites.tool_use import ToolUse, read_tool_use


@dataclass
class SuiteProviders:
    """What a suite's providers say: the targets, and each one's tools, prompts and settings.

    ``tool_use`` is the tools of a suite with one provider (every case's); with several,
    ``target_tools`` gives each target's (its arm's).
    """

    targets: tuple[str, ...] = ()
    tool_use: ToolUse | None = None
    target_tools: dict[str, ToolUse] = field(default_factory=dict)
    target_prompts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    target_options: dict[str, ModelOptions] = field(default_factory=dict)


def read_providers(
    document: Mapping[str, Any], findings: Findings, texts: Mapping[str, str], prompts: list[Prompt]
) -> SuiteProviders:
    """The providers named (targets), with their tools, prompts and model settings.

    Several providers make a run of one arm per provider (the target x prompt matrix), each
    with the tools and settings of its config; a provider's ``prompts`` narrows its arms to
    those prompts.
    """
    if "targets" in document:  # AgentV's list in this layout
        if "providers" in document:
            findings.error(("targets",), "name the targets once: 'providers' or 'targets'")
        return SuiteProviders(targets=read_target_list(document, findings))
    providers = document.get("providers", document.get("target"))
    if providers is None:
        return SuiteProviders()
    listed = providers if isinstance(providers, list) else [providers]
    read = SuiteProviders()
    tools: dict[str, ToolUse | None] = {}
    for index, provider in enumerate(listed):
        where: DocumentPath = (
            ("providers", index) if isinstance(providers, list) else ("providers",)
        )
        name = _one_provider(provider, where, findings, texts, prompts, read, tools)
        if name is not None and name in tools:
            findings.error(
                where,
                f"names target {name!r} again: give each provider its own 'label' (a target "
                "configured under that name) to run it twice",
            )
    read.targets = tuple(tools)
    if len(tools) == 1:
        read.tool_use = next(iter(tools.values()))
    elif tools:
        read.target_tools = {name: tool_use for name, tool_use in tools.items() if tool_use}
    return read


def _one_provider(
    provider: Any,
    where: DocumentPath,
    findings: Findings,
    texts: Mapping[str, str],
    prompts: list[Prompt],
    read: SuiteProviders,
    tools: dict[str, ToolUse | None],
) -> str | None:
    """Read one provider into ``read`` and ``tools``; its name when named again (else None)."""
    settings = None
    if isinstance(provider, dict):
        name, tool_use, settings = provider_entry(provider, where, findings, texts)
    elif isinstance(provider, str) and provider.strip():
        name, tool_use = provider.strip(), None
    else:
        findings.error(where, f"must name a target, not {describe(provider)}")
        return None
    if name is None or name in tools:
        return name
    tools[name] = tool_use
    if settings is not None:
        read.target_options[name] = settings
    if isinstance(provider, dict) and "prompts" in provider:
        chosen = prompts_named(provider["prompts"], prompts, (*where, "prompts"), findings)
        read.target_prompts[name] = tuple(prompt.id for prompt in chosen)
    return None


def provider_entry(
    provider: Mapping[str, Any],
    where: DocumentPath,
    findings: Findings,
    texts: Mapping[str, str],
) -> tuple[str | None, ToolUse | None, ModelOptions | None]:
    """``{id, label?, config?}``: the target its label (else id) names, its tools and settings."""
    name = provider.get("label") or provider.get("id")
    if not isinstance(name, str) or not name.strip():
        findings.error(where, "an inline provider needs an 'id' or 'label' naming a target")
        return None, None, None
    for key in sorted(set(provider) - {"id", "label", "config", "prompts"}):
        findings.warn((*where, key), "not read: the target's own settings apply")
    config = provider.get("config") or {}
    if not isinstance(config, dict):
        findings.error((*where, "config"), f"must be a mapping, not {describe(config)}")
        return None, None, None
    at, provider_id = (*where, "config"), provider.get("id")
    settings = read_model_settings(config, provider_id, at, findings)
    keys, legacy = as_tool_keys(tool_keys(config, provider_id), at, findings)
    tools = read_tool_use(keys, at, findings, texts)
    if legacy and tools is not None:
        tools = tools.model_copy(update={"legacy_functions": True})
    if CALLBACKS_KEY in config and callback_keys(api_family(provider_id)):
        callbacks = read_callbacks(config[CALLBACKS_KEY], (*at, CALLBACKS_KEY), findings)
        tools = (tools or ToolUse()).model_copy(update={"callbacks": callbacks})
    return name.strip(), tools, settings
