"""AgentV's built-in ``agentv:agent-rules`` extension, read from a suite's ``extensions``.

AgentV 4.42.4 does not know it; AgentV's July files name it (``extensions:
[agentv:agent-rules]`` beside a workdir holding ``.agents/skills/``, ``.claude/skills/``,
``AGENTS.md``) and its repository's design notes say what it is for: it stages an agent's
skills, hooks, agents and rules into the workspace. Read here (docs/design.md gives the
reasoning): ``agentv:agent-rules`` (or ``agentv:agent-rules:beforeEach``), or a mapping
``{id: agentv:agent-rules, hook, skills, hooks, agents, rules}`` (the four also under
``config``), each kind a path or a list of paths relative to the suite file. A kind given
is copied into the case's folder under ``.agentv/agent-rules/<kind>/``; a kind not given is
found in the case's folder (``.claude/skills``, ``.agents/skills``, ``AGENTS.md``...). What
it staged or found is the case's ``metadata.agent_rules_paths``, for its graders.
"""

from __future__ import annotations

import posixpath
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe, warn_unknown_keys
from app.suites.model import AGENT_RULE_KINDS, AgentRules
from app.suites.reading import refuse

AGENT_RULES = "agentv:agent-rules"
HOOKS = {"beforeAll": "before_all", "beforeEach": "before_each"}
KEYS = frozenset({"id", "hook", "config", *AGENT_RULE_KINDS})


def is_agent_rules(item: Any) -> bool:
    """Whether an ``extensions`` item names the agent-rules extension (in any form)."""
    if isinstance(item, dict):
        return item.get("id") == AGENT_RULES
    return isinstance(item, str) and (
        item.strip() == AGENT_RULES or item.strip().startswith(f"{AGENT_RULES}:")
    )


def read_agent_rules(value: Any, findings: Findings) -> tuple[AgentRules, ...]:
    """Every agent-rules extension of ``extensions`` (problems recorded)."""
    if not isinstance(value, list):
        return ()
    found: list[AgentRules] = []
    for index, item in enumerate(value):
        if is_agent_rules(item):
            rules = _agent_rules(item, ("extensions", index), findings)
            if rules is not None:
                found.append(rules)
    return tuple(found)


def _agent_rules(item: Any, where: DocumentPath, findings: Findings) -> AgentRules | None:
    if isinstance(item, str):
        hook = item.strip().removeprefix(AGENT_RULES).removeprefix(":") or "beforeAll"
        return _at(hook, where, findings, AgentRules())
    warn_unknown_keys(item, KEYS, where, findings)
    config = item.get("config") or {}
    if not isinstance(config, dict):
        findings.error((*where, "config"), f"must be a mapping, not {describe(config)}")
        return None
    staged: list[tuple[str, tuple[str, ...]]] = []
    for kind in AGENT_RULE_KINDS:
        given = item.get(kind, config.get(kind))
        if given is None:
            continue
        paths = [given] if isinstance(given, str) else given
        if not (
            isinstance(paths, list)
            and paths
            and all(isinstance(p, str) and p.strip() for p in paths)
        ):
            findings.error((*where, kind), "must be a path or a list of paths")
            return None
        staged.append((kind, tuple(posixpath.normpath(p.strip()) for p in paths)))
    hook = item.get("hook", "beforeAll")
    return _at(hook, (*where, "hook"), findings, AgentRules(staged=tuple(staged)))


def _at(hook: Any, where: DocumentPath, findings: Findings, rules: AgentRules) -> AgentRules | None:
    if hook in HOOKS:
        return rules.model_copy(update={"point": HOOKS[hook]})
    if hook in ("afterEach", "afterAll"):
        refuse(
            findings,
            where,
            f"agentv:agent-rules at {hook}",
            "it stages what the agent reads, so it runs before the agent (beforeAll, beforeEach)",
        )
        return None
    findings.error(where, f"the hook must be beforeAll or beforeEach, not {hook!r}")
    return None
