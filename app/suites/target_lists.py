"""A suite's own list of targets (AgentV's ``targets:``): the arms of a run on all of them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.suites.documents.findings import Findings, describe


def read_target_list(document: Mapping[str, Any], findings: Findings) -> tuple[str, ...]:
    """The target names of ``targets:`` (strings, or objects naming one with ``name``).

    Each is a target of the service's targets file; two or more make a run of one arm per
    target. An inline definition (an object with more than a name) is refused by name.
    """
    raw = document.get("targets")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        findings.error(("targets",), f"must be a list of target names, not {describe(raw)}")
        return ()
    names: list[str] = []
    for index, entry in enumerate(raw):
        name = entry.get("name") if isinstance(entry, dict) else entry
        if isinstance(entry, dict) and set(entry) - {"name"}:
            findings.error(
                ("targets", index),
                "an inline target definition is not read here: name a target of the "
                "service's targets file",
            )
        elif isinstance(name, str) and name.strip():
            names.append(name.strip())
        else:
            findings.error(("targets", index), f"must name a target, not {describe(entry)}")
    return tuple(dict.fromkeys(names))
