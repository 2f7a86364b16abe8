"""AgentV's ``agentv:agent-rules`` at run time: stage or find the agent's rules in a case's folder.

A kind the suite names (``skills: ../rules/skills``) is copied into the case's folder under
``.agentv/agent-rules/<kind>/<name>`` (links replaced by what they point to, as a template's
are); a kind it does not name is looked for in the case's folder, at the places agents read
it from (AgentV's conventions: ``.claude/skills``, ``.agents/skills``, ``.codex/skills``,
``.pi/skills``, ``skills``; the same for ``hooks``; ``.agents/agents``, ``.codex/agents``,
``agents``; ``AGENTS.md``, ``CLAUDE.md``, ``rules``). What was staged or found, each path
relative to the case's folder, is the case's ``metadata.agent_rules_paths``, for its graders
(a judge prompt's ``{{ metadata }}``). No program runs: the service copies files, as it
copies the template.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from app.evaluation.links import LinkRefused, copy_without_links
from app.suites.model import AGENT_RULE_KINDS, AgentRules, EvalCase

AgentRulesPaths = dict[str, list[str]]
"""Kind (``skills``, ``hooks``, ``agents``, ``rules``) -> paths relative to the case's folder."""

FOUND_AT: dict[str, tuple[str, ...]] = {
    "skills": (".claude/skills", ".agents/skills", ".codex/skills", ".pi/skills", "skills"),
    "hooks": (".claude/hooks", ".agents/hooks", ".codex/hooks", ".pi/hooks", "hooks"),
    "agents": (".agents/agents", ".codex/agents", "agents"),
    "rules": ("AGENTS.md", "CLAUDE.md", "rules"),
}
STAGED_UNDER = Path(".agentv", "agent-rules")


class AgentRulesError(Exception):
    """A path the extension names could not be staged (the message says which and why)."""


def agent_rules_paths(rules: AgentRules, folder: Path) -> AgentRulesPaths:
    """Stage the named kinds into ``folder`` and find the others; what each kind holds.

    Raises:
        AgentRulesError: A named path could not be copied.
    """
    named = dict(rules.staged)
    paths: AgentRulesPaths = {}
    for kind in AGENT_RULE_KINDS:
        if kind in named:
            found = [_staged(Path(source), folder, kind) for source in named[kind]]
        else:
            found = [place for place in FOUND_AT[kind] if (folder / place).exists()]
        if found:
            paths[kind] = found
    return paths


def merged(first: AgentRulesPaths, second: AgentRulesPaths) -> AgentRulesPaths:
    """Both extensions' paths, kind by kind, each path once, in order."""
    kinds = [kind for kind in AGENT_RULE_KINDS if kind in first or kind in second]
    return {
        kind: list(dict.fromkeys([*first.get(kind, []), *second.get(kind, [])])) for kind in kinds
    }


def _staged(source: Path, folder: Path, kind: str) -> str:
    target = STAGED_UNDER / kind / source.name
    try:
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            copy_without_links(source, folder / target, dirs_exist_ok=True)
        else:  # placed: the file's real path, inside the workspace root
            shutil.copyfile(source, folder / target)
    except (LinkRefused, OSError) as exc:
        raise AgentRulesError(
            f"agentv:agent-rules could not stage {source.name!r}: {exc}"
        ) from None
    return target.as_posix()


def with_agent_rules(case: EvalCase, paths: AgentRulesPaths) -> EvalCase:
    """The case with ``agent_rules_paths`` in its metadata (``{{ metadata }}`` for judges)."""
    own = case.metadata.get("metadata")
    metadata = {**(own if isinstance(own, dict) else {}), "agent_rules_paths": paths}
    return case.model_copy(update={"metadata": {**case.metadata, "metadata": metadata}})
