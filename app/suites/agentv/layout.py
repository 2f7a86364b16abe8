"""AgentV's own keys in the prompts/providers/vars layout (its files since July 2026).

``evaluate_options`` (``repeat``, ``budget_usd``, ``max_concurrency``; anything else is
refused by name) and a test's ``execution: {skip_defaults: true}``, which leaves out the
suite's graders (top-level ``assert`` and ``defaultTest.assert``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.reading import read_budget, read_trials, refuse

EVALUATE_OPTIONS = frozenset({"repeat", "budget_usd", "max_concurrency"})
"""AgentV's ``evaluate_options`` read here: trials per test, the run's cost budget, and how
many cases run at once."""


def evaluate_options(raw: Any, findings: Findings) -> dict[str, Any]:
    """AgentV's ``evaluate_options`` (``repeat``, ``budget_usd``, ``max_concurrency``)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        findings.error(("evaluate_options",), f"must be a mapping, not {describe(raw)}")
        return {}
    for key in raw:
        if key not in EVALUATE_OPTIONS:
            refuse(
                findings,
                ("evaluate_options", key),
                f"'evaluate_options.{key}'",
                "only repeat, budget_usd and max_concurrency are read",
            )
    fields: dict[str, Any] = {}
    trials = read_trials(raw.get("repeat"), ("evaluate_options", "repeat"), findings)
    if trials is not None:
        fields["trials"] = trials
    budget = read_budget(raw.get("budget_usd"), ("evaluate_options", "budget_usd"), findings)
    if budget is not None:
        fields["budget_usd"] = budget
    workers = raw.get("max_concurrency")
    if workers is not None:
        if isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1:
            fields["max_concurrency"] = workers
        else:
            findings.error(
                ("evaluate_options", "max_concurrency"),
                f"must be a whole number of at least 1, not {workers!r}",
            )
    return fields


def skips_defaults(raw: Mapping[str, Any], path: DocumentPath, findings: Findings) -> bool:
    """AgentV's ``execution: {skip_defaults: true}`` (the only execution key read here)."""
    execution = raw.get("execution")
    if execution is None:
        return False
    if not isinstance(execution, dict):
        findings.error((*path, "execution"), f"must be a mapping, not {describe(execution)}")
        return False
    for key in execution:
        if key != "skip_defaults":
            refuse(
                findings,
                (*path, "execution", key),
                f"'execution.{key}'",
                "only skip_defaults is read in this layout (set the target with providers)",
            )
    skip = execution.get("skip_defaults", False)
    if not isinstance(skip, bool):
        where = (*path, "execution", "skip_defaults")
        findings.error(where, f"must be true or false, not {skip!r}")
        return False
    return skip
