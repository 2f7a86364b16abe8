"""Which eval file dialect a document is written in, and the reader for it.

- ``agentv-2025``: AgentV's late-2025 files (``evalcases``).
- ``agentv-2026``: AgentV's 2026 files (``tests`` with ``input``/``criteria``/``assertions``).
- ``prompts-providers-vars``: promptfoo's layout, which AgentV adopted in July 2026
  (``prompts``, ``providers``, ``defaultTest``, ``tests[].vars``, ``tests[].assert``).

A whole file that is a list of cases (a JSONL dataset, a YAML list) is a suite of those
cases, in the dialect its cases are written in. Every reader maps onto the same suite
model; nothing after this module knows the dialect.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.suites.agentv.reader import dialect_of, read_agentv
from app.suites.agentv.skills import is_skill_evals, skill_evals_suite
from app.suites.documents.findings import Findings, describe
from app.suites.files.sources import Sources
from app.suites.graders.user_types import user_types
from app.suites.prompts_vars.reader import read_prompts_vars
from app.suites.reading import Dialect, SuiteCheck
from app.suites.template_env import request_env

PROMPTS_VARS_KEYS = frozenset({"prompts", "providers", "defaultTest", "default_test"})
DIALECTS: tuple[Dialect, ...] = ("agentv-2025", "agentv-2026", "prompts-providers-vars")


def as_suite(data: Any) -> Any:
    """A list of cases becomes ``{tests: [...]}``, an ``evals.json`` its AgentV suite.

    Every other document is returned unchanged.
    """
    if isinstance(data, list):
        return {"tests": data}
    if is_skill_evals(data):
        return skill_evals_suite(data)
    return data


def detect_dialect(document: Any) -> Dialect:
    """The dialect of a (``as_suite``) document; ``unknown`` when it is not a suite at all."""
    if not isinstance(document, dict):
        return "unknown"
    if "evalcases" in document or "eval_cases" in document:
        return "agentv-2025"
    if PROMPTS_VARS_KEYS & document.keys():
        return "prompts-providers-vars"
    tests = document.get("tests")
    if isinstance(tests, list) and "evalcases" not in document and _vars_layout(tests):
        return "prompts-providers-vars"
    return dialect_of(document)


def _vars_layout(tests: list[Any]) -> bool:
    """Tests written with ``vars``/``assert`` and without AgentV's ``input``/``criteria``."""
    mappings = [item for item in tests if isinstance(item, dict)]
    uses_vars = any("assert" in item or "vars" in item for item in mappings)
    uses_agentv = any(
        key in item for item in mappings for key in ("input", "criteria", "assertions")
    )
    return uses_vars and not uses_agentv


def read_document(
    document: Any, sources: Sources, findings: Findings, env: Mapping[str, str] | None = None
) -> SuiteCheck:
    """Read a parsed (``as_suite``) document with its dialect's reader.

    ``env``: the request's, which templates read as ``{{ env.NAME }}``.
    """
    with user_types(sources.grader_types), request_env(env or {}):
        return _read_document(document, sources, findings)


def _read_document(document: Any, sources: Sources, findings: Findings) -> SuiteCheck:
    if not isinstance(document, dict):
        findings.error((), f"a suite must be a mapping with its cases, not {describe(document)}")
        return SuiteCheck(suite=None)
    if detect_dialect(document) == "prompts-providers-vars":
        return read_prompts_vars(document, sources, findings)
    return read_agentv(document, sources, findings)
