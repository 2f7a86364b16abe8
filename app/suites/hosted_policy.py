"""Hosted tools (web search, MCP...) only where the operator allows them.

A hosted tool makes the provider search the web, fetch pages or connect to a server the suite
names, on the operator's account and bill, out of this service's sight (the service itself
never fetches anything for it). So a suite may declare one only when the operator sets
``EVAL_HOSTED_TOOLS=true``; otherwise each is refused by name where it is declared.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from app.settings.hosted_tools import API_NAMES, HostedTool
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings
from app.suites.model import EvalSuite
from app.suites.reading import CaseOrigin

SETTING = "EVAL_HOSTED_TOOLS"


def _declared(
    suite: EvalSuite, origins: Mapping[str, CaseOrigin]
) -> Iterator[tuple[DocumentPath, HostedTool]]:
    for target, tool_use in suite.target_tools.items():
        for tool in tool_use.hosted:
            yield ("providers", target, "config", "tools"), tool
    for case in suite.cases:
        origin = origins.get(case.id)
        for tool in case.tool_use.hosted if case.tool_use else ():
            yield ((*origin.path, "tools") if origin else ("tools",)), tool


def refuse_unallowed(
    suite: EvalSuite, origins: Mapping[str, CaseOrigin], findings: Findings, *, allowed: bool
) -> None:
    """Refuse every hosted tool the suite declares (once per kind) unless ``allowed``."""
    if allowed:
        return
    seen: set[str] = set()
    for path, tool in _declared(suite, origins):
        if tool.kind in seen:
            continue
        seen.add(tool.kind)
        findings.error(
            path,
            f"hosted tool {tool.label!r} is not allowed: {API_NAMES[tool.api]} runs it on the "
            f"provider's side (searching, fetching or connecting for the suite); the operator "
            f"allows such tools with {SETTING}=true",
        )
